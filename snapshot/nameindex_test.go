package snapshot_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// The name index against a set of names: nodes added and removed in
// nested forks (enough to fold the index's delta into new tables many
// times, and to move nodes by removal), reverted, committed and
// snapshotted, looked up by the NodeInfo's own name string (found by
// address), by a copy of it (found by content), by a prefix that shares
// its bytes, and by names that are gone or never were.
func TestNameIndexReference(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			c := snapshot.NewCache()
			ref := map[string]bool{}
			for i := range 300 {
				name := fmt.Sprintf("n%d", i)
				require.NoError(t, c.AddNode(st.MakeNode(name).Capacity("cpu", "4").Obj()))
				ref[name] = true
			}
			for i := 0; i < 300; i += 3 { // the cache's delta holds moves
				name := fmt.Sprintf("n%d", i)
				require.NoError(t, c.RemoveNode(name))
				delete(ref, name)
			}
			f := c.Snapshot().Fork()
			refs := []map[string]bool{}
			next := 300
			for step := range 3000 {
				switch r := rng.IntN(100); {
				case r < 40:
					name := fmt.Sprintf("n%d", next)
					next++
					require.NoError(t, f.AddNode(st.MakeNode(name).Capacity("cpu", "4").Obj()))
					ref[name] = true
				case r < 75 && f.NumNodes() > 0:
					name := f.Node(rng.IntN(f.NumNodes())).Name()
					require.NoError(t, f.RemoveNode(name))
					delete(ref, name)
				case r < 85:
					f.Fork()
					refs = append(refs, clone(ref))
				case r < 92 && len(refs) > 0:
					require.NoError(t, f.Revert())
					ref, refs = refs[len(refs)-1], refs[:len(refs)-1]
				case r < 97 && len(refs) > 0:
					require.NoError(t, f.Commit())
					refs = refs[:len(refs)-1]
				default:
					checkNames(t, f.Snapshot(), ref, next, step)
				}
				if step%50 == 0 {
					checkNames(t, f, ref, next, step)
				}
			}
			checkNames(t, f, ref, next, -1)
		})
	}
}

func clone(m map[string]bool) map[string]bool {
	c := make(map[string]bool, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func checkNames(t *testing.T, s interface {
	NumNodes() int
	Node(int) *snapshot.NodeInfo
	Index(string) (int, bool)
}, ref map[string]bool, next, step int) {
	t.Helper()
	require.Equal(t, len(ref), s.NumNodes(), "step %d", step)
	for i := range s.NumNodes() {
		name := s.Node(i).Name()
		require.True(t, ref[name], "step %d: node %s is not in the reference", step, name)
		for _, key := range []string{name, strings.Clone(name)} {
			j, ok := s.Index(key)
			require.True(t, ok && i == j, "step %d: Index(%s) = %d, %v; want %d", step, key, j, ok, i)
		}
		if prefix := name[:len(name)-1]; !ref[prefix] {
			_, ok := s.Index(prefix)
			require.False(t, ok, "step %d: Index(%s) found a node", step, prefix)
		}
	}
	for i := range next + 10 {
		name := fmt.Sprintf("n%d", i)
		if !ref[name] {
			_, ok := s.Index(name)
			require.False(t, ok, "step %d: Index(%s) found a node", step, name)
		}
	}
}

// Every node is found by its own name string and by a copy after each
// addition to a cache (snapshotted after each, so each addition copies the
// delta) and to a fork (which owns its delta): the index's delta grows, is
// copied, and is folded into new tables along the way.
func TestNameIndexGrowth(t *testing.T) {
	type reader interface {
		Node(int) *snapshot.NodeInfo
		Index(string) (int, bool)
	}
	var names []string
	check := func(s reader) {
		t.Helper()
		for i, name := range names {
			for _, key := range []string{s.Node(i).Name(), name} {
				j, ok := s.Index(key)
				require.True(t, ok && i == j, "%d nodes: Index(%s) = %d, %v; want %d", len(names), key, j, ok, i)
			}
		}
	}
	c := snapshot.NewCache()
	for i := range 700 {
		names = append(names, fmt.Sprintf("node-%d", i))
		require.NoError(t, c.AddNode(st.MakeNode(names[i]).Obj()))
		check(c.Snapshot())
	}
	f := c.Snapshot().Fork()
	for i := 700; i < 1000; i++ {
		names = append(names, fmt.Sprintf("node-%d", i))
		require.NoError(t, f.AddNode(st.MakeNode(names[i]).Obj()))
		check(f)
	}
}
