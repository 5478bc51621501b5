package snapshot_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// versioned is what BlockVersion and NodeSetVersion are read from.
type versioned interface {
	NumNodes() int
	Node(i int) *snapshot.NodeInfo
	NumBlocks() int
	BlockVersion(b int) int64
	BlockChanges(b int, since int64, dst []uint8) ([]uint8, bool)
	NodeSetVersion() int64
}

// versionLog checks the version contract across every state it is shown:
// a block version seen twice stands for the same NodeInfo pointers with
// the same generations and content, and a node-set version seen twice for
// the same node names in the same order.
type versionLog struct {
	nodeSet map[int64]string
	// slots[v] is each slot's fingerprint at block version v; recent[b]
	// the last versions seen of block b, for BlockChanges.
	slots  map[int64][snapshot.BlockSize]slotFP
	recent map[int][]int64
}

func newVersionLog() *versionLog {
	return &versionLog{nodeSet: map[int64]string{},
		slots: map[int64][snapshot.BlockSize]slotFP{}, recent: map[int][]int64{}}
}

// slotFP is what identifies a node's state in a block slot.
type slotFP struct {
	ni   *snapshot.NodeInfo
	gen  int64
	name string
	pods int
	cpu  int64
}

// checkChanges: for the last versions seen of block b, BlockChanges
// either says it cannot tell or lists every slot whose node differs.
func (l *versionLog) checkChanges(t *testing.T, s versioned, b int, now [snapshot.BlockSize]slotFP, where string) {
	t.Helper()
	for _, u := range l.recent[b] {
		changed, ok := s.BlockChanges(b, u, nil)
		if !ok {
			continue
		}
		var listed [256]bool
		for _, c := range changed {
			if int(c) >= snapshot.BlockSize {
				t.Fatalf("%s: block %d: offset %d out of range", where, b, c)
			}
			listed[c] = true
		}
		then := l.slots[u]
		for k := range snapshot.BlockSize {
			if !listed[uint8(k)] && then[k] != now[k] {
				t.Fatalf("%s: block %d slot %d changed since version %d but BlockChanges listed only %v", where, b, k, u, changed)
			}
		}
	}
}

func (l *versionLog) check(t *testing.T, s versioned, where string) {
	t.Helper()
	n := s.NumNodes()
	require.Equal(t, (n+snapshot.BlockSize-1)/snapshot.BlockSize, s.NumBlocks(), where)
	names := ""
	for b := range s.NumBlocks() {
		var slots [snapshot.BlockSize]slotFP
		for i := b * snapshot.BlockSize; i < min(n, (b+1)*snapshot.BlockSize); i++ {
			ni := s.Node(i)
			slots[i-b*snapshot.BlockSize] = slotFP{ni, ni.Generation(), ni.Name(), len(ni.Pods()), ni.Requested().Get(snapshot.CPU)}
			names += ni.Name() + ","
		}
		v := s.BlockVersion(b)
		if old, ok := l.slots[v]; ok && old != slots {
			t.Fatalf("%s: block %d version %d seen before with other nodes", where, b, v)
		}
		l.checkChanges(t, s, b, slots, where)
		if same, ok := s.BlockChanges(b, v, nil); !ok || len(same) > 0 {
			t.Fatalf("%s: block %d: BlockChanges since the current version = %v, %v", where, b, same, ok)
		}
		l.slots[v] = slots
		if r := l.recent[b]; len(r) == 0 || r[len(r)-1] != v {
			l.recent[b] = append(r[max(0, len(r)-7):], v)
		}
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
	s := c.Snapshot()
	require.Equal(t, 1, s.NumBlocks())
	require.Panics(t, func() { s.BlockVersion(1) })
	require.Panics(t, func() { s.BlockVersion(-1) })
	f := s.Fork()
	require.Panics(t, func() { f.BlockVersion(1) })
}

// TestBlockVersionChanges: a pod added to a node changes its block's
// version and no other; the node-set version stays; Revert restores both;
// adding a node changes the node-set version.
func TestBlockVersionChanges(t *testing.T) {
	c := snapshot.NewCache()
	for i := range 130 {
		require.NoError(t, c.AddNode(node(fmt.Sprintf("n%03d", i), 4000)))
	}
	s := c.Snapshot()
	require.Equal(t, 3, s.NumBlocks())
	vers := func(v versioned) []int64 {
		out := []int64{v.NodeSetVersion()}
		for b := range v.NumBlocks() {
			out = append(out, v.BlockVersion(b))
		}
		return out
	}
	before := vers(s)
	f := s.Fork()
	require.Equal(t, before, vers(f))
	require.NoError(t, f.AddPod(st.MakePod("p").Req("cpu", "100m").Obj(), "n070")) // block 1
	after := vers(f)
	require.Equal(t, before[0], after[0], "node set unchanged")
	require.Equal(t, before[1], after[1])
	require.NotEqual(t, before[2], after[2])
	require.Equal(t, before[3], after[3])
	f.Fork()
	require.NoError(t, f.AddPod(st.MakePod("q").Req("cpu", "100m").Obj(), "n070"))
	require.NotEqual(t, after[2], f.BlockVersion(1))
	require.NoError(t, f.Revert())
	require.Equal(t, after, vers(f), "Revert restores the versions")
	require.NoError(t, f.AddNode(node("extra", 1000)))
	require.NotEqual(t, before[0], f.NodeSetVersion())
	require.Equal(t, before, vers(s), "the snapshot never changes")
}
