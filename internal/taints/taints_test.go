package taints

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
)

// TestTolerates: upstream's ToleratesTaint cases (k8s.io/api/core/v1
// toleration_test.go), the comparison operators on and off.
func TestTolerates(t *testing.T) {
	taint := v1.Taint{Key: "gpu", Value: "8", Effect: v1.TaintEffectNoSchedule}
	for _, c := range []struct {
		name    string
		tol     v1.Toleration
		want    bool
		wantCmp bool
	}{
		{name: "equal value", tol: v1.Toleration{Key: "gpu", Operator: v1.TolerationOpEqual, Value: "8", Effect: v1.TaintEffectNoSchedule}, want: true},
		{name: "no operator is Equal", tol: v1.Toleration{Key: "gpu", Value: "8"}, want: true},
		{name: "other value", tol: v1.Toleration{Key: "gpu", Value: "4"}},
		{name: "other effect", tol: v1.Toleration{Key: "gpu", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}},
		{name: "other key", tol: v1.Toleration{Key: "cpu", Operator: v1.TolerationOpExists}},
		{name: "exists, any effect", tol: v1.Toleration{Key: "gpu", Operator: v1.TolerationOpExists}, want: true},
		{name: "empty key with exists", tol: v1.Toleration{Operator: v1.TolerationOpExists}, want: true},
		{name: "Gt below", tol: v1.Toleration{Key: "gpu", Operator: v1.TolerationOpGt, Value: "4"}, wantCmp: true},
		{name: "Gt above", tol: v1.Toleration{Key: "gpu", Operator: v1.TolerationOpGt, Value: "9"}},
		{name: "Lt above", tol: v1.Toleration{Key: "gpu", Operator: v1.TolerationOpLt, Value: "9"}, wantCmp: true},
		{name: "Lt not a number", tol: v1.Toleration{Key: "gpu", Operator: v1.TolerationOpLt, Value: "09"}},
	} {
		want := c.want
		require.Equal(t, want, Tolerates(&c.tol, &taint, false), c.name)
		require.Equal(t, want || c.wantCmp, Tolerates(&c.tol, &taint, true), c.name+", comparison operators on")
		require.Equal(t, want, Any([]v1.Toleration{{Key: "x", Value: "y"}, c.tol}, &taint), c.name+", Any")
	}
	require.False(t, Any(nil, &taint))
}
