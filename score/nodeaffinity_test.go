package score_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

func labelled(name string, labels map[string]string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func preferred(terms ...v1.PreferredSchedulingTerm) *v1.NodeAffinity {
	return &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}
}

func term(weight int32, exprs ...v1.NodeSelectorRequirement) v1.PreferredSchedulingTerm {
	return v1.PreferredSchedulingTerm{Weight: weight, Preference: v1.NodeSelectorTerm{MatchExpressions: exprs}}
}

func in(key string, values ...string) v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}
}

func affinityPod(na *v1.NodeAffinity) *v1.Pod {
	p := pod("")
	if na != nil {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: na}
	}
	return p
}

// Upstream's published vectors: kube-scheduler v1.37.2
// nodeaffinity/node_affinity_test.go TestNodeAffinityPriority (after
// NormalizeScore: 100 × sum / max sum).
func TestNodeAffinityUpstreamVectors(t *testing.T) {
	label1 := map[string]string{"foo": "bar"}
	label2 := map[string]string{"key": "value"}
	label3 := map[string]string{"az": "az1"}
	label4 := map[string]string{"abc": "az11", "def": "az22"}
	label5 := map[string]string{"foo": "bar", "key": "value", "az": "az1"}
	affinity1 := preferred(term(2, in("foo", "bar")))
	affinity2 := preferred(
		term(2, in("foo", "bar")),
		term(4, in("key", "value")),
		term(5, in("foo", "bar"), in("key", "value"), in("az", "az1")),
	)
	tests := []struct {
		name  string
		pod   *v1.Pod
		nodes []*v1.Node
		added *v1.NodeAffinity
		want  []int64 // nil: skipped
	}{
		{
			// No affinity and no added terms: skipped (upstream PreScore Skip; without
			// PreScore every node scores 0).
			name:  "all nodes are same priority as NodeAffinity is nil",
			pod:   affinityPod(nil),
			nodes: []*v1.Node{labelled("node1", label1), labelled("node2", label2), labelled("node3", label3)},
			want:  nil,
		},
		{
			// Sums 0, 0, 0 → max 0 → 0 each.
			name:  "no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
			pod:   affinityPod(affinity1),
			nodes: []*v1.Node{labelled("node1", label4), labelled("node2", label2), labelled("node3", label3)},
			want:  []int64{0, 0, 0},
		},
		{
			// Sums 2, 0, 0 → 100, 0, 0.
			name:  "only node1 matches the preferred scheduling requirements of pod",
			pod:   affinityPod(affinity1),
			nodes: []*v1.Node{labelled("node1", label1), labelled("node2", label2), labelled("node3", label3)},
			want:  []int64{100, 0, 0},
		},
		{
			// Sums node1 2, node5 2+4+5 = 11, node2 4 → 100×2/11 = 18, 100, 100×4/11 = 36.
			name:  "all nodes matches the preferred scheduling requirements of pod but with different priorities",
			pod:   affinityPod(affinity2),
			nodes: []*v1.Node{labelled("node1", label1), labelled("node5", label5), labelled("node2", label2)},
			want:  []int64{18, 100, 36},
		},
		{
			// Added term foo=bar (2): sums 2, 0 → 100, 0.
			name:  "added affinity",
			pod:   affinityPod(nil),
			nodes: []*v1.Node{labelled("node1", label1), labelled("node2", label2)},
			added: affinity1,
			want:  []int64{100, 0},
		},
		{
			// Added key=value (3) plus the pod's foo=bar (2): sums 2, 3, 5 → 40, 60, 100.
			name:  "added affinity and pod has default affinity",
			pod:   affinityPod(affinity1),
			nodes: []*v1.Node{labelled("node1", label1), labelled("node2", label2), labelled("node3", label5)},
			added: preferred(term(3, in("key", "value"))),
			want:  []int64{40, 60, 100},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := score.NewNodeAffinity(tc.added)
			require.NoError(t, err)
			snap, nodes := cluster(t, tc.nodes)
			got, skipped := final(t, s, tc.pod, snap, nodes)
			if tc.want == nil {
				require.True(t, skipped)
				return
			}
			require.False(t, skipped)
			requireScores(t, nodes, tc.want, got)
		})
	}
}

func TestNodeAffinityBrokenTerm(t *testing.T) {
	// Upstream's message for the broken-affinity vector. The API server
	// refuses such a pod, and so does schedkit's parse, naming the field.
	broken := affinityPod(preferred(term(2, in("invalid key", "bar"))))
	broken.Name = "broken"
	_, err := snapshot.NewPodInfo(broken)
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	require.ErrorContains(t, err, `preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: Invalid value: "invalid key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`)

	_, err = score.NewNodeAffinity(preferred(term(1, v1.NodeSelectorRequirement{Key: "a", Operator: "Near"})))
	require.ErrorIs(t, err, score.ErrInvalidConfig)
	require.ErrorContains(t, err, `addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].operator: Unsupported value: "Near"`)
}

func TestNodeAffinityOperators(t *testing.T) {
	nodes := []*v1.Node{
		labelled("a", map[string]string{"zone": "z1", "gen": "5"}),
		labelled("b", map[string]string{"zone": "z2", "gen": "x"}),
		labelled("c", map[string]string{}),
	}
	op := func(key string, o v1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirement {
		return v1.NodeSelectorRequirement{Key: key, Operator: o, Values: values}
	}
	tests := []struct {
		name string
		term v1.PreferredSchedulingTerm
		want []int64
	}{
		// Each term weight 10; a matching node gets 10 raw, normalised to 100.
		{"NotIn matches a missing label", term(10, op("zone", v1.NodeSelectorOpNotIn, "z1")), []int64{0, 100, 100}},
		{"Exists", term(10, op("zone", v1.NodeSelectorOpExists)), []int64{100, 100, 0}},
		{"DoesNotExist", term(10, op("zone", v1.NodeSelectorOpDoesNotExist)), []int64{0, 0, 100}},
		{"Gt parses the label, non-integers never match", term(10, op("gen", v1.NodeSelectorOpGt, "4")), []int64{100, 0, 0}},
		{"Lt", term(10, op("gen", v1.NodeSelectorOpLt, "6")), []int64{100, 0, 0}},
		{"matchFields metadata.name", v1.PreferredSchedulingTerm{Weight: 10, Preference: v1.NodeSelectorTerm{
			MatchFields: []v1.NodeSelectorRequirement{op("metadata.name", v1.NodeSelectorOpIn, "b")}}}, []int64{0, 100, 0}},
		{"matchFields NotIn", v1.PreferredSchedulingTerm{Weight: 10, Preference: v1.NodeSelectorTerm{
			MatchFields: []v1.NodeSelectorRequirement{op("metadata.name", v1.NodeSelectorOpNotIn, "b")}}}, []int64{100, 0, 100}},
		// A weight 0 term is refused when the pod is parsed, as the API
		// server refuses it (upstream's scorer would drop it).
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := score.NewNodeAffinity(nil)
			require.NoError(t, err)
			snap, infos := cluster(t, nodes)
			got, skipped := final(t, s, affinityPod(preferred(tc.term)), snap, infos)
			require.False(t, skipped)
			requireScores(t, infos, tc.want, got)
		})
	}
}
