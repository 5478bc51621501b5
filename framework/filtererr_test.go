package framework

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestFilterErrorSaysItOnce: a PreFilter error of a built-in filter read
// "framework: filter PodTopologySpread: pod default/p: framework:
// PodTopologySpread: pod default/p: ..." (trial 5): the cycle and the
// preemption dry run wrapped an error that already named the filter and
// pod. Each is now said once; other filters' errors still get the prefix.
func TestFilterErrorSaysItOnce(t *testing.T) {
	bad := spreadPod(zoneKey, 1, func(c *v1.TopologySpreadConstraint) {
		c.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	})
	snap := snapshottest.Snapshot(t, []*v1.Node{mkNode("n1").Label(zoneKey, "a").Obj()})
	s, err := New(Config{})
	require.NoError(t, err)
	pi := snapshot.MustPodInfo(bad)
	_, err = s.SchedulePod(snap, pi)
	_, perr := s.Preempt(snap, pi, PreemptOptions{})
	for _, err := range []error{err, perr} {
		require.ErrorIs(t, err, ErrInvalidPod)
		msg := err.Error()
		require.True(t, strings.HasPrefix(msg, "framework: PodTopologySpread: pod "+pi.Key().String()+": "), msg)
		require.Equal(t, 1, strings.Count(msg, "pod "+pi.Key().String()), msg)
		require.Equal(t, 1, strings.Count(msg, "PodTopologySpread"), msg)
	}
}
