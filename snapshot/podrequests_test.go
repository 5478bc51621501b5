package snapshot_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

func TestComputePodRequests(t *testing.T) {
	const mi = 1024 * 1024
	tests := []struct {
		name                 string
		pod                  *v1.Pod
		cpu, mem             int64 // Requested
		nonZeroCPU, nonZeroM int64 // what the pod adds to NodeInfo.NonZeroRequested
		scoreCPU, scoreMem   int64 // pod side of LeastAllocated & co
	}{
		{
			// containers sum: 100m + 200m = 300m; 1Gi + 0 = 1Gi.
			// non-zero: c-1 has no memory request -> 200Mi default.
			name: "two containers",
			pod:  st.MakePod("p").Req("cpu", "100m", "memory", "1Gi").Req("cpu", "200m").Obj(),
			cpu:  300, mem: 1024 * mi,
			nonZeroCPU: 300, nonZeroM: 1024*mi + 200*mi,
			scoreCPU: 300, scoreMem: 1024*mi + 200*mi,
		},
		{
			// init 3000m, container 100m: max(sum=100m, init peak=3000m) = 3000m.
			name: "init heavy",
			pod:  st.MakePod("p").Init("cpu", "3000m").Req("cpu", "100m").Obj(),
			cpu:  3000, mem: 0,
			// non-zero memory: container 200Mi, init peak 200Mi -> 200Mi.
			nonZeroCPU: 3000, nonZeroM: 200 * mi,
			scoreCPU: 3000, scoreMem: 200 * mi,
		},
		{
			// sidecar 500m runs beside the 1000m container: 1500m.
			name: "sidecar plus container",
			pod:  st.MakePod("p").Sidecar("cpu", "500m").Req("cpu", "1000m").Obj(),
			cpu:  1500, nonZeroCPU: 1500, nonZeroM: 400 * mi, scoreCPU: 1500, scoreMem: 400 * mi,
		},
		{
			// plain init 1000m declared after the 500m sidecar peaks at
			// 1000m + 500m = 1500m; sum is 500m + 1000m = 1500m -> 1500m.
			name: "sidecar then plain init",
			pod:  st.MakePod("p").Sidecar("cpu", "500m").Init("cpu", "1000m").Req("cpu", "1000m").Obj(),
			cpu:  1500, nonZeroCPU: 1500, nonZeroM: 400 * mi, scoreCPU: 1500, scoreMem: 400 * mi,
		},
		{
			// overhead is added once: 250m + 50m.
			name: "overhead",
			pod:  st.MakePod("p").Req("cpu", "250m", "memory", "64Mi").Overhead("cpu", "50m", "memory", "16Mi").Obj(),
			cpu:  300, mem: 80 * mi, nonZeroCPU: 300, nonZeroM: 80 * mi, scoreCPU: 300, scoreMem: 80 * mi,
		},
		{
			// explicit zero is not missing: non-zero keeps 0.
			name: "explicit zero",
			pod:  st.MakePod("p").Req("cpu", "0", "memory", "0").Obj(),
			cpu:  0, mem: 0, nonZeroCPU: 0, nonZeroM: 0, scoreCPU: 0, scoreMem: 0,
		},
		{
			// best effort: no requests at all.
			name: "best effort",
			pod:  st.MakePod("p").Req().Obj(),
			cpu:  0, mem: 0, nonZeroCPU: 100, nonZeroM: 200 * mi, scoreCPU: 100, scoreMem: 200 * mi,
		},
		{
			// pod-level cpu 2 overrides containers (100m); memory comes from
			// containers (0 requested -> key missing everywhere) so the node
			// side defaults memory to 200Mi, the scoring side defaults each
			// container's memory: 200Mi.
			name: "pod-level cpu",
			pod:  st.MakePod("p").PodRequests("cpu", "2").Req("cpu", "100m").Obj(),
			cpu:  2000, mem: 0, nonZeroCPU: 2000, nonZeroM: 200 * mi, scoreCPU: 2000, scoreMem: 200 * mi,
		},
		{
			// pod-level memory only, containers have a cpu request on one of
			// two containers: the node side sees cpu present (from c-0) and
			// adds no default for c-1; the scoring side defaults c-1 to 100m.
			name: "pod-level memory, partial container cpu",
			pod:  st.MakePod("p").PodRequests("memory", "1Gi").Req("cpu", "300m").Req().Obj(),
			cpu:  300, mem: 1024 * mi, nonZeroCPU: 300, nonZeroM: 1024 * mi, scoreCPU: 400, scoreMem: 1024 * mi,
		},
		{
			// sub-milli precision sums before rounding up: 0.4m + 0.4m = 0.8m -> 1m.
			name: "sub-milli cpu",
			pod:  st.MakePod("p").Req("cpu", "400u").Req("cpu", "400u").Obj(),
			cpu:  1, nonZeroCPU: 1, nonZeroM: 400 * mi, scoreCPU: 1, scoreMem: 400 * mi,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := snapshot.ComputePodRequests(tt.pod)
			require.NoError(t, err)
			assert.Equal(t, tt.cpu, r.Requested.MilliCPU(), "Requested cpu")
			assert.Equal(t, tt.mem, r.Requested.Memory(), "Requested memory")
			assert.Equal(t, tt.nonZeroCPU, r.NonZeroMilliCPU, "NonZeroMilliCPU")
			assert.Equal(t, tt.nonZeroM, r.NonZeroMemory, "NonZeroMemory")
			assert.Equal(t, tt.scoreCPU, r.Scoring.MilliCPU(), "Scoring cpu")
			assert.Equal(t, tt.scoreMem, r.Scoring.Memory(), "Scoring memory")
		})
	}
}

func TestComputePodRequestsSaturates(t *testing.T) {
	// 50E bytes is above MaxInt64 (~9.22E): saturates instead of wrapping.
	r, err := snapshot.ComputePodRequests(st.MakePod("big").Req("memory", "50E").Req("memory", "50E").Obj())
	require.NoError(t, err)
	assert.Equal(t, int64(math.MaxInt64), r.Requested.Memory())
}

func TestComputePodRequestsNegative(t *testing.T) {
	_, err := snapshot.ComputePodRequests(st.MakePod("neg").Req("cpu", "-1").Obj())
	require.Error(t, err)
	assert.True(t, errors.Is(err, snapshot.ErrNegativeQuantity))
	assert.Contains(t, err.Error(), "default/neg")
	assert.Contains(t, err.Error(), "spec.containers[c-0].resources.requests[cpu]")
}

// A negative limit is refused like a negative request (the API server
// refuses both), on the fast path's shape (regular containers only) and
// on the general one (an init container, pod-level resources), naming
// the pod and field; a limit no formula reads still may not be negative.
func TestComputePodRequestsNegativeLimit(t *testing.T) {
	pods := map[string]*v1.Pod{
		"spec.containers[c-0].resources.limits[memory]=-1Gi": st.MakePod("neg").Req("cpu", "1").Limits("memory", "-1Gi").Obj(),
		"spec.initContainers[init].resources.limits[cpu]=-1": st.MakePod("neg").Req("cpu", "1").Obj(),
		"spec.resources.limits[memory]=-1":                   st.MakePod("neg").Req("cpu", "1").Obj(),
	}
	pods["spec.initContainers[init].resources.limits[cpu]=-1"].Spec.InitContainers = []v1.Container{{Name: "init",
		Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("-1")}}}}
	pods["spec.resources.limits[memory]=-1"].Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("-1")}}
	for field, pod := range pods {
		_, err := snapshot.ComputePodRequests(pod)
		require.ErrorIs(t, err, snapshot.ErrNegativeQuantity, field)
		assert.ErrorContains(t, err, "pod default/neg: "+field, field)
		_, err = snapshot.NewPodInfo(pod)
		require.ErrorIs(t, err, snapshot.ErrNegativeQuantity, field)
	}
	// Non-negative limits are no error.
	_, err := snapshot.ComputePodRequests(st.MakePod("ok").Req("cpu", "1").Limits("cpu", "2", "memory", "0").Obj())
	require.NoError(t, err)
}

func TestExtendedResources(t *testing.T) {
	r, err := snapshot.ComputePodRequests(st.MakePod("gpu").Req("cpu", "1", "nvidia.com/gpu", "2", "hugepages-2Mi", "4Mi", "foo", "3").Obj())
	require.NoError(t, err)
	gpu, ok := snapshot.LookupResource("nvidia.com/gpu")
	require.True(t, ok)
	assert.Equal(t, int64(2), r.Requested.Get(gpu))
	hp, _ := snapshot.LookupResource("hugepages-2Mi")
	assert.Equal(t, int64(4*1024*1024), r.Requested.Get(hp))
	_, ok = snapshot.LookupResource("foo")
	assert.False(t, ok, "unqualified names are not scalar resources")
}
