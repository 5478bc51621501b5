package parity

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IPACase is a [Case] for InterPodAffinity: pods in several namespaces
// with labels, some with pod affinity and anti-affinity (required and
// preferred, namespaces and namespaceSelectors, matchLabelKeys and
// mismatchLabelKeys), nodes with and without each topology key, the
// Namespace objects (one namespace of the pods is never among them),
// and the candidate nodes that scoring sees, as indexes into Nodes.
type IPACase struct {
	Case
	Namespaces []*v1.Namespace
	Candidates []int
}

// LabelGroup marks the pending pod that starts a self-affine group.
const LabelGroup = "group"

var ipaNamespaces = []string{"default", "default", "team-a", "team-b", "unlisted"}

// IPACase draws an IPACase: a [Gen.Case] with the spread generator's
// topology labels and pod labels, and pod (anti-)affinity on some bound
// pods and on most pending ones.
func (g *Gen) IPACase() IPACase {
	c := IPACase{Case: g.Case()}
	for _, n := range c.Nodes {
		g.spreadNodeLabels(n)
		if g.chance(0.03) {
			n.Labels = nil // no labels at all: upstream skips such nodes in PreScore
		}
	}
	for _, p := range c.Bound {
		g.spreadPodLabels(p)
		p.Namespace = g.pick(ipaNamespaces...)
		p.OwnerReferences = nil
		if g.chance(0.35) {
			p.Spec.Affinity = g.podAffinity(0.4)
		}
	}
	g.spreadPodLabels(c.Pod)
	c.Pod.Namespace = g.pick(ipaNamespaces...)
	c.Pod.OwnerReferences = nil
	if g.chance(0.8) {
		c.Pod.Spec.Affinity = g.podAffinity(0.5)
	}
	if g.chance(0.15) {
		// The first pod of a self-affine group: no bound pod has the
		// label its first required affinity term selects.
		c.Pod.Labels[LabelGroup] = "first"
		if c.Pod.Spec.Affinity == nil {
			c.Pod.Spec.Affinity = &v1.Affinity{}
		}
		if c.Pod.Spec.Affinity.PodAffinity == nil {
			c.Pod.Spec.Affinity.PodAffinity = &v1.PodAffinity{}
		}
		pa := c.Pod.Spec.Affinity.PodAffinity
		t := v1.PodAffinityTerm{TopologyKey: g.pick(spreadKeys...), LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelGroup: "first"}}}
		pa.RequiredDuringSchedulingIgnoredDuringExecution = append([]v1.PodAffinityTerm{t}, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
	}
	c.Namespaces = []*v1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: map[string]string{"env": "prod"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"env": g.pick("dev", "prod"), "team": "a"}}},
	}
	if g.chance(0.7) {
		c.Namespaces = append(c.Namespaces, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Labels: map[string]string{"team": "b"}}})
	}
	for i := range c.Nodes {
		if g.chance(0.75) {
			c.Candidates = append(c.Candidates, i)
		}
	}
	if len(c.Candidates) == 0 {
		c.Candidates = []int{g.r.IntN(len(c.Nodes))}
	}
	return c
}

// podAffinity draws pod affinity and anti-affinity, each list empty or
// with 1–2 terms; pRequired is the chance of each required list.
func (g *Gen) podAffinity(pRequired float64) *v1.Affinity {
	a := &v1.Affinity{}
	if g.chance(0.6) {
		a.PodAffinity = &v1.PodAffinity{}
		if g.chance(pRequired) {
			a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = g.ipaTerms()
		}
		if g.chance(0.5) {
			a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = g.weightedTerms()
		}
	}
	if g.chance(0.6) {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
		if g.chance(pRequired) {
			a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = g.ipaTerms()
		}
		if g.chance(0.5) {
			a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = g.weightedTerms()
		}
	}
	if g.chance(0.1) {
		a.NodeAffinity = &v1.NodeAffinity{} // not pod affinity
	}
	return a
}

func (g *Gen) ipaTerms() []v1.PodAffinityTerm {
	out := make([]v1.PodAffinityTerm, 1+g.r.IntN(2))
	for i := range out {
		out[i] = g.ipaTerm()
	}
	return out
}

func (g *Gen) weightedTerms() []v1.WeightedPodAffinityTerm {
	out := make([]v1.WeightedPodAffinityTerm, 1+g.r.IntN(2))
	for i := range out {
		out[i] = v1.WeightedPodAffinityTerm{Weight: int32(1 + g.r.IntN(100)), PodAffinityTerm: g.ipaTerm()}
	}
	return out
}

// ipaTerm draws one term: a selector mostly on app (rarely nil, empty or
// invalid), a topology key (hostname, zone, rack, region: some nodes lack
// each), namespaces and namespace selectors in every combination, and
// sometimes matchLabelKeys and mismatchLabelKeys.
func (g *Gen) ipaTerm() v1.PodAffinityTerm {
	t := v1.PodAffinityTerm{TopologyKey: g.pick(spreadKeys...)}
	// nil and empty selectors 1 in 40 each, an invalid one 1 in 200 (a
	// case holds dozens of terms, and one the API server would refuse
	// makes the whole case one only schedkit's parse is checked on).
	switch n := g.r.IntN(200); {
	case n < 5:
	case n < 10:
		t.LabelSelector = &metav1.LabelSelector{}
	case n == 10:
		t.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	default:
		t.LabelSelector = g.labelSelector()
		if t.LabelSelector != nil && len(t.LabelSelector.MatchExpressions) > 0 && t.LabelSelector.MatchExpressions[0].Operator == "Bogus" {
			t.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": g.pick(spreadApps...)}}
		}
	}
	switch g.r.IntN(8) {
	case 0:
		t.Namespaces = []string{g.pick(ipaNamespaces...)}
	case 1:
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": g.pick("prod", "dev")}}
	case 2:
		t.NamespaceSelector = &metav1.LabelSelector{}
	case 3:
		t.Namespaces = []string{g.pick(ipaNamespaces...), g.pick(ipaNamespaces...)}
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": g.pick("a", "b")}}
	case 4:
		// Matches a namespace without labels, and an unknown one when the
		// selector is an existing pod's (upstream reads its labels as
		// empty) but not when it is the incoming pod's (upstream lists
		// known namespaces).
		t.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	}
	// matchLabelKeys and mismatchLabelKeys need a labelSelector and may
	// not share a key (the API server refuses both, rarely drawn here).
	if g.chance(0.2) && (t.LabelSelector != nil || g.chance(0.05)) {
		t.MatchLabelKeys = []string{g.pick("pod-template-hash", "version", "absent-key")}
	}
	if g.chance(0.15) && (t.LabelSelector != nil || g.chance(0.05)) {
		t.MismatchLabelKeys = []string{g.pick("tier", "version")}
		if len(t.MatchLabelKeys) > 0 && t.MatchLabelKeys[0] == "version" && !g.chance(0.05) {
			t.MismatchLabelKeys[0] = "tier"
		}
	}
	return t
}

// Admitted returns a copy of pod as the API server stores it on creation
// (MatchLabelKeysInPodAffinity, GA: pkg/registry/core/pod strategy's
// applyMatchLabelKeysAndMismatchLabelKeys): for each term with a
// labelSelector, key In (value) for each matchLabelKeys key and key NotIn
// (value) for each mismatchLabelKeys key the pod has a label for,
// appended to matchExpressions. Upstream's scheduler sees pods only after
// this.
func Admitted(pod *v1.Pod) *v1.Pod {
	p := pod.DeepCopy()
	a := p.Spec.Affinity
	if a == nil {
		return p
	}
	apply := func(t *v1.PodAffinityTerm) {
		if (len(t.MatchLabelKeys) == 0 && len(t.MismatchLabelKeys) == 0) || t.LabelSelector == nil {
			return
		}
		for _, k := range t.MatchLabelKeys {
			if v, ok := p.Labels[k]; ok {
				t.LabelSelector.MatchExpressions = append(t.LabelSelector.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
			}
		}
		for _, k := range t.MismatchLabelKeys {
			if v, ok := p.Labels[k]; ok {
				t.LabelSelector.MatchExpressions = append(t.LabelSelector.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpNotIn, Values: []string{v}})
			}
		}
	}
	if pa := a.PodAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			apply(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			apply(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			apply(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			apply(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
	return p
}

// AdmittedAll is [Admitted] over pods.
func AdmittedAll(pods []*v1.Pod) []*v1.Pod {
	out := slices.Clone(pods)
	for i, p := range out {
		out[i] = Admitted(p)
	}
	return out
}
