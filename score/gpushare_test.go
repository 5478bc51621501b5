package score_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

func gpuNodeObj(name, gpus string) *v1.Node {
	return st.MakeNode(name).Capacity("cpu", "32", "memory", "128Gi", "pods", "110",
		"alibabacloud.com/gpu-count", gpus, "alibabacloud.com/gpu-milli", gpus+"000").
		Label(snapshot.LabelGPUModel, "T4").Obj()
}

func sharePod(name, milli string) *st.PodWrapper {
	return st.MakePod(name).Req("cpu", "1", "memory", "1Gi").
		Annotation(snapshot.AnnotationGPUCount, "1").Annotation(snapshot.AnnotationGPUMilli, milli)
}

// The adapter gives exactly the gpushare policy's score on the node's
// GPUState, for every policy, and the memo never serves a stale score
// after the node changes.
func TestGPUShareMatchesPolicy(t *testing.T) {
	w, err := gpushare.NewWorkload([]gpushare.Task{{MilliCPU: 1000, GPUCount: 1, MilliGPU: 500}, {MilliCPU: 4000, GPUCount: 2, MilliGPU: 1000}}, []float64{3, 1})
	require.NoError(t, err)
	policies := []gpushare.Scorer{gpushare.NewFGD(w), gpushare.BestFit{}, gpushare.DotProduct{}, gpushare.GPUPacking{}, gpushare.GPUClustering{}}
	c := st.Cache(t, []*v1.Node{gpuNodeObj("a", "2"), gpuNodeObj("b", "4"), gpuNodeObj("c", "1")},
		sharePod("x", "300").Node("b").Obj())
	pod := snapshot.MustPodInfo(sharePod("new", "500").Obj())
	for _, pol := range policies {
		t.Run(pol.Name(), func(t *testing.T) {
			s := score.GPUShare(pol)
			for round := range 3 {
				snap := c.Snapshot()
				nodes := []*snapshot.NodeInfo{snap.Get("a"), snap.Get("b"), snap.Get("c")}
				ps, err := s.Prepare(pod, snap)
				require.NoError(t, err)
				out := make([]int64, len(nodes))
				ps.Score(nodes, out)
				for i, n := range nodes {
					gs := n.GPUState(nil)
					want, devs := pol.Score(&gs, pod.Task())
					assert.Equal(t, want, out[i], "round %d: %s(%s) = %d, want %d", round, pol.Name(), n.Name(), out[i], want)
					got, ok := s.ChooseDevices(pod, n)
					assert.True(t, ok)
					assert.Equal(t, devs, got)
				}
				// Change node a: the next round must see the new state.
				require.NoError(t, c.AddPod(sharePod("fill"+string(rune('0'+round)), "400").Node("a").Obj()))
			}
		})
	}
}

func TestRandomGPU(t *testing.T) {
	c := st.Cache(t, []*v1.Node{gpuNodeObj("a", "1"), gpuNodeObj("b", "1"), gpuNodeObj("c", "1"), gpuNodeObj("d", "1")})
	snap := c.Snapshot()
	nodes := []*snapshot.NodeInfo{snap.Get("a"), snap.Get("b"), snap.Get("c"), snap.Get("d")}
	scores := func(seed uint64, pod string) []int64 {
		ps, err := score.RandomGPU{Seed: seed}.Prepare(snapshot.MustPodInfo(sharePod(pod, "100").Obj()), snap)
		require.NoError(t, err)
		out := make([]int64, len(nodes))
		ps.Score(nodes, out)
		return out
	}
	assert.Equal(t, scores(42, "p"), scores(42, "p"), "deterministic for a seed")
	assert.NotEqual(t, scores(42, "p"), scores(43, "p"), "seed matters")
	winners := map[int]int{}
	for i := range 400 {
		out := scores(7, "p"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		best := 0
		for j, s := range out {
			require.True(t, s >= score.MinScore && s <= score.MaxScore)
			if s > out[best] {
				best = j
			}
		}
		winners[best]++
	}
	for j := range nodes {
		assert.Greater(t, winners[j], 50, "node %d wins about a quarter of 400 pods, got %d", j, winners[j])
	}
}
