package snapshot_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"unique"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

type nodeReader interface {
	NumNodes() int
	Node(i int) *snapshot.NodeInfo
}

// indexDump is an Index's content: per kind, group key → topology value
// → total, for every value the nodes of c carry (plus one no node has),
// and the number of values with a total; and the pod count.
type indexDump struct {
	Pods     int
	Groups   [interpod.NumKinds]map[string]map[string]int64
	Lens     [interpod.NumKinds]map[string]int
	Views    map[string]map[string]int64
	ViewLens map[string]int
	// EachDiffers lists the Domains whose Each disagrees with Count.
	EachDiffers []string
}

func dumpIndex(ix interpod.Index, c nodeReader) indexDump {
	values := map[string]bool{"absent-value": true}
	for i := range c.NumNodes() {
		for _, v := range c.Node(i).Node().Labels {
			values[v] = true
		}
	}
	d := indexDump{Pods: ix.NumPodsWithAffinity(), Views: map[string]map[string]int64{}, ViewLens: map[string]int{}}
	counts := func(dm interpod.Domains) map[string]int64 {
		m := map[string]int64{}
		for v := range values {
			if c := dm.Count(unique.Make(v)); c != 0 {
				m[v] = c
			}
		}
		each := map[string]int64{}
		dm.Each(func(v unique.Handle[string], n int64) bool {
			each[v.Value()] += n
			return true
		})
		// AddTo may leave a value whose total is 0 in the table with 0
		// (a patch taking a trie's total to 0): every value is compared.
		var tab interpod.ValueTable
		dm.AddTo(&tab, 2)
		for v := range values {
			if got := tab.Get(unique.Make(v)); got != 2*each[v] {
				d.EachDiffers = append(d.EachDiffers, fmt.Sprintf("AddTo %q: %d, Each %d", v, got, each[v]))
			}
		}
		if tab.Len() < len(each) {
			d.EachDiffers = append(d.EachDiffers, fmt.Sprintf("AddTo has %d values, Each %d", tab.Len(), len(each)))
		}
		if !maps.Equal(m, each) {
			d.EachDiffers = append(d.EachDiffers, fmt.Sprintf("Count %v, Each %v", m, each))
		}
		return m
	}
	ix.MatchViews(func(t *interpod.Term, dm interpod.Domains) bool {
		d.Views[t.Key()], d.ViewLens[t.Key()] = counts(dm), dm.Len()
		if ix.MatchCounts(t) != dm {
			panic("MatchCounts disagrees with MatchViews for " + t.Key())
		}
		return true
	})
	for k := range interpod.NumKinds {
		d.Groups[k], d.Lens[k] = map[string]map[string]int64{}, map[string]int{}
		ix.TermGroups(k, func(t *interpod.Term, dm interpod.Domains) bool {
			d.Groups[k][t.Key()], d.Lens[k][t.Key()] = counts(dm), dm.Len()
			return true
		})
	}
	return d
}

// requireIndexMatchesScan: the index c keeps equals the one built by
// walking c's nodes (interpod.ScanIndex, the simple reference).
func requireIndexMatchesScan(t *testing.T, c nodeReader, msg string) indexDump {
	t.Helper()
	ix := interpod.IndexOf(c)
	require.NotNil(t, ix, msg)
	got := dumpIndex(ix, c)
	want := dumpIndex(interpod.ScanIndex(c.NumNodes(), c.Node), c)
	require.Equal(t, want, got, msg)
	return got
}

// requireDiffs: for every group (and view) that immutable snapshots
// older and newer both hold, Differ.AddDiff from older's version, added
// to a table holding older's totals, gives newer's totals for every
// label value of either.
func requireDiffs(t *testing.T, older, newer *snapshot.Snapshot, msg string) {
	t.Helper()
	type key struct {
		kind interpod.Kind // interpod.NumKinds for a view
		term string
	}
	groups := func(ix interpod.Index) map[key]interpod.Domains {
		m := map[key]interpod.Domains{}
		for k := range interpod.NumKinds {
			ix.TermGroups(k, func(tm *interpod.Term, d interpod.Domains) bool {
				m[key{k, tm.Key()}] = d
				return true
			})
		}
		ix.MatchViews(func(tm *interpod.Term, d interpod.Domains) bool {
			m[key{interpod.NumKinds, tm.Key()}] = d
			return true
		})
		return m
	}
	values := map[string]bool{}
	for _, c := range []*snapshot.Snapshot{older, newer} {
		for i := range c.NumNodes() {
			for _, v := range c.Node(i).Node().Labels {
				values[v] = true
			}
		}
	}
	og, ng := groups(interpod.IndexOf(older)), groups(interpod.IndexOf(newer))
	for k, nd := range ng {
		od, ok := og[k]
		if !ok {
			continue
		}
		var tab interpod.ValueTable
		od.AddTo(&tab, 3)
		require.True(t, nd.(interpod.Differ).AddDiff(od, &tab, 3, 1<<20), "%s: %v", msg, k)
		for v := range values {
			h := unique.Make(v)
			require.Equal(t, 3*nd.Count(h), tab.Get(h), "%s: %v value %q", msg, k, v)
		}
	}
}

// randomTermPod: a pod in one of two namespaces, labelled app=a or b,
// with 0-3 random terms of random kinds (zone or hostname key, explicit
// or default namespaces, weights 1-3), or no affinity at all.
func randomTermPod(r *rand.Rand, name string) *v1.Pod {
	ns := []string{"default", "team"}[r.IntN(2)]
	p := snapshottest.MakePod(name).Namespace(ns).Label("app", []string{"a", "b"}[r.IntN(2)]).Obj()
	if r.IntN(4) == 0 {
		return p
	}
	aff := &v1.Affinity{PodAffinity: &v1.PodAffinity{}, PodAntiAffinity: &v1.PodAntiAffinity{}}
	for range r.IntN(4) {
		term := v1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": []string{"a", "b"}[r.IntN(2)]}},
			TopologyKey:   []string{"zone", v1.LabelHostname}[r.IntN(2)],
		}
		switch r.IntN(4) {
		case 0:
			term.Namespaces = []string{"default", "team"}
		case 1:
			term.NamespaceSelector = &metav1.LabelSelector{}
		case 2:
			term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}
		}
		w := v1.WeightedPodAffinityTerm{Weight: int32(1 + r.IntN(3)), PodAffinityTerm: term}
		switch r.IntN(4) {
		case 0:
			aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
		case 1:
			aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
		case 2:
			aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, w)
		default:
			aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, w)
		}
	}
	p.Spec.Affinity = aff
	return p
}

func randomZoneNode(r *rand.Rand, name string) *v1.Node {
	w := snapshottest.MakeNode(name).Label(v1.LabelHostname, name)
	if z := r.IntN(4); z < 3 { // one in four has no zone label
		w.Label("zone", fmt.Sprint("z", z))
	}
	return w.Obj()
}

// TestAffinityIndexMatchesScan: through random Fork sequences (nested
// Fork, AddPod, RemovePod, AddNode, RemoveNode, UpdateNode relabelling
// the zone, Commit, Revert, Snapshot) and Cache sequences, the index a
// Snapshot or Fork keeps equals interpod.ScanIndex over its nodes after
// every step, and a Snapshot taken along the way keeps its content.
func TestAffinityIndexMatchesScan(t *testing.T) {
	requireIndexSequencesMatchScan(t, indexSequences{
		pod: randomTermPod, stream: 7, podsPerNode: func(*rand.Rand) int { return 3 },
		nodePods: 1, forkSteps: 120, cacheSteps: 80, cacheNames: 20,
	})
}

// indexSequences shapes requireIndexSequencesMatchScan's random runs:
// the pods (pod), the random stream, the pods on each of the 4 first
// nodes, the pods an added node comes with, the Fork and Cache steps per
// seed and the number of pod names the Cache's steps draw from.
type indexSequences struct {
	pod         func(*rand.Rand, string) *v1.Pod
	stream      uint64
	podsPerNode func(*rand.Rand) int
	nodePods    int
	forkSteps   int
	cacheSteps  int
	cacheNames  int
}

// requireIndexSequencesMatchScan runs 40 seeds of Fork and Cache
// sequences shaped by sq (see TestAffinityIndexMatchesScan), checking the
// index against interpod.ScanIndex after every step, every Snapshot
// taken along the way unchanged at the end, AddDiff between consecutive
// ones, and the base snapshot unchanged.
func requireIndexSequencesMatchScan(t *testing.T, sq indexSequences) {
	t.Helper()
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, sq.stream))
		var nodes []*v1.Node
		var pods []*v1.Pod
		for i := range 4 {
			name := fmt.Sprint("n", i)
			nodes = append(nodes, randomZoneNode(r, name))
			for j := range sq.podsPerNode(r) {
				p := sq.pod(r, fmt.Sprintf("p%d-%d", i, j))
				p.Spec.NodeName = name
				pods = append(pods, p)
			}
		}
		snap := snapshottest.Snapshot(t, nodes, pods...)
		base := requireIndexMatchesScan(t, snap, "base")
		f := snap.Fork()
		type placed struct {
			key  snapshot.PodKey
			node string
		}
		var on []placed
		for _, p := range pods {
			on = append(on, placed{snapshot.KeyOf(p), p.Spec.NodeName})
		}
		var frozen []*snapshot.Snapshot
		var frozenDumps []indexDump
		for step := range sq.forkSteps {
			msg := fmt.Sprintf("seed %d step %d", seed, step)
			nodeName := func() string { return f.Node(r.IntN(f.NumNodes())).Name() }
			switch op := r.IntN(10); {
			case op < 3 && f.NumNodes() > 0:
				p := sq.pod(r, fmt.Sprintf("q%d", step))
				n := nodeName()
				require.NoError(t, f.AddPod(p, n), msg)
				on = append(on, placed{snapshot.KeyOf(p), n})
			case op < 5 && len(on) > 0:
				i := r.IntN(len(on))
				if f.Get(on[i].node) != nil && f.Get(on[i].node).HasPod(on[i].key) {
					require.NoError(t, f.RemovePod(on[i].key, on[i].node), msg)
				}
			case op == 5:
				node := randomZoneNode(r, fmt.Sprint("m", step))
				var with []*v1.Pod
				for k := range sq.nodePods {
					with = append(with, sq.pod(r, fmt.Sprint([]string{"r", "s"}[k%2], step)))
				}
				require.NoError(t, f.AddNode(node, with...), msg)
			case op == 6 && f.NumNodes() > 1:
				require.NoError(t, f.RemoveNode(nodeName()), msg)
			case op == 7 && f.NumNodes() > 0:
				require.NoError(t, f.UpdateNode(randomZoneNode(r, nodeName())), msg)
			case op == 8:
				if f.Depth() > 0 && r.IntN(2) == 0 {
					if r.IntN(2) == 0 {
						require.NoError(t, f.Revert(), msg)
					} else {
						require.NoError(t, f.Commit(), msg)
					}
				} else {
					f.Fork()
				}
			default:
				s := f.Snapshot()
				frozen = append(frozen, s)
				frozenDumps = append(frozenDumps, requireIndexMatchesScan(t, s, msg))
			}
			requireIndexMatchesScan(t, f, msg)
		}
		for i, s := range frozen {
			assert.Equal(t, frozenDumps[i], requireIndexMatchesScan(t, s, "frozen"), "seed %d snapshot %d changed", seed, i)
			older := snap
			if i > 0 {
				older = frozen[i-1]
			}
			requireDiffs(t, older, s, fmt.Sprintf("seed %d snapshot %d", seed, i))
		}
		assert.Equal(t, base, requireIndexMatchesScan(t, snap, "base after"), "seed %d: the base snapshot changed", seed)

		// The Cache: the same operations through the informer contract.
		c := snapshot.NewCache()
		for _, n := range nodes {
			require.NoError(t, c.AddNode(n))
		}
		for step := range sq.cacheSteps {
			msg := fmt.Sprintf("seed %d cache step %d", seed, step)
			switch op := r.IntN(6); op {
			case 0, 1:
				p := sq.pod(r, fmt.Sprintf("c%d", r.IntN(sq.cacheNames)))
				p.Spec.NodeName = nodes[r.IntN(len(nodes))].Name
				p.UID = types.UID(fmt.Sprint("uid-", step)) // may move an existing pod: created again
				require.NoError(t, c.AddPod(p), msg)
			case 2:
				c.RemovePod(snapshot.PodKey{Namespace: []string{"default", "team"}[r.IntN(2)], Name: fmt.Sprintf("c%d", r.IntN(sq.cacheNames))})
			case 3:
				require.NoError(t, c.UpdateNode(randomZoneNode(r, nodes[r.IntN(len(nodes))].Name)), msg)
			case 4:
				n := nodes[r.IntN(len(nodes))].Name
				if c.Snapshot().Get(n) != nil {
					require.NoError(t, c.RemoveNode(n), msg)
				} else {
					require.NoError(t, c.AddNode(randomZoneNode(r, n)), msg)
				}
			default:
			}
			requireIndexMatchesScan(t, c.Snapshot(), msg)
		}
	}
}

// TestInertIsO1: with the index, InterPodAffinity's inertness check
// reads no node, also after pods with terms have been parsed in this
// process (the old one-way process-wide hint then scanned every node);
// it follows the count through Fork, AddPod, Revert and RemovePod.
func TestInertIsO1(t *testing.T) {
	var nodes []*v1.Node
	for i := range 50 {
		nodes = append(nodes, snapshottest.MakeNode(fmt.Sprint("n", i)).Obj())
	}
	snap := snapshottest.Snapshot(t, nodes)
	anti := antiPod("x", "")
	require.NotNil(t, snapshot.MustPodInfo(anti)) // a pod with terms parsed in this process
	calls := 0
	node := func(i int) *snapshot.NodeInfo { calls++; return snap.Node(i) }
	assert.True(t, interpod.Inert(nil, snap, snap.NumNodes(), node))
	assert.Zero(t, calls, "no node read")

	f := snap.Fork()
	f.Fork()
	require.NoError(t, f.AddPod(anti, "n7"))
	assert.False(t, interpod.Inert(nil, f, f.NumNodes(), f.Node))
	assert.Equal(t, 1, interpod.IndexOf(f).NumPodsWithAffinity())
	require.NoError(t, f.Revert())
	assert.True(t, interpod.Inert(nil, f, f.NumNodes(), f.Node))
	require.NoError(t, f.AddPod(anti, "n7"))
	require.NoError(t, f.RemovePod(snapshot.KeyOf(anti), "n7"))
	assert.True(t, interpod.Inert(nil, f, f.NumNodes(), f.Node))
	assert.Zero(t, calls, "no node read")
}

// TestAffinityIndexCacheSnapshotsRarely: a Cache whose Snapshot is
// taken only now and then writes many changes under one token (groups'
// patches filled and folded into tries it then owns, on tries with inner
// nodes at 90 and 200 nodes); its index equals interpod.ScanIndex at
// every Snapshot and in a Fork of it, every Snapshot keeps its content,
// and AddDiff between any two of them gives the later one's totals.
func TestAffinityIndexCacheSnapshotsRarely(t *testing.T) {
	for seed := range uint64(3) {
		r := rand.New(rand.NewPCG(seed, 99))
		nn := []int{3, 90, 200}[seed%3]
		c := snapshot.NewCache()
		var nodes []*v1.Node
		for i := range nn {
			n := randomZoneNode(r, fmt.Sprint("n", i))
			nodes = append(nodes, n)
			require.NoError(t, c.AddNode(n))
		}
		for i := range 2 * nn {
			p := randomTermPod(r, fmt.Sprintf("c%d", i))
			p.Spec.NodeName = nodes[r.IntN(nn)].Name
			p.UID = types.UID(fmt.Sprint("init-", i))
			require.NoError(t, c.AddPod(p))
		}
		var frozen []*snapshot.Snapshot
		var dumps []indexDump
		for step := range 150 {
			msg := fmt.Sprintf("seed %d cache step %d", seed, step)
			switch op := r.IntN(10); op {
			case 0, 1, 2:
				p := randomTermPod(r, fmt.Sprintf("c%d", r.IntN(3*nn)))
				p.Spec.NodeName = nodes[r.IntN(len(nodes))].Name
				p.UID = types.UID(fmt.Sprint("uid-", step))
				require.NoError(t, c.AddPod(p), msg)
			case 3, 4:
				c.RemovePod(snapshot.PodKey{Namespace: []string{"default", "team"}[r.IntN(2)], Name: fmt.Sprintf("c%d", r.IntN(3*nn))})
			case 5:
				require.NoError(t, c.UpdateNode(randomZoneNode(r, nodes[r.IntN(len(nodes))].Name)), msg)
			case 6:
				s := c.Snapshot()
				frozen = append(frozen, s)
				dumps = append(dumps, requireIndexMatchesScan(t, s, msg))
				// and a Fork of it changed and reverted
				f := s.Fork()
				f.Fork()
				for range 3 {
					p := randomTermPod(r, "fk")
					n := f.Node(r.IntN(f.NumNodes())).Name()
					require.NoError(t, f.AddPod(p, n), msg)
					requireIndexMatchesScan(t, f, msg)
					require.NoError(t, f.RemovePod(snapshot.KeyOf(p), n), msg)
					requireIndexMatchesScan(t, f, msg)
				}
				require.NoError(t, f.Revert())
				requireIndexMatchesScan(t, f, msg)
			}
		}
		s := c.Snapshot()
		frozen = append(frozen, s)
		dumps = append(dumps, requireIndexMatchesScan(t, s, "final"))
		for i, s := range frozen {
			require.Equal(t, dumps[i], requireIndexMatchesScan(t, s, "frozen"), "seed %d snapshot %d changed", seed, i)
			if i > 0 {
				requireDiffs(t, frozen[0], s, fmt.Sprintf("seed %d diff 0->%d", seed, i))
				requireDiffs(t, frozen[i-1], s, fmt.Sprintf("seed %d diff %d->%d", seed, i-1, i))
			}
		}
	}
}
