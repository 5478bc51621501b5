package parity

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// The deliberate differences from upstream (saturating arithmetic,
// internal/arith: quantities never wrap). Each case asserts what upstream v1.37.2 computes —
// so the test fails, and the list must be revisited, if upstream changes —
// and what schedkit computes instead.

// Difference 1: a CPU request whose milli-value is above int64.
// apimachinery's Quantity.MilliValue() returns 0 for it, so upstream counts
// the pod as requesting no CPU at all; schedkit saturates at math.MaxInt64
// (the pod can never fit, which is the truth). Memory above int64 is not a
// difference: Value() saturates there and so do we.
func TestDifferenceQuantityAboveInt64(t *testing.T) {
	p := pod("huge", "", "", "")
	p.Spec.Containers[0].Resources.Requests = v1.ResourceList{
		v1.ResourceMemory: resource.MustParse("100Ei"), // 100 × 2^60 ≈ 1.15e20 bytes
		v1.ResourceCPU:    resource.MustParse("1e17"),  // 1e20 milli-CPU
	}
	up, err := PodResource(p)
	require.NoError(t, err)
	ours, err := snapshot.ComputePodRequests(p)
	require.NoError(t, err)

	assert.Equal(t, int64(0), up.Resource.GetMilliCPU(), "upstream reads the CPU request as 0")
	assert.Equal(t, int64(math.MaxInt64), ours.Requested.MilliCPU(), "ours saturates")
	// Same on both sides: memory saturates.
	assert.Equal(t, int64(math.MaxInt64), up.Resource.GetMemory())
	assert.Equal(t, int64(math.MaxInt64), ours.Requested.Memory())

	// So upstream's fit filter lets the CPU request through where ours
	// rejects it (both reject the memory).
	p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("1Gi")
	ctx := context.Background()
	u, err := NewUpstream(ctx)
	require.NoError(t, err)
	u.Load([]*v1.Node{node("n", "4", "8Gi")}, nil)
	upRes, err := u.Filter(ctx, u.MustPlugin(ctx, "NodeResourcesFit", nil), p)
	require.NoError(t, err)
	assert.Equal(t, Verdict{Code: fwk.Success}, upRes.Verdicts[0], "upstream admits 1e17 cores")
	cache := snapshot.NewCache()
	require.NoError(t, cache.AddNode(node("n", "4", "8Gi")))
	snap := cache.Snapshot()
	oursRes, err := ourFilter(mustFilter(framework.NewNodeResourcesFit(nil, nil)), snapshot.MustPodInfo(p), []*snapshot.NodeInfo{snap.Get("n")})
	require.NoError(t, err)
	assert.Equal(t, Verdict{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{"Insufficient cpu"}}, oursRes.Verdicts[0])
}

// Difference 2: node totals that overflow int64. Upstream's NodeInfo adds
// with plain int64 and wraps negative, after which the node looks empty to
// the fit filter; schedkit's Requested saturates.
func TestDifferenceRequestedWraps(t *testing.T) {
	n := node("n", "4", "8Gi")
	var bound []*v1.Pod
	for _, name := range []string{"a", "b", "c"} {
		p := pod(name, "n", "", "4Ei") // 4 × 2^60 = 4.61e18 bytes each; sum 1.38e19 > MaxInt64
		bound = append(bound, p)
	}
	u, err := NewUpstream(context.Background())
	require.NoError(t, err)
	u.Load([]*v1.Node{n}, bound)
	upNI, err := u.NodeInfo("n")
	require.NoError(t, err)
	// 3 × 4611686018427387904 mod 2^64 = -4611686018427387904
	assert.Equal(t, int64(-4611686018427387904), upNI.GetRequested().GetMemory(), "upstream wraps")

	cache := snapshot.NewCache()
	require.NoError(t, cache.AddNode(n))
	for _, p := range bound {
		require.NoError(t, cache.AddPod(p))
	}
	ours := cache.Snapshot().Get("n")
	assert.Equal(t, int64(math.MaxInt64), ours.Requested().Memory(), "ours saturates")
	assert.Equal(t, int64(0), ours.Free(snapshot.Memory), "no memory left")
}

// Difference 3: resource scores on a node whose allocatable is above
// MaxInt64/100 (≈ 92 PB of memory or ephemeral storage). Upstream's
// leastRequestedScore computes (capacity − requested) × 100 in int64, which
// wraps, and NodeResourcesFit returns a wrong score (here in range, so
// nothing notices). schedkit computes the same ratio without overflow.
func TestDifferenceScoreAllocatableAboveMaxInt64Over100(t *testing.T) {
	ctx := context.Background()
	n := node("huge", "4", "4")
	n.Status.Allocatable[v1.ResourceMemory] = resource.MustParse("1Ei") // 2^60 bytes > MaxInt64/100
	n.Status.Capacity = n.Status.Allocatable
	p := pod("p", "", "1", "1Gi")
	u, err := NewUpstream(ctx)
	require.NoError(t, err)
	u.Load([]*v1.Node{n}, nil)
	up, err := u.Score(ctx, u.MustPlugin(ctx, "NodeResourcesFit", nil), p)
	require.NoError(t, err)
	// cpu: (4000-1000)*100/4000 = 75
	// memory: (2^60 - 2^30)*100 mod 2^64 = 2^62 - 100*2^30; / 2^60 = 3
	// upstream: (75 + 3)/2 = 39
	assert.Equal(t, []int64{39}, up.Raw, "upstream")

	cache := snapshot.NewCache()
	require.NoError(t, cache.AddNode(n))
	snap := cache.Snapshot()
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	ours, err := ourScores(la, snapshot.MustPodInfo(p), snap, []*snapshot.NodeInfo{snap.Get("huge")})
	require.NoError(t, err)
	// memory: (2^60 - 2^30)*100/2^60 = 99 (exact, truncated); (75 + 99)/2 = 87
	assert.Equal(t, []int64{87}, ours.Raw, "ours")
}

// Difference 4: pod overhead counted twice once the kubelet has reported
// the pod-level status maps (kubernetes/kubernetes#139627, open,
// triage/accepted). The kubelet writes status.allocatedResources as
// resourcehelper.PodRequests of the admitted pod, overhead included, and
// status.resources.requests from the pod cgroup, which holds the
// overhead (kubernetes v1.37.2 pkg/kubelet/kubelet_pods.go). Upstream's
// PodRequests takes max(spec, those maps) and then adds the overhead
// again: container 1000m + overhead 250m, maps at 1250m, charged 1500m.
// schedkit adds the overhead to the spec and container-status terms only:
// max(spec + overhead, maps) = 1250m (snapshot.PodRequests.Requested
// documents the rule). The parity suites give upstream
// CountedOnceForUpstream(pod), on which upstream's own code computes the
// once-counted value; this test shows upstream's value on the pod itself.
func TestDifferenceOverheadCountedOnce(t *testing.T) {
	p := pod("p", "n", "1", "1Gi")
	p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")}
	total := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1250m"), v1.ResourceMemory: resource.MustParse("1Gi")}
	p.Status.AllocatedResources = total
	p.Status.Resources = &v1.ResourceRequirements{Requests: total}

	up, err := PodResource(p)
	require.NoError(t, err)
	ours, err := snapshot.ComputePodRequests(p)
	require.NoError(t, err)
	// upstream: max(1000, 1250, 1250) + 250 = 1500; ours: max(1000 + 250, 1250, 1250) = 1250.
	assert.Equal(t, int64(1500), up.Resource.GetMilliCPU(), "upstream counts the overhead twice")
	assert.Equal(t, int64(1500), up.Non0CPU, "upstream, non-zero")
	assert.Equal(t, int64(1250), ours.Requested.MilliCPU(), "ours counts it once")
	assert.Equal(t, int64(1250), ours.NonZeroMilliCPU, "ours, non-zero")
	// Memory has no overhead here: the same on both sides.
	assert.Equal(t, up.Resource.GetMemory(), ours.Requested.Memory())
	// Upstream's own code on the pod the parity suites give it.
	once, err := PodResource(CountedOnceForUpstream(p))
	require.NoError(t, err)
	assert.Equal(t, int64(1250), once.Resource.GetMilliCPU(), "upstream on CountedOnceForUpstream(p)")

	// Node accounting, and so the fit filter: upstream leaves 2500m of
	// 4000m and rejects a 2750m pod; schedkit leaves 2750m and admits it.
	ctx := context.Background()
	u, err := NewUpstream(ctx)
	require.NoError(t, err)
	n := node("n", "4", "8Gi")
	u.Load([]*v1.Node{n}, []*v1.Pod{p})
	upNI, err := u.NodeInfo("n")
	require.NoError(t, err)
	assert.Equal(t, int64(1500), upNI.GetRequested().GetMilliCPU(), "upstream node requested")
	cache := snapshot.NewCache()
	require.NoError(t, cache.AddNode(n))
	require.NoError(t, cache.AddPod(p))
	snap := cache.Snapshot()
	assert.Equal(t, int64(1250), snap.Get("n").Requested().MilliCPU(), "our node requested")

	incoming := pod("next", "", "2750m", "1Gi")
	upRes, err := u.Filter(ctx, u.MustPlugin(ctx, "NodeResourcesFit", nil), incoming)
	require.NoError(t, err)
	assert.Equal(t, Verdict{Code: fwk.Unschedulable, Reasons: []string{"Insufficient cpu"}}, upRes.Verdicts[0], "upstream")
	oursRes, err := ourFilter(mustFilter(framework.NewNodeResourcesFit(nil, nil)), snapshot.MustPodInfo(incoming), []*snapshot.NodeInfo{snap.Get("n")})
	require.NoError(t, err)
	assert.Equal(t, Verdict{Code: fwk.Success}, oursRes.Verdicts[0], "ours")
}
