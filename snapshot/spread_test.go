package snapshot_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/internal/spread"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// groupView is a node's spread groups as a comparable value:
// class → count.
type groupView map[spread.Class]int32

// indexedGroups reads the node's groups from the index; a class listed
// twice or a count ≤ 0 fails.
func indexedGroups(t *testing.T, ni *snapshot.NodeInfo) groupView {
	t.Helper()
	out := groupView{}
	for _, g := range spread.GroupsOf(ni) {
		_, dup := out[g.Class]
		require.False(t, dup, "node %s: class listed twice", ni.Name())
		require.Positive(t, g.N, "node %s", ni.Name())
		require.Equal(t, spread.ClassOf(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Labels: g.Labels}}), g.Class, "node %s: the group's namespace and labels are not its class", ni.Name())
		out[g.Class] = g.N
	}
	return out
}

// recomputedGroups is the reference: the node's pods, not terminating,
// counted by class.
func recomputedGroups(ni *snapshot.NodeInfo) groupView {
	out := groupView{}
	for _, p := range ni.Pods() {
		if p.Pod().DeletionTimestamp == nil {
			out[spread.ClassOf(p.Pod())]++
		}
	}
	return out
}

// nodeReader is declared in affinity_index_test.go.

// checkGroups requires every node's index to equal its pods counted from
// scratch, and returns the groups per node name.
func checkGroups(t *testing.T, s nodeReader, what string) map[string]groupView {
	t.Helper()
	out := map[string]groupView{}
	for i := range s.NumNodes() {
		ni := s.Node(i)
		got := indexedGroups(t, ni)
		require.Equal(t, recomputedGroups(ni), got, "%s: node %s", what, ni.Name())
		out[ni.Name()] = got
	}
	return out
}

// spreadPodOp returns a random pod: one of a few label sets in one of
// two namespaces, sometimes terminating.
func randomSpreadPod(rng *rand.Rand, seq int) *v1.Pod {
	w := st.MakePod(fmt.Sprintf("s%d", seq)).Req("cpu", "10m")
	switch rng.IntN(4) {
	case 0:
		w = w.Label("app", "web")
	case 1:
		w = w.Label("app", "web").Label("tier", fmt.Sprint(rng.IntN(2)))
	case 2:
		w = w.Label("app", "db")
	}
	p := w.Obj()
	if rng.IntN(3) == 0 {
		p.Namespace = "other"
	}
	if rng.IntN(8) == 0 {
		p.DeletionTimestamp = &metav1.Time{}
	}
	return p
}

// checkSpreadIndex runs random pod and node changes in nested Fork
// layers and a Cache, checking after every change that each node's spread
// groups equal its pods counted from scratch, that Revert restores the
// groups, and that snapshots taken earlier (and the base) never see a
// later layer's changes (the groups are copied with the node, never
// written where a parent reads them).
func checkSpreadIndex(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 14))
	c := snapshot.NewCache()
	seq := 0
	for i := range 3 + rng.IntN(20) {
		name := fmt.Sprintf("n%d", i)
		require.NoError(t, c.AddNode(node(name, 8000)))
		for range rng.IntN(5) {
			seq++
			p := randomSpreadPod(rng, seq)
			p.Spec.NodeName = name
			require.NoError(t, c.AddPod(p))
		}
	}
	base := c.Snapshot()
	baseGroups := checkGroups(t, base, "base")
	f := base.Fork()
	type frozen struct {
		snap   *snapshot.Snapshot
		groups map[string]groupView
	}
	var frozens []frozen
	change := func(what string) {
		names := []string{}
		for i := range f.NumNodes() {
			names = append(names, f.Node(i).Name())
		}
		seq++
		switch k := rng.IntN(10); {
		case k == 0 || len(names) == 0:
			_ = f.AddNode(node(fmt.Sprintf("n%d", rng.IntN(30)), 8000), randomSpreadPod(rng, seq))
		case k == 1:
			require.NoError(t, f.RemoveNode(names[rng.IntN(len(names))]))
		case k == 2:
			require.NoError(t, f.UpdateNode(node(names[rng.IntN(len(names))], 4000)))
		case k <= 6:
			require.NoError(t, f.AddPod(randomSpreadPod(rng, seq), names[rng.IntN(len(names))]))
		default:
			n := f.Get(names[rng.IntN(len(names))])
			if pods := n.Pods(); len(pods) > 0 {
				require.NoError(t, f.RemovePod(pods[rng.IntN(len(pods))].Key(), n.Name()))
			}
		}
		checkGroups(t, f, what)
	}
	var layer func(round, depth int)
	layer = func(round, depth int) {
		before := checkGroups(t, f, "before")
		f.Fork()
		for i := range 1 + rng.IntN(20) {
			change(fmt.Sprintf("round %d depth %d change %d", round, depth, i))
		}
		if depth < 3 && rng.IntN(2) == 0 {
			layer(round, depth+1)
		}
		if rng.IntN(3) == 0 {
			s := f.Snapshot()
			frozens = append(frozens, frozen{s, checkGroups(t, s, "snapshot")})
		}
		if rng.IntN(2) == 0 {
			require.NoError(t, f.Revert())
			require.Equal(t, before, checkGroups(t, f, "after Revert"), "round %d depth %d", round, depth)
			return
		}
		require.NoError(t, f.Commit())
	}
	for round := range 10 {
		layer(round, 1)
	}
	for i, fr := range frozens {
		require.Equal(t, fr.groups, checkGroups(t, fr.snap, "frozen"), "snapshot %d changed", i)
	}
	require.Equal(t, baseGroups, checkGroups(t, base, "base at the end"))

	// The Cache keeps the index through its own paths: pod moves,
	// terminating updates, node removal and re-adding.
	for range 200 {
		seq++
		p := randomSpreadPod(rng, rng.IntN(seq+1))
		switch rng.IntN(4) {
		case 0:
			c.RemovePod(snapshot.KeyOf(p))
		case 1:
			name := fmt.Sprintf("n%d", rng.IntN(25))
			if c.Snapshot().Get(name) != nil && rng.IntN(4) == 0 {
				require.NoError(t, c.RemoveNode(name))
			} else {
				require.NoError(t, c.AddNode(node(name, 8000)))
			}
		default:
			p.Spec.NodeName = fmt.Sprintf("n%d", rng.IntN(25))
			p.UID = types.UID(fmt.Sprint("uid-", seq)) // may move an existing pod: created again
			require.NoError(t, c.AddPod(p))
		}
		checkGroups(t, c.Snapshot(), "cache")
	}
}

func TestSpreadIndex(t *testing.T) {
	for seed := range uint64(100) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { checkSpreadIndex(t, seed) })
	}
}

func FuzzSpreadIndex(f *testing.F) {
	for _, s := range []uint64{0, 1, 14, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkSpreadIndex(t, seed) })
}

// TestSpreadClass: the class is namespace and labels, and only they.
func TestSpreadClass(t *testing.T) {
	mk := func(ns string, ls map[string]string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns, Labels: maps.Clone(ls)}}
	}
	a := spread.ClassOf(mk("ns", map[string]string{"a": "1", "b": "2"}))
	require.Equal(t, a, spread.ClassOf(mk("ns", map[string]string{"b": "2", "a": "1"})))
	classes := []spread.Class{a}
	for _, p := range []*v1.Pod{
		mk("ns2", map[string]string{"a": "1", "b": "2"}),
		mk("ns", map[string]string{"a": "1"}),
		mk("ns", map[string]string{"a": "1", "b": "3"}),
		mk("ns", map[string]string{"a": "1", "b": "2", "c": ""}),
		mk("ns", map[string]string{"a1:b": "2"}), // no field forges another
		mk("", nil),
	} {
		classes = append(classes, spread.ClassOf(p))
	}
	require.Len(t, slices.Compact(slices.SortedFunc(slices.Values(classes), func(x, y spread.Class) int {
		return strings.Compare(x.Value(), y.Value())
	})), len(classes))
	term := mk("ns", map[string]string{"a": "1", "b": "2"})
	term.DeletionTimestamp = &metav1.Time{}
	require.Equal(t, spread.Class{}, spread.ClassOf(term), "a terminating pod is counted by no constraint")
}
