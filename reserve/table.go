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
	slots []podSlot // len is 0 or a power of two
	n     int
}

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
	for p := h & mask; ; p = (p + 1) & mask {
		s := &t.slots[p]
		if s.idx == 0 {
			return -1, int(p), false
		}
		if s.hash == h && recs[s.idx-1].key == k {
			return s.idx - 1, int(p), true
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
	for t.slots[p].idx != 0 {
		p = (p + 1) & mask
	}
	t.slots[p] = podSlot{hash: h, idx: idx + 1}
	t.n++
}

// remove deletes the key with hash h and record index idx, if present.
func (t *podTable) remove(h uint64, idx int32) {
	if len(t.slots) == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	p := h & mask
	for {
		s := t.slots[p]
		if s.idx == 0 {
			return
		}
		if s.idx == idx+1 {
			break
		}
		p = (p + 1) & mask
	}
	// Backward-shift: move later entries of the probe run into the hole
	// unless their home slot lies cyclically in (hole, their slot].
	hole := p
	for j := (hole + 1) & mask; t.slots[j].idx != 0; j = (j + 1) & mask {
		home := t.slots[j].hash & mask
		if (j-home)&mask >= (j-hole)&mask {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = podSlot{}
	t.n--
}

func (t *podTable) grow() {
	old := t.slots
	size := max(16, 2*len(old))
	t.slots = make([]podSlot, size)
	mask := uint64(size - 1)
	for _, s := range old {
		if s.idx == 0 {
			continue
		}
		p := s.hash & mask
		for t.slots[p].idx != 0 {
			p = (p + 1) & mask
		}
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
