package framework

import (
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
