package framework

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unique"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/schedkit/schedkit/snapshot"
)

var _ Filter = (*NodeAffinity)(nil)

// NodeAffinity is upstream's NodeAffinity filter (kube-scheduler v1.37
// nodeaffinity/node_affinity.go with k8s.io/component-helpers
// scheduling/corev1/nodeaffinity): a node fits when its labels match every
// spec.nodeSelector entry AND at least one term of the pod's required node
// affinity ([CodeNodeAffinity], unresolvable), and, when the scheduler
// enforces AddedAffinity, that selector too ([CodeEnforcedNodeAffinity]).
//
// Matching follows upstream exactly: empty terms are dropped and a term
// with an invalid requirement (bad key or value, wrong value count, Gt/Lt
// with a non-integer, an unknown operator) matches nothing, so a required
// affinity whose terms are all empty or invalid matches no node.
// matchFields supports metadata.name with In/NotIn and exactly one value.
//
// PreFilter narrows the candidates like upstream's: if every required term
// has a matchFields metadata.name In requirement, only the named nodes
// (union over terms, intersection within one) are filtered, the rest are
// [CodeNotCandidate]; an empty union rejects the pod ("pod affinity terms
// conflict"). A name that matches no node leaves no candidate: a clean
// "unschedulable".
//
// The zero value enforces nothing beyond the pod's own affinity; use
// [NewNodeAffinity] for AddedAffinity. Safe for concurrent use. Per node:
// one label-map look-up per requirement, allocates nothing.
type NodeAffinity struct {
	added *nodeSelector
}

// NewNodeAffinity returns a NodeAffinity filter that also enforces
// added.requiredDuringSchedulingIgnoredDuringExecution on every pod
// (upstream NodeAffinityArgs.addedAffinity; the preferred part is for
// scoring and ignored here). nil adds nothing. A malformed selector is an
// error wrapping [ErrInvalidConfig].
func NewNodeAffinity(added *v1.NodeAffinity) (*NodeAffinity, error) {
	f := &NodeAffinity{}
	if added == nil || added.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return f, nil
	}
	sel, errs := compileNodeSelector(added.RequiredDuringSchedulingIgnoredDuringExecution)
	if len(errs) > 0 {
		return nil, fmt.Errorf("NodeAffinity: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: %w: %w", errors.Join(errs...), ErrInvalidConfig)
	}
	f.added = &sel
	return f, nil
}

// Name returns "NodeAffinity".
func (*NodeAffinity) Name() string { return NodeAffinityName }

// PreFilter compiles the pod's nodeSelector and required node affinity
// once; O(requirements × values).
func (f *NodeAffinity) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	spec := &pod.Pod().Spec
	var required *v1.NodeSelector
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if required == nil && f.added == nil && len(spec.NodeSelector) == 0 {
		return PreFilterResult{}, nil
	}
	c := &affinityFilter{added: f.added}
	// Any order: a node fails on the first missing label, with one reason.
	for k, v := range spec.NodeSelector {
		c.labels = append(c.labels, snapshot.Label{Key: unique.Make(k), Value: unique.Make(v)})
	}
	if required != nil {
		sel, _ := compileNodeSelector(required) // invalid terms match nothing, as upstream's lazy selector
		c.required = &sel
	}
	res := PreFilterResult{Filter: c}
	if required == nil {
		return res, nil
	}
	names, narrowed := affinityNodeNames(required.NodeSelectorTerms)
	switch {
	case narrowed && len(names) == 0:
		return PreFilterResult{Reject: msgAffinityConflict}, nil
	case narrowed:
		res.NodeNames = names
	}
	return res, nil
}

// affinityNodeNames is upstream's NodeAffinity PreFilter narrowing: the
// union over terms of the intersection of each term's matchFields
// metadata.name In values; no narrowing if any term lacks one.
func affinityNodeNames(terms []v1.NodeSelectorTerm) (names []string, narrowed bool) {
	if len(terms) == 0 {
		return nil, false
	}
	union := map[string]struct{}{}
	for _, t := range terms {
		var term map[string]struct{}
		for _, r := range t.MatchFields {
			if r.Key != metav1.ObjectNameField || r.Operator != v1.NodeSelectorOpIn {
				continue
			}
			s := make(map[string]struct{}, len(r.Values))
			for _, v := range r.Values {
				if term == nil {
					s[v] = struct{}{}
				} else if _, ok := term[v]; ok {
					s[v] = struct{}{}
				}
			}
			term = s
		}
		if term == nil {
			return nil, false
		}
		for v := range term {
			union[v] = struct{}{}
		}
	}
	names = make([]string, 0, len(union))
	for v := range union {
		names = append(names, v)
	}
	slices.Sort(names)
	return names, true
}

// affinityFilter is NodeAffinity prepared for one pod.
type affinityFilter struct {
	added    *nodeSelector
	selector [][2]string      // spec.nodeSelector, sorted by key
	labels   []snapshot.Label // selector as handles
	required *nodeSelector    // nil: no required node affinity
}

// Filter checks one node; allocates nothing. spec.nodeSelector compares
// label handles (NodeInfo.Labels) instead of looking the node's label
// map up.
func (c *affinityFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	if c.added != nil && !c.added.matches(ni.Node()) {
		return append(reasons, Reason{Code: CodeEnforcedNodeAffinity, Unresolvable: true})
	}
	if len(c.labels) > 0 && !hasLabels(ni.Labels(), c.labels) {
		return append(reasons, Reason{Code: CodeNodeAffinity, Unresolvable: true})
	}
	if c.required != nil && !c.required.matches(ni.Node()) {
		return append(reasons, Reason{Code: CodeNodeAffinity, Unresolvable: true})
	}
	return reasons
}

// hasLabels reports whether every label of want is among have (a node's
// labels: one value per key); O(len(want) × len(have)) pointer
// comparisons.
func hasLabels(have, want []snapshot.Label) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h.Key == w.Key {
				found = h.Value == w.Value
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// nodeSelector is a compiled v1.NodeSelector: terms are ORed; no terms
// matches nothing.
type nodeSelector struct{ terms []selectorTerm }

// selectorTerm ANDs its label and field requirements.
type selectorTerm struct {
	labels []labelRequirement
	fields []fieldRequirement
}

type labelRequirement struct {
	key    string
	op     v1.NodeSelectorOperator
	values []string
	num    int64 // Gt, Lt
}

type fieldRequirement struct {
	key, value string
	notIn      bool
}

// compileNodeSelector compiles ns, dropping empty terms and terms with an
// invalid requirement (returned as errors, one per problem).
func compileNodeSelector(ns *v1.NodeSelector) (nodeSelector, []error) {
	var sel nodeSelector
	var errs []error
	for i := range ns.NodeSelectorTerms {
		t := &ns.NodeSelectorTerms[i]
		if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
			continue
		}
		ct, terr := compileTerm(t)
		if len(terr) > 0 {
			for _, e := range terr {
				errs = append(errs, fmt.Errorf("nodeSelectorTerms[%d]: %w", i, e))
			}
			continue
		}
		sel.terms = append(sel.terms, ct)
	}
	return sel, errs
}

var selectorOps = map[v1.NodeSelectorOperator]selection.Operator{
	v1.NodeSelectorOpIn:           selection.In,
	v1.NodeSelectorOpNotIn:        selection.NotIn,
	v1.NodeSelectorOpExists:       selection.Exists,
	v1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	v1.NodeSelectorOpGt:           selection.GreaterThan,
	v1.NodeSelectorOpLt:           selection.LessThan,
}

func compileTerm(t *v1.NodeSelectorTerm) (selectorTerm, []error) {
	var ct selectorTerm
	var errs []error
	for j, r := range t.MatchExpressions {
		op, ok := selectorOps[r.Operator]
		if !ok {
			errs = append(errs, fmt.Errorf("matchExpressions[%d].operator: unsupported value %q", j, r.Operator))
			continue
		}
		// apimachinery's label requirement validation decides validity
		// exactly as upstream's selector does.
		if _, err := labels.NewRequirement(r.Key, op, r.Values); err != nil {
			errs = append(errs, fmt.Errorf("matchExpressions[%d]: %w", j, err))
			continue
		}
		lr := labelRequirement{key: r.Key, op: r.Operator, values: r.Values}
		if r.Operator == v1.NodeSelectorOpGt || r.Operator == v1.NodeSelectorOpLt {
			lr.num, _ = parseInt64(r.Values[0]) // validated above
		}
		ct.labels = append(ct.labels, lr)
	}
	for j, r := range t.MatchFields {
		switch r.Operator {
		case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
			if len(r.Values) != 1 {
				errs = append(errs, fmt.Errorf("matchFields[%d].values: must have one element, got %d", j, len(r.Values)))
				continue
			}
			ct.fields = append(ct.fields, fieldRequirement{key: r.Key, value: r.Values[0], notIn: r.Operator == v1.NodeSelectorOpNotIn})
		default:
			errs = append(errs, fmt.Errorf("matchFields[%d].operator: unsupported value %q", j, r.Operator))
		}
	}
	return ct, errs
}

func (s *nodeSelector) matches(node *v1.Node) bool {
	for i := range s.terms {
		if s.terms[i].matches(node) {
			return true
		}
	}
	return false
}

func (t *selectorTerm) matches(node *v1.Node) bool {
	for i := range t.labels {
		if !t.labels[i].matches(node.Labels) {
			return false
		}
	}
	if node.Name == "" { // upstream skips field selectors for an object without fields
		return true
	}
	for _, f := range t.fields {
		var got string
		if f.key == metav1.ObjectNameField {
			got = node.Name
		}
		if (got == f.value) == f.notIn {
			return false
		}
	}
	return true
}

func (r *labelRequirement) matches(ls map[string]string) bool {
	v, ok := ls[r.key]
	switch r.op {
	case v1.NodeSelectorOpIn:
		return ok && slices.Contains(r.values, v)
	case v1.NodeSelectorOpNotIn:
		return !ok || !slices.Contains(r.values, v)
	case v1.NodeSelectorOpExists:
		return ok
	case v1.NodeSelectorOpDoesNotExist:
		return !ok
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if !ok {
			return false
		}
		n, valid := parseInt64(v)
		if !valid {
			return false
		}
		if r.op == v1.NodeSelectorOpGt {
			return n > r.num
		}
		return n < r.num
	}
	return false
}

// parseInt64 accepts exactly what strconv.ParseInt(s, 10, 64) accepts (an
// optional sign, then decimal digits, in range) without allocating an
// error on failure.
func parseInt64(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		neg = true
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	var u uint64
	const lim = uint64(math.MaxInt64) + 1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (lim-uint64(c-'0'))/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if !neg && u > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(u), true // u == 1<<63 wraps to MinInt64, which is right
	}
	return int64(u), true
}
