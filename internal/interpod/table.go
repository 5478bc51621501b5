package interpod

import (
	"unique"
	"unsafe"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/selector"
)

// ValueTable maps topology values (interned label values, as a node's
// []selector.Label holds them) to an int64 (Domains' totals times a
// multiplier, summed): a flat open-addressing table (linear probing)
// keyed by the handle's pointer, so that a node's look-up is one multiply
// and, mostly, one slot read, without reading or hashing the string. A
// [Filter] or [Score] builds one per topology key when it is prepared,
// from the index's Domains (Domains.AddTo) or by counting, and only reads
// it afterwards. The zero ValueTable is empty and ready; not safe for
// concurrent writes, reads of a built one are.
//
// Keys are handles, not pointers as integers, so the table keeps the
// values it names alive (a handle's pointer is never reused for another
// string while the handle lives). Costs: Get O(1) expected; Add O(1)
// amortised, allocating when the table grows (it doubles at 3/4 full;
// 17 bytes per slot: the slot and a byte of the seen bits).
type ValueTable struct {
	slots []slot
	// seen has a bit per 8 slots' worth of hash prefixes (8 × len(slots)
	// bits, the hash's top bits pick one), set for every key: a look-up
	// of an absent value (most nodes' for a hostname table) mostly stops
	// at a clear bit in a table an eighth of the slots' size, instead of
	// probing the slots to an empty one.
	seen  []uint64
	shift uint8 // 64 − log2(len(slots))
	n     int
	// used: the indices of the occupied slots, so that reset clears
	// O(n) slots, not the whole (possibly larger, reused) table.
	used []int32
}

// slot is a key and its value side by side: a hit reads one cache line.
type slot struct {
	v unique.Handle[string]
	n int64
}

// HandleHash is a hash of an interned value by its handle's pointer,
// for tables and tries keyed by topology values: it reads neither the
// string nor its bytes (cold memory on a node's first read in a cycle).
// Its top bits are Fibonacci hashing of the pointer (ValueTable takes
// them); the product's high bits are folded into the low 35, so that a
// trie taking low bits first (snapshot's pmap) does not see the
// pointer's alignment zeros. Stable for a handle while it is live (the
// pointer is not reused for another string); not stable across
// processes, so that iteration orders keyed by it are not either.
// O(1), no allocation.
func HandleHash(v unique.Handle[string]) uint64 {
	h := uint64(*(*uintptr)(unsafe.Pointer(&v))) * 0x9E3779B97F4A7C15
	return h ^ h>>29
}

// get returns v's value (0 and false when absent).
func (t *ValueTable) get(v unique.Handle[string]) (int64, bool) {
	if t.n == 0 {
		return 0, false
	}
	return t.getHashed(v, HandleHash(v))
}

// maySee reports whether a key of hash h may be in t, which is not
// empty: false when the seen bits rule it out. Inlinable.
func (t *ValueTable) maySee(h uint64) bool {
	b := h >> (t.shift - 3)
	return t.seen[b>>6]&(1<<(b&63)) != 0
}

// getHashed is get for a non-empty t, given h = HandleHash(v).
func (t *ValueTable) getHashed(v unique.Handle[string], h uint64) (int64, bool) {
	if !t.maySee(h) {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i := int(h >> t.shift); ; i = (i + 1) & mask {
		switch s := &t.slots[i]; s.v {
		case v:
			return s.n, true
		case unique.Handle[string]{}:
			return 0, false
		}
	}
}

// Get returns v's value, 0 if absent. O(1) expected.
func (t *ValueTable) Get(v unique.Handle[string]) int64 {
	n, _ := t.get(v)
	return n
}

// Len returns the number of values in t.
func (t *ValueTable) Len() int { return t.n }

// Add adds n to v's value, inserting v if absent. O(1) amortised.
func (t *ValueTable) Add(v unique.Handle[string], n int64) { *t.upd(v) += n }

// upd returns a pointer to v's value, inserting v with 0 if absent. The
// pointer is valid until the next upd.
func (t *ValueTable) upd(v unique.Handle[string]) *int64 {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow(max(16, 2*len(t.slots)))
	}
	mask := len(t.slots) - 1
	h := HandleHash(v)
	for i := int(h >> t.shift); ; i = (i + 1) & mask {
		switch s := &t.slots[i]; s.v {
		case v:
			return &s.n
		case unique.Handle[string]{}:
			s.v = v
			t.n++
			t.used = append(t.used, int32(i))
			b := h >> (t.shift - 3)
			t.seen[b>>6] |= 1 << (b & 63)
			return &s.n
		}
	}
}

// reserve makes room for n entries in all without growing.
func (t *ValueTable) reserve(n int) {
	size := 16
	for 3*size < 4*n {
		size *= 2
	}
	if size > len(t.slots) {
		t.grow(size)
	}
}

// reset empties t and keeps its storage for reuse: O(entries) slot and
// seen-word clears, whatever its capacity; no allocation.
func (t *ValueTable) reset() {
	for _, i := range t.used {
		b := HandleHash(t.slots[i].v) >> (t.shift - 3)
		t.seen[b>>6] = 0
		t.slots[i] = slot{}
	}
	t.used, t.n = t.used[:0], 0
}

func (t *ValueTable) grow(size int) {
	old := t.slots
	t.slots, t.n, t.used = make([]slot, size), 0, t.used[:0]
	t.seen = make([]uint64, size/8)
	t.shift = uint8(64 - log2(size))
	for _, s := range old {
		if s.v != (unique.Handle[string]{}) {
			*t.upd(s.v) = s.n
		}
	}
}

func log2(n int) int {
	b := 0
	for 1<<b < n {
		b++
	}
	return b
}

// addDomains adds mult × each total of d to t, sized for d's values
// (more only when d's values are not t's).
func (t *ValueTable) addDomains(d Domains, mult int64) {
	t.reserve(max(t.n, d.Len()))
	d.AddTo(t, mult)
}

// keyTable is a ValueTable for the values of one topology key.
type keyTable struct {
	key unique.Handle[string]
	t   ValueTable
}

// tableFor returns the table of key in *ts, appended if new.
func tableFor(ts *[]keyTable, key unique.Handle[string]) *ValueTable {
	for i := range *ts {
		if (*ts)[i].key == key {
			return &(*ts)[i].t
		}
	}
	if len(*ts) < cap(*ts) {
		// A released table's storage, emptied by resetTables.
		*ts = (*ts)[:len(*ts)+1]
		(*ts)[len(*ts)-1].key = key
	} else {
		*ts = append(*ts, keyTable{key: key})
	}
	return &(*ts)[len(*ts)-1].t
}

// resetTables empties the tables of ts and returns ts[:0], their storage
// kept beyond the length for tableFor. O(entries); no allocation.
func resetTables(ts []keyTable) []keyTable {
	for i := range ts {
		ts[i].key = unique.Handle[string]{}
		ts[i].t.reset()
	}
	return ts[:0]
}

// hostnameKey is the handle of the kubernetes.io/hostname label key.
var hostnameKey = layout.HostnameKey

// NodeValue returns a node's value of label key: from h, its layout head,
// for the keys it holds (layout.Head.Value: the hostname and the zone),
// else the value in ls, its labels.
func NodeValue(h *layout.Head, ls []selector.Label, key unique.Handle[string]) (unique.Handle[string], bool) {
	if v, ok, in := h.Value(key); in {
		return v, ok
	}
	return selector.LabelValue(ls, key)
}

// needsLabels reports whether some key of ts is neither the hostname
// nor the zone key.
func needsLabels(ts []keyTable) bool {
	for i := range ts {
		if !layout.InHead(ts[i].key) {
			return true
		}
	}
	return false
}

// valueOf returns the value of label key in ls.
func valueOf(ls []selector.Label, key unique.Handle[string]) (unique.Handle[string], bool) {
	return selector.LabelValue(ls, key)
}
