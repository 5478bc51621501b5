// Package hashindex is the one open-addressing hash table of schedkit's
// packages: it maps 64-bit hashes to int32 indexes (of nodes, ledger
// records) and stores no keys — the caller compares the key held at the
// index on a tag match — so one hash computed per call serves every table
// it touches. snapshot's node-name index (keyed by a name's address and by
// its content) and reserve's pod and node tables are built on it.
//
// Layer: the bottom. hashindex imports no schedkit package.
//
// A [Table] has 2^k slots of 8 bytes (8 per cache line): the hash's top 32
// bits as a tag and the index + 1 (0: empty). A key's home slot is the
// hash's top k bits; collisions probe linearly. The load factor stays at
// most 1/2: [Table.Insert] doubles the slots when needed (amortised O(1)).
// [Table.Remove] shifts later entries of the probe run back (no
// tombstones), so a steady stream of inserts and removes never rehashes or
// allocates. Not safe for concurrent writes; reads of a table nobody
// writes are.
package hashindex

import (
	"hash/maphash"
)

// Table maps hashes to indexes. The zero Table is empty and ready to use.
type Table struct {
	slots []slot // 0 or 2^k slots
	shift uint8  // 64 - k
	n     int
}

type slot struct {
	tag  uint32 // the hash's top 32 bits (its home slot is their top k bits)
	idx1 int32  // stored index + 1; 0 marks an empty slot
}

// New returns an empty table of 2^k slots, k in [4, 32]: room for 2^(k-1)
// entries before it grows. O(2^k); allocates the slots.
func New(k int) Table {
	return Table{slots: make([]slot, 1<<k), shift: uint8(64 - k)}
}

// Len is the number of entries stored; O(1).
func (t *Table) Len() int { return t.n }

// Slots is the number of slots (0 or a power of two); O(1).
func (t *Table) Slots() int { return len(t.slots) }

func tagOf(h uint64) uint32 { return uint32(h >> 32) }

// home is the home slot of an entry with tag tag (k <= 32).
func (t *Table) home(tag uint32) uint64 { return uint64(tag) << 32 >> t.shift }

// Start returns the probe position of a look-up of hash h, for [Table.Match].
func (t *Table) Start(h uint64) uint64 {
	if len(t.slots) == 0 {
		return 0
	}
	return h >> t.shift
}

// Match returns the index stored in the first slot at or after probe
// position p whose tag is h's, and the position to resume from if the
// caller's key comparison fails; -1 when the probe run ends. Start with
// p = Start(h):
//
//	for p := t.Start(h); ; {
//		i, next := t.Match(h, p)
//		if i < 0 || keyAt(i) == key {
//			return i, i >= 0
//		}
//		p = next
//	}
//
// O(1) expected; allocates nothing.
func (t *Table) Match(h, p uint64) (idx int32, next uint64) {
	if len(t.slots) == 0 {
		return -1, 0
	}
	mask := uint64(len(t.slots) - 1)
	tag := tagOf(h)
	for p &= mask; ; p = (p + 1) & mask {
		s := t.slots[p]
		if s.idx1 == 0 {
			return -1, 0
		}
		if s.tag == tag {
			return s.idx1 - 1, p + 1
		}
	}
}

// Insert stores idx (>= 0) for a key with hash h, growing the table first
// if it would be more than half full. It does not look for an entry
// already there: the caller inserts a key once. O(1) amortised.
func (t *Table) Insert(h uint64, idx int32) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	t.put(slot{tag: tagOf(h), idx1: idx + 1})
	t.n++
}

func (t *Table) put(s slot) {
	mask := uint64(len(t.slots) - 1)
	p := t.home(s.tag)
	for t.slots[p].idx1 != 0 {
		p = (p + 1) & mask
	}
	t.slots[p] = s
}

// Remove deletes the entry with hash h and index idx, if present. O(1)
// expected; allocates nothing.
func (t *Table) Remove(h uint64, idx int32) {
	if len(t.slots) == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	want := slot{tag: tagOf(h), idx1: idx + 1}
	p := t.home(want.tag)
	for t.slots[p] != want {
		if t.slots[p].idx1 == 0 {
			return
		}
		p = (p + 1) & mask
	}
	// Backward-shift: move later entries of the probe run into the hole
	// unless their home slot lies cyclically in (hole, their slot].
	hole := p
	for j := (hole + 1) & mask; t.slots[j].idx1 != 0; j = (j + 1) & mask {
		home := t.home(t.slots[j].tag)
		if (j-home)&mask >= (j-hole)&mask {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = slot{}
	t.n--
}

func (t *Table) grow() {
	old := t.slots
	k := 4
	for 1<<k < 2*len(old) {
		k++
	}
	*t = Table{slots: make([]slot, 1<<k), shift: uint8(64 - k), n: t.n}
	for _, s := range old {
		if s.idx1 != 0 {
			t.put(s)
		}
	}
}

// Clone returns a copy that shares no memory with t. O(slots).
func (t *Table) Clone() Table {
	c := *t
	c.slots = append([]slot(nil), t.slots...)
	return c
}

// Each calls f with every stored index, in table order. O(slots).
func (t *Table) Each(f func(idx int32)) {
	for _, s := range t.slots {
		if s.idx1 != 0 {
			f(s.idx1 - 1)
		}
	}
}

// seed is the process's hash seed: random per process, set once at
// initialisation and never changed, so it couples nothing; hashes are
// stable for the process lifetime only and must not be stored or sent.
var seed = maphash.MakeSeed()

// String hashes s. O(len(s)), allocates nothing, safe for concurrent use.
func String(s string) uint64 { return maphash.String(seed, s) }

// Pair hashes two strings, such as a pod's namespace and name: each is
// hashed separately and the two are mixed, so ("a", "b/c") and ("a/b",
// "c") are not systematically equal; like any hash, two pairs collide
// with probability about 2^-64, and callers compare keys on a match.
// O(len(a) + len(b)), allocates nothing, safe for concurrent use.
func Pair(a, b string) uint64 { return String(a)*0x9E3779B97F4A7C15 ^ String(b) }
