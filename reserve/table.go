package reserve

import (
	"slices"

	"github.com/schedkit/schedkit/internal/hashindex"
	"github.com/schedkit/schedkit/snapshot"
)

// The ledger's tables are internal/hashindex tables: they store the
// index of a record or node under its key's hash, and the typed tables
// below compare the key held at the index on a tag match, so one hash
// computed per ledger call serves every table it touches.

// podTable maps pod keys, hashed with nodeview.HashKey (cached as
// nodeview.KeyHash), to indexes into the ledger's records.
type podTable struct{ hashindex.Table }

// get returns the record index of key k with hash h. O(1) expected.
func (t *podTable) get(h uint64, k snapshot.PodKey, recs []podRec) (int32, bool) {
	for p := t.Start(h); ; {
		i, next := t.Match(h, p)
		if i < 0 || recs[i].key == k {
			return i, i >= 0
		}
		p = next
	}
}

// nameTable maps node names, hashed with [hashName], to indexes into the
// ledger's nodes (the name is nodes[i].name).
type nameTable struct{ hashindex.Table }

// hashName hashes a node name; process-local, O(len(name)), allocates
// nothing.
func hashName(name string) uint64 { return hashindex.String(name) }

// get returns the index of the node called name, whose hash is h.
// O(1) expected.
func (t *nameTable) get(h uint64, name string, nodes []nodeAgg) (int32, bool) {
	for p := t.Start(h); ; {
		i, next := t.Match(h, p)
		if i < 0 || nodes[i].name == name {
			return i, i >= 0
		}
		p = next
	}
}

// sortedNames returns the names of the nodes in t, sorted.
// O(n log n); allocates the result.
func (t *nameTable) sortedNames(nodes []nodeAgg) []string {
	out := make([]string, 0, t.Len())
	t.Each(func(idx int32) { out = append(out, nodes[idx].name) })
	slices.Sort(out)
	return out
}
