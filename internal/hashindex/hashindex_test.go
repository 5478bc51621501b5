package hashindex

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// lookup returns the indexes stored under hash h, in probe order.
func lookup(t *Table, h uint64) []int32 {
	var out []int32
	for p := t.Start(h); ; {
		i, next := t.Match(h, p)
		if i < 0 {
			return out
		}
		out = append(out, i)
		p = next
	}
}

// TestTableMatchesMap drives a Table and a map with the same random
// inserts and removes — with real hashes, and with hashes forced onto 4
// tags sharing the last home slot (probe runs wrap around, tags and full
// hashes collide) — and checks every key's look-up, the length, Each, and
// that a Clone taken midway is unaffected by later changes.
func TestTableMatchesMap(t *testing.T) {
	for _, colliding := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(1, 2))
		var tab Table
		ref := map[int32]uint64{} // index -> hash
		hashOf := map[int32]uint64{}
		var clone Table
		var cloneRef map[int32]uint64
		for step := range 100_000 {
			idx := int32(rng.IntN(500))
			h, ok := hashOf[idx]
			if !ok {
				h = rng.Uint64()
				if colliding {
					h = (1<<32-1-uint64(rng.IntN(4)))<<32 | uint64(rng.IntN(8))
				}
				hashOf[idx] = h
			}
			if _, in := ref[idx]; in {
				tab.Remove(h, idx)
				delete(ref, idx)
			} else {
				tab.Insert(h, idx)
				ref[idx] = h
			}
			require.Equal(t, len(ref), tab.Len(), "step %d", step)
			require.LessOrEqual(t, 2*tab.Len(), tab.Slots(), "step %d: load above 1/2", step)
			if step%997 == 0 {
				for i, h := range hashOf {
					_, in := ref[i]
					require.Equal(t, in, contains(lookup(&tab, h), i), "step %d: index %d", step, i)
				}
			}
			if step == 50_000 {
				clone = tab.Clone()
				cloneRef = map[int32]uint64{}
				for i, h := range ref {
					cloneRef[i] = h
				}
			}
		}
		seen := map[int32]bool{}
		tab.Each(func(i int32) { seen[i] = true })
		require.Len(t, seen, len(ref))
		for i := range ref {
			require.True(t, seen[i], "Each misses %d", i)
		}
		require.Equal(t, len(cloneRef), clone.Len())
		for i, h := range cloneRef {
			require.True(t, contains(lookup(&clone, h), i), "clone lost %d", i)
		}
	}
}

func contains(s []int32, x int32) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// TestZeroTable: the zero Table is empty and usable.
func TestZeroTable(t *testing.T) {
	var tab Table
	require.Empty(t, lookup(&tab, 42))
	tab.Remove(42, 1)
	tab.Insert(42, 1)
	require.Equal(t, []int32{1}, lookup(&tab, 42))
	require.Equal(t, 16, tab.Slots())
}

// TestPair: the pair hash separates the two strings.
func TestPair(t *testing.T) {
	require.NotEqual(t, Pair("a", "b/c"), Pair("a/b", "c"))
	require.NotEqual(t, Pair("ns", "a"), Pair("a", "ns"))
	require.Equal(t, Pair("ns", "a"), Pair("ns", "a"))
}
