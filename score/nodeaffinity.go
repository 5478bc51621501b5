package score

import (
	"fmt"
	"strconv"
	"strings"
	"unique"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/schedkit/schedkit/snapshot"
)

// NodeAffinityName is upstream's plugin name.
const NodeAffinityName = "NodeAffinity"

// NodeAffinity favours nodes matching the pod's preferred node-affinity
// terms: upstream NodeAffinity scoring (kube-scheduler v1.37
// nodeaffinity/node_affinity.go, component-helpers
// scheduling/corev1/nodeaffinity). The raw score is the sum of the weights
// of the terms (the pod's
// spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution
// plus the scorer's added terms) whose every match expression and match
// field holds on the node; the PodScorer is a [Normalizer] that rescales
// the sums to [0, 100] ([DefaultNormalize]: the best node gets 100).
// Terms with weight 0 or no requirements are ignored, as upstream.
//
// A pod with no preferred terms (the field unset) and no added terms is
// skipped (Prepare returns nil, upstream's PreScore Skip). A term that does
// not parse (bad key, unknown operator, Gt with a non-integer, ...) fails
// Prepare with an error wrapping [ErrInvalidPod] carrying upstream's
// message.
//
// Required affinity and nodeSelector are filters, not scores, and are not
// evaluated here. O(terms × requirements) per node, each requirement one
// label look-up in the node's label map (labels are maps, so this is the
// other exception to the no-look-up rule); allocates nothing per node;
// safe for concurrent use.
type NodeAffinity struct {
	added []prefTerm
	// hasAdded is upstream's addedPrefSchedTerms != nil: the added
	// affinity lists preferred terms (even if all have weight 0).
	hasAdded bool
}

var _ Scorer = (*NodeAffinity)(nil)

// NewNodeAffinity returns the scorer. added is upstream's
// NodeAffinityArgs.AddedAffinity (nil for none): its preferred terms are
// added to every pod's; its required selector is validated but is a
// filter's concern. A term that does not parse is an error wrapping
// [ErrInvalidConfig].
func NewNodeAffinity(added *v1.NodeAffinity) (*NodeAffinity, error) {
	s := &NodeAffinity{}
	if added == nil {
		return s, nil
	}
	if ns := added.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		var errs []error
		p := field.NewPath("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
		for i := range ns.NodeSelectorTerms {
			if _, e := parseTerm(&ns.NodeSelectorTerms[i], p.Index(i)); len(e) > 0 {
				errs = append(errs, e...)
			}
		}
		if len(errs) > 0 {
			return nil, fmt.Errorf("score: NodeAffinity: %v: %w", utilerrors.Flatten(utilerrors.NewAggregate(errs)), ErrInvalidConfig)
		}
	}
	if terms := added.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) != 0 {
		ts, err := parsePreferred(terms, field.NewPath("addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution"))
		if err != nil {
			return nil, fmt.Errorf("score: NodeAffinity: %v: %w", err, ErrInvalidConfig)
		}
		s.added, s.hasAdded = ts, true
	}
	return s, nil
}

// Name returns [NodeAffinityName].
func (*NodeAffinity) Name() string { return NodeAffinityName }

// labelReq is a parsed match expression. Key and values are also held as
// handles, compared with a node's [snapshot.NodeInfo.Labels] by pointer.
type labelReq struct {
	key    unique.Handle[string]
	op     selection.Operator
	values []unique.Handle[string]
	num    int64 // Gt / Lt operand
}

// fieldReq is a parsed match field (metadata.name In/NotIn one value).
type fieldReq struct {
	key, value string
	notIn      bool
}

type prefTerm struct {
	weight int64
	labels []labelReq // nil: no matchExpressions
	fields []fieldReq // nil: no matchFields
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

// parseTerm is upstream's newNodeSelectorTerm: label requirements are
// validated by apimachinery's labels.NewRequirement, field requirements
// must be In/NotIn with one value.
func parseTerm(t *v1.NodeSelectorTerm, path *field.Path) (prefTerm, []error) {
	var pt prefTerm
	var errs []error
	if len(t.MatchExpressions) != 0 {
		p := path.Child("matchExpressions")
		pt.labels = make([]labelReq, 0, len(t.MatchExpressions))
		for i, e := range t.MatchExpressions {
			op, ok := nodeSelectorOps[e.Operator]
			if !ok {
				errs = append(errs, field.NotSupported(p.Index(i).Child("operator"), e.Operator, validSelectorOps))
				continue
			}
			if _, err := labels.NewRequirement(e.Key, op, e.Values, field.WithPath(p.Index(i))); err != nil {
				errs = append(errs, err)
				continue
			}
			r := labelReq{key: unique.Make(e.Key), op: op, values: make([]unique.Handle[string], len(e.Values))}
			for j, v := range e.Values {
				r.values[j] = unique.Make(v)
			}
			if op == selection.GreaterThan || op == selection.LessThan {
				r.num, _ = strconv.ParseInt(e.Values[0], 10, 64) // validated above
			}
			pt.labels = append(pt.labels, r)
		}
	}
	if len(t.MatchFields) != 0 {
		p := path.Child("matchFields")
		pt.fields = make([]fieldReq, 0, len(t.MatchFields))
		for i, e := range t.MatchFields {
			switch e.Operator {
			case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
				if len(e.Values) != 1 {
					errs = append(errs, field.Invalid(p.Index(i).Child("values"), e.Values, "must have one element"))
					continue
				}
				pt.fields = append(pt.fields, fieldReq{key: e.Key, value: e.Values[0], notIn: e.Operator == v1.NodeSelectorOpNotIn})
			default:
				errs = append(errs, field.NotSupported(p.Index(i).Child("operator"), e.Operator, validFieldOps))
			}
		}
	}
	return pt, errs
}

// parsePreferred is upstream's NewPreferredSchedulingTerms: weight-0 and
// empty terms are skipped, all parse errors are reported together.
func parsePreferred(terms []v1.PreferredSchedulingTerm, path *field.Path) ([]prefTerm, error) {
	var errs []error
	out := make([]prefTerm, 0, len(terms))
	for i := range terms {
		t := &terms[i]
		if t.Weight == 0 || (len(t.Preference.MatchExpressions) == 0 && len(t.Preference.MatchFields) == 0) {
			continue
		}
		pt, e := parseTerm(&t.Preference, path.Index(i))
		if len(e) > 0 {
			errs = append(errs, e...)
			continue
		}
		pt.weight = int64(t.Weight)
		out = append(out, pt)
	}
	if len(errs) > 0 {
		return nil, utilerrors.Flatten(utilerrors.NewAggregate(errs))
	}
	return out, nil
}

// Prepare parses the pod's preferred terms once; nil when there are none
// and no added terms.
func (s *NodeAffinity) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	var pref []v1.PreferredSchedulingTerm
	if a := pod.Pod().Spec.Affinity; a != nil && a.NodeAffinity != nil {
		pref = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	if pref == nil && !s.hasAdded {
		return nil, nil
	}
	terms := s.added
	if pref != nil {
		ts, err := parsePreferred(pref, nil)
		if err != nil {
			return nil, fmt.Errorf("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution: %v: %w", err, ErrInvalidPod)
		}
		terms = append(append(make([]prefTerm, 0, len(s.added)+len(ts)), s.added...), ts...)
	}
	return &affinityPod{terms: terms}, nil
}

type affinityPod struct {
	terms []prefTerm
}

func (r *labelReq) matches(ls []snapshot.Label) bool {
	var val unique.Handle[string]
	ok := false
	for i := range ls {
		if ls[i].Key == r.key {
			val, ok = ls[i].Value, true
			break
		}
	}
	switch r.op {
	case selection.In:
		return ok && hasValue(r.values, val)
	case selection.NotIn:
		return !ok || !hasValue(r.values, val)
	case selection.Exists:
		return ok
	case selection.DoesNotExist:
		return !ok
	case selection.GreaterThan, selection.LessThan:
		if !ok {
			return false
		}
		v, err := strconv.ParseInt(val.Value(), 10, 64)
		if err != nil {
			return false
		}
		if r.op == selection.GreaterThan {
			return v > r.num
		}
		return v < r.num
	}
	return false
}

func hasValue(values []unique.Handle[string], v unique.Handle[string]) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

// matches is upstream's nodeSelectorTerm.match: every label requirement
// (against the node's labels as handles: a scan of one array instead of
// map look-ups that miss cache on a cold node), and every field
// requirement.
func (t *prefTerm) matches(n *snapshot.NodeInfo) bool {
	if t.labels != nil {
		ls := n.Labels()
		for i := range t.labels {
			if !t.labels[i].matches(ls) {
				return false
			}
		}
	}
	if t.fields != nil && n.Name() != "" {
		for _, f := range t.fields {
			var got string
			if f.key == "metadata.name" {
				got = n.Name()
			}
			if (got == f.value) == f.notIn {
				return false
			}
		}
	}
	return true
}

func (p *affinityPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	for i, n := range nodes {
		var s int64
		for j := range p.terms {
			if p.terms[j].matches(n) {
				s += p.terms[j].weight
			}
		}
		out[i] = s
	}
}

// Normalize rescales the weight sums to [0, 100].
func (p *affinityPod) Normalize(_ []*snapshot.NodeInfo, scores []int64) error {
	DefaultNormalize(scores, false)
	return nil
}

// Explain lists the matching terms by index and weight.
func (p *affinityPod) Explain(n *snapshot.NodeInfo) string {
	var b strings.Builder
	var s int64
	for j := range p.terms {
		if p.terms[j].matches(n) {
			fmt.Fprintf(&b, "term %d (weight %d) matches; ", j, p.terms[j].weight)
			s += p.terms[j].weight
		}
	}
	return fmt.Sprintf("%ssum %d of %d terms", b.String(), s, len(p.terms))
}
