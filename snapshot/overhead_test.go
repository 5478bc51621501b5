package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// withPodStatus sets the pod-level status maps the kubelet writes
// (status.allocatedResources and status.resources.requests).
func withPodStatus(p *v1.Pod, allocated, actuated v1.ResourceList) *v1.Pod {
	p.Status.AllocatedResources = allocated
	if actuated != nil {
		p.Status.Resources = &v1.ResourceRequirements{Requests: actuated}
	}
	return p
}

func withContainerStatus(p *v1.Pod, allocated v1.ResourceList) *v1.Pod {
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, v1.ContainerStatus{Name: p.Spec.Containers[0].Name, AllocatedResources: allocated})
	return p
}

func infeasible(p *v1.Pod) *v1.Pod {
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible})
	return p
}

// TestOverheadCountedOnce: the kubelet's pod-level status maps already
// include spec.overhead, so the overhead is added to the spec and the
// container statuses only (issue 17, item 3; upstream counts it twice,
// kubernetes/kubernetes#139627). Requested is what a node is charged;
// Pending what the fit filter checks for a pod not yet bound (the spec
// alone, issue 17 item 6).
func TestOverheadCountedOnce(t *testing.T) {
	const mi = 1024 * 1024
	base := func() *st.PodWrapper {
		return st.MakePod("p").Req("cpu", "1", "memory", "1Gi").Overhead("cpu", "250m", "memory", "100Mi")
	}
	total := st.List("cpu", "1250m", "memory", "1124Mi")
	for _, tc := range []struct {
		name                  string
		pod                   *v1.Pod
		cpu, mem              int64 // Requested
		pendingCPU, pendingMe int64
		upstreamCPU           int64 // what upstream v1.37.2 charges (for the record)
	}{
		// max(1000 + 250, 1250, 1250) = 1250; upstream max(1000, 1250, 1250) + 250 = 1500.
		{"issue: status maps hold the overhead", withPodStatus(base().Obj(), total, total), 1250, 1124 * mi, 1250, 1124 * mi, 1500},
		// no pod-level maps: container statuses exclude it, 1000 + 250.
		{"container statuses", withContainerStatus(base().Obj(), st.List("cpu", "1", "memory", "1Gi")), 1250, 1124 * mi, 1250, 1124 * mi, 1250},
		// only status.allocatedResources: upstream reads the container
		// statuses (none here): the spec, 1000 + 250.
		{"allocated map alone is not read", withPodStatus(base().Obj(), total, nil), 1250, 1124 * mi, 1250, 1124 * mi, 1250},
		// resize up not yet actuated: max(2000 + 250, 1250) = 2250 (upstream 2000 + 250 too).
		{"resize up", withPodStatus(st.MakePod("p").Req("cpu", "2", "memory", "1Gi").Overhead("cpu", "250m", "memory", "100Mi").Obj(), total, total), 2250, 1124 * mi, 2250, 1124 * mi, 2250},
		// resize down not yet actuated: max(500 + 250, 1250) = 1250 (upstream 1250 + 250).
		{"resize down", withPodStatus(st.MakePod("p").Req("cpu", "500m", "memory", "1Gi").Overhead("cpu", "250m", "memory", "100Mi").Obj(), total, total), 1250, 1124 * mi, 750, 1124 * mi, 1500},
		// infeasible resize to 4: the spec is dropped, max(1250, 1250) = 1250
		// (upstream 1500); a pending pod is judged on its spec, 4250.
		{"infeasible resize", infeasible(withPodStatus(st.MakePod("p").Req("cpu", "4", "memory", "1Gi").Overhead("cpu", "250m", "memory", "100Mi").Obj(), total, total)), 1250, 1124 * mi, 4250, 1124 * mi, 1500},
		// pod-level requests cpu 2: max(2000 + 250, 2250, 2250) = 2250 (upstream 2500).
		{"pod-level requests", withPodStatus(base().PodRequests("cpu", "2").Obj(), st.List("cpu", "2250m", "memory", "1124Mi"), st.List("cpu", "2250m", "memory", "1124Mi")), 2250, 1124 * mi, 2250, 1124 * mi, 2500},
		// no overhead: nothing changes.
		{"no overhead", withPodStatus(st.MakePod("p").Req("cpu", "1", "memory", "1Gi").Obj(), st.List("cpu", "1", "memory", "1Gi"), st.List("cpu", "1", "memory", "1Gi")), 1000, 1024 * mi, 1000, 1024 * mi, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := snapshot.ComputePodRequests(tc.pod)
			require.NoError(t, err)
			assert.Equal(t, tc.cpu, r.Requested.MilliCPU(), "Requested cpu (upstream %d)", tc.upstreamCPU)
			assert.Equal(t, tc.mem, r.Requested.Memory(), "Requested memory")
			assert.Equal(t, tc.cpu, r.NonZeroMilliCPU, "NonZeroMilliCPU")
			assert.Equal(t, tc.cpu, r.Scoring.MilliCPU(), "Scoring cpu")
			assert.Equal(t, tc.pendingCPU, r.Pending.MilliCPU(), "Pending cpu")
			assert.Equal(t, tc.pendingMe, r.Pending.Memory(), "Pending memory")
		})
	}
}

// TestOverheadNodeAccounting: a bound pod whose status maps hold the
// overhead charges its node 1250m, not 1500m (issue 17, item 3).
func TestOverheadNodeAccounting(t *testing.T) {
	total := st.List("cpu", "1250m")
	pod := withPodStatus(st.MakePod("p").Req("cpu", "1").Overhead("cpu", "250m").Node("n").Obj(), total, total)
	c := st.Cache(t, []*v1.Node{st.MakeNode("n").Capacity("cpu", "4", "memory", "8Gi", "pods", "10").Obj()}, pod)
	ni := c.Snapshot().Get("n")
	assert.Equal(t, int64(1250), ni.Requested().MilliCPU())
	assert.Equal(t, int64(1250), ni.NonZeroRequested().MilliCPU())
	assert.Equal(t, int64(4000-1250), ni.Free(snapshot.CPU))
}
