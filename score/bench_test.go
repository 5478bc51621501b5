package score_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// benchCluster is a seeded synthetic cluster of n nodes: a mix of CPU and
// GPU node shapes, 0–8 bound pods each, some PreferNoSchedule taints,
// zone labels and cached images; and a typical incoming pod (cpu, memory,
// a toleration, a preferred zone, an image some nodes hold).
type benchCluster struct {
	snap  *snapshot.Snapshot
	nodes []*snapshot.NodeInfo
	pod   *snapshot.PodInfo
}

var (
	benchMu       sync.Mutex
	benchClusters = map[int]*benchCluster{}
)

func getBenchCluster(tb testing.TB, n int) *benchCluster {
	benchMu.Lock()
	defer benchMu.Unlock()
	if c, ok := benchClusters[n]; ok {
		return c
	}
	r := rand.New(rand.NewPCG(uint64(n), 7))
	c := snapshot.NewCache()
	shapes := [][]string{
		{"cpu", "16", "memory", "64Gi", "pods", "110"},
		{"cpu", "32", "memory", "128Gi", "pods", "110"},
		{"cpu", "96", "memory", "384Gi", "pods", "110"},
		{"cpu", "64", "memory", "512Gi", "pods", "110", "nvidia.com/gpu", "8"},
	}
	for i := range n {
		w := snapshottest.MakeNode(fmt.Sprintf("node-%05d", i)).Capacity(shapes[r.IntN(len(shapes))]...).
			Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%d", r.IntN(3)))
		if r.IntN(10) == 0 {
			w.Taint("spot", "true", v1.TaintEffectPreferNoSchedule)
		}
		if r.IntN(4) == 0 {
			w.Image(300<<20, "registry.example/app:v1")
		}
		node := w.Obj()
		require.NoError(tb, c.AddNode(node))
		for j := range r.IntN(9) {
			p := snapshottest.MakePod(fmt.Sprintf("p-%d-%d", i, j)).Node(node.Name).Obj()
			p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU:    *resource.NewMilliQuantity(int64(100+r.IntN(4000)), resource.DecimalSI),
				v1.ResourceMemory: *resource.NewQuantity(int64(64+r.IntN(8192))<<20, resource.BinarySI),
			}}}}
			require.NoError(tb, c.AddPod(p))
		}
	}
	snap := c.Snapshot()
	bc := &benchCluster{snap: snap}
	for _, ni := range snap.Nodes() {
		bc.nodes = append(bc.nodes, ni)
	}
	p := snapshottest.MakePod("incoming").Req("cpu", "1500m", "memory", "3Gi").Image("registry.example/app:v1").
		Toleration("spot", v1.TolerationOpEqual, "true", v1.TaintEffectNoSchedule).
		PreferredNodeAffinity(10, v1.LabelTopologyZone, v1.NodeSelectorOpIn, "zone-1").Obj()
	bc.pod = snapshot.MustPodInfo(p)
	benchClusters[n] = bc
	return bc
}

var benchSizes = []int{1000, 5000, 15000}

func mustScorer(s score.Scorer, err error) score.Scorer {
	if err != nil {
		panic(err)
	}
	return s
}

func builtins() []score.Scorer {
	na, _ := score.NewNodeAffinity(nil)
	return []score.Scorer{
		mustScorer(score.NewLeastAllocated()),
		mustScorer(score.NewMostAllocated()),
		mustScorer(score.NewRequestedToCapacityRatio(score.RequestedToCapacityRatioArgs{Shape: []score.UtilizationShapePoint{{0, 10}, {100, 0}}})),
		mustScorer(score.NewBalancedAllocation()),
		score.NewImageLocality(),
		score.NewTaintToleration(),
		na,
		mustScorer(score.NewBinPack()),
		mustScorer(score.NewDominantResource()),
		mustScorer(score.NewTetris()),
	}
}

func benchName(s score.Scorer) string {
	switch fmt.Sprintf("%T", s) {
	case "*score.leastAllocated":
		return "LeastAllocated"
	case "*score.mostAllocated":
		return "MostAllocated"
	case "*score.requestedToCapacityRatio":
		return "RequestedToCapacityRatio"
	}
	return s.Name()
}

// BenchmarkScorer scores one pod against every node with one built-in:
// Prepare (per-pod work) + Score over the batch (+ Normalize). ns/node is
// ns/op divided by the node count; allocs/op are per pod, not per node.
func BenchmarkScorer(b *testing.B) {
	for _, s := range builtins() {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/nodes=%d", benchName(s), n), func(b *testing.B) {
				bc := getBenchCluster(b, n)
				runtime.GC() // the build's garbage is not the loop's
				out := make([]int64, n)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					ps, err := s.Prepare(bc.pod, bc.snap)
					if err != nil {
						b.Fatal(err)
					}
					if ps == nil {
						continue
					}
					ps.Score(bc.nodes, out)
					if nz, ok := ps.(score.Normalizer); ok {
						_ = nz.Normalize(bc.nodes, out)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
			})
		}
	}
}

// BenchmarkProfile is Profile.Score for one pod: the issue's
// LeastAllocated + BalancedAllocation pair, and DefaultProfile.
func BenchmarkProfile(b *testing.B) {
	profiles := []struct {
		name string
		p    *score.Profile
	}{
		{"LeastAllocated+BalancedAllocation", score.MustProfile(
			score.Weighted{Scorer: mustScorer(score.NewLeastAllocated())},
			score.Weighted{Scorer: mustScorer(score.NewBalancedAllocation())})},
		{"Default", score.DefaultProfile()},
	}
	for _, pr := range profiles {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/nodes=%d", pr.name, n), func(b *testing.B) {
				bc := getBenchCluster(b, n)
				runtime.GC() // the build's garbage is not the loop's
				totals := make([]int64, n)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if err := pr.p.Score(bc.pod, bc.snap, bc.nodes, totals); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
			})
		}
	}
}

// realisticCluster is n nodes drawn as the parity generator's realistic
// nodes are (examples/kube-scheduler/parity Gen.Node, which the
// side-by-side BenchmarkScorePerNode uses): cpu and memory allocatable
// from a list that includes 0, each absent for 3 % of nodes, so about one
// node in four lacks one of them; node i has 1+i%7 bound pods whose
// containers request cpu and memory or not, some over-committing small
// nodes. The incoming pod requests 100m and 128Mi.
func realisticCluster(tb testing.TB, n int) *benchCluster {
	benchMu.Lock()
	defer benchMu.Unlock()
	if c, ok := benchClusters[-n]; ok {
		return c
	}
	r := rand.New(rand.NewPCG(uint64(n), 42))
	pick := func(vals ...string) string { return vals[r.IntN(len(vals))] }
	c := snapshot.NewCache()
	for i := range n {
		var capacity []string
		if r.IntN(100) >= 3 {
			capacity = append(capacity, "cpu", pick("0", "500m", "2", "3500m", "4", "7910m", "8", "16", "32", "64", "96"))
		}
		if r.IntN(100) >= 3 {
			capacity = append(capacity, "memory", pick("0", "1Gi", "3Gi", "7935Mi", "16061896Ki", "32Gi", "64Gi", "256Gi", "512Gi", "16G"))
		}
		node := snapshottest.MakeNode(fmt.Sprintf("node-%05d", i)).Capacity(append(capacity, "pods", "110")...).Obj()
		require.NoError(tb, c.AddNode(node))
		for j := range 1 + i%7 {
			p := snapshottest.MakePod(fmt.Sprintf("b-%d-%d", i, j)).Node(node.Name).Obj()
			rl := v1.ResourceList{}
			if r.IntN(6) > 0 {
				rl[v1.ResourceCPU] = resource.MustParse(pick("0", "1m", "100m", "250m", "500m", "1", "1500m", "2", "4", "8"))
			}
			if r.IntN(6) > 0 {
				rl[v1.ResourceMemory] = resource.MustParse(pick("0", "1Mi", "64Mi", "128Mi", "512Mi", "1Gi", "2Gi", "8Gi"))
			}
			p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: rl}}}
			require.NoError(tb, c.AddPod(p))
		}
	}
	snap := c.Snapshot()
	bc := &benchCluster{snap: snap}
	for _, ni := range snap.Nodes() {
		bc.nodes = append(bc.nodes, ni)
	}
	bc.pod = snapshot.MustPodInfo(snapshottest.MakePod("incoming").Req("cpu", "100m", "memory", "128Mi").Obj())
	benchClusters[-n] = bc
	return bc
}

// processCPU is the process's user+system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkProfileRealistic is BenchmarkProfile's LeastAllocated +
// BalancedAllocation pair on realisticCluster: the core half of the
// side-by-side BenchmarkScorePerNode without the kube-scheduler build.
// cpu-ns/node is process CPU time, steadier than ns/node on a shared
// machine.
func BenchmarkProfileRealistic(b *testing.B) { benchRealistic(b, false) }

// BenchmarkScorePodRealistic is BenchmarkProfileRealistic with the
// pending pod decoded (snapshot.NewPodInfo, as a scheduling cycle does for
// a new pod) in every iteration: what the schedkit side of the
// side-by-side BenchmarkScorePerNode times, so that the per-pod fixed
// cost counts per node as it does there.
func BenchmarkScorePodRealistic(b *testing.B) { benchRealistic(b, true) }

// BenchmarkProfileRealisticLines is BenchmarkProfileRealistic without
// the cluster (nil): the fused pair reads the NodeInfos' own lines, as
// for candidates that are not in a Snapshot's or Fork's order and for
// framework's equivalence-cache batches.
func BenchmarkProfileRealisticLines(b *testing.B) { benchRealisticCluster(b, false, false) }

func benchRealistic(b *testing.B, decode bool) { benchRealisticCluster(b, decode, true) }

func benchRealisticCluster(b *testing.B, decode, withCluster bool) {
	prof := score.MustProfile(
		score.Weighted{Scorer: mustScorer(score.NewLeastAllocated())},
		score.Weighted{Scorer: mustScorer(score.NewBalancedAllocation())})
	pod := snapshottest.MakePod("incoming").Namespace("default").Req("cpu", "100m", "memory", "128Mi").Obj()
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			bc := realisticCluster(b, n)
			runtime.GC() // the build's garbage is not the loop's
			totals := make([]int64, n)
			b.ReportAllocs()
			c0 := processCPU()
			for b.Loop() {
				pi := bc.pod
				if decode {
					var err error
					if pi, err = snapshot.NewPodInfo(pod); err != nil {
						b.Fatal(err)
					}
				}
				var cluster score.Cluster
				if withCluster {
					cluster = bc.snap
				}
				if err := prof.Score(pi, cluster, bc.nodes, totals); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((processCPU()-c0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/node")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}

// Per-node scoring allocates nothing: after Prepare, Score (and Normalize)
// over any number of nodes makes zero allocations, for every built-in.
func TestScoreAllocatesNothing(t *testing.T) {
	bc := getBenchCluster(t, 1000)
	out := make([]int64, len(bc.nodes))
	for _, s := range append(builtins(), allScorers(t)...) {
		ps, err := s.Prepare(bc.pod, bc.snap)
		require.NoError(t, err)
		if ps == nil {
			continue
		}
		allocs := testing.AllocsPerRun(20, func() {
			ps.Score(bc.nodes, out)
			if nz, ok := ps.(score.Normalizer); ok {
				_ = nz.Normalize(bc.nodes, out)
			}
		})
		require.Zerof(t, allocs, "%s: Score over %d nodes allocated %v times", benchName(s), len(bc.nodes), allocs)
	}
}

// Profile.Score allocates per pod (the scorers' Prepare), never per node:
// the count is the same for 1000 and 15000 nodes.
func TestProfileAllocationsIndependentOfNodes(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items, so per-call allocations vary")
	}
	prof := score.DefaultProfile()
	count := func(n int) float64 {
		bc := getBenchCluster(t, n)
		totals := make([]int64, n)
		require.NoError(t, prof.Score(bc.pod, bc.snap, bc.nodes, totals)) // warm the pool
		return testing.AllocsPerRun(10, func() {
			if err := prof.Score(bc.pod, bc.snap, bc.nodes, totals); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := count(1000), count(15000)
	require.Equal(t, small, large, "allocations per Score call must not depend on the node count")
	require.LessOrEqual(t, small, 32.0, "allocations per pod")
}
