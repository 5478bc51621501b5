package score_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
)

func taintedNode(name string, taints ...v1.Taint) *v1.Node {
	n := node(name, "cpu", "1")
	n.Spec.Taints = taints
	return n
}

func tolerating(tols ...v1.Toleration) *v1.Pod {
	p := pod("")
	p.Spec.Tolerations = tols
	return p
}

func prefer(key, value string) v1.Taint {
	return v1.Taint{Key: key, Value: value, Effect: v1.TaintEffectPreferNoSchedule}
}

// Upstream's published vectors: kube-scheduler v1.37.2
// tainttoleration/taint_toleration_test.go TestTaintTolerationScore (after
// NormalizeScore). Raw score = untolerated PreferNoSchedule taints; final =
// 100 − 100×raw/max(raw) (all 100 when max is 0).
func TestTaintTolerationUpstreamVectors(t *testing.T) {
	tests := []struct {
		name  string
		pod   *v1.Pod
		nodes []*v1.Node
		cmp   bool
		want  []int64
	}{
		{
			// raw A 0, B 1 (value differs): 100, 0.
			name: "node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
			pod:  tolerating(v1.Toleration{Key: "foo", Operator: v1.TolerationOpEqual, Value: "bar", Effect: v1.TaintEffectPreferNoSchedule}),
			nodes: []*v1.Node{
				taintedNode("node-a", prefer("foo", "bar")),
				taintedNode("node-b", prefer("foo", "blah")),
			},
			want: []int64{100, 0},
		},
		{
			// raw 0, 0, 0: max 0 → all 100.
			name: "the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many tolerable taints a node has",
			pod: tolerating(
				v1.Toleration{Key: "cpu-type", Operator: v1.TolerationOpEqual, Value: "arm64", Effect: v1.TaintEffectPreferNoSchedule},
				v1.Toleration{Key: "disk-type", Operator: v1.TolerationOpEqual, Value: "ssd", Effect: v1.TaintEffectPreferNoSchedule},
			),
			nodes: []*v1.Node{
				taintedNode("node-a"),
				taintedNode("node-b", prefer("cpu-type", "arm64")),
				taintedNode("node-c", prefer("cpu-type", "arm64"), prefer("disk-type", "ssd")),
			},
			want: []int64{100, 100, 100},
		},
		{
			// raw 0, 1, 2: 100 − 100×raw/2 = 100, 50, 0.
			name: "the more intolerable taints a node has, the lower score it gets.",
			pod:  tolerating(v1.Toleration{Key: "foo", Operator: v1.TolerationOpEqual, Value: "bar", Effect: v1.TaintEffectPreferNoSchedule}),
			nodes: []*v1.Node{
				taintedNode("node-a"),
				taintedNode("node-b", prefer("cpu-type", "arm64")),
				taintedNode("node-c", prefer("cpu-type", "arm64"), prefer("disk-type", "ssd")),
			},
			want: []int64{100, 50, 0},
		},
		{
			// NoSchedule tolerations do not count, NoSchedule taints are ignored: raw 0, 0, 2 → 100, 100, 0.
			name: "only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority function",
			pod: tolerating(
				v1.Toleration{Key: "cpu-type", Operator: v1.TolerationOpEqual, Value: "arm64", Effect: v1.TaintEffectNoSchedule},
				v1.Toleration{Key: "disk-type", Operator: v1.TolerationOpEqual, Value: "ssd", Effect: v1.TaintEffectNoSchedule},
			),
			nodes: []*v1.Node{
				taintedNode("node-a"),
				taintedNode("node-b", v1.Taint{Key: "cpu-type", Value: "arm64", Effect: v1.TaintEffectNoSchedule}),
				taintedNode("node-c", prefer("cpu-type", "arm64"), prefer("disk-type", "ssd")),
			},
			want: []int64{100, 100, 0},
		},
		{
			// raw 0, 1 → 100, 0.
			name:  "Default behaviour No taints and tolerations, lands on node with no taints",
			pod:   tolerating(),
			nodes: []*v1.Node{taintedNode("node-a"), taintedNode("node-b", prefer("cpu-type", "arm64"))},
			want:  []int64{100, 0},
		},
		{
			// Gt 950: 800 > 950 false (raw 1), 999 > 950 true (raw 0) → 0, 100.
			name:  "Numeric Gt operator: pod with Gt toleration prefers nodes with matching SLA taint",
			pod:   tolerating(v1.Toleration{Key: "node.kubernetes.io/sla", Operator: "Gt", Value: "950", Effect: v1.TaintEffectPreferNoSchedule}),
			nodes: []*v1.Node{taintedNode("node-a", prefer("node.kubernetes.io/sla", "800")), taintedNode("node-b", prefer("node.kubernetes.io/sla", "999"))},
			cmp:   true,
			want:  []int64{0, 100},
		},
		{
			// Lt 800: 950 < 800 false (raw 1), 700 < 800 true (raw 0) → 0, 100.
			name:  "Numeric Lt operator: pod with Lt toleration prefers nodes with matching SLA taint",
			pod:   tolerating(v1.Toleration{Key: "node.kubernetes.io/sla", Operator: "Lt", Value: "800", Effect: v1.TaintEffectPreferNoSchedule}),
			nodes: []*v1.Node{taintedNode("node-a", prefer("node.kubernetes.io/sla", "950")), taintedNode("node-b", prefer("node.kubernetes.io/sla", "700"))},
			cmp:   true,
			want:  []int64{0, 100},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, nodes := cluster(t, tc.nodes)
			got, _ := final(t, score.NewTaintTolerationForTest(tc.cmp), tc.pod, snap, nodes)
			requireScores(t, nodes, tc.want, got)
		})
	}
}

func TestTaintToleration(t *testing.T) {
	nodes := []*v1.Node{
		taintedNode("plain"),
		taintedNode("sla", prefer("node.kubernetes.io/sla", "999")),
		taintedNode("gpu", prefer("gpu", "true"), v1.Taint{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}),
	}
	tests := []struct {
		name string
		tol  []v1.Toleration
		want []int64
	}{
		{
			// Gate off (default): Gt never tolerates. raw 0, 1, 1 → 100, 0, 0.
			name: "comparison operators off by default",
			tol:  []v1.Toleration{{Key: "node.kubernetes.io/sla", Operator: "Gt", Value: "950", Effect: v1.TaintEffectPreferNoSchedule}},
			want: []int64{100, 0, 0},
		},
		{
			// Exists with no key and no effect tolerates everything: raw 0, 0, 0 → 100 each.
			name: "Exists without key tolerates all",
			tol:  []v1.Toleration{{Operator: v1.TolerationOpExists}},
			want: []int64{100, 100, 100},
		},
		{
			// Empty effect covers PreferNoSchedule: gpu tolerated; raw 0, 1, 0 → 100, 0, 100.
			name: "toleration with empty effect",
			tol:  []v1.Toleration{{Key: "gpu", Value: "true"}},
			want: []int64{100, 0, 100},
		},
		{
			// NoExecute toleration is dropped: raw 0, 1, 1 → 100, 0, 0.
			name: "toleration with another effect is ignored",
			tol:  []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}},
			want: []int64{100, 0, 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, infos := cluster(t, nodes)
			got, _ := final(t, score.NewTaintToleration(), tolerating(tc.tol...), snap, infos)
			requireScores(t, infos, tc.want, got)
		})
	}
	t.Run("explain", func(t *testing.T) {
		snap, infos := cluster(t, nodes)
		ps, err := score.NewTaintToleration().Prepare(podInfo(t, tolerating()), snap)
		require.NoError(t, err)
		require.Equal(t, "untolerated PreferNoSchedule: gpu=true:PreferNoSchedule", ps.(score.Explainer).Explain(infos[2]))
	})
}
