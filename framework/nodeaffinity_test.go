package framework

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
)

func req(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func exprs(rs ...v1.NodeSelectorRequirement) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchExpressions: rs}
}

func fieldsTerm(rs ...v1.NodeSelectorRequirement) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchFields: rs}
}

// affinityPod returns a pod with the nodeSelector and, if terms is not
// nil, a required node affinity with those terms.
func affinityPod(selector map[string]string, terms []v1.NodeSelectorTerm) *v1.Pod {
	p := mkPod("p").Obj()
	p.Spec.NodeSelector = selector
	if terms != nil {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
	return p
}

func TestNodeAffinity(t *testing.T) {
	mismatch := []got{{Code: CodeNodeAffinity, Unresolvable: true}}
	tests := []struct {
		name      string
		selector  map[string]string
		terms     []v1.NodeSelectorTerm
		labels    map[string]string
		nodeName  string
		want      []got
		nodeNames []string // PreFilter narrowing; nil: none
		reject    string
		skipped   bool
		// invalid: the API server refuses the pod (k8s v1.37.2
		// ValidatePodSpec), and so does NewPodInfo, with this text; the
		// filter never sees it. Upstream's plugin tests feed such pods to
		// the plugin directly.
		invalid string
	}{
		{name: "no selector, no affinity", want: []got{}, skipped: true},
		{name: "missing labels", selector: map[string]string{"foo": "bar"}, want: mismatch},
		{name: "same labels", selector: map[string]string{"foo": "bar"}, labels: map[string]string{"foo": "bar"}, want: []got{}},
		{name: "node labels are superset", selector: map[string]string{"foo": "bar"}, labels: map[string]string{"foo": "bar", "baz": "blah"}, want: []got{}},
		{name: "node labels are subset", selector: map[string]string{"foo": "bar", "baz": "blah"}, labels: map[string]string{"foo": "bar"}, want: mismatch},
		{
			name:   "matchExpressions In matches",
			terms:  []v1.NodeSelectorTerm{exprs(req("foo", v1.NodeSelectorOpIn, "bar", "value2"))},
			labels: map[string]string{"foo": "bar"}, want: []got{},
		},
		{
			name:   "matchExpressions Gt matches",
			terms:  []v1.NodeSelectorTerm{exprs(req("kernel-version", v1.NodeSelectorOpGt, "0204"))},
			labels: map[string]string{"kernel-version": "0206"}, want: []got{},
		},
		{
			name:   "Gt is strict",
			terms:  []v1.NodeSelectorTerm{exprs(req("n", v1.NodeSelectorOpGt, "5"))},
			labels: map[string]string{"n": "5"}, want: mismatch,
		},
		{
			name:   "matchExpressions Lt with a non-integer node label does not match",
			terms:  []v1.NodeSelectorTerm{exprs(req("kernel-version", v1.NodeSelectorOpLt, "0204"))},
			labels: map[string]string{"kernel-version": "2.6"}, want: mismatch,
		},
		{
			name:   "matchExpressions Lt with a negative node label",
			terms:  []v1.NodeSelectorTerm{exprs(req("n", v1.NodeSelectorOpLt, "3"))},
			labels: map[string]string{"n": "-7"}, want: []got{},
		},
		{
			name:   "Gt with a non-integer value is an invalid term",
			terms:  []v1.NodeSelectorTerm{exprs(req("n", v1.NodeSelectorOpGt, "x"))},
			labels: map[string]string{"n": "5"}, want: mismatch,
		},
		{
			name:   "matchExpressions NotIn matches",
			terms:  []v1.NodeSelectorTerm{exprs(req("mem-type", v1.NodeSelectorOpNotIn, "DDR", "DDR2"))},
			labels: map[string]string{"mem-type": "DDR3"}, want: []got{},
		},
		{
			name:  "NotIn matches a node without the label",
			terms: []v1.NodeSelectorTerm{exprs(req("mem-type", v1.NodeSelectorOpNotIn, "DDR"))},
			want:  []got{},
		},
		{
			name:   "matchExpressions Exists matches",
			terms:  []v1.NodeSelectorTerm{exprs(req("GPU", v1.NodeSelectorOpExists))},
			labels: map[string]string{"GPU": "NVIDIA-GRID-K1"}, want: []got{},
		},
		{
			name:   "DoesNotExist fails a node with the label",
			terms:  []v1.NodeSelectorTerm{exprs(req("GPU", v1.NodeSelectorOpDoesNotExist))},
			labels: map[string]string{"GPU": "x"}, want: mismatch,
		},
		{
			name:   "affinity that doesn't match the node's labels",
			terms:  []v1.NodeSelectorTerm{exprs(req("foo", v1.NodeSelectorOpIn, "value1", "value2"))},
			labels: map[string]string{"foo": "bar"}, want: mismatch,
		},
		{
			name:   "empty MatchExpressions matches no objects",
			terms:  []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{}}},
			labels: map[string]string{"foo": "bar"}, want: mismatch,
		},
		// upstream's "required affinity with no terms matches no objects"
		// is a pod the API server refuses ("must have at least one node
		// selector term"), and so does NewPodInfo: snapshot's
		// TestInvalidSchedulingFieldsRejected.
		{
			name:   "multiple matchExpressions ANDed, all match",
			terms:  []v1.NodeSelectorTerm{exprs(req("GPU", v1.NodeSelectorOpExists), req("GPU", v1.NodeSelectorOpNotIn, "AMD", "INTER"))},
			labels: map[string]string{"GPU": "NVIDIA-GRID-K1"}, want: []got{},
		},
		{
			name:   "multiple matchExpressions ANDed, one fails",
			terms:  []v1.NodeSelectorTerm{exprs(req("GPU", v1.NodeSelectorOpExists), req("GPU", v1.NodeSelectorOpIn, "AMD", "INTER"))},
			labels: map[string]string{"GPU": "NVIDIA-GRID-K1"}, want: mismatch,
		},
		{
			name: "multiple terms ORed",
			terms: []v1.NodeSelectorTerm{
				exprs(req("foo", v1.NodeSelectorOpIn, "bar", "value2")),
				exprs(req("diffkey", v1.NodeSelectorOpIn, "wrong", "value2")),
			},
			labels: map[string]string{"foo": "bar"}, want: []got{},
		},
		{
			name:     "affinity and nodeSelector both match",
			selector: map[string]string{"foo": "bar"},
			terms:    []v1.NodeSelectorTerm{exprs(req("foo", v1.NodeSelectorOpExists))},
			labels:   map[string]string{"foo": "bar"}, want: []got{},
		},
		{
			name:     "affinity matches but nodeSelector does not",
			selector: map[string]string{"foo": "bar"},
			terms:    []v1.NodeSelectorTerm{exprs(req("foo", v1.NodeSelectorOpExists))},
			labels:   map[string]string{"foo": "barrrrrr"}, want: mismatch,
		},
		{
			// Upstream's plugin test: the term matches nothing.
			name:    "refused: an invalid value in a term",
			terms:   []v1.NodeSelectorTerm{exprs(req("foo", v1.NodeSelectorOpNotIn, "invalid value: ___@#$%^"))},
			invalid: `matchExpressions[0].values[0]: Invalid value: "invalid value: ___@#$%^"`,
		},
		{
			// Upstream's plugin test: the valid term still matches.
			name: "refused: an invalid term beside a valid one",
			terms: []v1.NodeSelectorTerm{
				exprs(req("bad key!", v1.NodeSelectorOpExists)),
				exprs(req("foo", v1.NodeSelectorOpExists)),
			},
			invalid: `matchExpressions[0].key: Invalid value: "bad key!"`,
		},
		{
			// Upstream's plugin test: the term matches nothing.
			name:    "refused: unknown operator",
			terms:   []v1.NodeSelectorTerm{exprs(req("foo", "Near", "bar"))},
			invalid: `operator: Invalid value: "Near": not a valid selector operator`,
		},
		{
			name:      "matchFields In matches the node",
			terms:     []v1.NodeSelectorTerm{fieldsTerm(req("metadata.name", v1.NodeSelectorOpIn, "n1"))},
			want:      []got{},
			nodeNames: []string{"n1"},
		},
		{
			name:      "matchFields In does not match the node",
			terms:     []v1.NodeSelectorTerm{fieldsTerm(req("metadata.name", v1.NodeSelectorOpIn, "n2"))},
			want:      mismatch,
			nodeNames: []string{"n2"},
		},
		{
			// Upstream's plugin test: PreFilter narrows to both names, but
			// the field selector wants one value, so no node matches.
			name:    "refused: matchFields In with two values",
			terms:   []v1.NodeSelectorTerm{fieldsTerm(req("metadata.name", v1.NodeSelectorOpIn, "n1", "n2"))},
			invalid: "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
		},
		{
			name:  "matchFields NotIn does not narrow",
			terms: []v1.NodeSelectorTerm{fieldsTerm(req("metadata.name", v1.NodeSelectorOpNotIn, "n1"))},
			want:  mismatch,
		},
		{
			// Upstream's plugin test: the field compares as empty, and
			// NotIn "true" matches.
			name:    "refused: matchFields on another field",
			terms:   []v1.NodeSelectorTerm{fieldsTerm(req("spec.unschedulable", v1.NodeSelectorOpNotIn, "true"))},
			invalid: `matchFields[0].key: Invalid value: "spec.unschedulable": not a valid field selector key`,
		},
		{
			name: "two terms: matchFields does not match, but matchExpressions matches",
			terms: []v1.NodeSelectorTerm{
				fieldsTerm(req("metadata.name", v1.NodeSelectorOpIn, "n2")),
				exprs(req("foo", v1.NodeSelectorOpIn, "bar")),
			},
			labels: map[string]string{"foo": "bar"}, want: []got{},
		},
		{
			name: "one term: matchFields does not match, but matchExpressions matches",
			terms: []v1.NodeSelectorTerm{{
				MatchFields:      []v1.NodeSelectorRequirement{req("metadata.name", v1.NodeSelectorOpIn, "n2")},
				MatchExpressions: []v1.NodeSelectorRequirement{req("foo", v1.NodeSelectorOpIn, "bar")},
			}},
			labels: map[string]string{"foo": "bar"}, want: mismatch, nodeNames: []string{"n2"},
		},
		{
			name: "one term: both matchFields and matchExpressions match",
			terms: []v1.NodeSelectorTerm{{
				MatchFields:      []v1.NodeSelectorRequirement{req("metadata.name", v1.NodeSelectorOpIn, "n1")},
				MatchExpressions: []v1.NodeSelectorRequirement{req("foo", v1.NodeSelectorOpIn, "bar")},
			}},
			labels: map[string]string{"foo": "bar"}, want: []got{}, nodeNames: []string{"n1"},
		},
		{
			name: "two terms of node names: union",
			terms: []v1.NodeSelectorTerm{
				fieldsTerm(req("metadata.name", v1.NodeSelectorOpIn, "n1")),
				fieldsTerm(req("metadata.name", v1.NodeSelectorOpIn, "n2")),
			},
			want: []got{}, nodeNames: []string{"n1", "n2"},
		},
		{
			// Upstream's plugin test: PreFilter narrows to the
			// intersection, n1, where the two-value selector matches
			// nothing.
			name: "refused: two name requirements in one term, two values each",
			terms: []v1.NodeSelectorTerm{fieldsTerm(
				req("metadata.name", v1.NodeSelectorOpIn, "n1", "n3"),
				req("metadata.name", v1.NodeSelectorOpIn, "n1", "n2"),
			)},
			invalid: `matchFields[1].values: Required value: must be only one value`,
		},
		{
			name: "two conflicting name requirements",
			terms: []v1.NodeSelectorTerm{fieldsTerm(
				req("metadata.name", v1.NodeSelectorOpIn, "n1"),
				req("metadata.name", v1.NodeSelectorOpIn, "n2"),
			)},
			reject: "pod affinity terms conflict",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nw := mkNode("n1").Capacity("pods", "10")
			for k, v := range tc.labels {
				nw.Label(k, v)
			}
			pod := affinityPod(tc.selector, tc.terms)
			if _, err := snapshot.NewPodInfo(pod); err != nil || tc.invalid != "" {
				require.NotEmpty(t, tc.invalid, "NewPodInfo refused the pod: %v", err)
				// The filter never runs: a refused case states no result.
				require.True(t, tc.want == nil && tc.nodeNames == nil && tc.labels == nil && tc.reject == "" && !tc.skipped,
					"a refused pod's case sets want, nodeNames, labels, reject or skipped, which are not checked")
				require.ErrorContains(t, err, tc.invalid)
				require.ErrorIs(t, err, snapshot.ErrInvalidObject)
				return
			}
			res, g := runFilter(t, &nodeAffinityPlugin{}, pod, []*v1.Node{nw.Obj()})
			assert.Equal(t, tc.reject, res.Reject, "Reject")
			if tc.reject != "" {
				return
			}
			assert.Equal(t, tc.skipped, res.Filter == nil, "skipped")
			assert.Equal(t, tc.nodeNames, res.NodeNames, "NodeNames")
			assert.Equal(t, tc.want, g["n1"], "NodeAffinity(n1)")
		})
	}
}

func TestNodeAffinityAdded(t *testing.T) {
	added := &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{exprs(req("zone", v1.NodeSelectorOpIn, "foo"))},
	}}
	f, err := NewNodeAffinity(added)
	require.NoError(t, err)
	podAff := []v1.NodeSelectorTerm{exprs(req("x", v1.NodeSelectorOpExists))}
	tests := []struct {
		name   string
		pod    *v1.Pod
		labels map[string]string
		want   []got
	}{
		{name: "matches added affinity and pod's node affinity", pod: affinityPod(nil, podAff), labels: map[string]string{"zone": "foo", "x": "1"}, want: []got{}},
		{name: "matches added affinity but not pod's node affinity", pod: affinityPod(nil, podAff), labels: map[string]string{"zone": "foo"}, want: []got{{Code: CodeNodeAffinity, Unresolvable: true}}},
		{name: "doesn't match added affinity", pod: mkPod("p").Obj(), labels: map[string]string{"zone": "bar"}, want: []got{{Code: CodeEnforcedNodeAffinity, Unresolvable: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nw := mkNode("n1")
			for k, v := range tc.labels {
				nw.Label(k, v)
			}
			assert.Equal(t, tc.want, filterOne(t, f, tc.pod, nw.Obj()))
		})
	}
	assert.Equal(t, "node(s) didn't match scheduler-enforced node affinity", (&Reason{Code: CodeEnforcedNodeAffinity}).Message())
	assert.Equal(t, "node(s) didn't match Pod's node affinity/selector", (&Reason{Code: CodeNodeAffinity}).Message())

	_, err = NewNodeAffinity(&v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{exprs(req("zone", "Near", "foo"))},
	}})
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "addedAffinity")
	f, err = NewNodeAffinity(nil)
	require.NoError(t, err)
	assert.Nil(t, f.(*nodeAffinityPlugin).added)
}
