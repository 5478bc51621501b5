package score_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// gpuName is an extended resource that may take any amount (the snapshot
// models at most 64 nvidia.com/gpu devices per node, so extremes use this
// one).
const gpuName = v1.ResourceName("vendor.example/accelerator")

// allScorers returns one of every built-in scorer, each configured over cpu,
// memory and GPU where it takes resources.
func allScorers(t testing.TB) []score.Scorer {
	rs := []score.ResourceSpec{{Name: "cpu"}, {Name: "memory", Weight: 2}, {Name: gpuName, Weight: 3}, {Name: "nvidia.com/gpu", Weight: 4}}
	must := func(s score.Scorer, err error) score.Scorer {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	na, err := score.NewNodeAffinity(nil)
	require.NoError(t, err)
	dp, err := score.Config{Scorer: score.TetrisName, Resources: rs, Spread: true}.Build()
	require.NoError(t, err)
	out := []score.Scorer{
		must(score.NewLeastAllocated()),
		must(score.NewLeastAllocated(rs...)),
		must(score.NewMostAllocated(rs...)),
		must(score.NewRequestedToCapacityRatio(score.RequestedToCapacityRatioArgs{Resources: rs, Shape: []score.UtilizationShapePoint{{0, 0}, {30, 10}, {100, 2}}})),
		must(score.NewBalancedAllocation()),
		must(score.NewBalancedAllocation("cpu", "memory", gpuName)),
		score.NewImageLocality(),
		score.NewTaintToleration(),
		na,
		must(score.NewBinPack(rs...)),
		must(score.NewDominantResource(rs...)),
		must(score.NewTetris(rs...)),
		dp,
	}
	return out
}

// amount draws an amount, biased towards edge cases: 0, 1, MaxInt64, near
// MaxInt64/100, or a realistic value up to limit.
func amount(r *rand.Rand, limit int64) int64 {
	switch r.IntN(10) {
	case 0:
		return 0
	case 1:
		return math.MaxInt64
	case 2:
		return math.MaxInt64/100 + r.Int64N(1000)
	case 3:
		return 1
	}
	return r.Int64N(limit)
}

func qty(id snapshot.ResourceID, x int64) resource.Quantity {
	if id == snapshot.CPU {
		return *resource.NewMilliQuantity(x, resource.DecimalSI)
	}
	return *resource.NewQuantity(x, resource.BinarySI)
}

// randomList is cpu (milli), memory (bytes) and GPU amounts, each possibly
// absent.
func randomList(r *rand.Rand) v1.ResourceList {
	rl := v1.ResourceList{}
	if r.IntN(5) > 0 {
		rl[v1.ResourceCPU] = qty(snapshot.CPU, amount(r, 64000))
	}
	if r.IntN(5) > 0 {
		rl[v1.ResourceMemory] = qty(snapshot.Memory, amount(r, 256<<30))
	}
	if r.IntN(3) == 0 {
		rl[gpuName] = qty(snapshot.Memory, amount(r, 8))
	}
	if r.IntN(4) == 0 {
		rl["nvidia.com/gpu"] = qty(snapshot.Memory, r.Int64N(9))
	}
	return rl
}

// randomCluster is n nodes with random allocatable (including none), random
// bound pods, taints, labels and images, and a random incoming pod.
func randomCluster(t testing.TB, r *rand.Rand, n int) (*snapshot.Snapshot, []*snapshot.NodeInfo, *snapshot.PodInfo) {
	c := snapshot.NewCache()
	for i := range n {
		w := snapshottest.MakeNode(fmt.Sprintf("n%d", i)).Label("zone", fmt.Sprintf("z%d", r.IntN(3)))
		if r.IntN(4) == 0 {
			w.Taint("t", fmt.Sprint(r.IntN(2)), v1.TaintEffectPreferNoSchedule)
		}
		if r.IntN(4) == 0 {
			w.Image(amount(r, 2<<30), "img:v1")
		}
		node := w.Obj()
		node.Status.Allocatable = randomList(r)
		if err := c.AddNode(node); err != nil {
			t.Fatal(err)
		}
		for j := range r.IntN(3) {
			p := snapshottest.MakePod(fmt.Sprintf("p%d-%d", i, j)).Node(node.Name).Obj()
			p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: randomList(r)}}}
			if err := c.AddPod(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	snap := c.Snapshot()
	nodes := make([]*snapshot.NodeInfo, 0, n)
	for _, ni := range snap.Nodes() {
		nodes = append(nodes, ni)
	}
	p := snapshottest.MakePod("incoming").Obj()
	p.Spec.Containers = []v1.Container{{Name: "c", Image: "img:v1", Resources: v1.ResourceRequirements{Requests: randomList(r)}}}
	if r.IntN(2) == 0 {
		p.Spec.InitContainers = []v1.Container{{Name: "i", Resources: v1.ResourceRequirements{Requests: randomList(r)}}}
	}
	p.Spec.Tolerations = []v1.Toleration{{Key: "t", Value: "1", Effect: v1.TaintEffectPreferNoSchedule}}
	p.Spec.Affinity = &v1.Affinity{NodeAffinity: preferred(term(int32(1+r.IntN(100)), in("zone", "z1")))}
	return snap, nodes, snapshot.MustPodInfo(p)
}

// Every built-in scorer gives every node a final score in [0, 100]: no
// division by zero, NaN or overflow, whatever the amounts (0, 1, near
// MaxInt64/100, MaxInt64; nodes without allocatable; empty nodes).
func TestPropertyScoresInRange(t *testing.T) {
	scorers := allScorers(t)
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 0x5eed))
		snap, nodes, pod := randomCluster(t, r, 1+r.IntN(20))
		checkInRange(t, scorers, snap, nodes, pod, fmt.Sprintf("seed %d", seed))
	}
}

func checkInRange(t *testing.T, scorers []score.Scorer, snap *snapshot.Snapshot, nodes []*snapshot.NodeInfo, pod *snapshot.PodInfo, what string) {
	t.Helper()
	totals := make([]int64, len(nodes))
	for _, s := range scorers {
		// A one-scorer profile checks the range after normalising.
		prof := score.MustProfile(score.Weighted{Scorer: s})
		require.NoErrorf(t, prof.Score(pod, snap, nodes, totals), "%s: %s", what, s.Name())
		for i, v := range totals {
			if v < score.MinScore || v > score.MaxScore {
				t.Fatalf("%s: %s: Score(%s) = %d, want [0, 100]", what, s.Name(), nodes[i].Name(), v)
			}
		}
	}
}

// FuzzScoresInRange feeds raw amounts for one node, one bound pod and the
// incoming pod to every built-in scorer.
func FuzzScoresInRange(f *testing.F) {
	f.Add(int64(8000), int64(16<<30), int64(8), int64(1000), int64(1<<30), int64(0), int64(3000), int64(2<<30), int64(1))
	f.Add(int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0))
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64))
	f.Add(int64(1), int64(1), int64(1), int64(math.MaxInt64), int64(0), int64(2), int64(math.MaxInt64), int64(1), int64(0))
	scorers := allScorers(f)
	f.Fuzz(func(t *testing.T, ac, am, ag, uc, um, ug, pc, pm, pg int64) {
		abs := func(x int64) int64 {
			if x < 0 {
				return ^x // non-negative, covers MaxInt64
			}
			return x
		}
		list := func(c, m, g int64) v1.ResourceList {
			return v1.ResourceList{
				v1.ResourceCPU:    qty(snapshot.CPU, abs(c)),
				v1.ResourceMemory: qty(snapshot.Memory, abs(m)),
				gpuName:           qty(snapshot.Memory, abs(g)),
			}
		}
		node := snapshottest.MakeNode("n").Obj()
		node.Status.Allocatable = list(ac, am, ag)
		bound := snapshottest.MakePod("b").Node("n").Obj()
		bound.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: list(uc, um, ug)}}}
		c := snapshot.NewCache()
		require.NoError(t, c.AddNode(node))
		require.NoError(t, c.AddPod(bound))
		snap := c.Snapshot()
		in := snapshottest.MakePod("in").Obj()
		in.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: list(pc, pm, pg)}}}
		checkInRange(t, scorers, snap, []*snapshot.NodeInfo{snap.Get("n")}, snapshot.MustPodInfo(in), "fuzz")
	})
}
