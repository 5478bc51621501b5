package reserve

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/hashindex"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
)

// tableUnderTest is a typed table ([podTable] or [nameTable]) with the
// records it indexes: keys are numbered 0..299.
type tableUnderTest struct {
	tab   *hashindex.Table
	hash  func(key int) uint64                  // the real hash of key
	get   func(h uint64, key int) (int32, bool) // the typed look-up
	add   func(h uint64, key int) (idx int32)   // appends a record
	keyAt func(idx int32) int                   // the key of a record
}

func podTableUnderTest() tableUnderTest {
	var tab podTable
	var recs []podRec
	key := func(n int) snapshot.PodKey { return snapshot.PodKey{Namespace: "ns", Name: fmt.Sprint(n)} }
	return tableUnderTest{
		tab:  &tab.Table,
		hash: func(n int) uint64 { return nodeview.HashKey(key(n)) },
		get:  func(h uint64, n int) (int32, bool) { return tab.get(h, key(n), recs) },
		add: func(h uint64, n int) int32 {
			recs = append(recs, podRec{key: key(n), hash: h})
			return int32(len(recs) - 1)
		},
		keyAt: func(idx int32) int {
			var n int
			_, _ = fmt.Sscan(recs[idx].key.Name, &n)
			return n
		},
	}
}

func nameTableUnderTest() tableUnderTest {
	var tab nameTable
	var nodes []nodeAgg
	name := func(n int) string { return fmt.Sprintf("node-%d", n) }
	return tableUnderTest{
		tab:  &tab.Table,
		hash: func(n int) uint64 { return hashName(name(n)) },
		get:  func(h uint64, n int) (int32, bool) { return tab.get(h, name(n), nodes) },
		add: func(_ uint64, n int) int32 {
			nodes = append(nodes, nodeAgg{name: name(n)})
			return int32(len(nodes) - 1)
		},
		keyAt: func(idx int32) int {
			var n int
			_, _ = fmt.Sscanf(nodes[idx].name, "node-%d", &n)
			return n
		},
	}
}

// TestIndexTablesMatchMap drives the open-addressing tables
// (internal/hashindex, as pod-key and node-name tables) and a Go map with the same random inserts and removes — with
// hashes forced into few home slots and few tags, so probe runs wrap around
// the table, collide on tags and full hashes, and exercise backward-shift
// deletion — and compares every look-up.
func TestIndexTablesMatchMap(t *testing.T) {
	for _, kind := range []string{"pods", "names"} {
		for _, mode := range []string{"real hashes", "colliding hashes"} {
			t.Run(kind+"/"+mode, func(t *testing.T) {
				tut := podTableUnderTest()
				if kind == "names" {
					tut = nameTableUnderTest()
				}
				rng := rand.New(rand.NewPCG(7, 9))
				ref := map[int]int32{}
				hashes := map[int]uint64{}
				for step := range 200_000 {
					k := rng.IntN(300)
					h, ok := hashes[k]
					if !ok {
						h = tut.hash(k)
						if mode == "colliding hashes" {
							// 4 tags (the top 32 bits), all with the last
							// slot as home in any table up to 2^30 slots:
							// runs wrap around, tags collide, and 32 hashes
							// serve 300 keys (equal full hashes).
							h = (1<<32-1-uint64(rng.IntN(4)))<<32 | uint64(rng.IntN(8))
						}
						hashes[k] = h
					}
					idx, found := tut.get(h, k)
					want, inRef := ref[k]
					require.Equal(t, inRef, found, "step %d: get(%d) found", step, k)
					if found {
						require.Equal(t, want, idx, "step %d: get(%d)", step, k)
						if rng.IntN(2) == 0 {
							tut.tab.Remove(h, idx)
							delete(ref, k)
						}
					} else {
						i := tut.add(h, k)
						tut.tab.Insert(h, i)
						ref[k] = i
					}
					require.Equal(t, len(ref), tut.tab.Len(), "step %d: len", step)
				}
				n := 0
				tut.tab.Each(func(idx int32) {
					require.Equal(t, ref[tut.keyAt(idx)], idx)
					n++
				})
				require.Equal(t, len(ref), n)
			})
		}
	}
}

// TestPodInfoKeyHash: the ledger stores the PodInfo's key hash
// (nodeview.KeyHash) and looks keys up with nodeview.HashKey, so the two
// must agree.
func TestPodInfoKeyHash(t *testing.T) {
	key := func(ns, name string) snapshot.PodKey { return snapshot.PodKey{Namespace: ns, Name: name} }
	for _, k := range []snapshot.PodKey{key("x", "a"), key("ns", "a"), key("a", "ns"), key("nsa", "b"), key("ns", "ab"), key("default", "web-0")} {
		pi := snapshot.MustPodInfo(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}})
		require.Equal(t, nodeview.HashKey(k), nodeview.KeyHash(pi), "%s", k)
	}
	require.NotEqual(t, nodeview.HashKey(key("ns", "a")), nodeview.HashKey(key("a", "ns")))
}
