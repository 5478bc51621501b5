package parity

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/snapshot"
)

// The deliberate differences from upstream (DESIGN.md principle 6,
// saturating arithmetic). Each case asserts what upstream v1.37.2 computes —
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
