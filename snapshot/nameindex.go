package snapshot

import (
	"math/bits"
	"unsafe"

	"github.com/schedkit/schedkit/internal/hashindex"
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

// nameTable is two internal/hashindex tables of 2^k slots each, one
// keyed by the address of a name's bytes and one by its content hash;
// sized by the nameIndex so that neither grows by itself.
type nameTable struct {
	byAddr    hashindex.Table // hash: addrHash of the name bytes' address
	byContent hashindex.Table // hash: maphash of the name
}

func addrOf(name string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(name))) }

// addrHash is a Fibonacci hash of an address; its top bits pick a slot.
func addrHash(a uintptr) uint64 { return uint64(a) * 0x9e3779b97f4a7c15 }

func newNameTable(k int) *nameTable {
	return &nameTable{byAddr: hashindex.New(k), byContent: hashindex.New(k)}
}

// insert adds an entry for the node at index i whose name is name.
func (t *nameTable) insert(name string, i int) {
	t.byAddr.Insert(addrHash(addrOf(name)), int32(i))
	t.byContent.Insert(hashindex.String(name), int32(i))
}

// byAddress returns the index of the node of s whose name string has its
// bytes at a and the length of name (and so is name), if t has an entry
// for it.
func (t *nameTable) byAddress(s *state, a uintptr, name string) (int, bool) {
	h := addrHash(a)
	for p := t.byAddr.Start(h); ; {
		e, next := t.byAddr.Match(h, p)
		if e < 0 {
			return 0, false
		}
		if i := int(e); i < s.n {
			if n := s.node(i).name; addrOf(n) == a && len(n) == len(name) {
				return i, true
			}
		}
		p = next
	}
}

// byHash returns the index of the node of s called name, whose maphash
// is h, if t has an entry for it.
func (t *nameTable) byHash(s *state, h uint64, name string) (int, bool) {
	for p := t.byContent.Start(h); ; {
		e, next := t.byContent.Match(h, p)
		if e < 0 {
			return 0, false
		}
		if i := int(e); i < s.n && s.node(i).name == name {
			return i, true
		}
		p = next
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
	h := hashindex.String(name)
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
		d = &nameTable{byAddr: d.byAddr.Clone(), byContent: d.byContent.Clone()}
	}
	x.delta, x.owner = d, s.tok
	if n := d.byAddr.Len(); 2*(n+1) > d.byAddr.Slots() {
		if n+1 > 32+s.n/8 {
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
	g := newNameTable(bits.Len(uint(d.byAddr.Slots())))
	d.byAddr.Each(func(e int32) {
		if i := int(e); i < s.n {
			g.insert(s.node(i).name, i)
		}
	})
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
