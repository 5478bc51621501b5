package reserve

import (
	"hash/maphash"

	"github.com/schedkit/schedkit/snapshot"
)

// podTable maps pod keys to record indexes: open addressing with linear
// probing and backward-shift deletion (no tombstones, so a steady stream of
// inserts and deletes never rehashes or allocates). Each slot keeps the
// key's 64-bit hash, so a probe compares strings only on a full-hash match,
// and one hash computed per ledger call serves every table it touches
// (a Reserve hashes the pod key once instead of three times).
//
// Load factor at most 1/2; growing doubles the slots (amortised O(1)).
// Not safe for concurrent use (the ledger's mutex guards it).
type podTable struct {
	tags  []uint8   // per slot: 0 empty, else tagOf(hash); 64 slots per cache line
	slots []podSlot // len(slots) == len(tags), 0 or a power of two
	n     int
}

// tagOf is a slot's one-byte summary (top 7 bits of the hash, high bit
// set): a probe scans the dense tag array and reads a 16-byte slot only on
// a tag match, so a miss in a table of millions of pods costs one cache
// line instead of several.
func tagOf(h uint64) uint8 { return uint8(h>>57) | 0x80 }

type podSlot struct {
	hash uint64
	idx  int32 // record index + 1; 0 marks an empty slot
}

var keySeed = maphash.MakeSeed()

// hashKey hashes a pod key; O(len(namespace) + len(name)), allocates
// nothing.
func hashKey(k snapshot.PodKey) uint64 {
	return maphash.String(keySeed, k.Namespace)*0x9E3779B97F4A7C15 ^ maphash.String(keySeed, k.Name)
}

// find returns the record index stored for key k with hash h, and the slot
// where it is (or where it would be inserted).
func (t *podTable) find(h uint64, k snapshot.PodKey, recs []podRec) (idx int32, pos int, ok bool) {
	if len(t.slots) == 0 {
		return -1, -1, false
	}
	mask := uint64(len(t.slots) - 1)
	tag := tagOf(h)
	for p := h & mask; ; p = (p + 1) & mask {
		switch t.tags[p] {
		case 0:
			return -1, int(p), false
		case tag:
			if s := &t.slots[p]; s.hash == h && recs[s.idx-1].key == k {
				return s.idx - 1, int(p), true
			}
		}
	}
}

// get returns the record index of key k with hash h.
func (t *podTable) get(h uint64, k snapshot.PodKey, recs []podRec) (int32, bool) {
	idx, _, ok := t.find(h, k, recs)
	return idx, ok
}

// insert stores idx for a key with hash h that is not in the table.
func (t *podTable) insert(h uint64, idx int32) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	p := h & mask
	for t.tags[p] != 0 {
		p = (p + 1) & mask
	}
	t.tags[p] = tagOf(h)
	t.slots[p] = podSlot{hash: h, idx: idx + 1}
	t.n++
}

// remove deletes the key with hash h and record index idx, if present.
func (t *podTable) remove(h uint64, idx int32) {
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
	t.tags[hole], t.slots[hole] = 0, podSlot{}
	t.n--
}

func (t *podTable) grow() {
	old := t.slots
	size := max(16, 2*len(old))
	t.tags = make([]uint8, size)
	t.slots = make([]podSlot, size)
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

// len is the number of keys stored.
func (t *podTable) len() int { return t.n }

// each calls f with every stored record index, in table order.
func (t *podTable) each(f func(idx int32)) {
	for _, s := range t.slots {
		if s.idx != 0 {
			f(s.idx - 1)
		}
	}
}
