package framework

import (
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
)

func TestTaintToleration(t *testing.T) {
	untolerated := func(taint string) []got {
		return []got{{Code: CodeUntoleratedTaint, Unresolvable: true, Taint: taint}}
	}
	tol := func(key string, op v1.TolerationOperator, value string, effect v1.TaintEffect) v1.Toleration {
		return v1.Toleration{Key: key, Operator: op, Value: value, Effect: effect}
	}
	tests := []struct {
		name   string
		taints []v1.Taint
		tols   []v1.Toleration
		want   []got
	}{
		{
			name:   "a pod having no tolerations can't be scheduled onto a node with nonempty taints",
			taints: []v1.Taint{{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}},
			want:   untolerated("dedicated=user1:NoSchedule"),
		},
		{
			name:   "a pod can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
			taints: []v1.Taint{{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}},
			tols:   []v1.Toleration{tol("dedicated", v1.TolerationOpEqual, "user1", v1.TaintEffectNoSchedule)},
			want:   []got{},
		},
		{
			name:   "a pod can't be scheduled on a dedicated node assigned to user2",
			taints: []v1.Taint{{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}},
			tols:   []v1.Toleration{tol("dedicated", v1.TolerationOpEqual, "user2", v1.TaintEffectNoSchedule)},
			want:   untolerated("dedicated=user1:NoSchedule"),
		},
		{
			name:   "operator Exists tolerates any value",
			taints: []v1.Taint{{Key: "foo", Value: "bar", Effect: v1.TaintEffectNoSchedule}},
			tols:   []v1.Toleration{tol("foo", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule)},
			want:   []got{},
		},
		{
			name: "multiple tolerations, multiple taints, all tolerated",
			taints: []v1.Taint{
				{Key: "dedicated", Value: "user2", Effect: v1.TaintEffectNoSchedule},
				{Key: "foo", Value: "bar", Effect: v1.TaintEffectNoSchedule},
			},
			tols: []v1.Toleration{
				tol("dedicated", v1.TolerationOpEqual, "user2", v1.TaintEffectNoSchedule),
				tol("foo", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule),
			},
			want: []got{},
		},
		{
			name:   "key and value match but effect does not",
			taints: []v1.Taint{{Key: "foo", Value: "bar", Effect: v1.TaintEffectNoSchedule}},
			tols:   []v1.Toleration{tol("foo", v1.TolerationOpEqual, "bar", v1.TaintEffectPreferNoSchedule)},
			want:   untolerated("foo=bar:NoSchedule"),
		},
		{
			name:   "empty toleration effect matches every effect",
			taints: []v1.Taint{{Key: "foo", Value: "bar", Effect: v1.TaintEffectNoExecute}},
			tols:   []v1.Toleration{tol("foo", v1.TolerationOpEqual, "bar", "")},
			want:   []got{},
		},
		{
			name:   "PreferNoSchedule taints are not filtered",
			taints: []v1.Taint{{Key: "foo", Value: "bar", Effect: v1.TaintEffectPreferNoSchedule}},
			tols:   []v1.Toleration{tol("foo", v1.TolerationOpEqual, "blah", v1.TaintEffectPreferNoSchedule)},
			want:   []got{},
		},
		{
			name:   "NoExecute taints are filtered",
			taints: []v1.Taint{{Key: "foo", Effect: v1.TaintEffectNoExecute}},
			want:   untolerated("foo:NoExecute"),
		},
		{
			name: "the first untolerated taint is reported",
			taints: []v1.Taint{
				{Key: "a", Effect: v1.TaintEffectPreferNoSchedule},
				{Key: "b", Value: "1", Effect: v1.TaintEffectNoSchedule},
				{Key: "c", Effect: v1.TaintEffectNoExecute},
				{Key: "d", Effect: v1.TaintEffectNoSchedule},
			},
			tols: []v1.Toleration{tol("b", v1.TolerationOpExists, "", "")},
			want: untolerated("c:NoExecute"),
		},
		{
			name:   "empty key with Exists tolerates everything",
			taints: []v1.Taint{{Key: "foo", Value: "bar", Effect: v1.TaintEffectNoExecute}, {Key: "x", Effect: v1.TaintEffectNoSchedule}},
			tols:   []v1.Toleration{tol("", v1.TolerationOpExists, "", "")},
			want:   []got{},
		},
		{
			name:   "empty key with Exists and an effect tolerates only that effect",
			taints: []v1.Taint{{Key: "foo", Effect: v1.TaintEffectNoSchedule}, {Key: "x", Effect: v1.TaintEffectNoExecute}},
			tols:   []v1.Toleration{tol("", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule)},
			want:   untolerated("x:NoExecute"),
		},
		{
			name:   "empty key with empty operator matches every key with an equal (empty) value",
			taints: []v1.Taint{{Key: "foo", Effect: v1.TaintEffectNoSchedule}},
			tols:   []v1.Toleration{tol("", "", "", "")},
			want:   []got{},
		},
		{
			// TaintTolerationComparisonOperators is alpha and off in v1.37.
			name:   "Gt toleration never matches with the gate off",
			taints: []v1.Taint{{Key: "sla", Value: "950", Effect: v1.TaintEffectNoSchedule}},
			tols:   []v1.Toleration{tol("sla", v1.TolerationOpGt, "900", v1.TaintEffectNoSchedule)},
			want:   untolerated("sla=950:NoSchedule"),
		},
		{
			name:   "Lt toleration never matches with the gate off, Equal still does",
			taints: []v1.Taint{{Key: "sla", Value: "800", Effect: v1.TaintEffectNoSchedule}, {Key: "zone", Value: "a", Effect: v1.TaintEffectNoSchedule}},
			tols: []v1.Toleration{
				tol("sla", v1.TolerationOpLt, "900", v1.TaintEffectNoSchedule),
				tol("zone", v1.TolerationOpEqual, "a", v1.TaintEffectNoSchedule),
			},
			want: untolerated("sla=800:NoSchedule"),
		},
		{
			name: "no taints",
			want: []got{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nw := mkNode("n1").Capacity("cpu", "1", "pods", "10")
			for _, tt := range tc.taints {
				nw.Taint(tt.Key, tt.Value, tt.Effect)
			}
			pw := mkPod("p")
			for _, tt := range tc.tols {
				pw.Toleration(tt.Key, tt.Operator, tt.Value, tt.Effect)
			}
			g := filterOne(t, taintTolerationPlugin{}, pw.Obj(), nw.Obj())
			assert.Equal(t, tc.want, g, "TaintToleration(n1)")
		})
	}
	assert.Equal(t, "node(s) had untolerated taint(s)", (&Reason{Code: CodeUntoleratedTaint}).Message())
}

func TestNodeUnschedulable(t *testing.T) {
	tests := []struct {
		name          string
		unschedulable bool
		tols          []v1.Toleration
		want          []got
	}{
		{name: "schedulable node", want: []got{}},
		{name: "unschedulable node", unschedulable: true, want: []got{{Code: CodeNodeUnschedulable, Unresolvable: true}}},
		{
			name: "unschedulable node, pod tolerates the unschedulable taint", unschedulable: true,
			tols: []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}},
			want: []got{},
		},
		{
			name: "unschedulable node, pod tolerates it only for NoExecute", unschedulable: true,
			tols: []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}},
			want: []got{{Code: CodeNodeUnschedulable, Unresolvable: true}},
		},
		{
			name: "unschedulable node, pod tolerates everything", unschedulable: true,
			tols: []v1.Toleration{{Operator: v1.TolerationOpExists}},
			want: []got{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nw := mkNode("n1").Capacity("cpu", "1", "pods", "10")
			if tc.unschedulable {
				nw.Unschedulable()
			}
			pw := mkPod("p")
			for _, tt := range tc.tols {
				pw.Toleration(tt.Key, tt.Operator, tt.Value, tt.Effect)
			}
			assert.Equal(t, tc.want, filterOne(t, nodeUnschedulablePlugin{}, pw.Obj(), nw.Obj()), "NodeUnschedulable(n1)")
		})
	}
	assert.Equal(t, "node(s) were unschedulable", (&Reason{Code: CodeNodeUnschedulable}).Message())
}
