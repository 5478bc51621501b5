package framework

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestFilterAllocatesNothing pins the per-node check: a prepared filter
// run on a node, passing or failing, allocates nothing.
func TestFilterAllocatesNothing(t *testing.T) {
	nodes := []*v1.Node{
		mkNode("fits").Capacity("cpu", "8", "memory", "16Gi", "pods", "110", "example.com/gpu", "4").
			Label("zone", "a").Label("kernel", "6").Taint("dedicated", "ml", v1.TaintEffectNoSchedule).Obj(),
		mkNode("fails").Capacity("cpu", "1", "memory", "1Gi", "pods", "1", "example.com/gpu", "1").
			Label("zone", "b").Label("kernel", "x").Taint("other", "", v1.TaintEffectNoExecute).Unschedulable().Obj(),
	}
	bound := mkPod("bound").Req("cpu", "500m").HostPort("", 8080).Node("fails").Obj()
	snap := snapshottest.Snapshot(t, nodes, bound)
	pod := affinityPod(map[string]string{"zone": "a"}, []v1.NodeSelectorTerm{
		exprs(req("zone", v1.NodeSelectorOpIn, "a", "b"), req("kernel", v1.NodeSelectorOpGt, "5")),
		{MatchFields: []v1.NodeSelectorRequirement{req("metadata.name", v1.NodeSelectorOpNotIn, "x")}},
	})
	pod.Spec.Containers = mkPod("p").Req("cpu", "2", "memory", "2Gi", "example.com/gpu", "2").HostPort("", 8080).Obj().Spec.Containers
	pod.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "ml", Effect: v1.TaintEffectNoSchedule}}
	pod.Spec.NodeName = "fits" // so that NodeName has something to check
	pi := snapshot.MustPodInfo(pod)

	buf := make([]Reason, 0, 16)
	for _, f := range DefaultFilters() {
		if f.Name() == podTopologySpreadName || f.Name() == interPodAffinityName {
			continue // they need the cluster (ClusterFilter); TestSpreadFilterAllocatesNothing, TestIPAFilterAndScoreAllocateNothing
		}
		res, err := f.PreFilter(pi)
		require.NoError(t, err)
		require.NotNil(t, res.Filter, "%s prepared no filter", f.Name())
		for _, ni := range snap.Nodes() {
			var n int
			allocs := testing.AllocsPerRun(100, func() {
				n = len(res.Filter.Filter(ni, buf[:0]))
			})
			assert.Zero(t, allocs, "%s.Filter(%s) allocates", f.Name(), ni.Name())
			if ni.Name() == "fits" {
				assert.Zero(t, n, "%s.Filter(fits) failed", f.Name())
			} else {
				assert.NotZero(t, n, "%s.Filter(fails) passed", f.Name())
			}
		}
	}
}

// TestSchedulePodAllocationsIndependentOfNodes: a cycle's allocations are
// per pod (filter and scorer preparation), never per node.
func TestSchedulePodAllocationsIndependentOfNodes(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items, so per-call allocations vary")
	}
	pod := snapshot.MustPodInfo(mkPod("p").Req("cpu", "100m", "memory", "128Mi").Obj())
	allocs := map[int]float64{}
	for _, n := range []int{200, 3000} {
		nodes := genCluster(5, n)
		for _, node := range nodes {
			node.Spec.Taints, node.Spec.Unschedulable = nil, false
		}
		snap := snapshottest.Snapshot(t, nodes)
		s := mustNew(t, Config{PercentageOfNodesToScore: 100})
		_, err := s.SchedulePod(snap, pod) // size the scratch
		require.NoError(t, err)
		allocs[n] = testing.AllocsPerRun(20, func() {
			d, err := s.SchedulePod(snap, pod)
			if err != nil || d.Feasible != n {
				t.Fatalf("SchedulePod: %v, %d feasible, want %d", err, d.Feasible, n)
			}
		})
	}
	assert.Equal(t, allocs[200], allocs[3000], "allocations grow with the node count")
	assert.LessOrEqual(t, allocs[3000], 12.0, "allocations per pod")
}

// TestUnschedulableAllocatesNothingPerNode: a pod that fits none of
// 15,000 nodes allocates the same objects and bytes per cycle as at 1,500
// — 0 per rejected node — and its Diagnosis gives upstream's message,
// the same as with every node's reasons kept (Config.NodeReasons). It
// allocated one 88-byte Reason per rejected node (1.3 MB at 15,000).
func TestUnschedulableAllocatesNothingPerNode(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items, so per-call allocations vary")
	}
	// 64 CPUs fit no node (at most 32); tainted and cordoned nodes fail
	// earlier filters: three kinds of reasons, one per node.
	pod := snapshot.MustPodInfo(mkPod("big").Req("cpu", "64", "memory", "1Gi").Obj())
	for _, par := range []int{1, 2} {
		type cost struct{ allocs, bytes float64 }
		got := map[int]cost{}
		for _, n := range []int{1500, 15000} {
			snap := snapshottest.Snapshot(t, genCluster(5, n))
			s := mustNew(t, Config{Parallelism: par})
			d, err := s.SchedulePod(snap, pod)
			require.NoError(t, err)
			require.NotNil(t, d.Diagnosis)
			assert.Nil(t, d.Diagnosis.Reasons)
			sum := 0
			for _, c := range d.Diagnosis.Counts {
				sum += c.Count
			}
			assert.Equal(t, n, sum, "one reason per node")
			detail, err := mustNew(t, Config{Parallelism: par, NodeReasons: true}).SchedulePod(snap, pod)
			require.NoError(t, err)
			assert.Len(t, detail.Diagnosis.Reasons, n)
			assert.Equal(t, detail.Diagnosis.Message(), d.Diagnosis.Message())
			assert.Equal(t, (&Diagnosis{NumAllNodes: n, Reasons: detail.Diagnosis.Reasons}).Message(), d.Diagnosis.Message(), "counted from the reasons")
			assert.Regexp(t, `^0/`+strconv.Itoa(n)+` nodes are available: \d+ Insufficient cpu, \d+ node\(s\) had untolerated taint\(s\), \d+ node\(s\) were unschedulable\.$`, d.Diagnosis.Message())

			// Scratch grows while the workers meet new kinds of reasons
			// (bounded by kinds × workers, not nodes): warm up, then
			// count over enough runs that a late growth rounds away.
			const runs = 20
			run := func() {
				if d, err := s.SchedulePod(snap, pod); err != nil || d.Diagnosis == nil {
					t.Fatalf("SchedulePod: %v %v", err, d.Node)
				}
			}
			for range 10 {
				run() // also fills the equivalence cache's entry (O(nodes), once)
			}
			allocs := testing.AllocsPerRun(runs, run)
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			for range runs {
				run()
			}
			runtime.ReadMemStats(&ms1)
			got[n] = cost{allocs, float64(ms1.TotalAlloc-ms0.TotalAlloc) / runs}
		}
		t.Logf("parallelism %d: %+v", par, got)
		assert.Equal(t, got[1500].allocs, got[15000].allocs, "parallelism %d: allocations grow with the node count", par)
		assert.Less(t, got[15000].bytes-got[1500].bytes, float64(15000-1500), "parallelism %d: bytes grow with the rejected nodes", par)
		assert.LessOrEqual(t, got[15000].allocs, 30.0, "parallelism %d: allocations per unschedulable pod", par)
	}
}
