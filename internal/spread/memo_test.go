package spread_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/spread"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// memoPods are incoming pods whose passes the memo serves: zone and
// hostname constraints, alone and together, both actions, a selector
// In and one with matchLabelKeys, another namespace, a constraint on a
// key some nodes lack, one no node can violate.
func memoPods() []*v1.Pod {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}
	in := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}
	c := func(key string, action v1.UnsatisfiableConstraintAction, s *metav1.LabelSelector) v1.TopologySpreadConstraint {
		return v1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: action, LabelSelector: s}
	}
	var pods []*v1.Pod
	for _, action := range []v1.UnsatisfiableConstraintAction{v1.DoNotSchedule, v1.ScheduleAnyway} {
		for _, cs := range [][]v1.TopologySpreadConstraint{
			{c(v1.LabelTopologyZone, action, sel)},
			{c(v1.LabelHostname, action, sel)},
			{c(v1.LabelTopologyZone, action, in), c(v1.LabelHostname, action, sel)},
			{c("rack", action, sel), c(v1.LabelTopologyZone, action, in)},
		} {
			p := snapshottest.MakePod("incoming").Label("app", "a").Label("ver", "1").Obj()
			p.Spec.TopologySpreadConstraints = cs
			pods = append(pods, p)
		}
		p := snapshottest.MakePod("incoming").Namespace("other").Label("app", "a").Label("ver", "2").Obj()
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{c(v1.LabelTopologyZone, action, sel)}
		p.Spec.TopologySpreadConstraints[0].MatchLabelKeys = []string{"ver"}
		pods = append(pods, p)
		// maxSkew 1000 on hostname, which every node has: every node
		// passes the filter.
		p = snapshottest.MakePod("incoming").Label("app", "a").Obj()
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{c(v1.LabelHostname, action, sel)}
		p.Spec.TopologySpreadConstraints[0].MaxSkew = 1000
		pods = append(pods, p)
		// The same on zone, which some nodes lack: those fail.
		p = p.DeepCopy()
		p.Spec.TopologySpreadConstraints[0].TopologyKey = v1.LabelTopologyZone
		pods = append(pods, p)
	}
	return pods
}

// TestMemoMatchesDirectPass: over a fork changed at random (pods added
// and removed, node labels changed, nodes added and removed, layers
// forked, committed and reverted, a snapshot taken), the filter counts
// and the raw scores computed through one long-lived Memo equal those of
// the direct pass over every node, for every pod of memoPods, with
// candidates all nodes in the cluster's order and rotated (Raw's
// one-pass path over the memo's blocks) and random subsets in random
// order; and the filter's PassesAll holds exactly when Check passes
// every node. 130 nodes: three blocks, the last partial.
func TestMemoMatchesDirectPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 3))
	zones := []string{"z1", "z2", "z3", ""}
	mkNode := func(i int) *v1.Node {
		w := snapshottest.MakeNode(fmt.Sprintf("n%d", i)).Capacity("pods", "200", "cpu", "100")
		if z := zones[rng.IntN(len(zones))]; z != "" {
			w.Label(v1.LabelTopologyZone, z)
		}
		if rng.IntN(2) == 0 {
			w.Label("rack", fmt.Sprint("r", rng.IntN(3)))
		}
		return w.Obj()
	}
	c := snapshot.NewCache()
	for i := range 130 {
		require.NoError(t, c.AddNode(mkNode(i)))
	}
	f := c.Snapshot().Fork()
	nextNode, nextPod := 130, 0
	type placed struct {
		key  snapshot.PodKey
		node string
	}
	var pods []placed
	addPod := func() {
		ni := f.Node(rng.IntN(f.NumNodes()))
		w := snapshottest.MakePod(fmt.Sprintf("p%d", nextPod)).Label("app", []string{"a", "b", "c"}[rng.IntN(3)]).Label("ver", fmt.Sprint(1+rng.IntN(2)))
		if rng.IntN(5) == 0 {
			w.Namespace("other")
		}
		nextPod++
		p := w.Obj()
		require.NoError(t, f.AddPod(p, ni.Name()))
		pods = append(pods, placed{snapshot.PodKey{Namespace: p.Namespace, Name: p.Name}, ni.Name()})
	}
	for range 400 {
		addPod()
	}
	filterMemo, scoreMemo := &spread.Memo{}, &spread.Memo{}
	passes := map[bool]int{} // PassesAll's answers seen
	incoming := memoPods()
	check := func(step int) {
		bv, ok := nodeview.ViewOf(f)
		require.True(t, ok)
		n := f.NumNodes()
		node := func(i int) *snapshot.NodeInfo { return f.Node(i) }
		all, inOrder := make([]*snapshot.NodeInfo, n), make([]*snapshot.NodeInfo, n)
		for i := range all {
			all[i] = f.Node((i + step) % n)
			inOrder[i] = f.Node(i)
		}
		subset := slices.Clone(all)
		rng.Shuffle(len(subset), func(i, j int) { subset[i], subset[j] = subset[j], subset[i] })
		subset = subset[:rng.IntN(n)+1]
		for pi, pod := range incoming {
			for _, action := range []v1.UnsatisfiableConstraintAction{v1.DoNotSchedule, v1.ScheduleAnyway} {
				cfg := spread.Config{}
				cs, err := cfg.Constraints(pod, action, nil)
				require.NoError(t, err)
				if len(cs) == 0 {
					continue
				}
				in := spread.NewInclusion[*snapshot.NodeInfo](pod, nil)
				if action == v1.DoNotSchedule {
					fast := spread.NewFilter(cs, pod, n, node, in, filterMemo, spread.Blocks[*snapshot.NodeInfo](bv))
					slow := spread.NewFilter(cs, pod, n, node, in, nil, nil)
					allPass := true
					for i := range n {
						ls := f.Node(i).Labels()
						require.Equal(t, slow.Check(ls), fast.Check(ls), "step %d pod %d node %d", step, pi, i)
						allPass = allPass && slow.Check(ls) == spread.Pass
					}
					require.Equal(t, allPass, slow.PassesAll(), "step %d pod %d", step, pi)
					require.Equal(t, allPass, fast.PassesAll(), "step %d pod %d", step, pi)
					passes[allPass]++
					continue
				}
				for _, requireAll := range []bool{false, true} {
					fast := spread.NewScore(cs, requireAll, pod, n, node, in, scoreMemo, spread.Blocks[*snapshot.NodeInfo](bv))
					slow := spread.NewScore(cs, requireAll, pod, n, node, in, nil, nil)
					for _, cands := range [][]*snapshot.NodeInfo{all, inOrder, subset} {
						want, got := make([]int64, len(cands)), make([]int64, len(cands))
						slow.Raw(cands, want)
						fast.Raw(cands, got)
						require.Equal(t, want, got, "step %d pod %d requireAll %v", step, pi, requireAll)
						slow.Normalize(cands, want)
						fast.Normalize(cands, got)
						require.Equal(t, want, got, "step %d pod %d requireAll %v", step, pi, requireAll)
					}
				}
			}
		}
	}
	for step := range 150 {
		switch op := rng.IntN(20); {
		case op < 8:
			addPod()
		case op < 12 && len(pods) > 0:
			k := rng.IntN(len(pods))
			require.NoError(t, f.RemovePod(pods[k].key, pods[k].node))
			pods = slices.Delete(pods, k, k+1)
		case op < 14:
			ni := f.Node(rng.IntN(f.NumNodes()))
			fresh := mkNode(0)
			fresh.Name, fresh.Labels[v1.LabelHostname] = ni.Name(), ni.Name()
			require.NoError(t, f.UpdateNode(fresh))
		case op < 15:
			require.NoError(t, f.AddNode(mkNode(nextNode)))
			nextNode++
		case op < 16 && f.NumNodes() > 70:
			name := f.Node(rng.IntN(f.NumNodes())).Name()
			require.NoError(t, f.RemoveNode(name))
			pods = slices.DeleteFunc(pods, func(p placed) bool { return p.node == name })
		case op < 17:
			f.Fork()
		case op < 18 && f.Depth() > 0:
			require.NoError(t, f.Commit())
		case op < 19 && f.Depth() > 0:
			// Reverting loses the layer's pods: rebuild the list.
			require.NoError(t, f.Revert())
			pods = pods[:0]
			for i := range f.NumNodes() {
				ni := f.Node(i)
				for _, p := range ni.Pods() {
					pods = append(pods, placed{p.Key(), ni.Name()})
				}
			}
		default:
			f = f.Snapshot().Fork()
		}
		check(step)
	}
	require.Positive(t, passes[true], "PassesAll never true")
	require.Positive(t, passes[false], "PassesAll never false")
}

// TestRawNodeCodesBeyondTable: the raw scores through the memo (Raw's
// one-pass path, which scores nodes of one node code once) equal the
// direct pass's where nodes fall outside the codes: a key with 12
// domains (more than the 7 a code numbers), nodes with 0 to 40 matching
// pods (a code counts up to 14), nodes missing a key, and a third
// constraint (codes cover 2), over pods bound one at a time.
func TestRawNodeCodesBeyondTable(t *testing.T) {
	c := snapshot.NewCache()
	const n = 150
	for i := range n {
		w := snapshottest.MakeNode(fmt.Sprintf("n%d", i)).Capacity("pods", "200", "cpu", "100")
		if i%11 != 0 {
			w.Label(v1.LabelTopologyZone, fmt.Sprint("z", i%3))
		}
		w.Label("rack", fmt.Sprint("r", i%12))
		require.NoError(t, c.AddNode(w.Obj()))
	}
	f := c.Snapshot().Fork()
	bound := 0
	bind := func(node, k int) {
		for range k {
			p := snapshottest.MakePod(fmt.Sprintf("p%d", bound)).Label("app", "a").Obj()
			bound++
			require.NoError(t, f.AddPod(p, f.Node(node).Name()))
		}
	}
	for i := range n {
		bind(i, i%41)
	}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}
	c3 := func(key string) v1.TopologySpreadConstraint {
		return v1.TopologySpreadConstraint{MaxSkew: 2, TopologyKey: key, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: sel}
	}
	var pods []*v1.Pod
	for _, keys := range [][]string{
		{v1.LabelHostname, v1.LabelTopologyZone},
		{"rack", v1.LabelHostname},
		{v1.LabelHostname, "rack"},
		{"rack"},
		{v1.LabelTopologyZone, "rack", v1.LabelHostname},
	} {
		p := snapshottest.MakePod("incoming").Label("app", "a").Obj()
		for _, k := range keys {
			p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c3(k))
		}
		pods = append(pods, p)
	}
	m := &spread.Memo{}
	rng := rand.New(rand.NewPCG(7, 7))
	for step := range 30 {
		bv, ok := nodeview.ViewOf(f)
		require.True(t, ok)
		node := func(i int) *snapshot.NodeInfo { return f.Node(i) }
		cands := make([]*snapshot.NodeInfo, n)
		for i := range cands {
			cands[i] = f.Node((i + step) % n)
		}
		for pi, pod := range pods {
			cs, err := (&spread.Config{}).Constraints(pod, v1.ScheduleAnyway, nil)
			require.NoError(t, err)
			in := spread.NewInclusion[*snapshot.NodeInfo](pod, nil)
			for _, requireAll := range []bool{false, true} {
				fast := spread.NewScore(cs, requireAll, pod, n, node, in, m, spread.Blocks[*snapshot.NodeInfo](bv))
				slow := spread.NewScore(cs, requireAll, pod, n, node, in, nil, nil)
				want, got := make([]int64, n), make([]int64, n)
				slow.Raw(cands, want)
				fast.Raw(cands, got)
				require.Equal(t, want, got, "step %d pod %d requireAll %v", step, pi, requireAll)
			}
		}
		bind(rng.IntN(n), 1+rng.IntN(3))
	}
}

// TestMemoSharedConstraints: one constraints slice (as the SelectorCache
// shares it between the pods of a workload, whatever their namespace)
// used for pods of two namespaces in turn, and for filter and score, with
// pods bound between the passes: the memo's counts and raw scores equal
// the direct pass's each time (the memo's most recent query is found by
// the slice's address, and must still be told apart by namespace and
// mode).
func TestMemoSharedConstraints(t *testing.T) {
	c := snapshot.NewCache()
	for i := range 200 {
		// Every seventh node lacks the zone: the filter's pass leaves it
		// out, the score's counts it under "" (without requireAll).
		w := snapshottest.MakeNode(fmt.Sprintf("n%d", i)).Capacity("pods", "200", "cpu", "100")
		if i%7 != 0 {
			w.Label(v1.LabelTopologyZone, fmt.Sprint("z", i%3))
		}
		require.NoError(t, c.AddNode(w.Obj()))
	}
	f := c.Snapshot().Fork()
	rng := rand.New(rand.NewPCG(14, 9))
	bind := func(ns string, zoneOf func(int) bool) {
		for range 20 {
			i := rng.IntN(f.NumNodes())
			for !zoneOf(i) {
				i = rng.IntN(f.NumNodes())
			}
			p := snapshottest.MakePod(fmt.Sprintf("p%d", rng.Int())).Namespace(ns).Label("app", "x").Obj()
			require.NoError(t, f.AddPod(p, f.Node(i).Name()))
		}
	}
	// Namespace a's pods crowd zone z0, b's zone z2.
	bind("a", func(i int) bool { return i%3 == 0 })
	bind("b", func(i int) bool { return i%3 == 2 })
	mk := func(ns string) *v1.Pod {
		p := snapshottest.MakePod("incoming").Namespace(ns).Label("app", "x").Obj()
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}}
		return p
	}
	podA, podB := mk("a"), mk("b")
	cfg := spread.Config{}
	cs, err := cfg.Constraints(podA, v1.ScheduleAnyway, nil)
	require.NoError(t, err)
	memo := &spread.Memo{}
	for step := range 6 {
		bv, ok := nodeview.ViewOf(f)
		require.True(t, ok)
		n := f.NumNodes()
		node := func(i int) *snapshot.NodeInfo { return f.Node(i) }
		all := make([]*snapshot.NodeInfo, n)
		for i := range all {
			all[i] = f.Node(i)
		}
		// Passes in an order where each differs from the one before in
		// the namespace alone or in the mode alone (filter, score, score
		// with requireAll).
		for _, ps := range []struct {
			pod  *v1.Pod
			mode string
		}{{podA, "filter"}, {podB, "filter"}, {podB, "score"}, {podA, "score"}, {podA, "scoreAll"}, {podB, "scoreAll"}} {
			pod := ps.pod
			in := spread.NewInclusion[*snapshot.NodeInfo](pod, nil)
			if ps.mode == "filter" {
				fast := spread.NewFilter(cs, pod, n, node, in, memo, spread.Blocks[*snapshot.NodeInfo](bv))
				slow := spread.NewFilter(cs, pod, n, node, in, nil, nil)
				for i := range n {
					require.Equal(t, slow.Check(f.Node(i).Labels()), fast.Check(f.Node(i).Labels()), "step %d namespace %s node %d", step, pod.Namespace, i)
				}
				continue
			}
			requireAll := ps.mode == "scoreAll"
			want, got := make([]int64, n), make([]int64, n)
			spread.NewScore(cs, requireAll, pod, n, node, in, nil, nil).Raw(all, want)
			spread.NewScore(cs, requireAll, pod, n, node, in, memo, spread.Blocks[*snapshot.NodeInfo](bv)).Raw(all, got)
			require.Equal(t, want, got, "step %d namespace %s requireAll %v", step, pod.Namespace, requireAll)
		}
		bind([]string{"a", "b"}[step%2], func(int) bool { return true })
	}
}

// TestMemoPassAllocations: with the system defaults' two constraints
// (zone and hostname) on a memo that has seen the cluster, a score pass
// allocates the Score and its copy of the block list and nothing more
// (the counts, weights and terms live in the Score), and Raw over every
// node in the cluster's order (rawWhole) allocates nothing; a filter
// pass with a zone constraint allocates the Filter and the block list.
func TestMemoPassAllocations(t *testing.T) {
	c := snapshot.NewCache()
	for i := range 300 {
		name := fmt.Sprintf("n%d", i)
		require.NoError(t, c.AddNode(snapshottest.MakeNode(name).Capacity("pods", "200", "cpu", "100").
			Label(v1.LabelTopologyZone, fmt.Sprint("z", i%3)).Label(v1.LabelHostname, name).Obj()))
		require.NoError(t, c.AddPod(snapshottest.MakePod(fmt.Sprintf("p%d", i)).Label("app", "x").Node(name).Obj()))
	}
	snap := c.Snapshot()
	bv, ok := nodeview.ViewOf(snap)
	require.True(t, ok)
	n := snap.NumNodes()
	node := func(i int) *snapshot.NodeInfo { return snap.Node(i) }
	all := make([]*snapshot.NodeInfo, n)
	for i := range all {
		all[i] = snap.Node(i)
	}
	pod := snapshottest.MakePod("incoming").Label("app", "x").Obj()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	for _, action := range []v1.UnsatisfiableConstraintAction{v1.ScheduleAnyway, v1.DoNotSchedule} {
		pod.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{
			{MaxSkew: 5, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: action, LabelSelector: sel},
			{MaxSkew: 3, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: action, LabelSelector: sel},
		}
		cfg := spread.Config{}
		cs, err := cfg.Constraints(pod, action, nil)
		require.NoError(t, err)
		in := spread.NewInclusion[*snapshot.NodeInfo](pod, nil)
		memo := &spread.Memo{}
		blocks := spread.Blocks[*snapshot.NodeInfo](bv)
		if action == v1.DoNotSchedule {
			// The zone constraint alone (TopologySpreading's shape): a
			// hostname constraint's per-node domains fill a map.
			cs = cs[:1]
			spread.NewFilter(cs, pod, n, node, in, memo, blocks)
			require.Equal(t, 2.0, testing.AllocsPerRun(20, func() { spread.NewFilter(cs, pod, n, node, in, memo, blocks) }), "filter pass")
			continue
		}
		st := spread.NewScore(cs, false, pod, n, node, in, memo, blocks)
		require.Equal(t, 2.0, testing.AllocsPerRun(20, func() { spread.NewScore(cs, false, pod, n, node, in, memo, blocks) }), "score pass")
		out := make([]int64, n)
		require.Zero(t, testing.AllocsPerRun(20, func() { st.Raw(all, out) }), "Raw over every node")
	}
}
