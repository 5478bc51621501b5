package score

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/schedkit/schedkit/internal/selector"
	"github.com/schedkit/schedkit/snapshot"
)

// NodeAffinityName is upstream's plugin name.
const NodeAffinityName = "NodeAffinity"

// nodeAffinity is the scorer [NewNodeAffinity] returns.
type nodeAffinity struct {
	added []selector.Weighted
	// hasAdded is upstream's addedPrefSchedTerms != nil: the added
	// affinity lists preferred terms (even if all have weight 0).
	hasAdded bool
}

var _ Scorer = (*nodeAffinity)(nil)

// NewNodeAffinity returns the scorer. added is upstream's
// NodeAffinityArgs.AddedAffinity (nil for none): its preferred terms are
// added to every pod's; its required selector is validated but is a
// filter's concern. A term that does not parse is an error wrapping
// [ErrInvalidConfig].
//
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
// evaluated here. Terms are compiled and matched by schedkit's one
// selector engine (internal/selector), which the NodeAffinity filter uses
// too. O(terms × requirements) per node, each requirement one scan of the
// node's label handles; allocates nothing per node; safe for concurrent
// use.
func NewNodeAffinity(added *v1.NodeAffinity) (Scorer, error) {
	s := &nodeAffinity{}
	if added == nil {
		return s, nil
	}
	if ns := added.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		if _, errs := selector.CompileNodeSelector(ns, field.NewPath("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution")); len(errs) > 0 {
			return nil, fmt.Errorf("score: NodeAffinity: %v: %w", utilerrors.Flatten(utilerrors.NewAggregate(errs)), ErrInvalidConfig)
		}
	}
	if terms := added.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) != 0 {
		ts, err := selector.CompilePreferred(terms, field.NewPath("addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution"))
		if err != nil {
			return nil, fmt.Errorf("score: NodeAffinity: %v: %w", err, ErrInvalidConfig)
		}
		s.added, s.hasAdded = ts, true
	}
	return s, nil
}

// Name returns [NodeAffinityName].
func (*nodeAffinity) Name() string { return NodeAffinityName }

// Prepare parses the pod's preferred terms once; nil when there are none
// and no added terms.
func (s *nodeAffinity) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	var pref []v1.PreferredSchedulingTerm
	if a := pod.Pod().Spec.Affinity; a != nil && a.NodeAffinity != nil {
		pref = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	if pref == nil && !s.hasAdded {
		return nil, nil
	}
	terms := s.added
	if pref != nil {
		ts, err := selector.CompilePreferred(pref, nil)
		if err != nil {
			return nil, fmt.Errorf("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution: %v: %w", err, ErrInvalidPod)
		}
		terms = append(append(make([]selector.Weighted, 0, len(s.added)+len(ts)), s.added...), ts...)
	}
	return &affinityPod{terms: terms}, nil
}

type affinityPod struct {
	terms []selector.Weighted
}

// Score sums, per node, the weights of the terms its labels (as handles,
// compared by pointer: a scan of one array instead of map look-ups that
// miss cache on a cold node) and name satisfy.
func (p *affinityPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	for i, n := range nodes {
		out[i] = selector.Score(p.terms, n.Name(), n.Labels())
	}
}

// Normalize rescales the weight sums to [0, 100].
func (p *affinityPod) Normalize(_ []*snapshot.NodeInfo, scores []int64) error {
	DefaultNormalize(scores, false)
	return nil
}

// normalizesByMax: Normalize is DefaultNormalize.
func (p *affinityPod) normalizesByMax() (reverse bool) { return false }

// Explain lists the matching terms by index and weight.
func (p *affinityPod) Explain(n *snapshot.NodeInfo) string {
	var b strings.Builder
	var s int64
	ls := n.Labels()
	for j := range p.terms {
		if selector.MatchTerm(&p.terms[j].Term, n.Name(), ls) {
			fmt.Fprintf(&b, "term %d (weight %d) matches; ", j, p.terms[j].Weight)
			s += p.terms[j].Weight
		}
	}
	return fmt.Sprintf("%ssum %d of %d terms", b.String(), s, len(p.terms))
}
