package framework

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// outcome is what must not depend on the equivalence cache.
type outcome struct {
	Node                string
	Total               int64
	Feasible, Evaluated int
	Diagnosis           string
	Breakdown           string
	Devices             uint64
}

func outcomeOf(d Decision) outcome {
	o := outcome{Node: d.Node, Total: d.Total, Feasible: d.Feasible, Evaluated: d.Evaluated}
	if d.Diagnosis != nil {
		o.Diagnosis = d.Diagnosis.Message()
	}
	if d.Breakdown != nil {
		o.Breakdown = d.Breakdown.String()
	}
	devs, _ := d.Pod.Devices()
	o.Devices = uint64(devs)
	return o
}

// eqTemplates are the pod specs the equivalence test draws copies of:
// seeded random pods plus pods that take the other paths (preferred
// affinity so a normaliser matters, a PreFilter narrowing to one node, a
// pod that fits nowhere, a GPU pod on a cluster without GPUs).
func eqTemplates(seed uint64) []*v1.Pod {
	ts := genPods(seed, 10)
	// The same spec as ts[0], resized in place: the status changes its
	// requests (upstream's UseStatusResources), so it is another class.
	for i, cpu := range []string{"100", "10m"} {
		p := ts[0].DeepCopy()
		p.Name = fmt.Sprintf("resized%d", i)
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
			AllocatedResources: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}
		ts = append(ts, p)
	}
	// ts[1]'s requests with other static parts: a zone selector, a
	// toleration, a preferred zone (the shared shapes path serves them
	// from one request shape).
	for i, mod := range []func(*v1.Pod){
		func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": "c"} },
		func(p *v1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "spot", Operator: v1.TolerationOpExists})
		},
		func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
				Weight: 3, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{
					Key: "topology.kubernetes.io/zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
		},
	} {
		p := ts[1].DeepCopy()
		p.Name = fmt.Sprintf("sameshape%d", i)
		mod(p)
		ts = append(ts, p)
	}
	ts = append(ts,
		mkPod("pref").Req("cpu", "250m", "memory", "256Mi").
			PreferredNodeAffinity(5, "topology.kubernetes.io/zone", v1.NodeSelectorOpIn, "b").Obj(),
		mkPod("named").Req("cpu", "100m").RequiredNodeName("node-00003").RequiredNodeName("node-00007").Obj(),
		mkPod("huge").Req("cpu", "500", "memory", "1Ti").Obj(),
		mkPod("nozone").Req("cpu", "100m").NodeSelector("topology.kubernetes.io/zone", "nowhere").Obj(),
		mkPod("gpu").Req("cpu", "100m").Annotation(openb.AnnotationGPUCount, "1").Obj(),
	)
	// Pods with pod (anti-)affinity: a zone anti-affinity group, a
	// self-affine zone group, and a pod preferring to avoid web pods.
	// Without InterPodAffinity in the profile they are plain pods to the
	// cache; with it the cache must be bypassed.
	web := withAffinity(mkPod("web").Label("app", "web").Req("cpu", "100m").Obj(), nil,
		[]v1.PodAffinityTerm{ipaTerm("topology.kubernetes.io/zone", "web")})
	self := withAffinity(mkPod("self").Label("app", "self").Req("cpu", "100m").Obj(),
		[]v1.PodAffinityTerm{ipaTerm("topology.kubernetes.io/zone", "self")}, nil)
	shy := mkPod("shy").Req("cpu", "100m").Obj()
	shy.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
		{Weight: 50, PodAffinityTerm: ipaTerm("kubernetes.io/hostname", "web")}}}}
	// Pods PodTopologySpread applies to: one with a zone constraint, one
	// a Service selects (system default spreading, see checkEquivalence).
	// The cache must be bypassed for them, and them alone.
	spread := mkPod("spread").Label("app", "spread").Req("cpu", "100m").Obj()
	spread.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
		WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}}}}
	svc := mkPod("svc").Label("app", "svc").Req("cpu", "200m").Obj()
	return append(ts, web, self, shy, spread, svc)
}

// eqService selects eqTemplates' "svc" pods.
var eqService = &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "default"},
	Spec: v1.ServiceSpec{Selector: map[string]string{"app": "svc"}}}

// opaqueFilter and opaqueScorer hide the filter or scorer they wrap from
// the Scheduler's node-locality checks: a Scheduler made of them never
// uses the equivalence cache and prepares every filter and scorer for
// every pod (no PodNodeLocal shortcut) — the reference the shortcuts are
// checked against.
type opaqueFilter struct{ f Filter }

func (o opaqueFilter) Name() string { return o.f.Name() }
func (o opaqueFilter) PreFilter(p *snapshot.PodInfo) (PreFilterResult, error) {
	return o.f.PreFilter(p)
}
func (o opaqueFilter) PreFilterCluster(p *snapshot.PodInfo, c score.Cluster) (PreFilterResult, error) {
	return RunPreFilter(o.f, p, c)
}

type opaqueScorer struct{ s score.Scorer }

func (o opaqueScorer) Name() string { return o.s.Name() }
func (o opaqueScorer) Prepare(p *snapshot.PodInfo, c score.Cluster) (score.PodScorer, error) {
	return o.s.Prepare(p, c)
}

// opaque returns cfg with every filter and scorer wrapped (see
// opaqueFilter).
func opaque(t *testing.T, cfg Config) Config {
	fs := cfg.Filters
	if fs == nil {
		fs = DefaultFilters()
	}
	prof := cfg.Profile
	if prof == nil {
		prof = score.DefaultProfile()
	}
	cfg.Filters = nil
	for _, f := range fs {
		cfg.Filters = append(cfg.Filters, opaqueFilter{f})
	}
	var ws []score.Weighted
	for _, w := range prof.Scorers() {
		ws = append(ws, score.Weighted{Scorer: opaqueScorer{w.Scorer}, Weight: w.Weight})
	}
	var err error
	cfg.Profile, err = score.NewProfile(ws...)
	require.NoError(t, err)
	return cfg
}

// checkEquivalence schedules a stream of copies of a few pod specs with
// the equivalence cache (a small one, so classes are evicted and the
// doorkeeper admits, and one of the default capacity, which admits at
// once), without it, and with every filter and scorer opaque (no cache,
// no PodNodeLocal shortcut: the reference) on the same changing cluster —
// pods added and removed, nested forks reverted, nodes added, updated and
// removed, snapshots taken — and requires every decision to be identical.
func checkEquivalence(t *testing.T, seed uint64, pct int32, breakdown bool) {
	checkEquivalenceWith(t, seed, pct, breakdown, false)
}

// checkEquivalenceWith is checkEquivalence, with InterPodAffinity's
// filter and scorer (weight 2) in both schedulers if ipa: the cache is
// then off and decisions stay equal.
func checkEquivalenceWith(t *testing.T, seed uint64, pct int32, breakdown, ipa bool) {
	r := rand.New(rand.NewPCG(seed, 99))
	numNodes := 1 + r.IntN(300)
	nodes := genCluster(seed, numNodes)
	for i, n := range nodes {
		if i%7 == 3 {
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule})
		}
	}
	cache := snapshot.NewCache()
	for _, n := range nodes {
		require.NoError(t, cache.AddNode(n))
	}
	require.NoError(t, cache.AddObject(eqService))
	templates := eqTemplates(seed)
	cfg := Config{PercentageOfNodesToScore: pct, Seed: seed, Breakdown: breakdown, EquivalenceClasses: 4}
	if !ipa {
		// The defaults include InterPodAffinity; without it, the cache is
		// checked on the node-local profile plus PodTopologySpread.
		for _, f := range DefaultFilters() {
			if f.Name() != interPodAffinityName {
				cfg.Filters = append(cfg.Filters, f)
			}
		}
		var ws []score.Weighted
		for _, w := range score.DefaultProfile().Scorers() {
			if w.Scorer.Name() != score.InterPodAffinityName {
				ws = append(ws, w)
			}
		}
		cfg.Profile = score.MustProfile(ws...)
	}
	cached := mustNew(t, cfg)
	cfg.EquivalenceClasses = 0
	budget := mustNew(t, cfg)
	cfg.EquivalenceClasses = -1
	plain := mustNew(t, cfg)
	ref := mustNew(t, opaque(t, cfg))
	// PodTopologySpread and InterPodAffinity say per pod whether they
	// apply (NodeLocalFor), so the cache stays on with both.
	require.True(t, cached.nodeLocal)
	require.True(t, budget.nodeLocal)
	require.False(t, plain.nodeLocal)
	require.False(t, ref.nodeLocal)
	require.Empty(t, ref.condLocal)

	f := cache.Snapshot().Fork()
	var cluster score.Cluster = f
	type placed struct {
		key  snapshot.PodKey
		node string
	}
	var bound []placed
	extra := 0
	for step := range 400 {
		switch k := r.IntN(40); {
		case k == 0 && f.Depth() < 3:
			f.Fork()
		case k == 1 && f.Depth() > 0:
			require.NoError(t, f.Revert())
			bound = bound[:0] // may name reverted pods; only used for removals
		case k == 2:
			extra++
			n := mkNode(fmt.Sprintf("extra-%d", extra)).Capacity("cpu", "8", "memory", "32Gi", "pods", "110").
				Label("topology.kubernetes.io/zone", "b").Obj()
			require.NoError(t, f.AddNode(n))
		case k == 3 && f.NumNodes() > 1:
			ni := f.Node(r.IntN(f.NumNodes()))
			n := ni.Node().DeepCopy()
			n.Spec.Unschedulable = !n.Spec.Unschedulable
			require.NoError(t, f.UpdateNode(n))
		case k == 4 && f.NumNodes() > 1:
			require.NoError(t, f.RemoveNode(f.Node(r.IntN(f.NumNodes())).Name()))
		case k == 5 && len(bound) > 0:
			j := r.IntN(len(bound))
			if err := f.RemovePod(bound[j].key, bound[j].node); err != nil {
				require.ErrorIs(t, err, snapshot.ErrNodeNotFound)
			}
			bound = append(bound[:j], bound[j+1:]...)
		case k == 6:
			cluster = f.Snapshot()
		case k == 7:
			cluster = f
		}
		tpl := templates[r.IntN(len(templates))]
		p := tpl.DeepCopy()
		p.Name = fmt.Sprintf("%s-%d", tpl.Name, step)
		pi := snapshot.MustPodInfo(p)
		dr, errR := ref.SchedulePod(cluster, pi)
		for _, s := range []*Scheduler{cached, budget, plain} {
			d, err := s.SchedulePod(cluster, pi)
			require.Equal(t, errR, err)
			require.Equal(t, outcomeOf(dr), outcomeOf(d), "seed %d step %d pod %s classes %d", seed, step, p.Name, s.classes.fixed)
		}
		dc := dr
		if dc.Scheduled() && cluster == score.Cluster(f) {
			require.NoError(t, f.AddPodInfo(dc.Pod, dc.Node))
			bound = append(bound, placed{pi.Key(), dc.Node})
		}
	}
	// Cycles scoring every node without breakdowns took the shared
	// shapes path (equivalence_shape.go), cycles with breakdowns never.
	for _, s := range []*Scheduler{cached, budget} {
		shaped := 0
		for _, e := range s.classes.entries {
			if e.shaped {
				shaped++
			}
		}
		if pct == 100 && !breakdown && !ipa {
			require.NotEmpty(t, s.classes.shapes.entries, "seed %d", seed)
		} else if breakdown {
			require.Zero(t, shaped, "seed %d", seed)
			require.Empty(t, s.classes.shapes.entries, "seed %d", seed)
		}
	}
}

// TestEquivalenceCacheDecisions: the cache changes no decision, at
// percentage 100, adaptive and 30 % (the cached cycle then visits the
// same nodes from the same rotating start), with and without breakdowns.
func TestEquivalenceCacheDecisions(t *testing.T) {
	n := uint64(40)
	if testing.Short() {
		n = 8
	}
	for seed := range n {
		for _, pct := range []int32{100, 0, 30} {
			t.Run(fmt.Sprintf("seed=%d/pct=%d", seed, pct), func(t *testing.T) {
				checkEquivalence(t, seed, pct, seed%4 == 0)
			})
		}
	}
}

// TestEquivalenceCacheInterPodAffinity: with InterPodAffinity in the
// filters and the profile, the same streams (pods with required
// anti-affinity, self-affinity and preferred anti-affinity among them)
// get the same decisions with and without the cache (which is then off).
func TestEquivalenceCacheInterPodAffinity(t *testing.T) {
	n := uint64(12)
	if testing.Short() {
		n = 4
	}
	for seed := range n {
		for _, pct := range []int32{100, 0} {
			t.Run(fmt.Sprintf("seed=%d/pct=%d", seed, pct), func(t *testing.T) {
				checkEquivalenceWith(t, seed, pct, seed%4 == 0, true)
			})
		}
	}
}

func FuzzEquivalenceCache(f *testing.F) {
	for _, s := range []uint64{0, 1, 7, 1 << 33} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, seed uint64, all bool) {
		pct := int32(0)
		if all {
			pct = 100
		}
		checkEquivalence(t, seed, pct, seed%3 == 0)
	})
}

// TestEquivalenceCacheOnlyForNodeLocal: a filter or scorer that does not
// promise node-locality turns the cache off.
func TestEquivalenceCacheOnlyForNodeLocal(t *testing.T) {
	s := mustNew(t, Config{})
	require.True(t, s.nodeLocal)
	s = mustNew(t, Config{Filters: append(DefaultFilters(), customFilter{})})
	require.False(t, s.nodeLocal)
	s = mustNew(t, Config{Profile: score.MustProfile(score.Weighted{Scorer: gpushare.RandomScorer{Seed: 1}})})
	require.False(t, s.nodeLocal)
	s = mustNew(t, Config{EquivalenceClasses: -1})
	require.False(t, s.nodeLocal)
	// A custom filter or scorer opts in with a NodeLocal method.
	s = mustNew(t, Config{Filters: append(DefaultFilters(), localFilter{}),
		Profile: score.MustProfile(score.Weighted{Scorer: localScorer{}})})
	require.True(t, s.nodeLocal)
	// A type embedding a built-in does not inherit the promise: it may
	// read anything else.
	s = mustNew(t, Config{Filters: []Filter{embeddingFilter{}}})
	require.False(t, s.nodeLocal)
	s = mustNew(t, Config{Profile: score.MustProfile(score.Weighted{Scorer: embeddingScorer{mustLeastAllocated(t)}})})
	require.False(t, s.nodeLocal)
}

// localFilter is a custom filter that promises node-locality.
type localFilter struct{ customFilter }

func (localFilter) NodeLocal() bool { return true }

// localScorer is a custom scorer that promises node-locality.
type localScorer struct{}

func (localScorer) Name() string { return "Local" }
func (localScorer) Prepare(*snapshot.PodInfo, score.Cluster) (score.PodScorer, error) {
	return score.PodScorerFunc(func(_ []*snapshot.NodeInfo, out []int64) { clear(out) }), nil
}
func (localScorer) NodeLocal() bool { return true }

// embeddingFilter and embeddingScorer embed built-ins.
type embeddingFilter struct{ nodeNamePlugin }

type embeddingScorer struct{ score.Scorer }

func mustLeastAllocated(t *testing.T) score.Scorer {
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	return la
}

// customFilter is a filter that does not say it is node-local.
type customFilter struct{}

func (customFilter) Name() string { return "Custom" }
func (customFilter) PreFilter(*snapshot.PodInfo) (PreFilterResult, error) {
	return PreFilterResult{}, nil
}

// TestEquivalenceResizedPod: a pod whose status (in-place resize) raises
// its requests is not served the verdicts of a pod with the same spec —
// a new user's report: with the key on the spec alone it was placed on a
// node without room. Since the fit filter judges a pod not yet bound on
// its spec (upstream's PreFilter, issue 17 item 6), the status shows in
// the scores (BalancedAllocation reads the status-aware request): the
// resized pod gets the scores of an uncached cycle, not the class's.
func TestEquivalenceResizedPod(t *testing.T) {
	snap := snapshottest.Snapshot(t, []*v1.Node{mkNode("n").Capacity("cpu", "4", "memory", "8Gi", "pods", "10").Obj()})
	s := mustNew(t, Config{})
	var plain Decision
	for _, name := range []string{"a", "b"} { // the class is admitted and filled
		d, err := s.SchedulePod(snap, snapshot.MustPodInfo(mkPod(name).Req("cpu", "1").Obj()))
		require.NoError(t, err)
		require.Equal(t, "n", d.Node)
		plain = d
	}
	p := mkPod("resized").Req("cpu", "1").Obj()
	p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
		AllocatedResources: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100")}}}
	d, err := s.SchedulePod(snap, snapshot.MustPodInfo(p))
	require.NoError(t, err)
	require.Equal(t, "n", d.Node, "judged on its spec, as upstream's NodeResourcesFit PreFilter")
	uncached, err := mustNew(t, Config{EquivalenceClasses: -1}).SchedulePod(snap, snapshot.MustPodInfo(p))
	require.NoError(t, err)
	require.Equal(t, uncached.Total, d.Total, "the uncached cycle's score")
	require.NotEqual(t, plain.Total, d.Total, "not the class's score")
}

// TestEquivalenceStats: while the cache has room, the first pod of a
// class fills an entry and the rest are cached; a pod of a cached class
// that fits nowhere is diagnosed by the full cycle; in a full cache a
// class is admitted (evicting the least recently used) only the second
// time it is seen; a filter that is not NodeLocal turns every cycle
// uncached.
func TestEquivalenceStats(t *testing.T) {
	snap := snapshottest.Snapshot(t, genCluster(1, 200))
	s := mustNew(t, Config{PercentageOfNodesToScore: 100, EquivalenceClasses: 2})
	for i := range 5 {
		_, err := s.SchedulePod(snap, snapshot.MustPodInfo(mkPod(fmt.Sprint("p", i)).Req("cpu", "1").Obj()))
		require.NoError(t, err)
	}
	require.Equal(t, EquivalenceStats{Filled: 1, Cached: 4, Classes: 1}, s.EquivalenceStats())
	// A class whose pods fit nowhere: admitted, then every cycle finds no
	// feasible node in the cache and runs the full cycle.
	for i := range 3 {
		d, err := s.SchedulePod(snap, snapshot.MustPodInfo(mkPod(fmt.Sprint("big", i)).Req("cpu", "999").Obj()))
		require.NoError(t, err)
		require.NotNil(t, d.Diagnosis)
	}
	require.Equal(t, EquivalenceStats{Filled: 1, Cached: 4, Diagnosed: 3, Classes: 2}, s.EquivalenceStats())
	// The cache is full: a third class runs uncached when first seen,
	// then takes the place of the least recently used ("p").
	for i := range 3 {
		_, err := s.SchedulePod(snap, snapshot.MustPodInfo(mkPod(fmt.Sprint("q", i)).Req("cpu", "2").Obj()))
		require.NoError(t, err)
	}
	require.Equal(t, EquivalenceStats{Uncached: 1, Filled: 2, Cached: 5, Diagnosed: 3, Classes: 2}, s.EquivalenceStats())
	_, err := s.SchedulePod(snap, snapshot.MustPodInfo(mkPod("p5").Req("cpu", "1").Obj()))
	require.NoError(t, err)
	require.Equal(t, EquivalenceStats{Uncached: 2, Filled: 2, Cached: 5, Diagnosed: 3, Classes: 2}, s.EquivalenceStats(), "p was evicted")

	off := mustNew(t, Config{Filters: append(DefaultFilters(), customFilter{})})
	for i := range 3 {
		_, err := off.SchedulePod(snap, snapshot.MustPodInfo(mkPod(fmt.Sprint("p", i)).Req("cpu", "1").Obj()))
		require.NoError(t, err)
	}
	require.Equal(t, EquivalenceStats{Uncached: 3}, off.EquivalenceStats())
}

// overlay embeds a Fork and shows one node differently: the cache must
// not read the Fork behind its back (a new user's report: it placed pods
// on the node the overlay shows full).
type overlay struct {
	*snapshot.Fork
	repl map[string]*snapshot.NodeInfo
}

func (o overlay) Node(i int) *snapshot.NodeInfo {
	ni := o.Fork.Node(i)
	if r, ok := o.repl[ni.Name()]; ok {
		return r
	}
	return ni
}

func (o overlay) Get(name string) *snapshot.NodeInfo {
	if r, ok := o.repl[name]; ok {
		return r
	}
	return o.Fork.Get(name)
}

func TestEquivalenceCacheWrappedFork(t *testing.T) {
	nodes := []*v1.Node{mkNode("n0").Capacity("cpu", "8", "pods", "10").Obj(), mkNode("n1").Capacity("cpu", "8", "pods", "10").Obj()}
	full := snapshottest.Snapshot(t, nodes, mkPod("hog").Req("cpu", "8").Node("n0").Obj())
	o := overlay{Fork: snapshottest.Snapshot(t, nodes).Fork(), repl: map[string]*snapshot.NodeInfo{"n0": full.Get("n0")}}
	s := mustNew(t, Config{})
	for i := range 3 {
		d, err := s.SchedulePod(o, snapshot.MustPodInfo(mkPod(fmt.Sprint("p", i)).Req("cpu", "2").Obj()))
		require.NoError(t, err)
		require.Equal(t, "n1", d.Node, "pod %d", i)
		require.Equal(t, 1, d.Feasible)
	}
	require.Equal(t, EquivalenceStats{Uncached: 3}, s.EquivalenceStats())
}

// outOfRange is a node-local scorer that breaks its contract on one node.
type outOfRange struct{ node string }

func (outOfRange) Name() string    { return "OutOfRange" }
func (outOfRange) NodeLocal() bool { return true }
func (o outOfRange) Prepare(*snapshot.PodInfo, score.Cluster) (score.PodScorer, error) {
	return score.PodScorerFunc(func(nodes []*snapshot.NodeInfo, out []int64) {
		for i, n := range nodes {
			out[i] = 50
			if n.Name() == o.node {
				out[i] = 1000
			}
		}
	}), nil
}

// TestEquivalenceCacheScorerError: a scorer out of range on one node
// fails exactly the cycles the uncached scheduler fails — with a
// percentage below 100 the cache scores whole blocks, nodes the uncached
// cycle may not reach (a new user's report: the cached cycle failed
// where the uncached one did not, and kept failing).
func TestEquivalenceCacheScorerError(t *testing.T) {
	snap := snapshottest.Snapshot(t, genCluster(3, 300))
	// The first cycle at 30 % visits about the first 112 nodes: block 1
	// (nodes 64-127) is where it stops.
	for _, bad := range []string{"node-00120", "node-00127", "node-00250"} {
		checkScorerError(t, snap, bad)
	}
}

func checkScorerError(t *testing.T, snap *snapshot.Snapshot, bad string) {
	prof := score.MustProfile(score.Weighted{Scorer: outOfRange{node: bad}})
	for _, pct := range []int32{30, 0, 100} {
		cached := mustNew(t, Config{Profile: prof, PercentageOfNodesToScore: pct})
		plain := mustNew(t, Config{Profile: prof, PercentageOfNodesToScore: pct, EquivalenceClasses: -1})
		f := snap.Fork()
		for i := range 12 {
			pi := snapshot.MustPodInfo(mkPod(fmt.Sprint("p", i)).Req("cpu", "100m").Obj())
			dc, errC := cached.SchedulePod(f, pi)
			dp, errP := plain.SchedulePod(f, pi)
			require.Equal(t, errP, errC, "bad %s pct %d pod %d", bad, pct, i)
			require.Equal(t, outcomeOf(dp), outcomeOf(dc), "bad %s pct %d pod %d", bad, pct, i)
			if dc.Scheduled() {
				require.NoError(t, f.AddPodInfo(pi, dc.Node))
			}
		}
	}
}

// TestEquivalenceNarrowedPodsTakeNoEntry: pods whose candidates a
// PreFilter narrows never use the cache, so they do not take entries.
func TestEquivalenceNarrowedPodsTakeNoEntry(t *testing.T) {
	snap := snapshottest.Snapshot(t, genCluster(1, 50))
	s := mustNew(t, Config{EquivalenceClasses: 1})
	for i := range 3 {
		_, err := s.SchedulePod(snap, snapshot.MustPodInfo(mkPod(fmt.Sprint("a", i)).Req("cpu", "1").Obj()))
		require.NoError(t, err)
	}
	for i := range 3 {
		_, err := s.SchedulePod(snap, snapshot.MustPodInfo(mkPod(fmt.Sprint("named", i)).Req("cpu", "1").RequiredNodeName("node-00003").Obj()))
		require.NoError(t, err)
	}
	_, err := s.SchedulePod(snap, snapshot.MustPodInfo(mkPod("a3").Req("cpu", "1").Obj()))
	require.NoError(t, err)
	require.Equal(t, EquivalenceStats{Uncached: 3, Filled: 1, Cached: 3, Classes: 1}, s.EquivalenceStats())
}

// TestEquivalenceCapacity: with Config.EquivalenceClasses 0 the cache
// keeps as many classes as the node budget allows (at least 64), and a
// cluster that grew makes it forget the least recently used classes
// beyond the new capacity; the index finds exactly the entries kept.
func TestEquivalenceCapacity(t *testing.T) {
	c := &classCache{}
	require.Equal(t, 838, c.capacity(5000))
	require.Equal(t, 279, c.capacity(15000))
	require.Equal(t, 64, c.capacity(150000))
	require.Equal(t, 7, (&classCache{fixed: 7}).capacity(150000))
	for i := range 100 {
		c.key, c.hash = []byte{byte(i)}, uint64(i)
		c.tick++
		require.Same(t, c.insert(1000), c.index[uint64(i)])
	}
	require.Len(t, c.entries, 100)
	c.key, c.hash = []byte{200}, 200
	c.tick++
	c.insert(1 << 20)
	require.Len(t, c.entries, 64)
	require.Len(t, c.index, 64)
	for h, e := range c.index {
		require.Equal(t, h, e.hash)
		require.True(t, h == 200 || h >= 37, "class %d is among the least recently used", h)
	}
}

// TestEquivalenceRankedMaxMoves: a class's ranked totals depend on other
// blocks through the normalisers' largest raw score; when the node that
// holds it fills up, every block's totals move, not only the block that
// changed (a node preferring zone b and "fast": the fast node is taken
// first, then the zone-b nodes' normalised score rises from 33 to 100).
func TestEquivalenceRankedMaxMoves(t *testing.T) {
	var nodes []*v1.Node
	for i := range 200 {
		w := mkNode(fmt.Sprintf("node-%05d", i)).Capacity("cpu", "4", "memory", "16Gi", "pods", "110").
			Label("topology.kubernetes.io/zone", []string{"a", "b"}[i%2])
		if i == 151 {
			w.Label("fast", "true")
		}
		nodes = append(nodes, w.Obj())
	}
	f := snapshottest.Snapshot(t, nodes).Fork()
	cached := mustNew(t, Config{PercentageOfNodesToScore: 100, Seed: 3})
	ref := mustNew(t, opaque(t, Config{PercentageOfNodesToScore: 100, Seed: 3, EquivalenceClasses: -1}))
	tpl := mkPod("p").Req("cpu", "1").
		PreferredNodeAffinity(5, "topology.kubernetes.io/zone", v1.NodeSelectorOpIn, "b").
		PreferredNodeAffinity(10, "fast", v1.NodeSelectorOpIn, "true").Obj()
	var totals []int64
	for i := range 8 {
		dc := placeBoth(t, ref, cached, f, tpl, i)
		totals = append(totals, dc.Total)
	}
	require.Equal(t, "node-00151", f.Node(151).Name())
	require.Equal(t, 4, f.Node(151).NumPods(), "the fast node was filled first")
	require.Less(t, totals[3], totals[4], "then the zone-b nodes' normalised affinity rose")
	require.Equal(t, EquivalenceStats{Filled: 1, Cached: 7, Classes: 1}, cached.EquivalenceStats())
}

// TestEquivalenceShapesTooManyGroups: nodes with 0 to 299
// PreferNoSchedule taints give a pod that tolerates none of them 300
// static groups (TaintToleration's raw score is the count), more than a
// byte holds: the class takes the per-node ranked path instead, with the
// same decisions as the reference, while a pod tolerating the taints (one
// group) takes the shared shapes path.
func TestEquivalenceShapesTooManyGroups(t *testing.T) {
	var nodes []*v1.Node
	for i := range 300 {
		w := mkNode(fmt.Sprintf("node-%05d", i)).Capacity("cpu", "8", "memory", "32Gi", "pods", "110")
		for j := range i {
			w.Taint(fmt.Sprintf("t%d", j), "x", v1.TaintEffectPreferNoSchedule)
		}
		nodes = append(nodes, w.Obj())
	}
	f := snapshottest.Snapshot(t, nodes).Fork()
	cfg := Config{PercentageOfNodesToScore: 100, Seed: 5}
	cached := mustNew(t, cfg)
	cfg.EquivalenceClasses = -1
	ref := mustNew(t, opaque(t, cfg))
	plain := mkPod("plain").Req("cpu", "1").Obj()
	tol := mkPod("tol").Req("cpu", "1").Obj()
	tol.Spec.Tolerations = []v1.Toleration{{Operator: v1.TolerationOpExists}}
	for i := range 20 {
		placeBoth(t, ref, cached, f, []*v1.Pod{plain, tol}[i%2], i)
	}
	require.Equal(t, EquivalenceStats{Filled: 2, Cached: 18, Classes: 2}, cached.EquivalenceStats())
	shaped := map[bool]int{}
	for _, e := range cached.classes.entries {
		shaped[e.shaped]++
	}
	require.Equal(t, map[bool]int{true: 1, false: 1}, shaped)
}

// TestEquivalenceShapesChangeLog: a rare class comes back after more
// placements than the shapes' change log keeps (it is trimmed past 4 ×
// nodes + 1024 entries), and after the node set changed: its shape then
// evaluates every node again, and every decision is the reference's.
func TestEquivalenceShapesChangeLog(t *testing.T) {
	nodes := genCluster(4, 20)
	f := snapshottest.Snapshot(t, nodes).Fork()
	cfg := Config{PercentageOfNodesToScore: 100, Seed: 9}
	cached := mustNew(t, cfg)
	cfg.EquivalenceClasses = -1
	ref := mustNew(t, opaque(t, cfg))
	common := mkPod("common").Req("cpu", "10m", "memory", "16Mi").Obj()
	rare := mkPod("rare").Req("cpu", "20m", "memory", "16Mi").Obj()
	trimmed := false
	for i := range 1700 {
		tpl := common
		if i%600 == 0 || i == 1650 {
			tpl = rare
		}
		if i == 1300 {
			require.NoError(t, f.AddNode(mkNode("late").Capacity("cpu", "64", "memory", "256Gi", "pods", "110").Obj()))
		}
		placeBoth(t, ref, cached, f, tpl, i)
		trimmed = trimmed || cached.classes.changes.base > 1 && i < 1300
	}
	require.True(t, trimmed, "the change log was trimmed")
	for _, e := range cached.classes.entries {
		require.True(t, e.shaped)
	}
}

// placeBoth schedules copy i of tpl with ref and s on f, requires the
// same outcome, a node, and adds the pod there; it returns s's decision.
func placeBoth(t *testing.T, ref, s *Scheduler, f *snapshot.Fork, tpl *v1.Pod, i int) Decision {
	p := tpl.DeepCopy()
	p.Name = fmt.Sprint(p.Name, i)
	pi := snapshot.MustPodInfo(p)
	d := decideBoth(t, ref, s, f, pi)
	require.True(t, d.Scheduled(), "pod %d", i)
	require.NoError(t, f.AddPodInfo(pi, d.Node))
	return d
}

// decideBoth runs a cycle for pi with ref and with s over f, requires
// the same outcome, and returns s's decision.
func decideBoth(t *testing.T, ref, s *Scheduler, f *snapshot.Fork, pi *snapshot.PodInfo) Decision {
	dr, err := ref.SchedulePod(f, pi)
	require.NoError(t, err)
	d, err := s.SchedulePod(f, pi)
	require.NoError(t, err)
	require.Equal(t, outcomeOf(dr), outcomeOf(d), "pod %s", pi.Key())
	return d
}
