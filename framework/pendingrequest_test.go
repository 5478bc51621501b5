package framework_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// A pending pod whose status carries more than its spec (status 6 cpu,
// spec 1 cpu) on a 4-cpu node: upstream's NodeResourcesFit PreFilter judges
// it on its spec, 1000m <= 4000m, so the fit filter admits it; the ledger
// must agree (Fits nil, Reserve holds it), and the hold charges the
// status-aware request, 6000m, as upstream's assume does.
func TestScheduleLedgerPendingPodOnSpec(t *testing.T) {
	l := reserve.New()
	require.NoError(t, l.AddNode(snapshottest.MakeNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "10").Obj()))
	p := snapshottest.MakePod("p").Req("cpu", "1").Obj()
	p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
		AllocatedResources: v1.ResourceList{v1.ResourceCPU: resource.MustParse("6")},
		Resources:          &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("6")}}}}
	pod := snapshot.MustPodInfo(p)
	require.Equal(t, int64(1000), pod.Requests().Pending.Get(snapshot.CPU))
	require.Equal(t, int64(6000), pod.Requested().Get(snapshot.CPU))

	reasons, err := l.Fits(pod, "n1")
	require.NoError(t, err)
	assert.Nil(t, reasons, "Fits(pending pod) must judge the spec, as the fit filter does")

	sched, err := framework.New(framework.Config{Seed: 1})
	require.NoError(t, err)
	d, err := sched.Schedule(l, pod)
	require.NoError(t, err)
	assert.Equal(t, "n1", d.Node, "Schedule(ledger, pending pod)")
	ni := l.Snapshot().Get("n1")
	require.NotNil(t, ni)
	assert.Equal(t, int64(6000), ni.Requested().Get(snapshot.CPU), "the hold charges the status-aware request")
}
