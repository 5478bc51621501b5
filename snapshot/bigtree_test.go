package snapshot_test

import (
	"fmt"
	"iter"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// names lists the snapshot's node names in index order, checking that
// Nodes, Node, Index and Get agree.
func names(t *testing.T, s interface {
	NumNodes() int
	Node(int) *snapshot.NodeInfo
	Index(string) (int, bool)
	Get(string) *snapshot.NodeInfo
}) []string {
	t.Helper()
	out := make([]string, s.NumNodes())
	for i := range out {
		ni := s.Node(i)
		j, ok := s.Index(ni.Name())
		require.True(t, ok)
		require.Equal(t, i, j)
		require.Same(t, ni, s.Get(ni.Name()))
		out[i] = ni.Name()
	}
	return out
}

func iterNames(snap *snapshot.Snapshot) []string {
	var out []string
	for i, ni := range snap.Nodes() {
		if i != len(out) {
			panic("Nodes out of order")
		}
		out = append(out, ni.Name())
	}
	return out
}

// Node counts across the tree's level boundaries (64 nodes to a chunk,
// 4096 to a mid): removing nodes below a boundary and adding them back in
// nested forks, then reverting and committing, keeps every index and
// iteration consistent, and a commit equals the same changes on a cache.
func TestTreeLevelBoundaries(t *testing.T) {
	const n = 4096 + 65
	c := snapshot.NewCache()
	mk := func(i int) string { return fmt.Sprintf("n-%05d", i) }
	for i := range n {
		require.NoError(t, c.AddNode(st.MakeNode(mk(i)).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	}
	base := c.Snapshot()
	before := names(t, base)
	require.Equal(t, before, iterNames(base))

	f := base.Fork()
	f.Fork()
	// Remove the last 70 nodes (below the mid and a chunk boundary) and
	// two in the middle (the last node moves into their slots).
	for i := n - 1; i >= n-70; i-- {
		require.NoError(t, f.RemoveNode(mk(i)))
	}
	require.NoError(t, f.RemoveNode(mk(5)))
	require.NoError(t, f.RemoveNode(mk(4000)))
	require.Equal(t, n-72, f.NumNodes())
	mid := names(t, f)
	f.Fork()
	for i := range 130 { // back across both boundaries
		require.NoError(t, f.AddNode(st.MakeNode(fmt.Sprintf("new-%d", i)).Capacity("cpu", "1").Obj()))
	}
	require.Equal(t, n-72+130, f.NumNodes())
	grown := names(t, f)
	require.Equal(t, grown, iterNames(f.Snapshot()))
	require.NoError(t, f.Revert())
	require.Equal(t, mid, names(t, f))
	require.Equal(t, mid, iterNames(f.Snapshot()))
	require.NoError(t, f.Revert())
	require.Equal(t, before, names(t, f))

	// The same removals and additions committed, and on the cache.
	f.Fork()
	for i := n - 1; i >= n-70; i-- {
		require.NoError(t, f.RemoveNode(mk(i)))
		c.RemoveNode(mk(i))
	}
	for i := range 130 {
		nd := st.MakeNode(fmt.Sprintf("new-%d", i)).Capacity("cpu", "1").Obj()
		require.NoError(t, f.AddNode(nd))
		require.NoError(t, c.AddNode(nd))
	}
	require.NoError(t, f.Commit())
	got := names(t, f)
	want := iterNames(c.Snapshot())
	require.ElementsMatch(t, want, got)
	require.Equal(t, before, iterNames(base), "the base snapshot changed")
}

// AppendNodes gives the nodes Nodes iterates over, in the same order,
// after dst's own elements, across the chunk and mid boundaries, on a
// snapshot and on a fork whose changes replaced nodes (a pod added,
// nodes removed and added); with capacity it allocates nothing.
func TestAppendNodes(t *testing.T) {
	type nodesView interface {
		NumNodes() int
		Nodes() iter.Seq2[int, *snapshot.NodeInfo]
		AppendNodes([]*snapshot.NodeInfo) []*snapshot.NodeInfo
	}
	for _, n := range []int{0, 1, 63, 64, 65, 4096, 4096 + 65} {
		c := snapshot.NewCache()
		mk := func(i int) string { return fmt.Sprintf("n-%05d", i) }
		for i := range n {
			require.NoError(t, c.AddNode(st.MakeNode(mk(i)).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
		}
		snap := c.Snapshot()
		check := func(v nodesView) {
			t.Helper()
			want := []*snapshot.NodeInfo{nil} // dst's own element
			for _, ni := range v.Nodes() {
				want = append(want, ni)
			}
			require.Len(t, want, v.NumNodes()+1)
			got := v.AppendNodes([]*snapshot.NodeInfo{nil})
			require.Len(t, got, len(want), "n=%d", n)
			for i := range want {
				require.Same(t, want[i], got[i], "n=%d element %d", n, i)
			}
			buf := make([]*snapshot.NodeInfo, 0, v.NumNodes())
			require.Zero(t, testing.AllocsPerRun(10, func() { buf = v.AppendNodes(buf[:0]) }), "n=%d", n)
		}
		check(snap)
		f := snap.Fork()
		check(f)
		if n == 0 {
			continue
		}
		before := f.Node(n - 1)
		require.NoError(t, f.AddPod(st.MakePod("p").Namespace("ns").Obj(), mk(n-1)))
		require.NotSame(t, before, f.Node(n-1), "n=%d: the fork kept the node's pointer; the test wants a replaced node", n)
		check(f)
		f.Fork()
		require.NoError(t, f.RemoveNode(mk(0)))
		require.NoError(t, f.AddNode(st.MakeNode("extra").Capacity("cpu", "1").Obj()))
		check(f)
		check(snap) // the base is unchanged
	}
}
