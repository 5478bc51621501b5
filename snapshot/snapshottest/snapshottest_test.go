package snapshottest_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

const zone = v1.LabelTopologyZone

func matchLabels(k, v string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
}

func expr(key string, op metav1.LabelSelectorOperator, vals ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: vals}}}
}

func TestPodAffinityBuilders(t *testing.T) {
	pod := snapshottest.MakePod("p").
		PodAffinityIn("app", zone, []string{"db", "cache"}, snapshottest.PodAffinityWithRequiredReq).
		PodAffinityExists("tier", v1.LabelHostname, snapshottest.PodAffinityWithRequiredReq).
		PodAffinityNotIn("app", zone, []string{"batch"}, snapshottest.PodAffinityWithPreferredReq).
		PodAffinity(v1.LabelHostname, matchLabels("app", "web"), snapshottest.PodAffinityWithPreferredReq, "ns1", "ns2").
		PodAntiAffinityIn("app", v1.LabelHostname, []string{"web"}, snapshottest.PodAntiAffinityWithRequiredReq).
		PodAntiAffinityExists("gpu", zone, snapshottest.PodAntiAffinityWithPreferredReq).
		PodAntiAffinityNotIn("app", zone, []string{"web"}, snapshottest.PodAntiAffinityWithPreferredReq).
		PodAntiAffinity(zone, matchLabels("app", "db"), snapshottest.PodAntiAffinityWithRequiredReq, "other").
		Obj()

	// Terms in call order; preferred terms with upstream's weight 1; no
	// namespaces unless given (the pod's own namespace).
	want := &v1.Affinity{
		PodAffinity: &v1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
				{LabelSelector: expr("app", metav1.LabelSelectorOpIn, "db", "cache"), TopologyKey: zone},
				{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}, TopologyKey: v1.LabelHostname},
			},
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
				{Weight: 1, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: expr("app", metav1.LabelSelectorOpNotIn, "batch"), TopologyKey: zone}},
				{Weight: 1, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: matchLabels("app", "web"), TopologyKey: v1.LabelHostname, Namespaces: []string{"ns1", "ns2"}}},
			},
		},
		PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
				{LabelSelector: expr("app", metav1.LabelSelectorOpIn, "web"), TopologyKey: v1.LabelHostname},
				{LabelSelector: matchLabels("app", "db"), TopologyKey: zone, Namespaces: []string{"other"}},
			},
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
				{Weight: 1, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "gpu", Operator: metav1.LabelSelectorOpExists}}}, TopologyKey: zone}},
				{Weight: 1, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: expr("app", metav1.LabelSelectorOpNotIn, "web"), TopologyKey: zone}},
			},
		},
	}
	require.Equal(t, want, pod.Spec.Affinity)
	// Exists carries no values, and no namespaces means nil (not empty).
	require.Nil(t, pod.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[1].LabelSelector.MatchExpressions[0].Values)
	require.Nil(t, pod.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].Namespaces)
}

func TestPodAffinityBuildersLeaveOtherSideNil(t *testing.T) {
	// Only the side a builder writes is created; node affinity built
	// before is kept.
	pod := snapshottest.MakePod("p").RequiredNodeName("n1").
		PodAntiAffinityExists("app", v1.LabelHostname, snapshottest.PodAntiAffinityWithPreferredReq).Obj()
	a := pod.Spec.Affinity
	require.NotNil(t, a.NodeAffinity)
	require.Nil(t, a.PodAffinity)
	require.Nil(t, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
	require.Len(t, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, 1)

	pod = snapshottest.MakePod("q").PodAffinityExists("app", zone, snapshottest.PodAffinityWithRequiredReq).Obj()
	require.Nil(t, pod.Spec.Affinity.NodeAffinity)
	require.Nil(t, pod.Spec.Affinity.PodAntiAffinity)
	require.Nil(t, pod.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
}

// RequiredNodeName with several names: one matchFields term per name
// (ORed), which the API server and snapshot.NewPodInfo accept (a
// metadata.name requirement takes one value); the pod may go to either.
func TestRequiredNodeNameSeveral(t *testing.T) {
	pod := snapshottest.MakePod("p").Req("cpu", "1").RequiredNodeName("n1", "n3").Obj()
	want := []v1.NodeSelectorTerm{
		{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}}}},
		{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n3"}}}},
	}
	require.Equal(t, want, pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)
	_, err := snapshot.NewPodInfo(pod)
	require.NoError(t, err)
}

func TestPodAffinityKindMismatchPanics(t *testing.T) {
	// Upstream silently adds nothing for a kind of the other side; here it
	// is a test bug, and panics.
	require.PanicsWithValue(t, "snapshottest: PodAffinity: kind 3 is not a PodAffinity kind", func() {
		snapshottest.MakePod("p").PodAffinityExists("app", zone, snapshottest.PodAntiAffinityWithRequiredReq)
	})
	require.PanicsWithValue(t, "snapshottest: PodAntiAffinity: kind 2 is not a PodAntiAffinity kind", func() {
		snapshottest.MakePod("p").PodAntiAffinityIn("app", zone, []string{"x"}, snapshottest.PodAffinityWithPreferredReq)
	})
	require.PanicsWithValue(t, "snapshottest: PodAffinity: kind 0 is not a PodAffinity kind", func() {
		snapshottest.MakePod("p").PodAffinity(zone, nil, 0)
	})
	require.Panics(t, func() { snapshottest.MakePod("p").PodAntiAffinity(zone, nil, 5) })
}

func TestSpreadConstraint(t *testing.T) {
	minDomains := int32(3)
	honor, ignore := v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore
	pod := snapshottest.MakePod("p").
		SpreadConstraint(1, zone, v1.DoNotSchedule, matchLabels("app", "web"), nil, nil, nil, nil).
		SpreadConstraint(2, v1.LabelHostname, v1.ScheduleAnyway, expr("app", metav1.LabelSelectorOpExists), &minDomains, &honor, &ignore, []string{"pod-template-hash"}).
		Obj()
	want := []v1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: zone, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: matchLabels("app", "web")},
		{
			MaxSkew: 2, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: expr("app", metav1.LabelSelectorOpExists),
			MinDomains: &minDomains, NodeAffinityPolicy: &honor, NodeTaintsPolicy: &ignore, MatchLabelKeys: []string{"pod-template-hash"},
		},
	}
	require.Equal(t, want, pod.Spec.TopologySpreadConstraints)
	// nil arguments leave the fields unset.
	c := pod.Spec.TopologySpreadConstraints[0]
	require.Nil(t, c.MinDomains)
	require.Nil(t, c.NodeAffinityPolicy)
	require.Nil(t, c.NodeTaintsPolicy)
	require.Nil(t, c.MatchLabelKeys)
	// Obj copies: the pod does not share the caller's pointers.
	require.NotSame(t, &minDomains, pod.Spec.TopologySpreadConstraints[1].MinDomains)

	// An int that overflows int32 exists only where int has 64 bits (the
	// constant is a variable so that the test builds for 32-bit targets).
	if big := int64(1<<32 + 1); strconv.IntSize == 64 {
		require.PanicsWithValue(t, "snapshottest: SpreadConstraint: maxSkew 4294967297 overflows int32", func() {
			snapshottest.MakePod("p").SpreadConstraint(int(big), zone, v1.DoNotSchedule, nil, nil, nil, nil, nil)
		})
	}
}

func TestOwnerReference(t *testing.T) {
	pod := snapshottest.MakePod("p").
		OwnerReference("old", v1.SchemeGroupVersion.WithKind("ReplicationController")).
		OwnerReference("web-5d8f", appsv1.SchemeGroupVersion.WithKind("ReplicaSet")).
		Obj()
	// One controller reference, the last call's (a pod has one
	// controller); no UID, as upstream.
	controller := true
	require.Equal(t, []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d8f", Controller: &controller}}, pod.OwnerReferences)
	require.Equal(t, &pod.OwnerReferences[0], metav1.GetControllerOfNoCopy(pod))

	pod = snapshottest.MakePod("q").OwnerReference("rc", v1.SchemeGroupVersion.WithKind("ReplicationController")).Obj()
	require.Equal(t, "v1", pod.OwnerReferences[0].APIVersion) // the core group: no group prefix
}

func TestLabels(t *testing.T) {
	pod := snapshottest.MakePod("p").Label("a", "1").Labels(map[string]string{"b": "2", "a": "3"}).Labels(nil).Obj()
	require.Equal(t, map[string]string{"a": "3", "b": "2"}, pod.Labels)
	require.Nil(t, snapshottest.MakePod("q").Labels(nil).Obj().Labels)
}

// zones is a cluster of three nodes (each labelled kubernetes.io/hostname
// by MakeNode): a1 and a2 in zone-a, b1 in zone-b.
func zones() []*v1.Node {
	node := func(name, z string) *v1.Node {
		return snapshottest.MakeNode(name).Capacity("cpu", "8", "memory", "16Gi", "pods", "110").Label(zone, z).Obj()
	}
	return []*v1.Node{node("a1", "zone-a"), node("a2", "zone-a"), node("b1", "zone-b")}
}

// TestBuildersScheduleEndToEnd runs pods made with the builders through
// framework's default filters and profile.
func TestBuildersScheduleEndToEnd(t *testing.T) {
	// Existing pods: db-0 on a1; web-0 and web-1 (a Deployment's, via its
	// ReplicaSet) on a1 and a2, so zone-a holds two web pods and zone-b
	// none; batch-0 on a2 refuses, by required anti-affinity, any pod
	// labelled app=web on its node.
	rs := appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	existing := []*v1.Pod{
		snapshottest.MakePod("db-0").Label("app", "db").Req("cpu", "1").Node("a1").Obj(),
		snapshottest.MakePod("web-0").Labels(map[string]string{"app": "web"}).OwnerReference("web-5d8f", rs).Req("cpu", "1").Node("a1").Obj(),
		snapshottest.MakePod("web-1").Labels(map[string]string{"app": "web"}).OwnerReference("web-5d8f", rs).Req("cpu", "1").Node("a2").Obj(),
		snapshottest.MakePod("batch-0").Label("app", "batch").Req("cpu", "1").Node("a2").
			PodAntiAffinityIn("app", v1.LabelHostname, []string{"web"}, snapshottest.PodAntiAffinityWithRequiredReq).Obj(),
	}
	snap := snapshottest.Snapshot(t, zones(), existing...)
	sched, err := framework.New(framework.Config{Seed: 1, NodeReasons: true})
	require.NoError(t, err)
	schedule := func(pod *v1.Pod) framework.Decision {
		t.Helper()
		d, err := sched.SchedulePod(snap, snapshot.MustPodInfo(pod))
		require.NoError(t, err)
		return d
	}

	t.Run("required anti-affinity avoids the matching pod's node", func(t *testing.T) {
		// db-1 refuses any node (hostname domain) holding a pod labelled
		// app=db: a1 holds db-0, so InterPodAffinity rejects a1 and the
		// pod lands on a2 or b1.
		d := schedule(snapshottest.MakePod("db-1").Label("app", "db").Req("cpu", "1").
			PodAntiAffinityIn("app", v1.LabelHostname, []string{"db"}, snapshottest.PodAntiAffinityWithRequiredReq).Obj())
		require.True(t, d.Scheduled(), d.Diagnosis.Message())
		require.NotEqual(t, "a1", d.Node)
		require.Equal(t, 2, d.Feasible)

		// The same pod pinned to a1 (matchFields metadata.name) fits no
		// node: a1 fails InterPodAffinity with upstream's anti-affinity
		// reason, a2 and b1 are no candidates.
		d = schedule(snapshottest.MakePod("db-1").Label("app", "db").Req("cpu", "1").RequiredNodeName("a1").
			PodAntiAffinityIn("app", v1.LabelHostname, []string{"db"}, snapshottest.PodAntiAffinityWithRequiredReq).Obj())
		require.False(t, d.Scheduled())
		require.Equal(t, "0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].", d.Diagnosis.Message())
		require.Len(t, d.Diagnosis.Reasons, 1)
		r := d.Diagnosis.Reasons[0]
		require.Equal(t, "a1", r.Node)
		require.Equal(t, "InterPodAffinity", r.Plugin)
		require.Equal(t, framework.CodePodAntiAffinity, r.Code)
		require.Equal(t, "node(s) didn't match pod anti-affinity rules", r.Message())

		// Anti-affinity by zone: db-0 is in zone-a, so a1 and a2 are out
		// and b1 is the one node left.
		d = schedule(snapshottest.MakePod("db-2").Label("app", "db").Req("cpu", "1").
			PodAntiAffinity(zone, matchLabels("app", "db"), snapshottest.PodAntiAffinityWithRequiredReq).Obj())
		require.True(t, d.Scheduled(), d.Diagnosis.Message())
		require.Equal(t, "b1", d.Node)
	})

	t.Run("an existing pod's required anti-affinity", func(t *testing.T) {
		// batch-0 (on a2) refuses app=web pods on its node: a web pod
		// pinned to a2 gets upstream's reason for an existing pod's
		// anti-affinity.
		d := schedule(snapshottest.MakePod("web-x").Label("app", "web").Req("cpu", "1").RequiredNodeName("a2").Obj())
		require.False(t, d.Scheduled())
		require.Equal(t, "0/3 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].", d.Diagnosis.Message())
		require.Equal(t, framework.CodeExistingPodAntiAffinity, d.Diagnosis.Reasons[0].Code)
	})

	t.Run("DoNotSchedule spread goes to the emptier zone", func(t *testing.T) {
		// app=web counts per zone: zone-a 2, zone-b 0. The skew on a node
		// is its zone's count + 1 − the smallest zone count: a third web
		// pod in zone-a gives 2 + 1 − 0 = 3 > maxSkew 1, in zone-b
		// 0 + 1 − 0 = 1: only b1 passes.
		d := schedule(snapshottest.MakePod("web-2").Labels(map[string]string{"app": "web"}).OwnerReference("web-5d8f", rs).Req("cpu", "1").
			SpreadConstraint(1, zone, v1.DoNotSchedule, matchLabels("app", "web"), nil, nil, nil, nil).Obj())
		require.True(t, d.Scheduled(), d.Diagnosis.Message())
		require.Equal(t, "b1", d.Node)
		require.Equal(t, 1, d.Feasible)

		// Pinned to zone-a by node affinity, with nodeAffinityPolicy
		// Ignore so that zone-b (count 0) still counts as a domain, the
		// pod fits nowhere: b1 fails NodeAffinity, a1 and a2 fail with
		// upstream's spread reason (a2 would also fail batch-0's
		// anti-affinity; the spread filter runs first).
		ignore := v1.NodeInclusionPolicyIgnore
		d = schedule(snapshottest.MakePod("web-3").Label("app", "web").Req("cpu", "1").RequiredNodeAffinity(zone, v1.NodeSelectorOpIn, "zone-a").
			SpreadConstraint(1, zone, v1.DoNotSchedule, matchLabels("app", "web"), nil, &ignore, nil, nil).Obj())
		require.False(t, d.Scheduled())
		require.Equal(t, "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) didn't match pod topology spread constraints.", d.Diagnosis.Message())

		// With the default policy (nil: Honor) b1 fails the pod's node
		// affinity and is not a domain; zone-a alone has skew
		// 2 + 1 − 2 = 1 ≤ 1, so a1 fits (a2 holds batch-0).
		d = schedule(snapshottest.MakePod("web-3").Label("app", "web").Req("cpu", "1").RequiredNodeAffinity(zone, v1.NodeSelectorOpIn, "zone-a").
			SpreadConstraint(1, zone, v1.DoNotSchedule, matchLabels("app", "web"), nil, nil, nil, nil).Obj())
		require.True(t, d.Scheduled(), d.Diagnosis.Message())
		require.Equal(t, "a1", d.Node)
	})
}
