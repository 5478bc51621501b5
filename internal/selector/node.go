package selector

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Term is a compiled v1.NodeSelectorTerm: its label and field
// requirements ANDed.
type Term struct {
	labels []requirement
	fields []fieldReq
}

// fieldReq is a compiled match field (In/NotIn with one value).
type fieldReq struct {
	key, value string
	notIn      bool
}

// NodeSelector is a compiled v1.NodeSelector: its terms ORed; no terms
// matches nothing.
type NodeSelector struct{ terms []Term }

// Weighted is a compiled preferred scheduling term.
type Weighted struct {
	Term
	// Weight is the term's weight, in [-100, 100] for a validated pod
	// (never 0: such terms are dropped).
	Weight int64
}

var nodeSelectorOps = map[v1.NodeSelectorOperator]selection.Operator{
	v1.NodeSelectorOpIn:           selection.In,
	v1.NodeSelectorOpNotIn:        selection.NotIn,
	v1.NodeSelectorOpExists:       selection.Exists,
	v1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	v1.NodeSelectorOpGt:           selection.GreaterThan,
	v1.NodeSelectorOpLt:           selection.LessThan,
}

var (
	validSelectorOps = []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn,
		v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt}
	validFieldOps = []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn}
)

func isEmptyTerm(t *v1.NodeSelectorTerm) bool {
	return len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0
}

// CompileTerm compiles one term (upstream's newNodeSelectorTerm): every
// requirement is checked and every problem reported, as a field error
// under path (nil: no prefix) with upstream's message. A term with errors
// must not be used.
func CompileTerm(t *v1.NodeSelectorTerm, path *field.Path) (Term, []error) {
	var ct Term
	var errs []error
	if len(t.MatchExpressions) != 0 {
		p := path.Child("matchExpressions")
		ct.labels = make([]requirement, 0, len(t.MatchExpressions))
		for i, e := range t.MatchExpressions {
			op, ok := nodeSelectorOps[e.Operator]
			if !ok {
				errs = append(errs, field.NotSupported(p.Index(i).Child("operator"), e.Operator, validSelectorOps))
				continue
			}
			r, err := newRequirement(e.Key, op, e.Values, p.Index(i))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ct.labels = append(ct.labels, r)
		}
	}
	if len(t.MatchFields) != 0 {
		p := path.Child("matchFields")
		ct.fields = make([]fieldReq, 0, len(t.MatchFields))
		for i, e := range t.MatchFields {
			switch e.Operator {
			case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
				if len(e.Values) != 1 {
					errs = append(errs, field.Invalid(p.Index(i).Child("values"), e.Values, "must have one element"))
					continue
				}
				ct.fields = append(ct.fields, fieldReq{key: e.Key, value: e.Values[0], notIn: e.Operator == v1.NodeSelectorOpNotIn})
			default:
				errs = append(errs, field.NotSupported(p.Index(i).Child("operator"), e.Operator, validFieldOps))
			}
		}
	}
	return ct, errs
}

// CompileNodeSelector compiles ns (upstream's NewLazyErrorNodeSelector):
// empty terms are dropped; a term with an invalid requirement is dropped
// too — it matches nothing, as upstream's lazy selector — and its
// problems are returned, each under path.nodeSelectorTerms[i]. A caller
// that must reject bad input (a scheduler's configuration) treats any
// error as fatal; one that must not (a pod's required affinity at
// filtering time) ignores them.
func CompileNodeSelector(ns *v1.NodeSelector, path *field.Path) (NodeSelector, []error) {
	var sel NodeSelector
	var errs []error
	p := path.Child("nodeSelectorTerms")
	for i := range ns.NodeSelectorTerms {
		t := &ns.NodeSelectorTerms[i]
		if isEmptyTerm(t) {
			continue
		}
		ct, terr := CompileTerm(t, p.Index(i))
		if len(terr) > 0 {
			errs = append(errs, terr...)
			continue
		}
		sel.terms = append(sel.terms, ct)
	}
	return sel, errs
}

// CompilePreferred compiles preferred terms (upstream's
// NewPreferredSchedulingTerms): terms with weight 0 or no requirement are
// skipped; any invalid term fails the whole list, with every problem in
// one flattened aggregate error (each under path[i]).
func CompilePreferred(terms []v1.PreferredSchedulingTerm, path *field.Path) ([]Weighted, error) {
	var errs []error
	out := make([]Weighted, 0, len(terms))
	for i := range terms {
		t := &terms[i]
		if t.Weight == 0 || isEmptyTerm(&t.Preference) {
			continue
		}
		ct, e := CompileTerm(&t.Preference, path.Index(i))
		if len(e) > 0 {
			errs = append(errs, e...)
			continue
		}
		out = append(out, Weighted{Term: ct, Weight: int64(t.Weight)})
	}
	if len(errs) > 0 {
		return nil, utilerrors.Flatten(utilerrors.NewAggregate(errs))
	}
	return out, nil
}

// MatchTerm reports whether a node named name with labels ls satisfies t
// (upstream's nodeSelectorTerm.match). Allocates nothing.
func MatchTerm(t *Term, name string, ls []Label) bool {
	if !matchAll(t.labels, ls) {
		return false
	}
	if name == "" { // upstream skips field selectors for an object without fields
		return true
	}
	for _, f := range t.fields {
		var got string
		if f.key == metav1.ObjectNameField {
			got = name
		}
		if (got == f.value) == f.notIn {
			return false
		}
	}
	return true
}

// MatchNode reports whether a node named name with labels ls satisfies
// some term of s. Allocates nothing.
func MatchNode(s *NodeSelector, name string, ls []Label) bool {
	for i := range s.terms {
		if MatchTerm(&s.terms[i], name, ls) {
			return true
		}
	}
	return false
}

// Score is upstream's PreferredSchedulingTerms.Score: the sum of the
// weights of the terms the node satisfies. Allocates nothing.
func Score(terms []Weighted, name string, ls []Label) int64 {
	var s int64
	for i := range terms {
		if MatchTerm(&terms[i].Term, name, ls) {
			s += terms[i].Weight
		}
	}
	return s
}
