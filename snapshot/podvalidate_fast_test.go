package snapshot

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/schedkit/schedkit/internal/names"
)

// FuzzFastValidation: the allocation-free name and label checks of
// podvalidate.go accept exactly the strings apimachinery's validators
// accept (IsDNS1123Label, NameIsDNSSubdomain, IsQualifiedName,
// IsValidLabelValue).
func FuzzFastValidation(f *testing.F) {
	for _, s := range []string{"", "a", "-a", "a-", "a.b", "a..b", ".a", "a.", "A", "a_b", "a/b", "/b", "a/", "a/b/c",
		"example.com/My_Name.1", "kubernetes.io/hostname", "topology.kubernetes.io/zone", "x/-a", "Ex.com/a",
		"a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z-0-1-2-3-4-5-6",  // 65 characters
		"a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z-0-1-2-3-4-5-67", // 66
		"é", "a\n", "0", "9-9", "a.b-c.d0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, len(validation.IsDNS1123Label(s)) == 0, names.IsDNSLabel(s), "label %q", s)
		require.Equal(t, len(apivalidation.NameIsDNSSubdomain(s, false)) == 0, names.IsDNSSubdomain(s), "subdomain %q", s)
		require.Equal(t, len(validation.IsQualifiedName(s)) == 0, names.IsLabelKey(s), "key %q", s)
		require.Equal(t, len(validation.IsValidLabelValue(s)) == 0, names.IsLabelValue(s), "value %q", s)
	})
}

// TestFastValidationLongNames: the length limits (63 per label, 253 per
// subdomain, 63 per key name part) with otherwise valid characters.
func TestFastValidationLongNames(t *testing.T) {
	for n := 60; n <= 256; n++ {
		s := make([]byte, n)
		for i := range s {
			s[i] = 'a'
			if i%50 == 49 && i < n-1 {
				s[i] = '.'
			}
		}
		for _, v := range []string{string(s), "p.example/" + string(s[:min(n, 70)]), string(s[:min(n, 70)])} {
			require.Equal(t, len(validation.IsDNS1123Label(v)) == 0, names.IsDNSLabel(v), v)
			require.Equal(t, len(validation.IsDNS1123Subdomain(v)) == 0, names.IsDNSSubdomain(v), v)
			require.Equal(t, len(validation.IsQualifiedName(v)) == 0, names.IsLabelKey(v), v)
			require.Equal(t, len(validation.IsValidLabelValue(v)) == 0, names.IsLabelValue(v), v)
		}
	}
}

// TestFastPodValidationAgrees: over random pods drawn from valid and
// invalid names, node selectors and topology spread constraints (every
// field schedulingErrors checks, pod (anti-)affinity terms included),
// podNamesValid is exactly podNameErrors finding nothing (for a named
// pod), and schedulingValid is exactly schedulingErrors finding nothing
// for pods without matchLabelKeys, mismatchLabelKeys or node affinity;
// with them it may decline but never accepts an invalid pod.
// So NewPodInfo's fast path refuses nothing and accepts nothing the full
// validation would not.
func TestFastPodValidationAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 7))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	keys := []string{"app", "kubernetes.io/hostname", "-bad", "a/b/c", "", "Ex.com/x", "x_y"}
	vals := []string{"", "web", "-bad", "a b", "v1.2_3", "UPPER"}
	names := []string{"p", "pod-1", "Pod", "a.b", "-x", "a..b", ""}
	sel := func() *metav1.LabelSelector {
		if rng.IntN(4) == 0 {
			return nil
		}
		s := &metav1.LabelSelector{}
		if rng.IntN(2) == 0 {
			s.MatchLabels = map[string]string{pick(keys...): pick(vals...)}
		}
		for range rng.IntN(3) {
			r := metav1.LabelSelectorRequirement{Key: pick(keys...), Operator: metav1.LabelSelectorOperator(pick("In", "NotIn", "Exists", "DoesNotExist", "Gt", ""))}
			for range rng.IntN(3) {
				r.Values = append(r.Values, pick(vals...))
			}
			s.MatchExpressions = append(s.MatchExpressions, r)
		}
		return s
	}
	policy := func() *v1.NodeInclusionPolicy {
		if rng.IntN(2) == 0 {
			return nil
		}
		p := v1.NodeInclusionPolicy(pick("Honor", "Ignore", "honor", ""))
		return &p
	}
	// term: a pod (anti-)affinity term from valid and invalid topology
	// keys, selectors and namespaces, now and then with matchLabelKeys
	// or mismatchLabelKeys.
	term := func() v1.PodAffinityTerm {
		if rng.IntN(2) == 0 { // a valid one, so that whole pods pass
			return v1.PodAffinityTerm{TopologyKey: pick("zone", "kubernetes.io/hostname"), Namespaces: []string{pick("default", "ns-1")}[:rng.IntN(2)],
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": pick("web", "db")}}}
		}
		t := v1.PodAffinityTerm{TopologyKey: pick(keys...), LabelSelector: sel(), NamespaceSelector: sel()}
		for range rng.IntN(3) {
			t.Namespaces = append(t.Namespaces, pick(names...))
		}
		if rng.IntN(8) == 0 {
			t.MatchLabelKeys = []string{pick(keys...)}
		}
		if rng.IntN(8) == 0 {
			t.MismatchLabelKeys = []string{pick(keys...)}
		}
		return t
	}
	decided, accepted, affinityAccepted := 0, 0, 0
	for i := range 20_000 {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pick(names...), Namespace: pick(names...)}}
		pod.Spec.NodeName = pick(names...)
		pod.Status.NominatedNodeName = pick("", "", "n1", "N1")
		if rng.IntN(2) == 0 {
			pod.Spec.NodeSelector = map[string]string{pick(keys...): pick(vals...)}
		}
		for range rng.IntN(3) {
			c := v1.TopologySpreadConstraint{
				MaxSkew: int32(rng.IntN(3)) - 1, TopologyKey: pick("zone", "kubernetes.io/hostname", ""),
				WhenUnsatisfiable: v1.UnsatisfiableConstraintAction(pick("DoNotSchedule", "ScheduleAnyway", "Never")),
				LabelSelector:     sel(), NodeAffinityPolicy: policy(), NodeTaintsPolicy: policy(),
			}
			if rng.IntN(3) == 0 {
				m := int32(rng.IntN(3)) - 1
				c.MinDomains = &m
			}
			if rng.IntN(5) == 0 {
				c.MatchLabelKeys = []string{pick(keys...)}
			}
			pod.Spec.TopologySpreadConstraints = append(pod.Spec.TopologySpreadConstraints, c)
		}
		switch rng.IntN(4) {
		case 0:
			pod.Spec.Affinity = &v1.Affinity{}
			if rng.IntN(4) == 0 {
				pod.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{}
			}
		case 1:
			pod.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{}, PodAntiAffinity: &v1.PodAntiAffinity{}}
			for _, pa := range []*[]v1.PodAffinityTerm{&pod.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
				&pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution} {
				for range rng.IntN(3) {
					*pa = append(*pa, term())
				}
			}
			for _, pa := range []*[]v1.WeightedPodAffinityTerm{&pod.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				&pod.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution} {
				for range rng.IntN(3) {
					*pa = append(*pa, v1.WeightedPodAffinityTerm{Weight: int32(rng.IntN(103)) - 1, PodAffinityTerm: term()})
				}
			}
		}
		msg := fmt.Sprintf("pod %d: %+v", i, pod)
		if pod.Name != "" {
			require.Equal(t, len(podNameErrors(pod)) == 0, podNamesValid(pod), msg)
		} else {
			require.False(t, podNamesValid(pod), msg) // the callers report the empty name
		}
		slow := len(schedulingErrors(pod)) == 0
		fast := schedulingValid(pod)
		if fast {
			require.True(t, slow, msg)
			accepted++
			if pod.Spec.Affinity != nil && pod.Spec.Affinity.PodAffinity != nil {
				affinityAccepted++
			}
		}
		mlk := false
		for _, c := range pod.Spec.TopologySpreadConstraints {
			mlk = mlk || len(c.MatchLabelKeys) > 0
		}
		if a := pod.Spec.Affinity; a != nil {
			mlk = mlk || a.NodeAffinity != nil
			if a.PodAffinity != nil {
				for _, t := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
					mlk = mlk || len(t.MatchLabelKeys)+len(t.MismatchLabelKeys) > 0
				}
				for _, t := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
					mlk = mlk || len(t.PodAffinityTerm.MatchLabelKeys)+len(t.PodAffinityTerm.MismatchLabelKeys) > 0
				}
				for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
					mlk = mlk || len(t.MatchLabelKeys)+len(t.MismatchLabelKeys) > 0
				}
				for _, t := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
					mlk = mlk || len(t.PodAffinityTerm.MatchLabelKeys)+len(t.PodAffinityTerm.MismatchLabelKeys) > 0
				}
			}
		}
		if !mlk {
			require.Equal(t, slow, fast, msg)
			decided++
		}
	}
	require.Greater(t, accepted, 1000)
	require.Greater(t, affinityAccepted, 100)
	require.Greater(t, decided, 10_000)
}

// TestValidPodValidationAllocatesNothing: the names and scheduling
// fields of valid pods — one with a DoNotSchedule zone constraint
// selecting color=blue (scheduler_perf's TopologySpreading pod), one with
// a nodeSelector only, one with scheduler_perf's required hostname
// anti-affinity (SchedulingPodAntiAffinity) — are checked without
// allocating (before the fast paths the three checks made 24 allocations
// for the spread pod; the anti-affine pod took the full check until
// terms had a fast path).
func TestValidPodValidationAllocatesNothing(t *testing.T) {
	spreadPod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "spreading-pod-1", Namespace: "default", Labels: map[string]string{"color": "blue"}},
		Spec: v1.PodSpec{TopologySpreadConstraints: []v1.TopologySpreadConstraint{{
			MaxSkew: 5, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": "blue"}},
		}}}}
	plain := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod-1", Namespace: "service-ns"},
		Spec: v1.PodSpec{NodeName: "node-1", NodeSelector: map[string]string{v1.LabelTopologyZone: "moon-1"}}}
	antiPod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "anti-affinity-pod-1", Namespace: "sched-1", Labels: map[string]string{"color": "green"}},
		Spec: v1.PodSpec{Affinity: &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelHostname, Namespaces: []string{"sched-1", "sched-0"},
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": "green"}},
		}}}}}}
	for _, pod := range []*v1.Pod{spreadPod, plain, antiPod} {
		require.Zero(t, testing.AllocsPerRun(100, func() {
			if checkPodNames(pod) != nil || validateScheduling(pod) != nil || ValidatePod(pod) != nil {
				t.Fatal("refused")
			}
		}), pod.Name)
	}
}
