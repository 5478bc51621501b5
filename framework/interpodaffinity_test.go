package framework

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// ipaTerm selects app=value within the pod's namespace over key.
func ipaTerm(key, app string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

// withAffinity sets required pod affinity (aff) and anti-affinity (anti).
func withAffinity(p *v1.Pod, aff, anti []v1.PodAffinityTerm) *v1.Pod {
	p.Spec.Affinity = &v1.Affinity{}
	if aff != nil {
		p.Spec.Affinity.PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: aff}
	}
	if anti != nil {
		p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: anti}
	}
	return p
}

// zonedNodes are n1, n2 in zone a and n3 in zone b, each with its
// hostname label.
func zonedNodes() []*v1.Node {
	return []*v1.Node{
		mkNode("n1").Label(v1.LabelHostname, "n1").Label(zoneKey, "a").Obj(),
		mkNode("n2").Label(v1.LabelHostname, "n2").Label(zoneKey, "a").Obj(),
		mkNode("n3").Label(v1.LabelHostname, "n3").Label(zoneKey, "b").Obj(),
	}
}

func runIPA(t *testing.T, args score.InterPodAffinityArgs, pod *v1.Pod, nodes []*v1.Node, bound ...*v1.Pod) map[string][]got {
	t.Helper()
	f, err := NewInterPodAffinity(args)
	require.NoError(t, err)
	snap := snapshottest.Snapshot(t, nodes, bound...)
	res, err := RunPreFilter(f, snapshot.MustPodInfo(pod), snap)
	require.NoError(t, err)
	out := map[string][]got{}
	for _, ni := range snap.Nodes() {
		if res.Filter == nil {
			out[ni.Name()] = pass
			continue
		}
		out[ni.Name()] = flatten(res.Filter.Filter(ni, make([]Reason, 0, 16)))
	}
	return out
}

var (
	affinityFail = []got{{Code: CodePodAffinity, Unresolvable: true}}
	antiFail     = []got{{Code: CodePodAntiAffinity}}
	existingFail = []got{{Code: CodeExistingPodAntiAffinity}}
)

// TestIPAExistingAntiAffinityBlocks: a db pod on n1 has required
// anti-affinity against app=web over the zone. The incoming web pod has
// no terms of its own, yet: counts[(zone, a)] = 1 (the db pod's term
// matches web, n1 is in zone a), counts[(zone, b)] = 0, so n1 and n2
// (zone a: 1 > 0) fail and n3 (zone b: 0) passes. A pod in another
// namespace is not matched (the term's namespaces default to the db
// pod's own), and an app=api pod passes everywhere (Skip).
func TestIPAExistingAntiAffinityBlocks(t *testing.T) {
	db := withAffinity(mkPod("db").Label("app", "db").Node("n1").Obj(), nil, []v1.PodAffinityTerm{ipaTerm(zoneKey, "web")})
	web := mkPod("web").Label("app", "web").Obj()
	res := runIPA(t, score.InterPodAffinityArgs{}, web, zonedNodes(), db)
	assert.Equal(t, map[string][]got{"n1": existingFail, "n2": existingFail, "n3": pass}, res)
	assert.Equal(t, "node(s) didn't satisfy existing pods anti-affinity rules", (&Reason{Code: CodeExistingPodAntiAffinity}).Message())

	other := mkPod("web").Namespace("other").Label("app", "web").Obj()
	res = runIPA(t, score.InterPodAffinityArgs{}, other, zonedNodes(), db)
	assert.Equal(t, map[string][]got{"n1": pass, "n2": pass, "n3": pass}, res)

	api := mkPod("api").Label("app", "api").Obj()
	res = runIPA(t, score.InterPodAffinityArgs{}, api, zonedNodes(), db)
	assert.Equal(t, map[string][]got{"n1": pass, "n2": pass, "n3": pass}, res)
}

// TestIPAExistingAntiAffinityNamespaceSelector: the db pod's term selects
// namespaces labelled env=prod. The web pod in "shop": labels from the
// lister; env=prod: counts[(zone, a)] = 1, n1 and n2 fail. Unknown to the
// lister, "shop" has no labels and nothing fails.
func TestIPAExistingAntiAffinityNamespaceSelector(t *testing.T) {
	term := ipaTerm(zoneKey, "web")
	term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	db := withAffinity(mkPod("db").Label("app", "db").Node("n1").Obj(), nil, []v1.PodAffinityTerm{term})
	web := mkPod("web").Namespace("shop").Label("app", "web").Obj()
	prod := nsMap{"shop": {ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"env": "prod"}}}}
	res := runIPA(t, score.InterPodAffinityArgs{Namespaces: prod}, web, zonedNodes(), db)
	assert.Equal(t, map[string][]got{"n1": existingFail, "n2": existingFail, "n3": pass}, res)
	res = runIPA(t, score.InterPodAffinityArgs{Namespaces: nsMap{}}, web, zonedNodes(), db)
	assert.Equal(t, map[string][]got{"n1": pass, "n2": pass, "n3": pass}, res)
}

type nsMap map[string]*v1.Namespace

func (m nsMap) Namespace(name string) *v1.Namespace { return m[name] }

// TestIPAFirstPodOfSelfAffineGroup: a web pod with required affinity to
// app=web over the zone. With no web pod anywhere, counts is empty and
// the pod matches its own term, so every node with the zone label passes
// (n1, n2, n3) and the node without it (n4) fails: all topology labels
// must exist, also for self-affinity. Once one web pod runs on n3
// (counts[(zone, b)] = 1), only zone b passes: n1 and n2 fail (0 in
// zone a). A pod that does not match its own term (app=api with
// affinity to web) fails everywhere when no web pod exists.
func TestIPAFirstPodOfSelfAffineGroup(t *testing.T) {
	nodes := append(zonedNodes(), mkNode("n4").Label(v1.LabelHostname, "n4").Obj())
	web := func(name string) *v1.Pod {
		return withAffinity(mkPod(name).Label("app", "web").Obj(), []v1.PodAffinityTerm{ipaTerm(zoneKey, "web")}, nil)
	}
	res := runIPA(t, score.InterPodAffinityArgs{}, web("web-0"), nodes)
	assert.Equal(t, map[string][]got{"n1": pass, "n2": pass, "n3": pass, "n4": affinityFail}, res)

	first := web("web-0")
	first.Spec.NodeName = "n3"
	res = runIPA(t, score.InterPodAffinityArgs{}, web("web-1"), nodes, first)
	assert.Equal(t, map[string][]got{"n1": affinityFail, "n2": affinityFail, "n3": pass, "n4": affinityFail}, res)

	api := withAffinity(mkPod("api").Label("app", "api").Obj(), []v1.PodAffinityTerm{ipaTerm(zoneKey, "web")}, nil)
	res = runIPA(t, score.InterPodAffinityArgs{}, api, nodes)
	assert.Equal(t, map[string][]got{"n1": affinityFail, "n2": affinityFail, "n3": affinityFail, "n4": affinityFail}, res)
}

// TestIPAIncomingAntiAffinity: a web pod with anti-affinity to app=web
// per hostname: web on n1 gives counts[(hostname, n1)] = 1; n1 fails,
// n2 and n3 pass. matchLabelKeys on version: the selector becomes app=web
// AND version=v2, which the v1 pod on n1 does not match: all pass.
func TestIPAIncomingAntiAffinity(t *testing.T) {
	bound := mkPod("web-0").Label("app", "web").Label("version", "v1").Node("n1").Obj()
	pod := withAffinity(mkPod("web-1").Label("app", "web").Label("version", "v2").Obj(), nil, []v1.PodAffinityTerm{ipaTerm(v1.LabelHostname, "web")})
	res := runIPA(t, score.InterPodAffinityArgs{}, pod, zonedNodes(), bound)
	assert.Equal(t, map[string][]got{"n1": antiFail, "n2": pass, "n3": pass}, res)

	pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].MatchLabelKeys = []string{"version"}
	res = runIPA(t, score.InterPodAffinityArgs{}, pod, zonedNodes(), bound)
	assert.Equal(t, map[string][]got{"n1": pass, "n2": pass, "n3": pass}, res)
	// mismatchLabelKeys on version: app=web AND version notin (v2): the
	// v1 pod on n1 matches again.
	a := &pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	a.MatchLabelKeys, a.MismatchLabelKeys = nil, []string{"version"}
	res = runIPA(t, score.InterPodAffinityArgs{}, pod, zonedNodes(), bound)
	assert.Equal(t, map[string][]got{"n1": antiFail, "n2": pass, "n3": pass}, res)
}

// TestIPABadInput: args out of range name the field; a pod whose selector
// does not parse is rejected by NewPodInfo naming the fields; PreFilter
// without the cluster is an error.
func TestIPABadInput(t *testing.T) {
	_, err := NewInterPodAffinity(score.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo(int32(101))})
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "hardPodAffinityWeight")
	f, err := NewInterPodAffinity(score.InterPodAffinityArgs{})
	require.NoError(t, err)
	// A selector that does not parse is rejected by the API server, and
	// so by NewPodInfo (before, PreFilter rejected the pod with
	// upstream's parse message); every invalid list is named.
	bogus := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	two := withAffinity(mkPod("p").Obj(), nil, []v1.PodAffinityTerm{{TopologyKey: zoneKey, LabelSelector: bogus}})
	two.Spec.Affinity.PodAffinity = &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
		{Weight: 1, PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: zoneKey, LabelSelector: bogus}}}}
	_, err = snapshot.NewPodInfo(two)
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	assert.Contains(t, err.Error(), "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchExpressions[0].operator")
	assert.Contains(t, err.Error(), "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator")

	pod := withAffinity(mkPod("p").Obj(), []v1.PodAffinityTerm{ipaTerm(zoneKey, "web")}, nil)
	_, err = f.PreFilter(snapshot.MustPodInfo(pod))
	require.True(t, errors.Is(err, ErrInvalidConfig))
}

// TestIPASchedulerBypassesCache: a Scheduler with InterPodAffinity (filter
// or scorer) does not use the equivalence cache, and its decisions follow
// anti-affinity as replicas land: 3 web replicas with hostname
// anti-affinity on 3 nodes land one per node, and a 4th fits nowhere
// (each node: counts[(hostname, n)] = 1 > 0).
func TestIPASchedulerBypassesCache(t *testing.T) {
	nodes := []*v1.Node{
		mkNode("n1").Label(v1.LabelHostname, "n1").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
		mkNode("n2").Label(v1.LabelHostname, "n2").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
		mkNode("n3").Label(v1.LabelHostname, "n3").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
	}
	replica := func(i int) *v1.Pod {
		return withAffinity(mkPod(fmt.Sprintf("web-%d", i)).Label("app", "web").Req("cpu", "100m").Obj(), nil, []v1.PodAffinityTerm{ipaTerm(v1.LabelHostname, "web")})
	}
	ipa, err := NewInterPodAffinity(score.InterPodAffinityArgs{})
	require.NoError(t, err)
	s, err := New(Config{Filters: append(DefaultFilters(), ipa), PercentageOfNodesToScore: 100})
	require.NoError(t, err)
	f := snapshottest.Snapshot(t, nodes).Fork()
	per := map[string]int{}
	for i := range 3 {
		d, err := s.SchedulePod(f, snapshot.MustPodInfo(replica(i)))
		require.NoError(t, err)
		require.True(t, d.Scheduled(), "replica %d: %v", i, d.Diagnosis)
		per[d.Node]++
		p := replica(i)
		p.Spec.NodeName = d.Node
		require.NoError(t, f.AddPod(p, d.Node))
	}
	assert.Equal(t, map[string]int{"n1": 1, "n2": 1, "n3": 1}, per)
	d, err := s.SchedulePod(f, snapshot.MustPodInfo(replica(3)))
	require.NoError(t, err)
	require.False(t, d.Scheduled())
	assert.Equal(t, "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.", d.Diagnosis.Message())
	st := s.EquivalenceStats()
	assert.Zero(t, st.Cached+st.Filled, "InterPodAffinity is not node-local: no cached cycle")

	// The default profile has InterPodAffinity; the fork holds pods with
	// anti-affinity, so even pods without terms bypass the cache.
	s, err = New(Config{PercentageOfNodesToScore: 100})
	require.NoError(t, err)
	for i := range 3 {
		_, err := s.SchedulePod(f, snapshot.MustPodInfo(mkPod(fmt.Sprintf("plain-%d", i)).Req("cpu", "100m").Obj()))
		require.NoError(t, err)
	}
	st = s.EquivalenceStats()
	assert.Zero(t, st.Cached+st.Filled)
}
