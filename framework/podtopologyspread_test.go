package framework

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/spread"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

const zoneKey = v1.LabelTopologyZone

// spreadPod is a pending app=web pod with one DoNotSchedule constraint
// selecting app=web.
func spreadPod(key string, maxSkew int32, edit func(*v1.TopologySpreadConstraint)) *v1.Pod {
	p := mkPod("incoming").Label("app", "web").Obj()
	c := v1.TopologySpreadConstraint{
		MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}
	if edit != nil {
		edit(&c)
	}
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{c}
	return p
}

// webPods returns n app=web pods bound to node.
func webPods(node string, n int) []*v1.Pod {
	var out []*v1.Pod
	for i := range n {
		out = append(out, mkPod(fmt.Sprintf("%s-web-%d", node, i)).Label("app", "web").Node(node).Obj())
	}
	return out
}

// runSpread runs the PodTopologySpread filter for pod over a snapshot of
// nodes and bound, returning the reasons per node.
func runSpread(t *testing.T, f *podTopologySpreadPlugin, pod *v1.Pod, nodes []*v1.Node, bound []*v1.Pod) map[string][]got {
	t.Helper()
	snap := snapshottest.Snapshot(t, nodes, bound...)
	res, err := f.PreFilterCluster(snapshot.MustPodInfo(pod), snap)
	require.NoError(t, err)
	require.NotNil(t, res.Filter)
	out := map[string][]got{}
	for _, ni := range snap.Nodes() {
		out[ni.Name()] = flatten(res.Filter.Filter(ni, make([]Reason, 0, 16)))
	}
	return out
}

func newSpread(t *testing.T, args score.PodTopologySpreadArgs) *podTopologySpreadPlugin {
	t.Helper()
	f, err := NewPodTopologySpread(args)
	require.NoError(t, err)
	return f.(*podTopologySpreadPlugin)
}

var (
	pass    = []got{}
	skewed  = []got{{Code: CodeTopologySpreadSkew}}
	noLabel = []got{{Code: CodeTopologySpreadLabel, Unresolvable: true}}
)

// TestSpreadMinDomainsAboveDomainCount: with fewer domains than
// minDomains the global minimum is 0, not the smallest domain count.
func TestSpreadMinDomainsAboveDomainCount(t *testing.T) {
	nodes := []*v1.Node{mkNode("n1").Label(zoneKey, "a").Obj(), mkNode("n2").Label(zoneKey, "b").Obj()}
	bound := append(webPods("n1", 2), webPods("n2", 1)...) // zone a: 2, zone b: 1
	f := newSpread(t, score.PodTopologySpreadArgs{})

	// minDomains unset (1) or 2 (= the 2 domains): global min = min(2, 1) = 1.
	//   zone a: 2 + 1 (the pod matches itself) − 1 = 2 > maxSkew 1: fails
	//   zone b: 1 + 1 − 1 = 1 ≤ 1: passes
	for _, md := range []*int32{nil, ptrTo(int32(2))} {
		res := runSpread(t, f, spreadPod(zoneKey, 1, func(c *v1.TopologySpreadConstraint) { c.MinDomains = md }), nodes, bound)
		assert.Equal(t, map[string][]got{"n1": skewed, "n2": pass}, res, "minDomains %v", md)
	}
	// minDomains 3 > 2 domains: global min = 0.
	//   zone a: 2 + 1 − 0 = 3 > 1: fails
	//   zone b: 1 + 1 − 0 = 2 > 1: fails too
	res := runSpread(t, f, spreadPod(zoneKey, 1, func(c *v1.TopologySpreadConstraint) { c.MinDomains = ptrTo(int32(3)) }), nodes, bound)
	assert.Equal(t, map[string][]got{"n1": skewed, "n2": skewed}, res)
	// minDomains 3 and maxSkew 2: zone a 3 > 2 fails, zone b 2 ≤ 2 passes.
	res = runSpread(t, f, spreadPod(zoneKey, 2, func(c *v1.TopologySpreadConstraint) { c.MinDomains = ptrTo(int32(3)) }), nodes, bound)
	assert.Equal(t, map[string][]got{"n1": skewed, "n2": pass}, res)
}

// TestSpreadNodeWithoutZoneLabel: a node without the topology key fails
// as unresolvable, and its pods count in no domain.
func TestSpreadNodeWithoutZoneLabel(t *testing.T) {
	nodes := []*v1.Node{
		mkNode("n1").Label(zoneKey, "a").Obj(),
		mkNode("n2").Label(zoneKey, "b").Obj(),
		mkNode("n3").Obj(), // no zone label
	}
	f := newSpread(t, score.PodTopologySpreadArgs{})
	bound := append(webPods("n1", 1), webPods("n3", 5)...)
	res := runSpread(t, f, spreadPod(zoneKey, 1, nil), nodes, bound)
	// Domains: a = 1, b = 0 (n3's 5 pods count nowhere): global min 0.
	//   n1: 1 + 1 − 0 = 2 > 1: fails
	//   n2: 0 + 1 − 0 = 1 ≤ 1: passes
	//   n3: no zone label: "missing required label", unresolvable
	assert.Equal(t, map[string][]got{"n1": skewed, "n2": pass, "n3": noLabel}, res)
	// n3 is not a domain either (were it one, with no pods, the global
	// minimum would be 0): a = 1, b = 1, min 1.
	//   n1, n2: 1 + 1 − 1 = 1 ≤ 1: pass
	bound = append(webPods("n1", 1), webPods("n2", 1)...)
	res = runSpread(t, f, spreadPod(zoneKey, 1, nil), nodes, bound)
	assert.Equal(t, map[string][]got{"n1": pass, "n2": pass, "n3": noLabel}, res)
	r := Reason{Code: CodeTopologySpreadLabel}
	assert.Equal(t, "node(s) didn't match pod topology spread constraints (missing required label)", r.Message())
	r.Code = CodeTopologySpreadSkew
	assert.Equal(t, "node(s) didn't match pod topology spread constraints", r.Message())
}

// TestSpreadNodeTaintsPolicyHonor: with nodeTaintsPolicy Honor a node
// whose taint the pod does not tolerate is not a domain.
func TestSpreadNodeTaintsPolicyHonor(t *testing.T) {
	nodes := []*v1.Node{
		mkNode("n1").Label(zoneKey, "a").Obj(),
		mkNode("n2").Label(zoneKey, "b").Taint("dedicated", "gpu", v1.TaintEffectNoSchedule).Obj(),
		mkNode("n3").Label(zoneKey, "c").Obj(),
	}
	bound := append(webPods("n1", 1), webPods("n3", 1)...) // a: 1, b: 0, c: 1
	f := newSpread(t, score.PodTopologySpreadArgs{})

	// Ignore (the default): domains a 1, b 0, c 1; global min 0.
	//   n1: 1 + 1 − 0 = 2 > 1 fails; n2: 0 + 1 − 0 = 1 passes; n3 fails.
	ignore := map[string][]got{"n1": skewed, "n2": pass, "n3": skewed}
	assert.Equal(t, ignore, runSpread(t, f, spreadPod(zoneKey, 1, nil), nodes, bound))

	// Honor: n2 (untolerated NoSchedule taint) is left out; domains a 1,
	// c 1; global min 1.
	//   n1: 1 + 1 − 1 = 1 passes; n3 likewise; n2: its zone b has no
	//   count: 0 + 1 − 1 = 0 passes (TaintToleration rejects it).
	honor := func(c *v1.TopologySpreadConstraint) { c.NodeTaintsPolicy = ptrTo(v1.NodeInclusionPolicyHonor) }
	assert.Equal(t, map[string][]got{"n1": pass, "n2": pass, "n3": pass}, runSpread(t, f, spreadPod(zoneKey, 1, honor), nodes, bound))

	// Honor, but the pod tolerates the taint: n2 is a domain again.
	p := spreadPod(zoneKey, 1, honor)
	p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
	assert.Equal(t, ignore, runSpread(t, f, p, nodes, bound))

	// nodeAffinityPolicy Honor (the default) leaves out nodes the pod's
	// nodeSelector rejects: zone in {a, c} only; domains a 1, c 1: min 1,
	// every node passes; with Ignore, zone b counts again (min 0).
	sel := spreadPod(zoneKey, 1, nil)
	sel.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: zoneKey, Operator: v1.NodeSelectorOpIn, Values: []string{"a", "c"}}}}},
	}}}
	assert.Equal(t, map[string][]got{"n1": pass, "n2": pass, "n3": pass}, runSpread(t, f, sel, nodes, bound))
	sel.Spec.TopologySpreadConstraints[0].NodeAffinityPolicy = ptrTo(v1.NodeInclusionPolicyIgnore)
	assert.Equal(t, ignore, runSpread(t, f, sel, nodes, bound))
}

// TestSpreadSelectorsAndNamespaces: only pods in the pod's namespace, not
// terminating, matched by the selector (with matchLabelKeys added) count.
func TestSpreadSelectorsAndNamespaces(t *testing.T) {
	nodes := []*v1.Node{mkNode("n1").Label(zoneKey, "a").Obj(), mkNode("n2").Label(zoneKey, "b").Obj()}
	other := mkPod("other-ns").Namespace("team-a").Label("app", "web").Node("n1").Obj()
	dying := mkPod("dying").Label("app", "web").Node("n1").Obj()
	dying.DeletionTimestamp = &metav1.Time{}
	db := mkPod("db").Label("app", "db").Node("n1").Obj()
	f := newSpread(t, score.PodTopologySpreadArgs{})
	// None of the three counts: a 0, b 0; every node 0 + 1 − 0 = 1 ≤ 1.
	assert.Equal(t, map[string][]got{"n1": pass, "n2": pass}, runSpread(t, f, spreadPod(zoneKey, 1, nil), nodes, []*v1.Pod{other, dying, db}))

	// matchLabelKeys [version]: the pod has version=v2, so only web pods
	// with version=v2 count: n1's v1 pod does not (a 0, b 1).
	v1pod := mkPod("web-v1").Label("app", "web").Label("version", "v1").Node("n1").Obj()
	v2pod := mkPod("web-v2").Label("app", "web").Label("version", "v2").Node("n2").Obj()
	p := spreadPod(zoneKey, 1, func(c *v1.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"version"} })
	p.Labels["version"] = "v2"
	//   n1: 0 + 1 − 0 = 1 passes; n2: 1 + 1 − 0 = 2 fails.
	assert.Equal(t, map[string][]got{"n1": pass, "n2": skewed}, runSpread(t, f, p, nodes, []*v1.Pod{v1pod, v2pod}))
	// Without matchLabelKeys both count (a 1, b 1): min 1, both pass.
	assert.Equal(t, map[string][]got{"n1": pass, "n2": pass}, runSpread(t, f, spreadPod(zoneKey, 1, nil), nodes, []*v1.Pod{v1pod, v2pod}))
}

// TestSpreadListDefaults: a pod without constraints gets the List
// defaults' DoNotSchedule constraints with the selector of the Service
// that selects it; system defaults are ScheduleAnyway only, so they never
// filter.
func TestSpreadListDefaults(t *testing.T) {
	nodes := []*v1.Node{mkNode("n1").Label(zoneKey, "a").Obj(), mkNode("n2").Label(zoneKey, "b").Obj()}
	bound := webPods("n1", 2)
	pod := mkPod("incoming").Label("app", "web").Obj()
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	wl, err := snapshot.NewWorkloadIndex(snapshot.WorkloadObjects{Services: []*v1.Service{svc}})
	require.NoError(t, err)
	list := score.PodTopologySpreadArgs{DefaultingType: "List", Workloads: wl, DefaultConstraints: []v1.TopologySpreadConstraint{
		{TopologyKey: zoneKey, MaxSkew: 1, WhenUnsatisfiable: v1.DoNotSchedule},
	}}
	// Selector app=web from the Service: a 2, b 0; n1 2 + 1 − 0 = 3 > 1.
	assert.Equal(t, map[string][]got{"n1": skewed, "n2": pass}, runSpread(t, newSpread(t, list), pod, nodes, bound))

	// No Service selects the pod: empty default selector, no constraint.
	list.Workloads = nil
	snap := snapshottest.Snapshot(t, nodes, bound...)
	res, err := newSpread(t, list).PreFilterCluster(snapshot.MustPodInfo(pod), snap)
	require.NoError(t, err)
	assert.Nil(t, res.Filter)
	list.Workloads = wl
	sys := newSpread(t, score.PodTopologySpreadArgs{Workloads: wl})
	res, err = sys.PreFilterCluster(snapshot.MustPodInfo(pod), snap)
	require.NoError(t, err)
	assert.Nil(t, res.Filter, "system defaults are ScheduleAnyway")
}

// TestSpreadBadInput: bad args and a malformed selector are errors naming
// the field; PreFilter without the cluster is an error.
func TestSpreadBadInput(t *testing.T) {
	for _, tc := range []struct {
		args score.PodTopologySpreadArgs
		want string
	}{
		{score.PodTopologySpreadArgs{DefaultingType: "Sometimes"}, "defaultingType"},
		{score.PodTopologySpreadArgs{DefaultConstraints: []v1.TopologySpreadConstraint{{TopologyKey: zoneKey, MaxSkew: 1, WhenUnsatisfiable: v1.DoNotSchedule}}}, "defaultingType"},
		{score.PodTopologySpreadArgs{DefaultingType: "List", DefaultConstraints: []v1.TopologySpreadConstraint{{TopologyKey: zoneKey, MaxSkew: 0, WhenUnsatisfiable: v1.DoNotSchedule}}}, "defaultConstraints[0].maxSkew"},
		{score.PodTopologySpreadArgs{DefaultingType: "List", DefaultConstraints: []v1.TopologySpreadConstraint{{TopologyKey: "", MaxSkew: 1, WhenUnsatisfiable: v1.DoNotSchedule}}}, "defaultConstraints[0].topologyKey"},
		{score.PodTopologySpreadArgs{DefaultingType: "List", DefaultConstraints: []v1.TopologySpreadConstraint{{TopologyKey: zoneKey, MaxSkew: 1, WhenUnsatisfiable: "Maybe"}}}, "defaultConstraints[0].whenUnsatisfiable"},
		{score.PodTopologySpreadArgs{DefaultingType: "List", DefaultConstraints: []v1.TopologySpreadConstraint{{TopologyKey: zoneKey, MaxSkew: 1, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{}}}}, "defaultConstraints[0].labelSelector"},
		{score.PodTopologySpreadArgs{DefaultingType: "List", DefaultConstraints: []v1.TopologySpreadConstraint{
			{TopologyKey: zoneKey, MaxSkew: 1, WhenUnsatisfiable: v1.DoNotSchedule}, {TopologyKey: zoneKey, MaxSkew: 2, WhenUnsatisfiable: v1.DoNotSchedule}}}, "defaultConstraints[1]"},
	} {
		_, err := NewPodTopologySpread(tc.args)
		require.ErrorIs(t, err, ErrInvalidConfig, tc.want)
		assert.Contains(t, err.Error(), tc.want)
		_, err = score.NewPodTopologySpread(tc.args)
		require.ErrorIs(t, err, score.ErrInvalidConfig, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}

	f := newSpread(t, score.PodTopologySpreadArgs{})
	bad := spreadPod(zoneKey, 1, func(c *v1.TopologySpreadConstraint) {
		c.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	})
	// NewPodInfo rejects it (PreFilterCluster did before it validated).
	_, err := snapshot.NewPodInfo(bad)
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	assert.Contains(t, err.Error(), "spec.topologySpreadConstraints[0].labelSelector")
	_, err = f.PreFilter(snapshot.MustPodInfo(spreadPod(zoneKey, 1, nil)))
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrInvalidConfig))
}

// TestSpreadSchedulerBypassesCache: with the default filters and profile
// (PodTopologySpread included) a pod with constraints of its own does
// not use the equivalence cache (a node's verdict depends on other nodes'
// pods), and its decisions follow the constraint as replicas land:
// hostname maxSkew 1 over 3 nodes puts one replica on each before any
// node gets a second. The same replicas without constraints, which no
// workload selects, are served by the cache.
func TestSpreadSchedulerBypassesCache(t *testing.T) {
	nodes := []*v1.Node{
		mkNode("n1").Label(v1.LabelHostname, "n1").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
		mkNode("n2").Label(v1.LabelHostname, "n2").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
		mkNode("n3").Label(v1.LabelHostname, "n3").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
	}
	replica := func(i int, constrained bool) *v1.Pod {
		p := mkPod(fmt.Sprintf("web-%d", i)).Label("app", "web").Req("cpu", "100m").Obj()
		if constrained {
			p.Spec.TopologySpreadConstraints = spreadPod(v1.LabelHostname, 1, nil).Spec.TopologySpreadConstraints
		}
		return p
	}
	run := func(constrained bool) (map[string]int, EquivalenceStats) {
		s, err := New(Config{PercentageOfNodesToScore: 100})
		require.NoError(t, err)
		f := snapshottest.Snapshot(t, nodes).Fork()
		per := map[string]int{}
		for i := range 6 {
			d, err := s.SchedulePod(f, snapshot.MustPodInfo(replica(i, constrained)))
			require.NoError(t, err)
			require.True(t, d.Scheduled(), "replica %d: %v", i, d.Diagnosis)
			per[d.Node]++
			if i == 2 && constrained {
				assert.Equal(t, map[string]int{"n1": 1, "n2": 1, "n3": 1}, per, "one replica per node first")
			}
			require.NoError(t, f.AddPod(func() *v1.Pod { p := replica(i, constrained); p.Spec.NodeName = d.Node; return p }(), d.Node))
		}
		return per, s.EquivalenceStats()
	}
	per, st := run(true)
	assert.Equal(t, map[string]int{"n1": 2, "n2": 2, "n3": 2}, per)
	assert.Zero(t, st.Cached+st.Filled, "PodTopologySpread applies: no cached cycle")
	assert.Equal(t, uint64(6), st.Uncached)
	_, st = run(false)
	assert.NotZero(t, st.Cached+st.Filled, "PodTopologySpread skips every replica: cached")
}

// TestSystemDefaultSpreadFromCache: the default filters and profile
// spread a Deployment's pods by upstream's system defaults, finding the
// ReplicaSet (and Services) on the snapshot of the Cache they were fed
// to; the equivalence cache does not serve such pods, even when a pod of
// the same spec that nothing selects filled it first.
//
// n1 is big (64 cpu) and holds two replicas of rs "web"; n2 and n3 are
// small (8 cpu) and empty; the nodes have hostnames and no zone, so the
// system defaults score hostname alone (maxSkew 3, 3 domains):
//
//	raw(n1) = round(2 × ln(3+2) + 3 − 1) = round(5.22) = 5; raw(n2) = raw(n3) = 2
//	normalised: n1 100 × (5+2−5)/5 = 40; n2, n3 100 × (5+2−2)/5 = 100
//
// so PodTopologySpread (weight 2) gives n2 and n3 120 points more than
// n1, more than LeastAllocated and BalancedAllocation favour the big n1
// by. Without the ReplicaSet (or served from the cache) the pod goes to
// n1.
func TestSystemDefaultSpreadFromCache(t *testing.T) {
	c := snapshot.NewCache()
	for _, n := range []*v1.Node{
		mkNode("n1").Label(v1.LabelHostname, "n1").Allocatable("cpu", "64", "memory", "128Gi", "pods", "110").Obj(),
		mkNode("n2").Label(v1.LabelHostname, "n2").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
		mkNode("n3").Label(v1.LabelHostname, "n3").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
	} {
		require.NoError(t, c.AddNode(n))
	}
	owned := func(name, app string, rs string) *v1.Pod {
		w := mkPod(name).Label("app", app).Req("cpu", "1", "memory", "1Gi")
		p := w.Obj()
		if rs != "" {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, Controller: ptrTo(true)}}
		}
		return p
	}
	for i := range 2 {
		p := owned(fmt.Sprintf("web-old-%d", i), "web", "web")
		p.Spec.NodeName = "n1"
		require.NoError(t, c.AddPod(p))
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}

	s, err := New(Config{PercentageOfNodesToScore: 100, Seed: 1})
	require.NoError(t, err)
	// Nothing selects "other" (its ReplicaSet is unknown): not spread, it
	// goes to the big node, and fills the cache for its class.
	for i := range 3 {
		d, err := s.SchedulePod(c.Snapshot(), snapshot.MustPodInfo(owned(fmt.Sprintf("other-%d", i), "other", "")))
		require.NoError(t, err)
		assert.Equal(t, "n1", d.Node)
	}
	require.NotZero(t, s.EquivalenceStats().Cached+s.EquivalenceStats().Filled)
	// A web replica before the ReplicaSet is known: the same.
	d, err := s.SchedulePod(c.Snapshot(), snapshot.MustPodInfo(owned("web-new", "web", "web")))
	require.NoError(t, err)
	assert.Equal(t, "n1", d.Node)
	// With the ReplicaSet in the cache, the replica of the same spec is
	// spread away from n1, and not served from the cache.
	require.NoError(t, c.AddObject(rs))
	before := s.EquivalenceStats()
	d, err = s.SchedulePod(c.Snapshot(), snapshot.MustPodInfo(owned("web-new", "web", "web")))
	require.NoError(t, err)
	assert.Contains(t, []string{"n2", "n3"}, d.Node)
	after := s.EquivalenceStats()
	assert.Equal(t, before.Uncached+1, after.Uncached)
	assert.Equal(t, before.Cached, after.Cached)
	// A Service selecting app=web does the same for a pod without an
	// owner.
	require.NoError(t, c.RemoveObject(rs))
	require.NoError(t, c.AddObject(&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}}))
	d, err = s.SchedulePod(c.Snapshot(), snapshot.MustPodInfo(owned("web-svc", "web", "")))
	require.NoError(t, err)
	assert.Contains(t, []string{"n2", "n3"}, d.Node)
}

func ptrTo[T any](v T) *T { return &v }

// TestSpreadDiagnosis: a pod no node can take under its spread constraint
// gets upstream's message, counting each reason.
func TestSpreadDiagnosis(t *testing.T) {
	nodes := []*v1.Node{
		mkNode("n1").Label(zoneKey, "a").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
		mkNode("n2").Label(zoneKey, "b").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
		mkNode("n3").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
	}
	snap := snapshottest.Snapshot(t, nodes, append(webPods("n1", 1), webPods("n2", 1)...)...)
	s, err := New(Config{Filters: append(DefaultFilters(), newSpread(t, score.PodTopologySpreadArgs{}))})
	require.NoError(t, err)
	// minDomains 3 > 2 zones: global min 0; a and b: 1 + 1 − 0 = 2 > 1.
	pod := spreadPod(zoneKey, 1, func(c *v1.TopologySpreadConstraint) { c.MinDomains = ptrTo(int32(3)) })
	d, err := s.SchedulePod(snap, snapshot.MustPodInfo(pod))
	require.NoError(t, err)
	require.False(t, d.Scheduled())
	assert.Equal(t, "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label), 2 node(s) didn't match pod topology spread constraints.", d.Diagnosis.Message())
	assert.Equal(t, []string{podTopologySpreadName}, d.Diagnosis.UnschedulablePlugins)
}

// TestSpreadCheckHeadMatchesLabels: with every topology key the hostname
// or the zone, the filter reads the node's values from its head
// (spread.Filter.CheckHead); its verdict on every node equals the one
// read from the node's labels (Check), for nodes missing either label or
// holding an empty value, one or two constraints, minDomains and the
// self-match; a key outside the head (rack) turns HeadKeys off.
func TestSpreadCheckHeadMatchesLabels(t *testing.T) {
	keys := []string{v1.LabelHostname, zoneKey, "rack"}
	heads, zoneFast, zoneMany := 0, 0, 0
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var nodes []*v1.Node
		var bound []*v1.Pod
		// Up to 7 zones: more than spreadZoneFilter's 4 blocked ones
		// sends a single zone constraint back to spreadFilter.
		zones := []int{3, 7}[rng.IntN(2)]
		for i := range 1 + rng.IntN(12) {
			name := fmt.Sprintf("n%d", i)
			w := mkNode(name)
			for _, k := range keys {
				values := 3
				if k == zoneKey {
					values = zones
				}
				switch rng.IntN(5) {
				case 0: // missing
				case 1:
					w = w.Label(k, "")
				default:
					w = w.Label(k, fmt.Sprint(k[:1], rng.IntN(values)))
				}
			}
			nodes = append(nodes, w.Obj())
			for j := range rng.IntN(5) {
				bound = append(bound, mkPod(fmt.Sprintf("%s-p%d", name, j)).Label("app", []string{"web", "db"}[rng.IntN(2)]).Node(name).Obj())
			}
		}
		pod := mkPod("incoming").Label("app", "web").Obj()
		head := true
		for _, k := range [][]string{keys[:1], keys[1:2], keys[2:], keys[:2], {zoneKey, "rack"}}[rng.IntN(5)] {
			head = head && k != "rack"
			pod.Spec.TopologySpreadConstraints = append(pod.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
				MaxSkew: 1 + int32(rng.IntN(2)), TopologyKey: k, WhenUnsatisfiable: v1.DoNotSchedule,
				MinDomains:    []*int32{nil, ptrTo(int32(1 + rng.IntN(4)))}[rng.IntN(2)],
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": []string{"web", "db"}[rng.IntN(2)]}},
			})
		}
		snap := snapshottest.Snapshot(t, nodes, bound...)
		res, err := newSpread(t, score.PodTopologySpreadArgs{}).PreFilterCluster(snapshot.MustPodInfo(pod), snap)
		require.NoError(t, err)
		var st *spread.Filter
		switch f := res.Filter.(type) {
		case spreadFilter:
			st = f.st
			if len(pod.Spec.TopologySpreadConstraints) == 1 && pod.Spec.TopologySpreadConstraints[0].TopologyKey == zoneKey && !st.PassesAll() {
				zoneMany++ // more blocked zones than spreadZoneFilter holds
			}
		case *spreadZoneFilter:
			st = f.st
			zoneFast++
		default:
			t.Fatalf("seed %d: filter %T", seed, res.Filter)
		}
		require.Equal(t, head, st.HeadKeys(), "seed %d", seed)
		if head {
			heads++
		}
		for _, ni := range snap.Nodes() {
			var want []got
			switch st.Check(ni.Labels()) {
			case spread.MissingLabel:
				want = noLabel
			case spread.Skew:
				want = skewed
			default:
				want = pass
			}
			require.Equal(t, want, flatten(res.Filter.Filter(ni, make([]Reason, 0, 4))), "seed %d node %s", seed, ni.Name())
			if head {
				require.Equal(t, st.Check(ni.Labels()), st.CheckHead(nodeview.Head(ni)), "seed %d node %s", seed, ni.Name())
			}
		}
	}
	require.Greater(t, heads, 100)
	t.Logf("heads %d zoneFast %d zoneMany %d", heads, zoneFast, zoneMany)
	require.Greater(t, zoneFast, 30, "pods checked by spreadZoneFilter")
	require.Greater(t, zoneMany, 0, "single zone constraints with more than 4 blocked zones")
}
