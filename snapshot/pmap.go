package snapshot

import "github.com/schedkit/schedkit/internal/interpod"

// pmap is a persistent hash map from K to V (a hash array mapped trie):
// a 16-way trie on the key's 64-bit hash (4 bits per level, low bits
// first) whose leaves hold up to pmapLeaf (64) entries. The caller
// passes each key with its hash, always the same function of the key:
// hashString for a string key (a term key), interpod.HandleHash for an
// interned topology value (whose look-up then reads neither the string
// nor its bytes). Like the node tree, every node carries the token of
// the writer allowed to change it in place; a writer with another token
// copies the nodes on the path to the entry it changes (path copying). A
// pmap is a value (root and length): copying it is O(1), and the copy
// and the original share every node until one of them writes.
//
// Costs, for n entries: get O(log16 n) pointer hops and a scan of at
// most 64 hashes in one leaf; set, upd and del the same (one walk each)
// plus, for the first write of a token along a path, one node copy per
// level (at most ⌈log16(n/64)⌉+1 nodes; a copy moves an inner node's
// kids or a leaf's entries, not the whole node: see own), independent of
// what other writers changed, and, rarely, a leaf split (the leaf
// becomes an inner node over up to 16 new leaves).
//
// Why leaves of 64: the heavy reader is a walk of every entry
// (termGroup.AddTo, once per pod scored against a term of a large
// workload), and a walk pays per leaf, a cache miss for a trie larger
// than the cache. With 8-entry leaves a hostname key's totals over 5,000
// nodes lay in about 3,000 leaves of one or two entries (a 16-way level
// of 256 leaves holds 20 each, so they split again), 1.1 MB; with 64
// they lie in 256 leaves of about 20, 0.4 MB, and at 15,000 nodes in
// 256 leaves of about 60. SchedulingPreferredPodAffinity at 5,000 nodes
// (framework's BenchmarkInterPodAffinityPerfShapes) took a third to
// two fifths less time per pod; Fork+AddPod+Revert of pods with terms
// (BenchmarkForkAddPodRevertAffinity) stayed within the noise, since
// own copies only the entries a leaf holds. A small map costs one
// leaf, about 1.7 KiB for a topology key's totals.
//
// Nodes come from a pool when the writer has one (a Fork layer: its
// copies are recycled on Revert), else from the heap.
//
// Entries are read in place (ref, each): a pointer into a leaf stays
// valid while the pmap is not written by the leaf's owner and, for a
// Fork layer's copies, while the layer is open.
type pmap[K comparable, V any] struct {
	root *pnode[K, V]
	n    int
}

const (
	pmapBits   = 4
	pmapFan    = 1 << pmapBits
	pmapMask   = pmapFan - 1
	pmapLeaf   = 64
	pmapHashes = 64 // bits of hash; a leaf at this depth cannot split
)

type pent[K comparable, V any] struct {
	hash uint64
	key  K
	val  V
}

// pnode is an inner node (kids) or a leaf (ents[:n], then over).
//
// The header (owner, leaf, n) sits between kids and ents, so that an
// inner node's walk and copy read kids and the header (the first 144
// bytes) and a leaf's read the header and the entries right after it
// (the header's cache line holds the first entries too), never both:
// on a cold path (a trie bigger than the cache, as the hostname totals
// of a large cluster are) each node costs the lines its kind uses.
// over is read only in a full leaf (n == pmapLeaf), the only kind that
// can have it.
//
// Every node is clean: ents[n:] are zero (an inner node has n = 0, so
// all of them) and a leaf's kids are nil. Every write keeps it so (own,
// newLeaf, updAt's split, delAt), a node recycled from a reverted Fork
// layer is clean as it was left, and a new one is zero; so own and
// newLeaf clear only what the node they reuse held
// (TestPmapNodesStayClean).
type pnode[K comparable, V any] struct {
	kids  [pmapFan]*pnode[K, V]
	owner uint64
	leaf  bool
	n     uint8
	ents  [pmapLeaf]pent[K, V]
	// over holds the entries past pmapLeaf of a leaf at the last level,
	// whose keys' 64-bit hashes are all equal; nil otherwise (always nil
	// when n < pmapLeaf).
	over []pent[K, V]
}

// pwriter is who writes a pmap: its token and, for a Fork layer, the
// pool its new nodes come from (nil: the heap).
type pwriter[K comparable, V any] struct {
	tok  uint64
	pool *pool[pnode[K, V]]
}

// pool keeps a Fork's copies of one type: log holds those made since the
// outermost open layer, spare the reverted ones (take, moveTail).
type pool[T any] struct {
	log, spare []*T
}

func (w pwriter[K, V]) alloc() *pnode[K, V] {
	if w.pool == nil {
		return &pnode[K, V]{owner: w.tok}
	}
	nd := take(&w.pool.spare, &w.pool.log)
	nd.owner = w.tok
	return nd
}

// own returns nd, copied if w does not own it.
//
// A copy writes only what differs from the node alloc returned, which
// every write keeps clean (see pnode): a leaf's entries and the stale
// tail of the recycled node's, or an inner node's kids and the recycled
// node's old entries; never a whole entry array, which for a leaf of
// pmapLeaf entries is most of the node.
func (w pwriter[K, V]) own(nd *pnode[K, V]) *pnode[K, V] {
	if nd.owner == w.tok {
		return nd
	}
	c := w.alloc()
	wasLeaf, old := c.leaf, c.n
	c.leaf, c.n = nd.leaf, nd.n
	c.over = nil
	if nd.leaf {
		if !wasLeaf {
			c.kids = [pmapFan]*pnode[K, V]{}
		}
		copy(c.ents[:nd.n], nd.ents[:nd.n])
		if old > nd.n {
			clear(c.ents[nd.n:old])
		}
		if nd.n == pmapLeaf && len(nd.over) > 0 {
			c.over = append([]pent[K, V](nil), nd.over...)
		}
	} else {
		c.kids = nd.kids
		clear(c.ents[:old])
	}
	return c
}

// newLeaf returns a leaf holding e.
func (w pwriter[K, V]) newLeaf(e pent[K, V]) *pnode[K, V] {
	nd := w.alloc()
	if !nd.leaf {
		nd.kids = [pmapFan]*pnode[K, V]{}
	}
	if nd.n > 1 {
		clear(nd.ents[1:nd.n])
	}
	nd.leaf, nd.n, nd.over = true, 1, nil
	nd.ents[0] = e
	return nd
}

// get returns the value of key k (h = its hash).
func (m *pmap[K, V]) get(h uint64, k K) (V, bool) {
	if e := m.ref(h, k); e != nil {
		return *e, true
	}
	var zero V
	return zero, false
}

// ref returns a pointer to the value of key k in place (nil if absent).
func (m *pmap[K, V]) ref(h uint64, k K) *V {
	nd := m.root
	for shift := uint(0); nd != nil; shift += pmapBits {
		if nd.leaf {
			for i := range nd.ents[:nd.n] {
				if e := &nd.ents[i]; e.hash == h && e.key == k {
					return &e.val
				}
			}
			if nd.n < pmapLeaf {
				return nil
			}
			for i := range nd.over {
				if e := &nd.over[i]; e.key == k {
					return &e.val
				}
			}
			return nil
		}
		nd = nd.kids[(h>>shift)&pmapMask]
	}
	return nil
}

// set sets key k (h = its hash) to v.
func (m *pmap[K, V]) set(w pwriter[K, V], h uint64, k K, v V) {
	*m.upd(w, h, k) = v
}

// upd returns a pointer to the value of key k (h = its hash) in
// a leaf w owns, inserting k with the zero V if absent: one walk that
// copies the path as set does, for a read-modify-write (get then set
// would walk twice). The pointer is valid until the next write to m.
func (m *pmap[K, V]) upd(w pwriter[K, V], h uint64, k K) *V {
	var v *V
	var added bool
	m.root, v, added = m.updAt(w, m.root, 0, h, k)
	if added {
		m.n++
	}
	return v
}

// updAt returns the node replacing nd, the slot of k's value under it
// and whether k was added (with the zero V).
func (m *pmap[K, V]) updAt(w pwriter[K, V], nd *pnode[K, V], shift uint, h uint64, k K) (*pnode[K, V], *V, bool) {
	if nd == nil {
		nd = w.newLeaf(pent[K, V]{hash: h, key: k})
		return nd, &nd.ents[0].val, true
	}
	nd = w.own(nd)
	if !nd.leaf {
		i := (h >> shift) & pmapMask
		kid, v, added := m.updAt(w, nd.kids[i], shift+pmapBits, h, k)
		nd.kids[i] = kid
		return nd, v, added
	}
	for i := range nd.ents[:nd.n] {
		if x := &nd.ents[i]; x.hash == h && x.key == k {
			return nd, &x.val, false
		}
	}
	if nd.n < pmapLeaf {
		nd.ents[nd.n] = pent[K, V]{hash: h, key: k}
		nd.n++
		return nd, &nd.ents[nd.n-1].val, true
	}
	for i := range nd.over {
		if x := &nd.over[i]; x.key == k {
			return nd, &x.val, false
		}
	}
	if shift >= pmapHashes {
		nd.over = append(nd.over, pent[K, V]{hash: h, key: k})
		return nd, &nd.over[len(nd.over)-1].val, true
	}
	// Split the full leaf into an inner node: its entries and k go one
	// level down (k last, so that no later move invalidates its slot).
	old := nd.ents
	nd.leaf, nd.n = false, 0
	clear(nd.ents[:])
	for _, x := range old {
		i := (x.hash >> shift) & pmapMask
		var v *V
		nd.kids[i], v, _ = m.updAt(w, nd.kids[i], shift+pmapBits, x.hash, x.key)
		*v = x.val
	}
	i := (h >> shift) & pmapMask
	kid, v, _ := m.updAt(w, nd.kids[i], shift+pmapBits, h, k)
	nd.kids[i] = kid
	return nd, v, true
}

// del removes key k (h = its hash) if present.
func (m *pmap[K, V]) del(w pwriter[K, V], h uint64, k K) {
	var removed bool
	m.root, removed = m.delAt(w, m.root, 0, h, k)
	if removed {
		m.n--
	}
}

// delAt returns the node replacing nd (nil when empty) and whether k was
// there; nothing is copied when it was not.
func (m *pmap[K, V]) delAt(w pwriter[K, V], nd *pnode[K, V], shift uint, h uint64, k K) (*pnode[K, V], bool) {
	if nd == nil {
		return nil, false
	}
	if !nd.leaf {
		i := (h >> shift) & pmapMask
		kid, removed := m.delAt(w, nd.kids[i], shift+pmapBits, h, k)
		if !removed {
			return nd, false
		}
		nd = w.own(nd)
		nd.kids[i] = kid
		if kid == nil && nd.kids == [pmapFan]*pnode[K, V]{} {
			return nil, true
		}
		return nd, true
	}
	at := -1
	for i := range nd.ents[:nd.n] {
		if x := &nd.ents[i]; x.hash == h && x.key == k {
			at = i
		}
	}
	inOver := -1
	if nd.n == pmapLeaf {
		for i := range nd.over {
			if nd.over[i].key == k {
				inOver = i
			}
		}
	}
	if at < 0 && inOver < 0 {
		return nd, false
	}
	nd = w.own(nd)
	if at >= 0 && len(nd.over) > 0 { // refill the slot from over
		inOver = len(nd.over) - 1
		nd.ents[at] = nd.over[inOver]
	}
	if inOver >= 0 {
		last := len(nd.over) - 1
		nd.over[inOver] = nd.over[last]
		nd.over[last] = pent[K, V]{}
		if nd.over = nd.over[:last]; last == 0 {
			nd.over = nil
		}
		return nd, true
	}
	nd.n--
	nd.ents[at] = nd.ents[nd.n]
	nd.ents[nd.n] = pent[K, V]{}
	if nd.n == 0 {
		return nil, true
	}
	return nd, true
}

// each calls yield for each entry, in no particular order, until it
// returns false; it reports whether it ran to the end. The map must not
// be written meanwhile.
func (m *pmap[K, V]) each(yield func(*pent[K, V]) bool) bool {
	return eachNode(m.root, yield)
}

func eachNode[K comparable, V any](nd *pnode[K, V], yield func(*pent[K, V]) bool) bool {
	if nd == nil {
		return true
	}
	if !nd.leaf {
		for _, k := range nd.kids {
			if !eachNode(k, yield) {
				return false
			}
		}
		return true
	}
	for i := range nd.ents[:nd.n] {
		if !yield(&nd.ents[i]) {
			return false
		}
	}
	if nd.n < pmapLeaf {
		return true
	}
	for i := range nd.over {
		if !yield(&nd.over[i]) {
			return false
		}
	}
	return true
}

// hashString is the hash of pmap's string keys.
func hashString(s string) uint64 { return interpod.Hash(s) }
