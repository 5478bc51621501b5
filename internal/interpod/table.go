package interpod

import (
	"unique"
	"unsafe"

	"github.com/schedkit/schedkit/internal/selector"
)

// ValueTable maps topology values (interned label values, as a node's
// []selector.Label holds them) to an int64 (a Domains' totals, times a
// multiplier, summed): a flat open-addressing table
// (linear probing) keyed by the handle's pointer, so that a node's look-up
// is one multiply and, mostly, one slot read, without reading or hashing
// the string. A [Filter] or [Score] builds one per topology key when it is
// prepared, from the index's Domains (Domains.Each) or by counting, and
// only reads it afterwards. The zero ValueTable is empty and ready.
//
// Keys are handles, not pointers as integers, so the table keeps the
// values it names alive (a handle's pointer is never reused for another
// string while the handle lives). Costs: get O(1) expected; upd O(1)
// amortised, allocating when the table grows (it doubles at three quarters full).
type ValueTable struct {
	keys  []unique.Handle[string]
	vals  []int64
	shift uint8 // 64 − log2(len(keys))
	n     int
}

// handleHash mixes a handle's pointer (Fibonacci hashing; the table
// takes the top bits).
func handleHash(v unique.Handle[string]) uint64 {
	return uint64(*(*uintptr)(unsafe.Pointer(&v))) * 0x9E3779B97F4A7C15
}

// get returns v's value (0 and false when absent).
func (t *ValueTable) get(v unique.Handle[string]) (int64, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.keys) - 1
	for i := int(handleHash(v) >> t.shift); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case v:
			return t.vals[i], true
		case unique.Handle[string]{}:
			return 0, false
		}
	}
}

// upd returns a pointer to v's value, inserting v with 0 if absent. The
// pointer is valid until the next upd.
func (t *ValueTable) upd(v unique.Handle[string]) *int64 {
	if 4*(t.n+1) > 3*len(t.keys) {
		t.grow(max(16, 2*len(t.keys)))
	}
	mask := len(t.keys) - 1
	for i := int(handleHash(v) >> t.shift); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case v:
			return &t.vals[i]
		case unique.Handle[string]{}:
			t.keys[i] = v
			t.n++
			return &t.vals[i]
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

// reserve makes room for n more entries without growing.
func (t *ValueTable) reserve(n int) {
	size := 16
	for 3*size < 4*(t.n+n) {
		size *= 2
	}
	if size > len(t.keys) {
		t.grow(size)
	}
}

func (t *ValueTable) grow(size int) {
	keys, vals := t.keys, t.vals
	t.keys, t.vals, t.n = make([]unique.Handle[string], size), make([]int64, size), 0
	t.shift = uint8(64 - log2(size))
	for i, k := range keys {
		if k != (unique.Handle[string]{}) {
			*t.upd(k) = vals[i]
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

// addDomains adds mult × each total of d to t.
func (t *ValueTable) addDomains(d Domains, mult int64) {
	t.reserve(d.Len())
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
	*ts = append(*ts, keyTable{key: key})
	return &(*ts)[len(*ts)-1].t
}

// valueOf returns the value of label key in ls.
func valueOf(ls []selector.Label, key unique.Handle[string]) (unique.Handle[string], bool) {
	return selector.LabelValue(ls, key)
}
