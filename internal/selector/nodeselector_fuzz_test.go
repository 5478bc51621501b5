package selector

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// refTermMatches is upstream's term semantics built from apimachinery's
// own label and field selectors (component-helpers nodeaffinity
// newNodeSelectorTerm / match): invalid requirement → no match.
func refTermMatches(t *v1.NodeSelectorTerm, node *v1.Node) bool {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return false // dropped: matches nothing on its own
	}
	if len(t.MatchExpressions) > 0 {
		sel := labels.NewSelector()
		for _, r := range t.MatchExpressions {
			op, ok := nodeSelectorOps[r.Operator]
			if !ok {
				return false
			}
			req, err := labels.NewRequirement(r.Key, op, r.Values)
			if err != nil {
				return false
			}
			sel = sel.Add(*req)
		}
		if !sel.Matches(labels.Set(node.Labels)) {
			return false
		}
	}
	if len(t.MatchFields) > 0 {
		var sels []fields.Selector
		for _, r := range t.MatchFields {
			if len(r.Values) != 1 {
				return false
			}
			switch r.Operator {
			case v1.NodeSelectorOpIn:
				sels = append(sels, fields.OneTermEqualSelector(r.Key, r.Values[0]))
			case v1.NodeSelectorOpNotIn:
				sels = append(sels, fields.OneTermNotEqualSelector(r.Key, r.Values[0]))
			default:
				return false
			}
		}
		if node.Name != "" && !fields.AndSelectors(sels...).Matches(fields.Set{"metadata.name": node.Name}) {
			return false
		}
	}
	return true
}

var fuzzOps = []v1.NodeSelectorOperator{
	v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists,
	v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt, "Near",
}

// FuzzNodeSelectorTerm checks the compiled matcher against apimachinery's
// selectors for one term of one label requirement and one field
// requirement on a node with one label.
func FuzzNodeSelectorTerm(f *testing.F) {
	f.Add("zone", uint8(0), "a,b", "zone", "a", uint8(9), "", "n1")
	f.Add("n", uint8(4), "5", "n", "007", uint8(0), "n1", "n1")
	f.Add("n", uint8(5), "-3", "n", "-7", uint8(1), "n1", "n2")
	f.Add("bad key!", uint8(2), "", "k", "v", uint8(0), "a,b", "a")
	f.Add("k", uint8(3), "", "k", "", uint8(6), "x", "x")
	f.Fuzz(func(t *testing.T, key string, op uint8, values, labelKey, labelValue string, fieldOp uint8, fieldValues, nodeName string) {
		req := v1.NodeSelectorRequirement{Key: key, Operator: fuzzOps[int(op)%len(fuzzOps)]}
		if values != "" {
			req.Values = strings.Split(values, ",")
		}
		term := v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{req}}
		if fieldOp < 8 { // sometimes no field requirement
			fr := v1.NodeSelectorRequirement{Key: "metadata.name", Operator: fuzzOps[int(fieldOp)%len(fuzzOps)]}
			if fieldOp%3 == 2 {
				fr.Key = "spec.other"
			}
			if fieldValues != "" {
				fr.Values = strings.Split(fieldValues, ",")
			}
			term.MatchFields = []v1.NodeSelectorRequirement{fr}
		}
		node := &v1.Node{}
		node.Name = nodeName
		node.Labels = map[string]string{labelKey: labelValue}
		sel, _ := CompileNodeSelector(&v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{term}}, nil)
		got, want := MatchNode(&sel, node.Name, handles(node.Labels)), refTermMatches(&term, node)
		if got != want {
			t.Fatalf("term %+v on node %q labels %v: got %v, apimachinery says %v", term, nodeName, node.Labels, got, want)
		}
	})
}
