package gpushare_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

func gpuNodeObj(name, gpus string) *v1.Node {
	return st.MakeNode(name).Capacity("cpu", "32", "memory", "128Gi", "pods", "110",
		"alibabacloud.com/gpu-count", gpus, "alibabacloud.com/gpu-milli", gpus+"000").
		Label(openb.LabelGPUModel, "T4").Obj()
}

func sharePod(name, milli string) *st.PodWrapper {
	return st.MakePod(name).Req("cpu", "1", "memory", "1Gi").
		Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, milli)
}

// The adapter gives exactly the gpushare policy's score on the node's
// GPUState, for every policy, and the memo never serves a stale score
// after the node changes.
func TestGPUShareMatchesPolicy(t *testing.T) {
	w, err := gpushare.NewWorkload([]gpushare.Task{{MilliCPU: 1000, GPUCount: 1, MilliGPU: 500}, {MilliCPU: 4000, GPUCount: 2, MilliGPU: 1000}}, []float64{3, 1})
	require.NoError(t, err)
	policies := []gpushare.NodeScorer{gpushare.NewFGD(w), gpushare.BestFit{}, gpushare.DotProduct{}, gpushare.GPUPacking{}, gpushare.GPUClustering{}}
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNodeObj("a", "2"), gpuNodeObj("b", "4"), gpuNodeObj("c", "1")},
		sharePod("x", "300").Node("b").Obj())
	pod := openb.MustPodInfo(sharePod("new", "500").Obj())
	for _, pol := range policies {
		t.Run(pol.Name(), func(t *testing.T) {
			s := gpushare.NewScorer(pol)
			for round := range 3 {
				snap := c.Snapshot()
				assertGPUShare(t, s, pol, pod, snap, []*snapshot.NodeInfo{snap.Get("a"), snap.Get("b"), snap.Get("c")}, "round %d", round)
				// Change node a: the next round must see the new state.
				require.NoError(t, c.AddPod(sharePod("fill"+string(rune('0'+round)), "400").Node("a").Obj()))
			}
		})
	}
}

// assertGPUShare scores nodes with s and checks every score and device
// choice against the policy pol on the node's GPUState.
func assertGPUShare(t *testing.T, s *gpushare.Scorer, pol gpushare.NodeScorer, pod *snapshot.PodInfo, cl score.Cluster, nodes []*snapshot.NodeInfo, msg string, args ...any) {
	t.Helper()
	ps, err := s.Prepare(pod, cl)
	require.NoError(t, err)
	out := make([]int64, len(nodes))
	ps.Score(nodes, out)
	for i, n := range nodes {
		gs := gpushare.NodeStateOf(n, nil)
		want, devs := pol.Score(&gs, gpushare.TaskOf(pod))
		where := fmt.Sprintf(msg, args...) + fmt.Sprintf(": %s(%s, generation %d)", pol.Name(), n.Name(), n.Generation())
		assert.Equal(t, want, out[i], where)
		got, ok := s.ChooseDevices(pod, n)
		assert.Equal(t, devs.Len() == gpushare.TaskOf(pod).GPUCount, ok, where)
		assert.Equal(t, devs, got, where)
	}
}

func TestRandomGPU(t *testing.T) {
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNodeObj("a", "1"), gpuNodeObj("b", "1"), gpuNodeObj("c", "1"), gpuNodeObj("d", "1")})
	snap := c.Snapshot()
	nodes := []*snapshot.NodeInfo{snap.Get("a"), snap.Get("b"), snap.Get("c"), snap.Get("d")}
	scores := func(seed uint64, pod string) []int64 {
		ps, err := gpushare.RandomScorer{Seed: seed}.Prepare(openb.MustPodInfo(sharePod(pod, "100").Obj()), snap)
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

// Two states of the same node (a snapshot and a fork of it that placed a
// pod there) scored alternately, with pod shapes and nodes first seen
// mid-way: the memo, one generation per node and shape, recomputes and
// always gives the policy's score and devices for the state it is shown.
func TestGPUShareMemoAlternatingStates(t *testing.T) {
	w, err := gpushare.NewWorkload([]gpushare.Task{{MilliCPU: 1000, GPUCount: 1, MilliGPU: 500}, {MilliCPU: 2000, GPUCount: 1, MilliGPU: 1000}}, []float64{1, 1})
	require.NoError(t, err)
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNodeObj("a", "4"), gpuNodeObj("b", "2")}, sharePod("x", "300").Node("a").Obj())
	snap := c.Snapshot()
	fork := snap.Fork()
	require.NoError(t, fork.AddPod(sharePod("y", "600").Node("a").Obj(), "a"))
	require.NoError(t, c.AddNode(gpuNodeObj("late", "8")))
	late := c.Snapshot().Get("late")
	fgd := gpushare.NewFGD(w)
	s := gpushare.NewScorer(fgd)
	for round := range 4 {
		for _, milli := range []string{"200", "500", "700", "1000"} {
			pod := openb.MustPodInfo(sharePod("p"+milli, milli).Obj())
			for _, cl := range []score.Cluster{snap, fork} {
				nodes := []*snapshot.NodeInfo{cl.Get("a"), cl.Get("b")}
				if round >= 2 {
					nodes = append(nodes, late) // a node first seen now
				}
				if round == 3 {
					slices.Reverse(nodes) // columns found out of order
				}
				assertGPUShare(t, s, fgd, pod, cl, nodes, "round %d", round)
			}
		}
	}
	assert.NotEqual(t, snap.Get("a").Generation(), fork.Get("a").Generation(), "the test needs two states of node a")
}

// Scoring a batch allocates nothing once the memo has a column for every
// node and a row for the shape, also when nodes changed and are rescored.
func TestGPUShareScoreAllocs(t *testing.T) {
	w, err := gpushare.NewWorkload([]gpushare.Task{{MilliCPU: 1000, GPUCount: 1, MilliGPU: 500}}, []float64{1})
	require.NoError(t, err)
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNodeObj("a", "8"), gpuNodeObj("b", "2")})
	s := gpushare.NewScorer(gpushare.NewFGD(w))
	pod := openb.MustPodInfo(sharePod("p", "500").Obj())
	snaps := []*snapshot.Snapshot{c.Snapshot()}
	require.NoError(t, c.AddPod(sharePod("x", "300").Node("a").Obj()))
	snaps = append(snaps, c.Snapshot()) // node a in another state
	out := make([]int64, 2)
	var pss []score.PodScorer
	for _, snap := range snaps {
		ps, err := s.Prepare(pod, snap)
		require.NoError(t, err)
		ps.Score([]*snapshot.NodeInfo{snap.Get("a"), snap.Get("b")}, out)
		pss = append(pss, ps)
	}
	nodes := [][]*snapshot.NodeInfo{{snaps[0].Get("a"), snaps[0].Get("b")}, {snaps[1].Get("a"), snaps[1].Get("b")}}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		pss[i%2].Score(nodes[i%2], out) // node a alternates: recomputed every time
		i++
	})
	assert.Zero(t, allocs)
}

// NodeStateOf reads a snapshot node as the policies see it: free CPU and
// memory, devices with their free share (over-commitment clamped to 0,
// the NodeInfo untouched by Place), and the classes of the GPU pods on it;
// TaskOf reads a pod's requests and device demand.
func TestNodeStateOf(t *testing.T) {
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNodeObj("n", "4")},
		sharePod("s", "300").Annotation(openb.AnnotationGPUIndex, "0").Node("n").Obj(),
		sharePod("over", "900").Annotation(openb.AnnotationGPUIndex, "0").Node("n").Obj(),
		st.MakePod("w").Req("cpu", "2").Annotation(openb.AnnotationGPUCount, "2").Annotation(openb.AnnotationGPUIndex, "2-3").Node("n").Obj())
	ni := c.Snapshot().Get("n")
	ns := gpushare.NodeStateOf(ni, nil)
	assert.Equal(t, int64(32000-4000), ns.FreeMilliCPU)
	assert.Equal(t, int64(128<<30-2<<30), ns.FreeMemory)
	var free []int64
	for _, d := range ns.Devices {
		free = append(free, d.FreeMilliGPU)
	}
	// device 0: 1000 - 300 - 900 = -200, clamped; 2 and 3 taken whole.
	assert.Equal(t, []int64{0, 1000, 0, 0}, free)
	assert.Equal(t, int64(-200), ni.Devices()[0].FreeMilliGPU, "the NodeInfo keeps the over-commitment")
	assert.True(t, ns.ResidentClasses.Has(0), "shared class")
	assert.True(t, ns.ResidentClasses.Has(2), "two-GPU class")
	assert.Equal(t, 2, ns.ResidentClasses.Len())
	require.NoError(t, ns.Place(gpushare.Task{GPUCount: 1, MilliGPU: 500}, gpushare.DeviceSet(0).With(1)))
	assert.Equal(t, int64(1000), ni.Devices()[1].FreeMilliGPU, "Place changes the copy only")

	pi := openb.MustPodInfo(sharePod("p", "250").Annotation(openb.AnnotationGPUModel, "T4|A100").Obj())
	assert.Equal(t, gpushare.Task{MilliCPU: 1000, Memory: 1 << 30, GPUCount: 1, MilliGPU: 250, Models: []string{"T4", "A100"}}, gpushare.TaskOf(pi))
}

// BestFit is a snapshot.DeviceChooser: BestFitDevices on the node's
// devices, the choice the framework, the ledger and replay get when the
// caller passes it.
func TestBestFitChooser(t *testing.T) {
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNodeObj("n", "3")},
		sharePod("a", "600").Annotation(openb.AnnotationGPUIndex, "1").Node("n").Obj(),
		sharePod("b", "300").Annotation(openb.AnnotationGPUIndex, "2").Node("n").Obj())
	ni := c.Snapshot().Get("n")
	var dc snapshot.DeviceChooser = gpushare.BestFit{}
	for _, tc := range []struct {
		name  string
		pod   *v1.Pod
		want  []int
		found bool
	}{
		// free: 1000, 400, 700. 300 goes where least is left that fits: device 1 (400).
		{"share", sharePod("p", "300").Obj(), []int{1}, true},
		// 500: device 2 (700) beats device 0 (1000).
		{"bigger share", sharePod("p", "500").Obj(), []int{2}, true},
		// one whole GPU: the lowest-index idle device.
		{"whole", sharePod("p", "1000").Obj(), []int{0}, true},
		{"two whole", sharePod("p", "1000").Annotation(openb.AnnotationGPUCount, "2").Obj(), nil, false},
		{"other model", sharePod("p", "100").Annotation(openb.AnnotationGPUModel, "A100").Obj(), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			devs, ok := dc.ChooseDevices(openb.MustPodInfo(tc.pod), ni)
			require.Equal(t, tc.found, ok)
			if ok {
				assert.Equal(t, tc.want, devs.AppendIndexes(nil))
			}
		})
	}
}
