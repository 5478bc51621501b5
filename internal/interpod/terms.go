// Package interpod is upstream's InterPodAffinity arithmetic
// (kube-scheduler v1.37.2 pkg/scheduler/framework/plugins/interpodaffinity:
// filtering.go, scoring.go, plugin.go; the term parsing of
// k8s.io/kube-scheduler/framework types.go), shared by framework's
// InterPodAffinity filter and score's InterPodAffinity scorer.
//
// Layer: internal. It imports k8s.io/api, k8s.io/apimachinery,
// internal/selector and internal/layout (a node's head) only, and reads
// nodes and pods through the small generic [NodeInfo] and [PodInfo]
// interfaces (which *snapshot.NodeInfo and *snapshot.PodInfo satisfy).
// A pod's parsed terms are cached by snapshot on its PodInfo and read
// through [TermsOf], which snapshot sets. The existing pods' terms are
// read through an [Index] (snapshot keeps one per Snapshot and Fork,
// incrementally: [IndexOf]; [ScanIndex] builds one for other clusters),
// so that a pod's preparation costs O(groups of equal terms), not
// O(pods).
//
// The feature gates are upstream v1.37.2's defaults:
// InterPodAffinityHostnameFastPath and
// InPlacePodVerticalScalingSchedulerPreemption off (alpha);
// MatchLabelKeysInPodAffinity on (GA), which upstream applies in the
// API server when the pod is created and this package applies when it
// parses the pod ([Parse]).
package interpod

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unique"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/selector"
)

// Upstream's reason strings (interpodaffinity/filtering.go).
const (
	ReasonExistingAntiAffinity = "node(s) didn't satisfy existing pods anti-affinity rules"
	ReasonAffinity             = "node(s) didn't match pod affinity rules"
	ReasonAntiAffinity         = "node(s) didn't match pod anti-affinity rules"
)

// TermsOf returns the terms cached on a pod's PodInfo (nil: the pod has
// no pod affinity or anti-affinity). snapshot sets it in its init; the
// argument is a *snapshot.PodInfo.
var TermsOf func(pod any) *Terms

// Term is one parsed pod (anti-)affinity term (upstream's AffinityTerm or
// WeightedAffinityTerm). Read-only after [Parse]; matching allocates
// nothing.
type Term struct {
	// TopologyKey is the term's topologyKey.
	TopologyKey string
	// topo is TopologyKey interned, as nodes' []selector.Label hold keys.
	topo unique.Handle[string]
	// Weight is the weight of a preferred term, 0 for a required one.
	Weight int32
	// names: the term's namespaces, or the pod's own namespace when the
	// term has neither namespaces nor a namespaceSelector.
	names selector.Namespaces
	// nsSel: the namespaceSelector (nil: nothing; {}: every namespace).
	nsSel selector.Selector
	// sel: the labelSelector with matchLabelKeys and mismatchLabelKeys
	// merged in.
	sel selector.Selector
	// key is [Term.Key], the string keyH interns: equal keys share
	// their bytes, so that comparing two (an index's look-up of a
	// group, a memo's recipe) stops at the pointers. keyHash is
	// [Hash](key).
	key     string
	keyH    unique.Handle[string]
	keyHash uint64
	// static: the namespaces it matches do not depend on namespace
	// labels (no namespaceSelector, or the empty one: every namespace).
	static bool
}

// Static reports whether the namespaces t matches are fixed: t has no
// namespaceSelector, or the empty one (every namespace), so that which
// pods it matches depends only on the pods ([Term.Matches] with nil
// namespace labels gives the answer for every pod).
func (t *Term) Static() bool { return t.static }

// TopologyKeyHandle is TopologyKey interned (unique.Make), as nodes'
// []selector.Label hold label keys; O(1).
func (t *Term) TopologyKeyHandle() unique.Handle[string] { return t.topo }

// OffHead reports whether the term's topology key is not one a node's
// head holds (layout.InHead): finding a node's value for it reads the
// node's labels. O(1).
func (t *Term) OffHead() bool { return !layout.InHead(t.topo) }

// Matches is upstream's AffinityTerm.Matches: pod's namespace is one of
// the term's names or its labels (nsLabels, nil for an unknown namespace)
// match the namespaceSelector, and pod's labels match the labelSelector.
// For an existing pod's term tested against the incoming pod.
func (t *Term) Matches(pod *v1.Pod, nsLabels map[string]string) bool {
	if t.names.Has(pod.Namespace) || selector.MatchMap(&t.nsSel, nsLabels) {
		return selector.MatchMap(&t.sel, pod.Labels)
	}
	return false
}

// Terms are a pod's parsed pod affinity and anti-affinity terms.
type Terms struct {
	RequiredAffinity, RequiredAntiAffinity   []Term
	PreferredAffinity, PreferredAntiAffinity []Term
	// Err is upstream NewPodInfo's parse error (a label or namespace
	// selector that does not compile); the list it names is nil, as
	// upstream's.
	Err error
	// OffHead: some term is (Term.OffHead), so finding a node's value
	// for it reads the node's labels. Set by Parse.
	OffHead bool
}

// HasAffinity is upstream's podWithAffinity: the pod has pod affinity or
// pod anti-affinity (any term, or none).
func HasAffinity(pod *v1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

// Parse parses pod's pod (anti-)affinity terms as upstream's NewPodInfo,
// with matchLabelKeys (key In (the pod's value)) and mismatchLabelKeys
// (key NotIn (the pod's value)) merged into each labelSelector that is not
// nil, as the API server does on creation (a requirement already present
// is not added twice: a pod read back from the API server has it). nil
// when the pod has no pod affinity or anti-affinity. A list with an
// invalid selector is left nil and named in Terms.Err. O(terms ×
// requirements); allocates.
func Parse(pod *v1.Pod) *Terms {
	if !HasAffinity(pod) {
		return nil
	}
	a := pod.Spec.Affinity
	t := &Terms{}
	var errs []error
	var err error
	// Upstream's order (NewPodInfo): required affinity, required
	// anti-affinity, preferred affinity, preferred anti-affinity.
	if pa := a.PodAffinity; pa != nil {
		if t.RequiredAffinity, err = parseRequired(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("requiredAffinityTerms: %w", err))
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		if t.RequiredAntiAffinity, err = parseRequired(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("requiredAntiAffinityTerms: %w", err))
		}
	}
	if pa := a.PodAffinity; pa != nil {
		if t.PreferredAffinity, err = parsePreferred(pod, pa.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("preferredAffinityTerms: %w", err))
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		if t.PreferredAntiAffinity, err = parsePreferred(pod, pa.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("preferredAntiAffinityTerms: %w", err))
		}
	}
	t.Err = aggregate(errs)
	for k := range NumKinds {
		ts := t.List(k)
		for j := range ts {
			t.OffHead = t.OffHead || ts[j].OffHead()
		}
	}
	return t
}

// aggregate formats errs as apimachinery's utilerrors.NewAggregate (one
// error: its message; more: "[a, b]"); nil for none.
func aggregate(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New("[" + strings.Join(msgs, ", ") + "]")
}

func parseRequired(pod *v1.Pod, in []v1.PodAffinityTerm) ([]Term, error) {
	var out []Term
	for i := range in {
		t, err := newTerm(pod, &in[i])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func parsePreferred(pod *v1.Pod, in []v1.WeightedPodAffinityTerm) ([]Term, error) {
	var out []Term
	for i := range in {
		t, err := newTerm(pod, &in[i].PodAffinityTerm)
		if err != nil {
			return nil, err
		}
		t.Weight = in[i].Weight
		out = append(out, t)
	}
	return out, nil
}

// newTerm is upstream's newAffinityTerm after the API server's
// applyMatchLabelKeysAndMismatchLabelKeys.
func newTerm(pod *v1.Pod, in *v1.PodAffinityTerm) (Term, error) {
	// Upstream's messages, without naming the selector.
	merged := mergeLabelKeys(in, pod.Labels)
	sel, err := selector.FromLabelSelector(merged)
	if err != nil {
		return Term{}, err
	}
	nsSel, err := selector.FromLabelSelector(in.NamespaceSelector)
	if err != nil {
		return Term{}, err
	}
	t := Term{TopologyKey: in.TopologyKey, topo: unique.Make(in.TopologyKey), sel: sel, nsSel: nsSel}
	names := in.Namespaces
	if len(in.Namespaces) == 0 && in.NamespaceSelector == nil {
		names = []string{pod.Namespace}
	}
	t.names = selector.NewNamespaces(names...)
	t.keyH = unique.Make(termKey(in.TopologyKey, names, in.NamespaceSelector, merged))
	t.key = t.keyH.Value()
	t.keyHash = Hash(t.key)
	t.static = in.NamespaceSelector == nil || nsSel.Empty()
	return t, nil
}

// mergeLabelKeys returns the term's labelSelector with key In (value) for
// each matchLabelKeys key and key NotIn (value) for each mismatchLabelKeys
// key the pod has a label for; a nil labelSelector stays nil (it matches
// nothing). The term is not modified.
func mergeLabelKeys(t *v1.PodAffinityTerm, podLabels map[string]string) *metav1.LabelSelector {
	if (len(t.MatchLabelKeys) == 0 && len(t.MismatchLabelKeys) == 0) || t.LabelSelector == nil {
		return t.LabelSelector
	}
	ls := *t.LabelSelector
	ls.MatchExpressions = slices.Clone(ls.MatchExpressions)
	add := func(keys []string, op metav1.LabelSelectorOperator) {
		for _, k := range keys {
			v, ok := podLabels[k]
			if !ok {
				continue
			}
			r := metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}}
			if !slices.ContainsFunc(ls.MatchExpressions, func(e metav1.LabelSelectorRequirement) bool {
				return e.Key == r.Key && e.Operator == r.Operator && slices.Equal(e.Values, r.Values)
			}) {
				ls.MatchExpressions = append(ls.MatchExpressions, r)
			}
		}
	}
	add(t.MatchLabelKeys, metav1.LabelSelectorOpIn)
	add(t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn)
	return &ls
}
