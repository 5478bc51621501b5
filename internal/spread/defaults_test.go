package spread_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/spread"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// selectorKey is the canonical form of the constraints' selector ("" for
// none), checking that every constraint has the same one.
func selectorKey(t *testing.T, cs []spread.Constraint) string {
	t.Helper()
	if len(cs) == 0 {
		return ""
	}
	var key []byte
	for i := range cs[0].Selector {
		key = cs[0].Selector[i].AppendKey(key)
	}
	for _, c := range cs[1:] {
		var k []byte
		for i := range c.Selector {
			k = c.Selector[i].AppendKey(k)
		}
		require.Equal(t, string(key), string(k))
	}
	return string(key)
}

// inPlaceLister is a lister whose objects a test changes in place.
type inPlaceLister struct {
	svcs []*v1.Service
	rs   *appsv1.ReplicaSet
}

func (l *inPlaceLister) Services(string) []*v1.Service { return l.svcs }
func (l *inPlaceLister) ReplicationController(string, string) *v1.ReplicationController {
	return nil
}
func (l *inPlaceLister) ReplicaSet(string, string) *appsv1.ReplicaSet   { return l.rs }
func (l *inPlaceLister) StatefulSet(string, string) *appsv1.StatefulSet { return nil }

// TestDefaultConstraintsCacheFollowsObjects: the default constraints
// through a Config's SelectorCache equal those computed afresh (a Config
// without one) after every change of what they are computed from — a
// Service's selector changed, a Service added and removed, the
// ReplicaSet's selector changed and the ReplicaSet removed, a Fork layer
// adding a Service then reverted, objects changed in place by a lister —
// and a hit allocates nothing.
func TestDefaultConstraintsCacheFollowsObjects(t *testing.T) {
	cfg, err := spread.NewConfig(nil, "", nil)
	require.NoError(t, err)
	fresh := spread.Config{Defaults: cfg.Defaults, System: true}
	pod := snapshottest.MakePod("p").Namespace("ns").Label("app", "web").Label("env", "prod").Label("tier", "fe").Obj()
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", Controller: new(true)}}
	svc := func(name string, sel map[string]string) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: v1.ServiceSpec{Selector: sel}}
	}
	rs := func(sel *metav1.LabelSelector) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs"}, Spec: appsv1.ReplicaSetSpec{Selector: sel}}
	}
	seen := map[string]bool{}
	check := func(step string, l spread.Lister) {
		t.Helper()
		for range 2 { // the second from the cache
			got, err := cfg.Constraints(pod, v1.ScheduleAnyway, l)
			require.NoError(t, err)
			want, err := fresh.Constraints(pod, v1.ScheduleAnyway, l)
			require.NoError(t, err)
			require.Equal(t, selectorKey(t, want), selectorKey(t, got), step)
			require.Len(t, got, len(want), step)
			seen[selectorKey(t, want)] = true
		}
	}
	c := snapshot.NewCache()
	require.NoError(t, c.AddObject(svc("a", map[string]string{"app": "web"})))
	check("one Service", c.Snapshot())
	l := c.Snapshot()
	require.Zero(t, testing.AllocsPerRun(50, func() {
		if _, err := cfg.Constraints(pod, v1.ScheduleAnyway, l); err != nil {
			t.Fatal(err)
		}
	}), "a cache hit allocates")

	require.NoError(t, c.UpdateObject(svc("a", map[string]string{"env": "prod"})))
	check("Service re-selected", c.Snapshot())
	require.NoError(t, c.AddObject(svc("b", map[string]string{"tier": "fe"})))
	check("Service added", c.Snapshot())
	require.NoError(t, c.AddObject(svc("c", map[string]string{"tier": "be"})))
	check("Service added that does not select the pod", c.Snapshot())
	require.NoError(t, c.RemoveObject(svc("b", nil)))
	check("Service removed", c.Snapshot())
	require.NoError(t, c.AddObject(rs(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})))
	check("ReplicaSet added", c.Snapshot())
	require.NoError(t, c.UpdateObject(rs(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"fe"}}}})))
	check("ReplicaSet re-selected", c.Snapshot())
	require.NoError(t, c.UpdateObject(rs(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"fe", "be"}}}})))
	check("ReplicaSet values changed", c.Snapshot())
	require.NoError(t, c.RemoveObject(rs(nil)))
	check("ReplicaSet removed", c.Snapshot())

	snap := c.Snapshot()
	f := snap.Fork()
	check("fork", f)
	f.Fork()
	require.NoError(t, f.AddObject(svc("d", map[string]string{"app": "web"})))
	check("fork layer adds a Service", f)
	require.NoError(t, f.Revert())
	check("layer reverted", f)
	check("snapshot", snap)

	ip := &inPlaceLister{svcs: []*v1.Service{svc("a", map[string]string{"app": "web"})}, rs: rs(&metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}})}
	check("lister", ip)
	ip.svcs[0].Spec.Selector["env"] = "prod"
	check("Service selector changed in place", ip)
	ip.rs.Spec.Selector.MatchLabels["tier"] = "fe"
	check("ReplicaSet selector changed in place", ip)
	ip.svcs[0].Spec.Selector = nil
	check("Service selector cleared in place", ip)
	ip.svcs[0].Spec.Selector = map[string]string{}
	check("Service selector emptied in place", ip)
	ip.svcs = ip.svcs[:0]
	check("no Service", ip)
	require.GreaterOrEqual(t, len(seen), 10, "selectors seen: %v", seen)
}

// describe is the constraints as text: every field parsed, the selector
// in canonical form.
func describe(cs []spread.Constraint) string {
	var b []byte
	for _, c := range cs {
		b = fmt.Appendf(b, "%d %s %d %v %v [", c.MaxSkew, c.TopologyKey, c.MinDomains, c.HonorAffinity, c.HonorTaints)
		for i := range c.Selector {
			b = c.Selector[i].AppendKey(b)
		}
		b = append(b, "];"...)
	}
	return string(b)
}

// TestOwnConstraintsCacheMatchesParse: for random pods drawn from a few
// constraint specs that differ in one field each (maxSkew, topologyKey,
// whenUnsatisfiable, selector labels and expressions, a nil and an empty
// selector, minDomains, both inclusion policies, matchLabelKeys) and a
// few label sets (which matchLabelKeys reads), a Config's cached
// constraints equal a fresh parse for both actions, a pod's spec edited
// in place after it was cached included; a hit allocates nothing.
func TestOwnConstraintsCacheMatchesParse(t *testing.T) {
	cfg, err := spread.NewConfig(nil, "", nil)
	require.NoError(t, err)
	fresh := spread.Config{Defaults: cfg.Defaults, System: true}
	base := v1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
	edits := []func(c *v1.TopologySpreadConstraint){
		func(*v1.TopologySpreadConstraint) {},
		func(c *v1.TopologySpreadConstraint) { c.MaxSkew = 2 },
		func(c *v1.TopologySpreadConstraint) { c.TopologyKey = v1.LabelHostname },
		func(c *v1.TopologySpreadConstraint) { c.WhenUnsatisfiable = v1.ScheduleAnyway },
		func(c *v1.TopologySpreadConstraint) { c.LabelSelector.MatchLabels["app"] = "db" },
		func(c *v1.TopologySpreadConstraint) {
			c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "ver", Operator: metav1.LabelSelectorOpIn, Values: []string{"1"}}}
		},
		func(c *v1.TopologySpreadConstraint) {
			c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "ver", Operator: metav1.LabelSelectorOpIn, Values: []string{"1", "2"}}}
		},
		func(c *v1.TopologySpreadConstraint) { c.LabelSelector = nil },
		func(c *v1.TopologySpreadConstraint) { c.LabelSelector = &metav1.LabelSelector{} },
		func(c *v1.TopologySpreadConstraint) { c.MinDomains = new(int32(3)) },
		func(c *v1.TopologySpreadConstraint) { c.NodeAffinityPolicy = new(v1.NodeInclusionPolicyIgnore) },
		func(c *v1.TopologySpreadConstraint) { c.NodeTaintsPolicy = new(v1.NodeInclusionPolicyHonor) },
		func(c *v1.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"ver"} },
		func(c *v1.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"ver", "track"} },
	}
	labels := []map[string]string{{"app": "web"}, {"app": "web", "ver": "1"}, {"app": "web", "ver": "2"}, {"app": "web", "ver": "2", "track": "x"}}
	rng := rand.New(rand.NewPCG(3, 9))
	seen := map[string]bool{}
	for i := range 3000 {
		pod := snapshottest.MakePod(fmt.Sprint("p", i)).Obj()
		pod.Labels = labels[rng.IntN(len(labels))]
		for range 1 + rng.IntN(2) {
			c := *base.DeepCopy()
			edits[rng.IntN(len(edits))](&c)
			pod.Spec.TopologySpreadConstraints = append(pod.Spec.TopologySpreadConstraints, c)
		}
		for _, action := range []v1.UnsatisfiableConstraintAction{v1.DoNotSchedule, v1.ScheduleAnyway} {
			got, err := cfg.Constraints(pod, action, nil)
			require.NoError(t, err)
			want, err := fresh.Constraints(pod, action, nil)
			require.NoError(t, err)
			require.Equal(t, describe(want), describe(got), "pod %d %s", i, action)
			seen[describe(want)] = true
		}
		if i%10 == 0 && pod.Spec.TopologySpreadConstraints[0].LabelSelector != nil {
			// Edited in place after it was cached.
			pod.Spec.TopologySpreadConstraints[0].LabelSelector.MatchLabels = map[string]string{"app": "edited"}
			got, err := cfg.Constraints(pod, v1.DoNotSchedule, nil)
			require.NoError(t, err)
			want, err := fresh.Constraints(pod, v1.DoNotSchedule, nil)
			require.NoError(t, err)
			require.Equal(t, describe(want), describe(got), "pod %d edited", i)
		}
	}
	require.Greater(t, len(seen), 50)
	pod := snapshottest.MakePod("p").Label("app", "web").Obj()
	pod.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{base}
	_, err = cfg.Constraints(pod, v1.DoNotSchedule, nil)
	require.NoError(t, err)
	require.Zero(t, testing.AllocsPerRun(50, func() {
		if _, err := cfg.Constraints(pod, v1.DoNotSchedule, nil); err != nil {
			t.Fatal(err)
		}
	}), "a cache hit allocates")
}

// TestSelectorCacheConcurrent: goroutines sharing one Config get the
// constraints a fresh parse gives (run with -race).
func TestSelectorCacheConcurrent(t *testing.T) {
	cfg, err := spread.NewConfig(nil, "", nil)
	require.NoError(t, err)
	fresh := spread.Config{Defaults: cfg.Defaults, System: true}
	c := snapshot.NewCache()
	require.NoError(t, c.AddObject(&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}}))
	snap := c.Snapshot()
	var pods []*v1.Pod
	for i := range 20 {
		p := snapshottest.MakePod(fmt.Sprint("p", i)).Namespace("ns").Label("app", "web").Label("ver", fmt.Sprint(i%5)).Obj()
		if i%2 == 0 {
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: int32(1 + i%3), TopologyKey: v1.LabelTopologyZone,
				WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ver": fmt.Sprint(i % 5)}}}}
		}
		pods = append(pods, p)
	}
	want := make([]string, len(pods))
	for i, p := range pods {
		cs, err := fresh.Constraints(p, v1.ScheduleAnyway, snap)
		require.NoError(t, err)
		want[i] = describe(cs)
	}
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for k := range 500 {
				i := (k + g*7) % len(pods)
				cs, err := cfg.Constraints(pods[i], v1.ScheduleAnyway, snap)
				if err == nil && describe(cs) != want[i] {
					err = fmt.Errorf("pod %d: %s, want %s", i, describe(cs), want[i])
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
}

// mapLister is a lister of Services per namespace and ReplicaSets by
// namespace and name.
type mapLister struct {
	svcs map[string][]*v1.Service
	rss  map[string]*appsv1.ReplicaSet // by namespace/name
}

func (l *mapLister) Services(ns string) []*v1.Service { return l.svcs[ns] }
func (l *mapLister) ReplicationController(string, string) *v1.ReplicationController {
	return nil
}
func (l *mapLister) ReplicaSet(ns, name string) *appsv1.ReplicaSet  { return l.rss[ns+"/"+name] }
func (l *mapLister) StatefulSet(string, string) *appsv1.StatefulSet { return nil }

// TestDefaultConstraintsCacheAlternatingPods: pods that differ from one
// another in one thing each — namespace, a label's value, a label more,
// the controller, no controller, terminating — and both actions (List
// defaults with one of each), taken in random order through one
// SelectorCache, get the constraints computed afresh every time: the
// cache's last entry, which a pod finds by its namespace, labels, action
// and controller reference without computing its class, never gives a
// pod another pod's constraints (the test fails if the entry is taken
// for a pod with other labels or another action).
func TestDefaultConstraintsCacheAlternatingPods(t *testing.T) {
	defaults := []v1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule},
		{MaxSkew: 2, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway},
	}
	cfg, err := spread.NewConfig(defaults, "List", nil)
	require.NoError(t, err)
	fresh := spread.Config{Defaults: cfg.Defaults}
	svc := func(ns, name string, sel map[string]string) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.ServiceSpec{Selector: sel}}
	}
	rs := func(ns, name string, sel map[string]string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}}}
	}
	l := &mapLister{
		svcs: map[string][]*v1.Service{
			"a": {svc("a", "web", map[string]string{"app": "web"}), svc("a", "prod", map[string]string{"env": "prod"})},
			"b": {svc("b", "web", map[string]string{"app": "web", "tier": "fe"})},
		},
		rss: map[string]*appsv1.ReplicaSet{
			"a/r1": rs("a", "r1", map[string]string{"pod-template-hash": "1"}),
			"a/r2": rs("a", "r2", map[string]string{"pod-template-hash": "2"}),
		},
	}
	owned := func(p *v1.Pod, name string) *v1.Pod {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name, Controller: new(true)}}
		return p
	}
	terminating := snapshottest.MakePod("t").Namespace("a").Label("app", "web").Obj()
	terminating.DeletionTimestamp = &metav1.Time{}
	pods := []*v1.Pod{
		snapshottest.MakePod("p").Namespace("a").Label("app", "web").Obj(),
		snapshottest.MakePod("p").Namespace("b").Label("app", "web").Label("tier", "fe").Obj(),
		snapshottest.MakePod("p").Namespace("a").Label("app", "web").Label("tier", "fe").Obj(),
		snapshottest.MakePod("p").Namespace("a").Label("app", "web").Label("env", "prod").Obj(),
		snapshottest.MakePod("p").Namespace("a").Label("app", "db").Obj(),
		owned(snapshottest.MakePod("p").Namespace("a").Label("app", "web").Obj(), "r1"),
		owned(snapshottest.MakePod("p").Namespace("a").Label("app", "web").Obj(), "r2"),
		terminating,
	}
	rng := rand.New(rand.NewPCG(14, 11))
	seen := map[string]bool{}
	for i := range 400 {
		pod := pods[rng.IntN(len(pods))]
		action := []v1.UnsatisfiableConstraintAction{v1.DoNotSchedule, v1.ScheduleAnyway}[rng.IntN(2)]
		got, err := cfg.Constraints(pod, action, l)
		require.NoError(t, err)
		want, err := fresh.Constraints(pod, action, l)
		require.NoError(t, err)
		require.Equal(t, describe(want), describe(got), "step %d pod %s/%v %v", i, pod.Namespace, pod.Labels, action)
		seen[describe(want)] = true
	}
	require.GreaterOrEqual(t, len(seen), 11, "constraints seen: %v", seen)
}
