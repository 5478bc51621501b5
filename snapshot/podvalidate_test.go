package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// TestInvalidSchedulingFieldsRejected: topology spread constraints and
// pod (anti-)affinity terms the API server rejects are rejected by
// NewPodInfo with the pod and field path, and neither the Cache nor a
// Fork changes (they were accepted and silently mis-scheduled before).
func TestInvalidSchedulingFieldsRejected(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	bogus := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus", Values: []string{"web"}}}}
	honor, bad := v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicy("Sometimes")
	spread := func(c v1.TopologySpreadConstraint) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c) }
	}
	anti := func(t v1.PodAffinityTerm) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{t}}}
		}
	}
	preferred := func(w int32, t v1.PodAffinityTerm) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: w, PodAffinityTerm: t}}}}
		}
	}
	valid := v1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: sel}
	with := func(f func(*v1.TopologySpreadConstraint)) v1.TopologySpreadConstraint {
		c := valid
		f(&c)
		return c
	}
	term := v1.PodAffinityTerm{LabelSelector: sel, TopologyKey: v1.LabelHostname}
	required := func(ts ...v1.NodeSelectorTerm) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: ts}}}
		}
	}
	expr := func(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorTerm {
		return v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	fields := func(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorTerm {
		return v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	nodePreferred := func(w int32, t v1.NodeSelectorTerm) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: w, Preference: t}}}}
		}
	}
	const na = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
	cases := []struct {
		name, want string
		mod        func(*v1.Pod)
	}{
		{"trial spread", `pod default/web: [spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero, spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty, spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"]: snapshot: invalid object`,
			spread(v1.TopologySpreadConstraint{WhenUnsatisfiable: "Maybe", LabelSelector: sel})},
		{"minDomains zero", "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than zero",
			spread(with(func(c *v1.TopologySpreadConstraint) { c.MinDomains = int32p(0) }))},
		{"minDomains with ScheduleAnyway", "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
			spread(with(func(c *v1.TopologySpreadConstraint) { c.MinDomains, c.WhenUnsatisfiable = int32p(2), v1.ScheduleAnyway }))},
		{"nodeTaintsPolicy", `spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: "Sometimes"`,
			spread(with(func(c *v1.TopologySpreadConstraint) { c.NodeAffinityPolicy, c.NodeTaintsPolicy = &honor, &bad }))},
		{"spread selector", `spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator`,
			spread(with(func(c *v1.TopologySpreadConstraint) { c.LabelSelector = bogus }))},
		{"duplicate spread", "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value",
			func(p *v1.Pod) { spread(valid)(p); spread(valid)(p) }},
		{"trial anti-affinity", `pod default/web: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator: snapshot: invalid object`,
			anti(v1.PodAffinityTerm{LabelSelector: bogus, TopologyKey: v1.LabelHostname})},
		{"namespaceSelector", "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector.matchExpressions[0].operator",
			anti(v1.PodAffinityTerm{LabelSelector: sel, NamespaceSelector: bogus, TopologyKey: v1.LabelHostname})},
		{"empty topologyKey", "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty",
			anti(v1.PodAffinityTerm{LabelSelector: sel})},
		{"unqualified topologyKey", `spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: "a b"`,
			anti(v1.PodAffinityTerm{LabelSelector: sel, TopologyKey: "a b"})},
		{"weight", "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 101: must be in the range 1-100",
			preferred(101, term)},
		{"preferred term", "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey: Required value",
			preferred(1, v1.PodAffinityTerm{LabelSelector: sel})},
		{"matchLabelKeys without selector", "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
			anti(v1.PodAffinityTerm{TopologyKey: v1.LabelHostname, MatchLabelKeys: []string{"version"}})},
		{"key in both lists", `spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys[0]: Invalid value: "version": exists in both matchLabelKeys and mismatchLabelKeys`,
			anti(v1.PodAffinityTerm{LabelSelector: sel, TopologyKey: v1.LabelHostname, MatchLabelKeys: []string{"version"}, MismatchLabelKeys: []string{"version"}})},
		// As the API server stores it: app In (web) merged from
		// matchLabelKeys, and app=web in matchLabels already.
		{"matchLabelKeys key in the selector", `spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0][0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector`,
			anti(v1.PodAffinityTerm{TopologyKey: v1.LabelHostname, MatchLabelKeys: []string{"app"}, LabelSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"app": "web"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}}})},
		{"spread matchLabelKeys", `spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "bad key!"`,
			spread(with(func(c *v1.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"bad key!"} }))},
		{"namespace name", `spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespace: Invalid value: "Bad_NS"`,
			anti(v1.PodAffinityTerm{LabelSelector: sel, TopologyKey: v1.LabelHostname, Namespaces: []string{"Bad_NS"}})},
		// Node affinity and nodeSelector, as the API server validates them.
		{"no node selector term", na + ": Required value: must have at least one node selector term", required()},
		{"node operator", na + `[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`, required(expr("zone", "Near", "a"))},
		{"In without values", na + "[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'", required(expr("zone", v1.NodeSelectorOpIn))},
		{"Exists with values", na + "[0].matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'", required(expr("gpu", v1.NodeSelectorOpExists, "x"))},
		{"Gt with two values", na + "[1].matchExpressions[0].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
			required(expr("zone", v1.NodeSelectorOpIn, "a"), expr("cores", v1.NodeSelectorOpGt, "1", "2"))},
		{"node key", na + `[0].matchExpressions[0].key: Invalid value: "a b"`, required(expr("a b", v1.NodeSelectorOpExists))},
		{"required label value", na + `[0].matchExpressions[0].values[1]: Invalid value: "not a value!"`, required(expr("zone", v1.NodeSelectorOpIn, "a", "not a value!"))},
		{"field selector two values", na + "[0].matchFields[0].values: Required value: must be only one value", required(fields("metadata.name", v1.NodeSelectorOpIn, "n1", "n2"))},
		{"field selector operator", na + `[0].matchFields[0].operator: Invalid value: "Exists"`, required(fields("metadata.name", v1.NodeSelectorOpExists))},
		{"field selector key", na + `[0].matchFields[0].key: Invalid value: "metadata.uid": not a valid field selector key`, required(fields("metadata.uid", v1.NodeSelectorOpIn, "x"))},
		{"field selector node name", na + `[0].matchFields[0].values[0]: Invalid value: "N_1"`, required(fields("metadata.name", v1.NodeSelectorOpIn, "N_1"))},
		{"node preferred weight", "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100", nodePreferred(0, expr("zone", v1.NodeSelectorOpIn, "a"))},
		{"node preferred term", "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values: Required value", nodePreferred(5, expr("zone", v1.NodeSelectorOpNotIn))},
		{"nodeSelector key", `spec.nodeSelector: Invalid value: "bad key!"`, func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"bad key!": "a"} }},
		{"nodeSelector value", `spec.nodeSelector: Invalid value: "not a value!"`, func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "not a value!"} }},
	}
	c := snapshot.NewCache()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{v1.LabelHostname: "n1", v1.LabelTopologyZone: "z1"}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("110")}}}
	require.NoError(t, c.AddNode(node))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"app": "web"}}}
			tc.mod(pod)
			_, err := snapshot.NewPodInfo(pod)
			require.ErrorIs(t, err, snapshot.ErrInvalidObject)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "pod default/web: ")

			before := c.Snapshot()
			f := before.Fork()
			require.ErrorIs(t, f.AddPod(pod, "n1"), snapshot.ErrInvalidObject)
			assert.Zero(t, f.Node(0).NumPods())
			bound := pod.DeepCopy()
			bound.Spec.NodeName = "n1"
			require.ErrorIs(t, c.AddPod(bound), snapshot.ErrInvalidObject)
			after := c.Snapshot()
			assert.Zero(t, c.NumPods())
			assert.Zero(t, after.Node(0).NumPods())
		})
	}
	// The valid variants are accepted.
	for _, mod := range []func(*v1.Pod){spread(valid), anti(term), preferred(100, term),
		// Preferred terms' values are not label values (upstream allows
		// them); Gt takes one integer-looking value; an empty term is valid.
		nodePreferred(100, expr("zone", v1.NodeSelectorOpIn, "not a value!")),
		required(expr("cores", v1.NodeSelectorOpLt, "64"), fields("metadata.name", v1.NodeSelectorOpNotIn, "n1"), v1.NodeSelectorTerm{}),
		func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{v1.LabelTopologyZone: "z1"} },
	} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ok", Labels: map[string]string{"app": "web"}}}
		mod(pod)
		_, err := snapshot.NewPodInfo(pod)
		require.NoError(t, err)
	}
}

func int32p(v int32) *int32 { return &v }
