package selector

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"
)

// Selector is a compiled label selector over one object's labels (a
// pod's, a namespace's): its requirements ANDed. The zero Selector
// matches everything; [Nothing] matches nothing.
type Selector struct {
	reqs    []requirement
	nothing bool
}

// Nothing returns a Selector that matches no label set
// (apimachinery's labels.Nothing()).
func Nothing() Selector { return Selector{nothing: true} }

var labelSelectorOps = map[metav1.LabelSelectorOperator]selection.Operator{
	metav1.LabelSelectorOpIn:           selection.In,
	metav1.LabelSelectorOpNotIn:        selection.NotIn,
	metav1.LabelSelectorOpExists:       selection.Exists,
	metav1.LabelSelectorOpDoesNotExist: selection.DoesNotExist,
}

// FromLabelSelector compiles ls as apimachinery's
// metav1.LabelSelectorAsSelector does: nil matches nothing, a selector
// with no matchLabels and no matchExpressions matches everything,
// matchLabels are Equals requirements (checked in key order, so the
// first bad one reported is the same every time), matchExpressions In,
// NotIn, Exists or DoesNotExist. An unknown operator or an invalid
// requirement is an error (upstream's message) and the Selector is the
// zero value, not to be used.
func FromLabelSelector(ls *metav1.LabelSelector) (Selector, error) {
	if ls == nil {
		return Nothing(), nil
	}
	if len(ls.MatchLabels)+len(ls.MatchExpressions) == 0 {
		return Selector{}, nil
	}
	s := Selector{reqs: make([]requirement, 0, len(ls.MatchLabels)+len(ls.MatchExpressions))}
	keys := make([]string, 0, len(ls.MatchLabels))
	for k := range ls.MatchLabels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r, err := newRequirement(k, selection.Equals, []string{ls.MatchLabels[k]}, nil)
		if err != nil {
			return Selector{}, err
		}
		s.reqs = append(s.reqs, r)
	}
	for _, e := range ls.MatchExpressions {
		op, ok := labelSelectorOps[e.Operator]
		if !ok {
			return Selector{}, fmt.Errorf("%q is not a valid label selector operator", e.Operator)
		}
		r, err := newRequirement(e.Key, op, e.Values, nil)
		if err != nil {
			return Selector{}, err
		}
		s.reqs = append(s.reqs, r)
	}
	return s, nil
}

// FromSet compiles a label map as apimachinery's labels.SelectorFromSet
// does (a pod's spec.nodeSelector): every key must have exactly that
// value; keys and values are not validated; nil or empty matches
// everything.
func FromSet(set map[string]string) Selector {
	if len(set) == 0 {
		return Selector{}
	}
	s := Selector{reqs: make([]requirement, 0, len(set))}
	for k, v := range set {
		s.reqs = append(s.reqs, compileRequirement(k, selection.Equals, nil, v))
	}
	slices.SortFunc(s.reqs, func(a, b requirement) int { return strings.Compare(a.key, b.key) })
	return s
}

// Empty reports whether s matches every label set (no requirement, not
// Nothing).
func (s *Selector) Empty() bool { return !s.nothing && len(s.reqs) == 0 }

// Match reports whether a label list (a node's labels as handles)
// satisfies s (labels.Selector.Matches). Allocates nothing.
func Match(s *Selector, ls []Label) bool {
	return !s.nothing && matchAll(s.reqs, ls)
}

// MatchMap reports whether a label map (a pod's or a namespace's
// metadata.labels) satisfies s. Allocates nothing.
func MatchMap(s *Selector, m map[string]string) bool {
	return !s.nothing && matchAllMap(s.reqs, m)
}

// AppendKey appends to b a key of s: two Selectors have equal keys
// exactly when they hold the same requirements (key, operator, values)
// in the same order, or are both [Nothing] — so equal keys match the same
// label sets (selectors that match the same sets may still differ). For
// caches of results per selector. O(requirements × values); allocates
// only to grow b.
func (s *Selector) AppendKey(b []byte) []byte {
	if s.nothing {
		return append(b, 'N')
	}
	b = append(strconv.AppendInt(append(b, 'S'), int64(len(s.reqs)), 10), ':')
	for i := range s.reqs {
		r := &s.reqs[i]
		b = appendField(appendField(b, r.key), string(r.op))
		if r.values == nil {
			b = appendField(append(b, 'O'), r.one)
			continue
		}
		b = append(strconv.AppendInt(append(b, 'V'), int64(len(r.values)), 10), ':')
		for _, v := range r.values {
			b = appendField(b, v)
		}
	}
	return b
}

// appendField appends s length-prefixed, so that no content can forge
// another sequence of fields.
func appendField(b []byte, s string) []byte {
	return append(append(strconv.AppendInt(b, int64(len(s)), 10), ':'), s...)
}

// Namespaces is a set of namespace names, as inter-pod affinity terms
// and topology spread constraints scope their label selectors (upstream's
// AffinityTerm.Namespaces, a sets.Set[string]). The zero value is empty.
// Has is O(log n) and allocates nothing.
type Namespaces struct{ names []string }

// NewNamespaces returns the set of names (duplicates collapse).
func NewNamespaces(names ...string) Namespaces {
	s := slices.Clone(names)
	slices.Sort(s)
	return Namespaces{names: slices.Compact(s)}
}

// Has reports whether ns is in the set.
func (n Namespaces) Has(ns string) bool {
	_, ok := slices.BinarySearch(n.names, ns)
	return ok
}

// Len is the number of names in the set.
func (n Namespaces) Len() int { return len(n.names) }
