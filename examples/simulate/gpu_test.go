package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

func gpuNode(name string, gpus int, model string) *v1.Node {
	return openb.Node{Name: name, MilliCPU: 32000, MemoryMiB: 131072, GPUs: int64(gpus), Model: model}.Object()
}

func gpuPod(name string, count, milli int64, models ...string) *v1.Pod {
	return openb.Pod{Name: name, MilliCPU: 1000, MemoryMiB: 1024, NumGPU: count, GPUMilli: milli, GPUSpec: models}.Object()
}

// TestBoundPod: the devices a bind chose are what the snapshot charges.
func TestBoundPod(t *testing.T) {
	c := snapshot.NewCacheWithDevices(openb.Devices)
	require.NoError(t, c.AddNode(gpuNode("n", 4, "T4")))
	p := gpuPod("p", 2, 1000)
	devs := gpushare.DeviceSet(0).With(1).With(3)
	b := boundPod(p, "n", devs)
	assert.Equal(t, "1-3", b.Annotations[openb.AnnotationGPUIndex])
	assert.Empty(t, p.Spec.NodeName, "the input pod is not modified")
	assert.NotContains(t, p.Annotations, openb.AnnotationGPUIndex)
	require.NoError(t, c.AddPod(b))
	free := []int64{}
	for _, d := range c.Snapshot().Get("n").Devices() {
		free = append(free, d.FreeMilliGPU)
	}
	assert.Equal(t, []int64{1000, 0, 1000, 0}, free)

	// The replay's bind reports the parsed pod with the chosen devices to
	// the ledger instead: the node ends up the same.
	l := reserve.New(reserve.WithDeviceDecoder(openb.Devices))
	require.NoError(t, l.AddNode(gpuNode("n", 4, "T4")))
	require.NoError(t, l.AddPodInfo(mustPodInfo(p).WithDevices(devs), "n"))
	want, got := c.Snapshot().Get("n"), l.Snapshot().Get("n")
	assert.Equal(t, want.Devices(), got.Devices())
	assert.Equal(t, want.Requested(), got.Requested())
	assert.Equal(t, gpushare.NodeStateOf(want, nil), gpushare.NodeStateOf(got, nil))
}

// randomCluster builds a cache of n GPU nodes with random shares already
// bound on random devices, in the simulator's encoding.
func randomCluster(t testing.TB, r *rand.Rand, n int) *snapshot.Snapshot {
	c := snapshot.NewCacheWithDevices(openb.Devices)
	models := []string{"T4", "P100", "G2"}
	for i := range n {
		node := gpuNode(fmt.Sprintf("n%d", i), r.IntN(9), models[r.IntN(3)])
		require.NoError(t, c.AddNode(node))
		q := node.Status.Allocatable[openb.ResourceGPUCount]
		gpus := int(q.Value())
		for k := range gpus {
			used := []int64{0, 0, 250, 500, 810, 1000}[r.IntN(6)]
			if used == 0 {
				continue
			}
			p := gpuPod(fmt.Sprintf("b%d-%d", i, k), 1, used)
			require.NoError(t, c.AddPod(boundPod(p, node.Name, gpushare.DeviceSet(0).With(k))))
		}
	}
	return c.Snapshot()
}

// TestExplainedGPU: the wrapper scores and chooses devices as
// gpushare.NewScorer does, and explains FGD's choice with the fragmentation
// change.
func TestExplainedGPU(t *testing.T) {
	snap := randomCluster(t, rand.New(rand.NewPCG(7, 8)), 40)
	var infos []*snapshot.NodeInfo
	for _, ni := range snap.Nodes() {
		infos = append(infos, ni)
	}
	pods := []*snapshot.PodInfo{mustPodInfo(gpuPod("share", 1, 500)), mustPodInfo(gpuPod("two", 2, 1000)), mustPodInfo(gpuPod("cpu", 0, 0))}
	var tasks []gpushare.Task
	for _, p := range pods {
		tasks = append(tasks, gpushare.TaskOf(p))
	}
	w, err := gpushare.WorkloadFromTasks(tasks, 95)
	require.NoError(t, err)
	for _, policy := range []gpushare.NodeScorer{gpushare.NewFGD(w), gpushare.BestFit{}, gpushare.GPUClustering{}} {
		plain, wrapped := gpushare.NewScorer(policy), newExplainedGPU(policy)
		assert.Equal(t, plain.Name(), wrapped.Name())
		for _, pi := range pods {
			a, b := make([]int64, len(infos)), make([]int64, len(infos))
			pa, err := plain.Prepare(pi, snap)
			require.NoError(t, err)
			pb, err := wrapped.Prepare(pi, snap)
			require.NoError(t, err)
			pa.Score(infos, a)
			pb.Score(infos, b)
			assert.Equal(t, a, b, "%s %s", policy.Name(), pi.Key())
			for _, ni := range infos {
				da, oka := plain.ChooseDevices(pi, ni)
				db, okb := wrapped.ChooseDevices(pi, ni)
				assert.Equal(t, da, db)
				assert.Equal(t, oka, okb)
			}
			detail := pb.(score.Explainer).Explain(infos[0])
			assert.Contains(t, detail, "devices ")
			if policy.Name() == "FGD" && gpushare.TaskOf(pi).UsesGPU() {
				assert.Contains(t, detail, "fragmentation")
			}
		}
	}
}

// TestRandomGPUDevices: the random policy gives a shared pod a device
// that can host it, drawn from the seed (so some pods land on different
// devices than best fit would choose).
func TestRandomGPUDevices(t *testing.T) {
	c := snapshot.NewCacheWithDevices(openb.Devices)
	require.NoError(t, c.AddNode(gpuNode("n", 8, "T4")))
	require.NoError(t, c.AddPod(boundPod(gpuPod("b", 1, 700), "n", gpushare.DeviceSet(0).With(2))))
	ni := c.Snapshot().Get("n")
	r := newRandomGPU(1)
	pi := mustPodInfo(gpuPod("p", 1, 300))
	seen := map[gpushare.DeviceSet]bool{}
	for range 50 {
		devs, ok := r.ChooseDevices(pi, ni)
		require.True(t, ok)
		require.Equal(t, 1, devs.Len())
		seen[devs] = true
	}
	assert.Greater(t, len(seen), 3, "devices drawn at random")
	_, ok := r.ChooseDevices(mustPodInfo(gpuPod("big", 8, 1000)), ni)
	assert.False(t, ok, "8 whole GPUs do not fit beside a share")
}

// TestRankTieBreak: with the rank tie-break, totals order nodes by the
// policy's total first and by rank second, and no two nodes tie.
func TestRankTieBreak(t *testing.T) {
	snap := randomCluster(t, rand.New(rand.NewPCG(9, 10)), 300) // 300 nodes: two base-101 digits
	var nodes []*v1.Node
	var infos []*snapshot.NodeInfo
	for _, ni := range snap.Nodes() {
		nodes = append(nodes, ni.Node())
		infos = append(infos, ni)
	}
	most, err := score.NewMostAllocated(cpuMemGPU()...)
	require.NoError(t, err)
	base := score.MustProfile(score.Weighted{Scorer: most, Weight: 2})
	p, err := withRankTieBreak(base, nodes, 42)
	require.NoError(t, err)
	require.Len(t, p.Scorers(), 3)
	assert.Equal(t, int64(2*101*101), p.Scorers()[0].Weight)

	pi := mustPodInfo(gpuPod("p", 1, 500))
	plain := make([]int64, len(infos))
	ranked := make([]int64, len(infos))
	require.NoError(t, base.Score(pi, snap, infos, plain))
	require.NoError(t, p.Score(pi, snap, infos, ranked))
	seen := map[int64]bool{}
	for i := range infos {
		assert.False(t, seen[ranked[i]], "two nodes tie at %d", ranked[i])
		seen[ranked[i]] = true
		for j := range infos {
			if plain[i] > plain[j] {
				assert.Greater(t, ranked[i], ranked[j], "the policy's order is kept")
			}
		}
	}
	// The same seed gives the same ranks, another seed others.
	again, _ := withRankTieBreak(base, nodes, 42)
	other, _ := withRankTieBreak(base, nodes, 43)
	a, b := make([]int64, len(infos)), make([]int64, len(infos))
	require.NoError(t, again.Score(pi, snap, infos, a))
	require.NoError(t, other.Score(pi, snap, infos, b))
	assert.Equal(t, ranked, a)
	assert.NotEqual(t, ranked, b)

	// Each digit is its digit of the preference, whatever the batches (one
	// slice refilled, as the framework's scratch) and the order in which
	// the digits score them (the digits share their look-ups).
	r := rand.New(rand.NewPCG(11, 12))
	batch := make([]*snapshot.NodeInfo, 128)
	for round := range 30 {
		at := r.IntN(len(infos))
		for j := range batch {
			if round%3 == 2 { // the cluster's order from a start, skipping some, as the framework's batches
				at = (at + 1 + r.IntN(3)) % len(infos)
			} else {
				at = r.IntN(len(infos))
			}
			batch[j] = infos[at]
		}
		digits := p.Scorers()[1:]
		if round%2 == 1 {
			digits = []score.Weighted{digits[1], digits[0], digits[1]}
		}
		for _, w := range digits {
			ps, err := w.Scorer.Prepare(pi, snap)
			require.NoError(t, err)
			out := make([]int64, len(batch))
			ps.Score(batch[:len(batch)-round], out)
			rt := w.Scorer.(*rankDigit).t
			for j, ni := range batch[:len(batch)-round] {
				pref := rt.pref[rt.pos[ni.Node()]]
				require.Equal(t, pref/w.Weight%digitBase, out[j], "round %d, %s, node %s", round, w.Scorer.Name(), ni.Name())
			}
		}
	}
}

// TestDeparturesFreeDevices: with -departures a pod leaving at its
// deletion_time frees its GPU for a later one; without, the later pod
// finds the GPU taken.
func TestDeparturesFreeDevices(t *testing.T) {
	tmp := t.TempDir()
	nodes := writeFile(t, tmp, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16384,1,T4\n")
	pods := writeFile(t, tmp, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"+
		"late,1000,1024,1,1000,,LS,Running,20,100,20\n"+
		"early,1000,1024,1,1000,,LS,Succeeded,0,10,0\n"+
		"instant,1000,1024,1,1000,,LS,Failed,10,10,10\n")
	place := filepath.Join(tmp, "p.csv")
	for _, tc := range []struct {
		args   []string
		placed float64
	}{{nil, 1}, {[]string{"-departures"}, 3}} {
		rep, _ := jsonReport(t, append([]string{"-nodes", nodes, "-pods", pods, "-policy", "fgd,default", "-placements", place}, tc.args...)...)
		for _, s := range rep.Summaries {
			assert.Equal(t, tc.placed, s.Placed, "%s %v", s.Policy, tc.args)
			assert.Equal(t, 3.0, s.Arrived)
		}
		rows := placementsOf(readPlacements(t, place), "fgd")
		assert.Equal(t, "n1", rows["paib-gpu/early"].node, "creation_time order: early arrives first")
		if tc.placed == 3 {
			assert.True(t, rep.Summaries[0].Results[0].TimeWeighted)
			assert.Equal(t, 2, rep.Summaries[0].Results[0].Departed)
		}
	}
}
