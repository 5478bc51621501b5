package snapshot

import (
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"
)

// pmapContent reads every entry of m through each, checking that get
// and ref agree and that the length is the number of entries.
func pmapContent(t *testing.T, m *pmap[string, int64], hash func(string) uint64) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	m.each(func(e *pent[string, int64]) bool {
		_, dup := got[e.key]
		require.False(t, dup, "key %q listed twice", e.key)
		require.Equal(t, hash(e.key), e.hash, "key %q", e.key)
		got[e.key] = e.val
		return true
	})
	require.Len(t, got, m.n)
	for k, v := range got {
		w, ok := m.get(hash(k), k)
		require.True(t, ok, k)
		require.Equal(t, v, w, k)
		require.Equal(t, v, *m.ref(hash(k), k), k)
	}
	return got
}

// pmapLayers drives a pmap as a Fork drives the affinity index: ops
// read from ops set, add to (upd: read-modify-write, inserting a missing
// key), delete, open a layer (a value copy and a new token, its nodes
// from a pool), commit or revert it (the copy comes back, the layer's
// nodes go to the spare list and are reused), or freeze a copy, which
// must never change. Every state is compared with a Go map. hash may be
// degenerate, to force deep tries and full collisions.
func pmapLayers(t *testing.T, ops []byte, hash func(string) uint64) {
	type layer struct {
		m    pmap[string, int64]
		ref  map[string]int64
		tok  uint64
		mark int
	}
	var p pool[pnode[string, int64]]
	cur := layer{ref: map[string]int64{}, tok: newToken()}
	var stack []layer
	type frozen struct {
		m   pmap[string, int64]
		ref map[string]int64
	}
	var frozens []frozen
	w := func() pwriter[string, int64] {
		if len(stack) == 0 {
			return pwriter[string, int64]{cur.tok, nil}
		}
		return pwriter[string, int64]{cur.tok, &p}
	}
	for i := 0; i+1 < len(ops); i += 2 {
		k := fmt.Sprint("k", int(ops[i+1])%pmapTestKeys)
		switch ops[i] % 8 {
		case 0, 1:
			v := int64(ops[i]) + 1
			cur.m.set(w(), hash(k), k, v)
			cur.ref[k] = v
		case 2: // read-modify-write in one walk; inserts a missing key
			v := int64(ops[i+1]) + 1
			*cur.m.upd(w(), hash(k), k) += v
			cur.ref[k] += v
		case 3, 4:
			cur.m.del(w(), hash(k), k)
			delete(cur.ref, k)
		case 5:
			stack = append(stack, layer{cur.m, maps.Clone(cur.ref), cur.tok, len(p.log)})
			cur.tok = newToken()
		case 6:
			if len(stack) == 0 {
				continue
			}
			below := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if ops[i+1]%2 == 0 { // revert
				p.spare = moveTail(p.spare, &p.log, below.mark)
				cur = below
			} else if len(stack) == 0 { // commit at the base: the copies are kept
				clear(p.log)
				p.log = p.log[:0]
			}
		case 7:
			frozens = append(frozens, frozen{cur.m, maps.Clone(cur.ref)})
			cur.tok = newToken()
			for j := range stack {
				stack[j].tok = newToken()
			}
			clear(p.log) // the frozen copy shares the layers' nodes
			p.log = p.log[:0]
			for j := range stack {
				stack[j].mark = 0
			}
		}
		require.Equal(t, cur.ref, pmapContent(t, &cur.m, hash), "op %d", i/2)
		requireClean(t, cur.m.root, i/2)
		if i%16 == 0 { // the layers below and the spare list, now and then
			for _, l := range stack {
				requireClean(t, l.m.root, i/2)
			}
			for _, nd := range p.spare {
				requireClean(t, nd, i/2)
			}
		}
	}
	for j := range frozens {
		require.Equal(t, frozens[j].ref, pmapContent(t, &frozens[j].m, hash), "frozen %d", j)
	}
}

// pmapTestKeys is how many keys pmapLayers draws from: six full
// leaves' worth (at most a byte's 256), so that leaves fill, split and (with a degenerate hash)
// overflow.
const pmapTestKeys = min(256, 6*pmapLeaf)

// requireClean checks that nd and the nodes under it are clean (see
// pnode): ents[n:] zero, a leaf's kids nil. own and newLeaf rely on it to
// clear only what a reused node held.
func requireClean(t *testing.T, nd *pnode[string, int64], op int) {
	t.Helper()
	if nd == nil {
		return
	}
	for i := int(nd.n); i < pmapLeaf; i++ {
		if nd.ents[i] != (pent[string, int64]{}) {
			t.Fatalf("op %d: entry %d of a node with %d is %+v, not zero", op, i, nd.n, nd.ents[i])
		}
	}
	if nd.leaf {
		if nd.kids != ([pmapFan]*pnode[string, int64]{}) {
			t.Fatalf("op %d: a leaf with kids", op)
		}
		return
	}
	if nd.n != 0 {
		t.Fatalf("op %d: an inner node with %d entries", op, nd.n)
	}
	for _, k := range nd.kids {
		requireClean(t, k, op)
	}
}

// TestPmapNodesStayClean: every node of the live, stacked and frozen
// maps and of the spare list stays clean through sets, read-modify-writes,
// deletes (which refill and shrink leaves), splits and reverted layers
// (whose nodes own and newLeaf reuse), for every test hash; pmapLayers
// checks it after each op.
func TestPmapNodesStayClean(t *testing.T) {
	for name, hash := range pmapHashes4Test {
		t.Run(name, func(t *testing.T) {
			for seed := range 3 {
				ops := xorshiftOps(2000, uint64(seed)*0x2545f4914f6cdd1d+7)
				// Mostly inserts first (leaves fill and split), then the
				// mix: reverts hand back nodes of every shape.
				for i := 0; i < len(ops)/2; i += 2 {
					ops[i] %= 3
				}
				pmapLayers(t, ops, hash)
			}
		})
	}
}

// xorshiftOps is n op bytes from a xorshift64 generator started at x
// (non-zero).
func xorshiftOps(n int, x uint64) []byte {
	ops := make([]byte, n)
	for i := range ops {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		ops[i] = byte(x)
	}
	return ops
}

var pmapHashes4Test = map[string]func(string) uint64{
	"hash":     hashString,
	"low3bits": func(s string) uint64 { return hashString(s) & 7 << 58 }, // deep tries, few leaves
	"constant": func(string) uint64 { return 42 },                        // every key collides: overflow lists
}

func TestPmapMatchesMap(t *testing.T) {
	for name, hash := range pmapHashes4Test {
		t.Run(name, func(t *testing.T) {
			for seed := range 40 {
				pmapLayers(t, xorshiftOps(600, uint64(seed)*0x9e3779b97f4a7c15+1), hash)
			}
		})
	}
}

func FuzzPmap(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 5, 0, 3, 1, 6, 0}, uint8(0))
	f.Add([]byte{0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8, 0, 9, 5, 0, 3, 4, 7, 0, 6, 1}, uint8(2))
	f.Fuzz(func(t *testing.T, ops []byte, h uint8) {
		hash := pmapHashes4Test[[]string{"hash", "low3bits", "constant"}[h%3]]
		pmapLayers(t, ops, hash)
	})
}
