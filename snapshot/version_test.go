package snapshot_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// cluster is a Snapshot or a Fork, whose block versions and node-set
// version (the internal layout.View, through nodeview.ViewOf) are checked.
type cluster interface {
	NumNodes() int
	Node(i int) *snapshot.NodeInfo
}

// mustView returns c's block view, failing the test if it has none.
func mustView(t *testing.T, c cluster) nodeview.View {
	t.Helper()
	v, ok := nodeview.ViewOf(c)
	require.True(t, ok, "%T has no view", c)
	return v
}

// versionLog checks the version contract across every state it is shown:
// a block version seen twice stands for the same NodeInfo pointers with
// the same generations and content, a node version (Block) seen twice for
// the same node, and a node-set version seen twice for the same node names
// in the same order.
type versionLog struct {
	nodeSet map[int64]string
	blocks  map[int64][layout.BlockSize]slotFP
	nodes   map[int64]slotFP
}

func newVersionLog() *versionLog {
	return &versionLog{nodeSet: map[int64]string{}, blocks: map[int64][layout.BlockSize]slotFP{}, nodes: map[int64]slotFP{}}
}

// slotFP is what identifies a node's state in a block slot.
type slotFP struct {
	ni   *snapshot.NodeInfo
	gen  int64
	name string
	pods int
	cpu  int64
}

func (l *versionLog) check(t *testing.T, c cluster, where string) {
	t.Helper()
	s := mustView(t, c)
	n := s.NumNodes()
	require.Equal(t, (n+layout.BlockSize-1)/layout.BlockSize, s.NumBlocks(), where)
	names := ""
	for b := range s.NumBlocks() {
		var slots [layout.BlockSize]slotFP
		nodes, vers := s.Block(b)
		require.Len(t, nodes, min(layout.BlockSize, n-b*layout.BlockSize), where)
		require.Len(t, vers, len(nodes), where)
		for j, ni := range nodes {
			if ni != c.Node(b*layout.BlockSize+j) {
				t.Fatalf("%s: Block(%d) node %d is not Node(%d)", where, b, j, b*layout.BlockSize+j)
			}
			fp := slotFP{ni, ni.Generation(), ni.Name(), len(ni.Pods()), ni.Requested().Get(snapshot.CPU)}
			slots[j] = fp
			names += ni.Name() + ","
			if vers[j] == 0 {
				t.Fatalf("%s: block %d node %d has version 0", where, b, j)
			}
			if old, ok := l.nodes[vers[j]]; ok && old != fp {
				t.Fatalf("%s: block %d node %d: version %d seen before with another node state", where, b, j, vers[j])
			}
			l.nodes[vers[j]] = fp
		}
		v := s.BlockVersion(b)
		if old, ok := l.blocks[v]; ok && old != slots {
			t.Fatalf("%s: block %d version %d seen before with other nodes", where, b, v)
		}
		l.blocks[v] = slots
	}
	v := s.NodeSetVersion()
	if old, ok := l.nodeSet[v]; ok {
		require.Equal(t, old, names, "%s: node-set version %d seen before with other nodes", where, v)
	}
	l.nodeSet[v] = names
}

func TestBlockVersionPanicsOutOfRange(t *testing.T) {
	c := snapshot.NewCache()
	require.NoError(t, c.AddNode(node("a", 1000)))
	snap := c.Snapshot()
	s, f := mustView(t, snap), mustView(t, snap.Fork())
	require.Equal(t, 1, s.NumBlocks())
	require.Panics(t, func() { s.BlockVersion(1) })
	require.Panics(t, func() { s.BlockVersion(-1) })
	require.Panics(t, func() { f.BlockVersion(1) })
	require.Panics(t, func() { s.Block(1) })
	require.Panics(t, func() { f.Block(-1) })
}

// TestBlockVersionChanges: a pod added to a node changes its block's
// version and no other; the node-set version stays; Revert restores both;
// adding a node changes the node-set version.
func TestBlockVersionChanges(t *testing.T) {
	c := snapshot.NewCache()
	for i := range 130 {
		require.NoError(t, c.AddNode(node(fmt.Sprintf("n%03d", i), 4000)))
	}
	snap := c.Snapshot()
	s := mustView(t, snap)
	require.Equal(t, 3, s.NumBlocks())
	vers := func(v nodeview.View) []int64 {
		out := []int64{v.NodeSetVersion()}
		for b := range v.NumBlocks() {
			out = append(out, v.BlockVersion(b))
		}
		return out
	}
	before := vers(s)
	fork := snap.Fork()
	f := mustView(t, fork)
	require.Equal(t, before, vers(f))
	_, nv := s.Block(1)
	nodeVers := slices.Clone(nv)
	require.NoError(t, fork.AddPod(st.MakePod("p").Req("cpu", "100m").Obj(), "n070")) // block 1
	_, nv = f.Block(1)
	for j := range nv {
		if j == 70-64 {
			require.NotEqual(t, nodeVers[j], nv[j], "the changed node's version")
		} else {
			require.Equal(t, nodeVers[j], nv[j], "node %d's version", 64+j)
		}
	}
	after := vers(f)
	require.Equal(t, before[0], after[0], "node set unchanged")
	require.Equal(t, before[1], after[1])
	require.NotEqual(t, before[2], after[2])
	require.Equal(t, before[3], after[3])
	fork.Fork()
	require.NoError(t, fork.AddPod(st.MakePod("q").Req("cpu", "100m").Obj(), "n070"))
	require.NotEqual(t, after[2], f.BlockVersion(1))
	require.NoError(t, fork.Revert())
	require.Equal(t, after, vers(f), "Revert restores the versions")
	require.NoError(t, fork.AddNode(node("extra", 1000)))
	require.NotEqual(t, before[0], f.NodeSetVersion())
	require.Equal(t, before, vers(s), "the snapshot never changes")
}
