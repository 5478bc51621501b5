package interpod

import (
	"sync"
	"unique"
)

// Immutable reports whether cluster can never change (a
// *snapshot.Snapshot: every trie node of its index is frozen, no writer
// holds its token, and none is recycled while reachable); snapshot sets
// it in its init. A [Score] or [Filter] prepared on such a cluster may
// be kept after its Release and brought up to date for the next pod of
// the same recipe by diffing the two clusters' tries ([Differ]),
// instead of rebuilding its tables. O(1), no allocation.
var Immutable = func(cluster any) bool { return false }

// Differ is implemented by [Domains] that can compare themselves with
// an older version of the same group (the same term key and kind) from
// another immutable cluster.
type Differ interface {
	// AddDiff adds mult × (d's total − old's total) to t for every
	// value whose totals may differ, walking only the parts of the two
	// versions that are not shared; it adds nothing for a value whose
	// total is the same in both unless that value is in a part that
	// differs (then it adds mult × total and −mult × total, net 0). It
	// returns false, having added an unspecified part of the difference,
	// when old is not of d's kind or the walk passes budget entries.
	// Both versions must be immutable. O(entries of the parts that
	// differ); no allocation but t's.
	AddDiff(old Domains, t *ValueTable, mult int64, budget int) bool
}

// contrib is a matched term group of an [Index] (or the counts of an
// incoming term) and what one unit of its total is worth to the pod:
// for a Score, mult × each total of d added to the table of topology
// key key. kind and term name d's group across
// clusters: an existing pods' group's kind, or NumKinds for the counts of
// the pods an incoming term matches (Index.MatchCounts), and the term's
// key.
type contrib struct {
	key  unique.Handle[string]
	d    Domains
	mult int64
	kind Kind
	term string
}

// same reports whether c and o add the same group's totals with the
// same multiplier to the same table.
func (c *contrib) same(o *contrib) bool {
	return c.key == o.key && c.mult == o.mult && c.kind == o.kind && c.term == o.term
}

// memoSlots is how many released Scores (Filters) a memo keeps: one
// per recipe of the pods being scheduled (a few workloads interleave).
const memoSlots = 4

// memoStore keeps Scores or Filters released after a preparation on an
// immutable cluster from the index's totals alone, with their recipes:
// the next preparation of an equal recipe on an immutable cluster takes
// one and adds the differences of the groups' totals to its tables.
// Unlike the pools, the GC does not drop it: it holds at most memoSlots
// of them, their tables (as large as the largest cluster's topology
// values they were built for) and the tries of the cluster they were
// last prepared on (shared with its successors but for the parts that
// changed). Guarded by mu; an item is in the memo or in use, never both.
type memoStore[T interface {
	comparable
	recipeOf() []contrib
	pool()
}] struct {
	mu   sync.Mutex
	s    [memoSlots]T
	next int
}

var (
	scoreMemo  memoStore[*Score]
	filterMemo memoStore[*Filter]
)

// take removes and returns the memo's item of recipe rec (the zero T if
// none).
func (ms *memoStore[T]) take(rec []contrib) T {
	var zero T
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for i, m := range ms.s {
		if m != zero && sameRecipe(m.recipeOf(), rec) {
			ms.s[i] = zero
			return m
		}
	}
	return zero
}

// put keeps x (released, its tables intact) in the memo, replacing one
// of the same recipe, else an empty slot, else the slots in turn; a
// replaced item goes to its pool.
func (ms *memoStore[T]) put(x T) {
	var zero T
	ms.mu.Lock()
	at := -1
	for i, m := range ms.s {
		if m != zero && sameRecipe(m.recipeOf(), x.recipeOf()) {
			at = i
			break
		}
		if m == zero && at < 0 {
			at = i
		}
	}
	if at < 0 {
		at = ms.next
		ms.next = (ms.next + 1) % memoSlots
	}
	old := ms.s[at]
	ms.s[at] = x
	ms.mu.Unlock()
	if old != zero {
		old.pool()
	}
}

func sameRecipe(a, b []contrib) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].same(&b[i]) {
			return false
		}
	}
	return true
}

// updateTables brings keys, built from old on an older immutable
// cluster, to rec's totals (rec's groups are old's, in the same order):
// the differences of each group's versions, within a budget of half
// the entries a rebuild would insert (plus 128). It reports false, the
// tables then unusable, when a group cannot be diffed, the budget runs
// out, or a table holds more than twice its contributions' values plus
// 64 (values whose totals went to 0 stay as zero entries; a cluster
// whose values churn is rebuilt from time to time).
func updateTables(keys []keyTable, old, rec []contrib) bool {
	total := 0
	for i := range rec {
		total += rec[i].d.Len()
	}
	budget := total/2 + 128
	for i := range rec {
		nd, ok := rec[i].d.(Differ)
		if !ok {
			return false
		}
		var t *ValueTable
		for j := range keys {
			if keys[j].key == rec[i].key {
				t = &keys[j].t
				break
			}
		}
		if t == nil || !nd.AddDiff(old[i].d, t, rec[i].mult, budget) {
			return false
		}
	}
	for j := range keys {
		n := 0
		for i := range rec {
			if rec[i].key == keys[j].key {
				n += rec[i].d.Len()
			}
		}
		if keys[j].t.n > 2*n+64 {
			return false
		}
	}
	return true
}
