package framework

import (
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/schedkit/schedkit/internal/selector"
	"github.com/schedkit/schedkit/snapshot"
)

var _ Filter = (*nodeAffinityPlugin)(nil)

// nodeAffinityPlugin is the filter [NewNodeAffinity] returns.
type nodeAffinityPlugin struct {
	added *selector.NodeSelector
}

// NewNodeAffinity returns a NodeAffinity filter that also enforces
// added.requiredDuringSchedulingIgnoredDuringExecution on every pod
// (upstream NodeAffinityArgs.addedAffinity; the preferred part is for
// scoring and ignored here). nil adds nothing. A malformed selector is an
// error wrapping [ErrInvalidConfig].
//
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
// NewNodeAffinity(nil) enforces nothing beyond the pod's own affinity.
// Selectors are compiled and
// matched by schedkit's one selector engine (internal/selector), which
// the NodeAffinity scorer uses too. Safe for concurrent use. Per node:
// one scan of the node's label handles per requirement, allocates
// nothing.
func NewNodeAffinity(added *v1.NodeAffinity) (Filter, error) {
	f := &nodeAffinityPlugin{}
	if added == nil || added.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return f, nil
	}
	sel, errs := selector.CompileNodeSelector(added.RequiredDuringSchedulingIgnoredDuringExecution,
		field.NewPath("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))
	if len(errs) > 0 {
		return nil, fmt.Errorf("NodeAffinity: %w: %w", errors.Join(errs...), ErrInvalidConfig)
	}
	f.added = &sel
	return f, nil
}

// Name returns "NodeAffinity".
func (*nodeAffinityPlugin) Name() string { return nodeAffinityName }

// PreFilter compiles the pod's nodeSelector and required node affinity
// once; O(requirements × values).
func (f *nodeAffinityPlugin) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	spec := &pod.Pod().Spec
	var required *v1.NodeSelector
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if required == nil && f.added == nil && len(spec.NodeSelector) == 0 {
		return PreFilterResult{}, nil
	}
	c := &affinityFilter{added: f.added, selector: selector.FromSet(spec.NodeSelector)}
	if required != nil {
		sel, _ := selector.CompileNodeSelector(required, nil) // invalid terms match nothing, as upstream's lazy selector
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
	added    *selector.NodeSelector
	selector selector.Selector      // spec.nodeSelector
	required *selector.NodeSelector // nil: no required node affinity
}

// Filter checks one node; allocates nothing. It reads the node's labels
// as handles (NodeInfo.Labels), compared by pointer, instead of the
// label map.
func (c *affinityFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	ls := ni.Labels()
	if c.added != nil && !selector.MatchNode(c.added, ni.Name(), ls) {
		return append(reasons, Reason{Code: CodeEnforcedNodeAffinity, Unresolvable: true})
	}
	if !selector.Match(&c.selector, ls) {
		return append(reasons, Reason{Code: CodeNodeAffinity, Unresolvable: true})
	}
	if c.required != nil && !selector.MatchNode(c.required, ni.Name(), ls) {
		return append(reasons, Reason{Code: CodeNodeAffinity, Unresolvable: true})
	}
	return reasons
}
