package snapshot

import (
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// nameIndex maps node names to node indexes for one state: an immutable
// table shared by the states made from it plus a small delta (Go maps)
// owned by one writer token, copied by the first write of another token
// and folded into a new table when it grows past 32 + NumNodes/8 entries
// (amortised O(1) per write, like ovmap).
//
// A look-up takes a candidate index from the table (or the delta) and
// checks it against the name of the node at that index, which the caller
// reads next anyway. So the table may be stale: an entry of a node that
// has since been removed or moved fails the check and costs nothing but
// the check; only a node whose current index the table does not give
// (added or moved since the table was built) needs a delta entry, and a
// removal needs none.
//
// Names are keyed twice: by the address of their bytes (the string
// NodeInfo.Name returns, which set is given) and by their content. A name
// passed as NodeInfo.Name() — the usual case: a caller picks a node and
// binds a pod to it — is found by one probe without reading its bytes
// (on a cold node of a large cluster, hashing them was a cache miss of
// its own, before the map's group and slot); any other string with the
// same content is found by its content hash. Both checks are exact:
// same address and length, or equal content.
type nameIndex struct {
	table *nameTable
	delta *nameDelta // nil when empty
	owner uint64     // token allowed to change delta in place
}

// nameDelta holds the names set since the table was built, by address
// and by content.
type nameDelta struct {
	byAddr    map[uintptr]int32
	byContent map[string]int32
}

// nameTable is two open-addressing tables of 2^k slots (k chosen for a
// load of at most 1/2), linear probing.
type nameTable struct {
	byAddr    []nameSlot // slot from the name bytes' address
	byContent []nameSlot // slot from maphash of the name
	shift     uint8      // 64 - k
}

// nameSlot is one table entry: 8 bytes, 8 per cache line.
type nameSlot struct {
	tag  uint32 // low 32 bits of the address, or high 32 bits of the content hash
	idx1 int32  // node index + 1; 0 marks an empty slot
}

var nameSeed = maphash.MakeSeed()

// addrHash is a Fibonacci hash of an address; its top bits pick a slot.
func addrHash(a uintptr) uint64 { return uint64(a) * 0x9e3779b97f4a7c15 }

// index returns the index of the node called name in s.
func (x *nameIndex) index(s *state, name string) (int, bool) {
	a := uintptr(unsafe.Pointer(unsafe.StringData(name)))
	t, d := x.table, x.delta
	if t != nil {
		mask := uint64(len(t.byAddr) - 1)
		for p := addrHash(a) >> t.shift; ; p = (p + 1) & mask {
			e := t.byAddr[p]
			if e.idx1 == 0 {
				break
			}
			if e.tag == uint32(a) {
				if i := int(e.idx1 - 1); s.isNamedAt(i, a, name) {
					return i, true
				}
			}
		}
	}
	if d != nil {
		if i, ok := d.byAddr[a]; ok && s.isNamedAt(int(i), a, name) {
			return int(i), true
		}
	}
	if t != nil {
		mask := uint64(len(t.byContent) - 1)
		h := maphash.String(nameSeed, name)
		for p := h & mask; ; p = (p + 1) & mask {
			e := t.byContent[p]
			if e.idx1 == 0 {
				break
			}
			if e.tag == uint32(h>>32) {
				if i := int(e.idx1 - 1); i < s.n && s.node(i).name == name {
					return i, true
				}
			}
		}
	}
	if d != nil {
		if i, ok := d.byContent[name]; ok && int(i) < s.n && s.node(int(i)).name == name {
			return int(i), true
		}
	}
	return 0, false
}

// isNamedAt reports whether node i exists and its name is name, whose
// bytes are at address a: equal addresses and lengths are equal strings.
func (s *state) isNamedAt(i int, a uintptr, name string) bool {
	if i >= s.n {
		return false
	}
	n := s.node(i).name
	return uintptr(unsafe.Pointer(unsafe.StringData(n))) == a && len(n) == len(name)
}

// set records that the node whose name string (NodeInfo.name) is name is
// at index i of s.
func (x *nameIndex) set(s *state, name string, i int) {
	d := x.own(s.tok)
	d.byAddr[uintptr(unsafe.Pointer(unsafe.StringData(name)))] = int32(i)
	d.byContent[name] = int32(i)
}

// del forgets a removed node's delta entries (its table entries fail the
// check).
func (x *nameIndex) del(s *state, name string) {
	if x.delta == nil {
		return
	}
	if _, ok := x.delta.byContent[name]; !ok {
		return
	}
	d := x.own(s.tok)
	delete(d.byAddr, uintptr(unsafe.Pointer(unsafe.StringData(name))))
	delete(d.byContent, name)
}

// own returns the delta, copied first unless tok owns it.
func (x *nameIndex) own(tok uint64) *nameDelta {
	if x.owner == tok && x.delta != nil {
		return x.delta
	}
	var old nameDelta
	if x.delta != nil {
		old = *x.delta
	}
	d := &nameDelta{
		byAddr:    make(map[uintptr]int32, len(old.byAddr)+1),
		byContent: make(map[string]int32, len(old.byContent)+1),
	}
	for k, v := range old.byAddr {
		d.byAddr[k] = v
	}
	for k, v := range old.byContent {
		d.byContent[k] = v
	}
	x.delta, x.owner = d, tok
	return d
}

// maybeFold builds a new table from s's nodes once the delta has grown
// past 32 + NumNodes/8 entries: O(NumNodes), amortised O(1) per write.
func (x *nameIndex) maybeFold(s *state) {
	if x.delta == nil || len(x.delta.byContent) <= 32+s.n/8 {
		return
	}
	x.table = buildNameTable(s)
	x.delta = nil
}

func buildNameTable(s *state) *nameTable {
	if s.n == 0 {
		return nil
	}
	k := max(bits.Len(uint(2*s.n-1)), 4) // 2^k >= 2n: load <= 1/2
	t := &nameTable{
		byAddr:    make([]nameSlot, 1<<k),
		byContent: make([]nameSlot, 1<<k),
		shift:     uint8(64 - k),
	}
	mask := uint64(1<<k - 1)
	for i := range s.n {
		name := s.node(i).name
		a := uintptr(unsafe.Pointer(unsafe.StringData(name)))
		e := nameSlot{tag: uint32(a), idx1: int32(i + 1)}
		p := addrHash(a) >> t.shift
		for t.byAddr[p].idx1 != 0 {
			p = (p + 1) & mask
		}
		t.byAddr[p] = e
		h := maphash.String(nameSeed, name)
		e.tag = uint32(h >> 32)
		p = h & mask
		for t.byContent[p].idx1 != 0 {
			p = (p + 1) & mask
		}
		t.byContent[p] = e
	}
	return t
}
