package snapshot

import (
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// nameIndex maps node names to node indexes for one state: an immutable
// table shared by the states made from it plus a small delta table owned
// by one writer token, copied (two flat arrays) by the first write of
// another token, and folded into a new table when it is full and holds
// more than 32 + NumNodes/8 entries (amortised O(1) per write, like
// ovmap).
//
// A look-up takes a candidate index from a table and checks it against
// the name of the node at that index, which the caller reads next anyway.
// So the tables may be stale: an entry of a node that has since been
// removed or moved fails the check and costs nothing but the check; only
// a node whose current index the shared table does not give (added or
// moved since it was built) needs a delta entry, and a removal needs
// none.
//
// Names are keyed twice: by the address of their bytes (the string
// NodeInfo.Name returns, which set is given) and by their content. A name
// passed as NodeInfo.Name() — the usual case: a caller picks a node and
// binds a pod to it — is found by one probe without reading its bytes
// (on a cold node of a large cluster, hashing them was a cache miss of
// its own, before a Go map's group and slot); any other string with the
// same content is found by its content hash. Both checks are exact: same
// address and length, or equal content.
type nameIndex struct {
	table *nameTable
	delta *nameTable // nil when empty
	owner uint64     // token allowed to change delta in place
}

// nameTable is two open-addressing tables of 2^k slots, linear probing:
// at most 2^(k-1) entries (load <= 1/2).
type nameTable struct {
	byAddr    []nameSlot // slot from the name bytes' address
	byContent []nameSlot // slot from maphash of the name
	shift     uint8      // 64 - k
	n         int        // entries inserted
}

// nameSlot is one table entry: 8 bytes, 8 per cache line.
type nameSlot struct {
	tag  uint32 // low 32 bits of the address, or high 32 bits of the content hash
	idx1 int32  // node index + 1; 0 marks an empty slot
}

var nameSeed = maphash.MakeSeed()

func addrOf(name string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(name))) }

// addrHash is a Fibonacci hash of an address; its top bits pick a slot.
func addrHash(a uintptr) uint64 { return uint64(a) * 0x9e3779b97f4a7c15 }

func newNameTable(k int) *nameTable {
	return &nameTable{byAddr: make([]nameSlot, 1<<k), byContent: make([]nameSlot, 1<<k), shift: uint8(64 - k)}
}

// insert adds an entry for the node at index i whose name is name.
func (t *nameTable) insert(name string, i int) {
	mask := uint64(len(t.byAddr) - 1)
	a := addrOf(name)
	p := addrHash(a) >> t.shift
	for t.byAddr[p].idx1 != 0 {
		p = (p + 1) & mask
	}
	t.byAddr[p] = nameSlot{tag: uint32(a), idx1: int32(i + 1)}
	h := maphash.String(nameSeed, name)
	p = h & mask
	for t.byContent[p].idx1 != 0 {
		p = (p + 1) & mask
	}
	t.byContent[p] = nameSlot{tag: uint32(h >> 32), idx1: int32(i + 1)}
	t.n++
}

// byAddress returns the index of the node of s whose name string has its
// bytes at a and the length of name (and so is name), if t has an entry
// for it.
func (t *nameTable) byAddress(s *state, a uintptr, name string) (int, bool) {
	mask := uint64(len(t.byAddr) - 1)
	for p := addrHash(a) >> t.shift; ; p = (p + 1) & mask {
		e := t.byAddr[p]
		if e.idx1 == 0 {
			return 0, false
		}
		if i := int(e.idx1 - 1); e.tag == uint32(a) && i < s.n {
			if n := s.node(i).name; addrOf(n) == a && len(n) == len(name) {
				return i, true
			}
		}
	}
}

// byHash returns the index of the node of s called name, whose maphash
// is h, if t has an entry for it.
func (t *nameTable) byHash(s *state, h uint64, name string) (int, bool) {
	mask := uint64(len(t.byContent) - 1)
	for p := h & mask; ; p = (p + 1) & mask {
		e := t.byContent[p]
		if e.idx1 == 0 {
			return 0, false
		}
		if i := int(e.idx1 - 1); e.tag == uint32(h>>32) && i < s.n && s.node(i).name == name {
			return i, true
		}
	}
}

// index returns the index of the node called name in s.
func (x *nameIndex) index(s *state, name string) (int, bool) {
	t, d := x.table, x.delta
	if t == nil && d == nil {
		return 0, false
	}
	a := addrOf(name)
	if t != nil {
		if i, ok := t.byAddress(s, a, name); ok {
			return i, true
		}
	}
	if d != nil {
		if i, ok := d.byAddress(s, a, name); ok {
			return i, true
		}
	}
	h := maphash.String(nameSeed, name)
	if t != nil {
		if i, ok := t.byHash(s, h, name); ok {
			return i, true
		}
	}
	if d != nil {
		return d.byHash(s, h, name)
	}
	return 0, false
}

// set records that the node at index i of s has the name string name
// (its NodeInfo.name). Stale entries are left in place. A full delta
// grows (reading the names of the nodes its entries give), or is folded
// into a new shared table once it holds more than 32 + NumNodes/8
// entries.
func (x *nameIndex) set(s *state, name string, i int) {
	d := x.delta
	switch {
	case d == nil:
		d = newNameTable(4)
	case x.owner != s.tok:
		c := *d
		c.byAddr = append([]nameSlot(nil), d.byAddr...)
		c.byContent = append([]nameSlot(nil), d.byContent...)
		d = &c
	}
	x.delta, x.owner = d, s.tok
	if 2*(d.n+1) > len(d.byAddr) {
		if d.n+1 > 32+s.n/8 {
			x.table, x.delta = buildNameTable(s), nil
			return
		}
		x.delta = d.grown(s)
		d = x.delta
	}
	d.insert(name, i)
}

// grown returns a table twice the size of d with an entry for the node
// of s at each index d has an entry for (a stale entry becomes one for
// the node now at its index, or goes if there is none).
func (d *nameTable) grown(s *state) *nameTable {
	g := newNameTable(64 - int(d.shift) + 1)
	for _, e := range d.byAddr {
		if i := int(e.idx1 - 1); e.idx1 != 0 && i < s.n {
			g.insert(s.node(i).name, i)
		}
	}
	return g
}

// buildNameTable returns a table of s's nodes: O(NumNodes).
func buildNameTable(s *state) *nameTable {
	if s.n == 0 {
		return nil
	}
	t := newNameTable(max(bits.Len(uint(2*s.n-1)), 4)) // 2^k >= 2n
	for i := range s.n {
		t.insert(s.node(i).name, i)
	}
	return t
}
