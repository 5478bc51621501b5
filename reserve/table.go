package reserve

import (
	"hash/maphash"
	"slices"

	"github.com/schedkit/schedkit/snapshot"
)

// indexTable maps 64-bit hashes to int32 indexes (of ledger records or
// nodes): open addressing with linear probing and backward-shift deletion
// (no tombstones, so a steady stream of inserts and deletes never rehashes
// or allocates). It stores no keys: each slot keeps the key's full hash,
// and the typed tables built on it ([podTable], [nameTable]) compare the
// key held at the index only on a full-hash match, so one hash computed
// per ledger call serves every table it touches.
//
// Load factor at most 1/2; growing doubles the slots (amortised O(1)).
// Not safe for concurrent use (the ledger's mutex guards it).
type indexTable struct {
	tags  []uint8     // per slot: 0 empty, else tagOf(hash); 64 slots per cache line
	slots []indexSlot // len(slots) == len(tags), 0 or a power of two
	n     int
}

// tagOf is a slot's one-byte summary (top 7 bits of the hash, high bit
// set): a probe scans the dense tag array and reads a 16-byte slot only on
// a tag match, so a miss in a table of millions of keys costs one cache
// line instead of several.
func tagOf(h uint64) uint8 { return uint8(h>>57) | 0x80 }

type indexSlot struct {
	hash uint64
	idx  int32 // stored index + 1; 0 marks an empty slot
}

// match returns the index stored in the first slot at or after probe
// position p whose full hash is h, and the position to resume from if the
// caller's key comparison fails; -1 when the probe run ends. Start with
// p = h.
func (t *indexTable) match(h, p uint64) (idx int32, next uint64) {
	if len(t.slots) == 0 {
		return -1, 0
	}
	mask := uint64(len(t.slots) - 1)
	tag := tagOf(h)
	for p &= mask; ; p = (p + 1) & mask {
		switch t.tags[p] {
		case 0:
			return -1, 0
		case tag:
			if s := &t.slots[p]; s.hash == h {
				return s.idx - 1, p + 1
			}
		}
	}
}

// insert stores idx for a key with hash h that is not in the table.
func (t *indexTable) insert(h uint64, idx int32) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	p := h & mask
	for t.tags[p] != 0 {
		p = (p + 1) & mask
	}
	t.tags[p] = tagOf(h)
	t.slots[p] = indexSlot{hash: h, idx: idx + 1}
	t.n++
}

// remove deletes the entry with hash h and index idx, if present.
func (t *indexTable) remove(h uint64, idx int32) {
	if len(t.slots) == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	tag := tagOf(h)
	p := h & mask
	for {
		switch t.tags[p] {
		case 0:
			return
		case tag:
			if t.slots[p].idx == idx+1 {
				goto found
			}
		}
		p = (p + 1) & mask
	}
found:
	// Backward-shift: move later entries of the probe run into the hole
	// unless their home slot lies cyclically in (hole, their slot].
	hole := p
	for j := (hole + 1) & mask; t.tags[j] != 0; j = (j + 1) & mask {
		home := t.slots[j].hash & mask
		if (j-home)&mask >= (j-hole)&mask {
			t.tags[hole], t.slots[hole] = t.tags[j], t.slots[j]
			hole = j
		}
	}
	t.tags[hole], t.slots[hole] = 0, indexSlot{}
	t.n--
}

func (t *indexTable) grow() {
	old := t.slots
	size := max(16, 2*len(old))
	t.tags = make([]uint8, size)
	t.slots = make([]indexSlot, size)
	mask := uint64(size - 1)
	for _, s := range old {
		if s.idx == 0 {
			continue
		}
		p := s.hash & mask
		for t.tags[p] != 0 {
			p = (p + 1) & mask
		}
		t.tags[p] = tagOf(s.hash)
		t.slots[p] = s
	}
}

// len is the number of entries stored.
func (t *indexTable) len() int { return t.n }

// each calls f with every stored index, in table order.
func (t *indexTable) each(f func(idx int32)) {
	for _, s := range t.slots {
		if s.idx != 0 {
			f(s.idx - 1)
		}
	}
}

// podTable maps pod keys, hashed with [snapshot.PodKey.Hash] (cached as
// nodeview.KeyHash), to indexes into the ledger's records.
type podTable struct{ indexTable }

// get returns the record index of key k with hash h. O(1) expected.
func (t *podTable) get(h uint64, k snapshot.PodKey, recs []podRec) (int32, bool) {
	for p := h; ; {
		i, next := t.match(h, p)
		if i < 0 || recs[i].key == k {
			return i, i >= 0
		}
		p = next
	}
}

// nameTable maps node names, hashed with [hashName], to indexes into the
// ledger's nodes (the name is nodes[i].name).
type nameTable struct{ indexTable }

var nameSeed = maphash.MakeSeed()

// hashName hashes a node name; process-local, O(len(name)), allocates
// nothing.
func hashName(name string) uint64 { return maphash.String(nameSeed, name) }

// get returns the index of the node called name, whose hash is h.
// O(1) expected.
func (t *nameTable) get(h uint64, name string, nodes []nodeAgg) (int32, bool) {
	for p := h; ; {
		i, next := t.match(h, p)
		if i < 0 || nodes[i].name == name {
			return i, i >= 0
		}
		p = next
	}
}

// sortedNames returns the names of the nodes in t, sorted.
// O(n log n); allocates the result.
func (t *nameTable) sortedNames(nodes []nodeAgg) []string {
	out := make([]string, 0, t.len())
	t.each(func(idx int32) { out = append(out, nodes[idx].name) })
	slices.Sort(out)
	return out
}
