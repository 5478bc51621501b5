package snapshot

import (
	"fmt"
	"sync/atomic"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/objects"
)

// Copy-on-write machinery shared by Snapshot, Fork and Cache.
//
// A state is a persistent array of *NodeInfo (a three-level tree: a root
// slice of mids, each of 64 chunks, each of 64 nodes) plus a name index
// (node name → index, nameindex.go) and an overlay map (image name →
// number of nodes holding it). Every mutable object carries the token of the writer
// allowed to change it in place; a writer with another token copies the
// object first (path copying: root, one mid, one chunk, one NodeInfo — at
// most NumNodes()/4096 + 192 pointers and one NodeInfo, so a change costs
// the same at 1,000 and at 100,000 nodes). Taking
// a Snapshot or opening a Fork hands out a fresh token, which freezes every
// object reachable so far in O(1).

var tokens atomic.Uint64

func newToken() uint64 { return tokens.Add(1) }

const (
	chunkShift = 6
	chunkSize  = 1 << chunkShift
	chunkMask  = chunkSize - 1
	midShift   = 2 * chunkShift // nodes per mid: 64 chunks of 64
)

type chunk struct {
	owner uint64
	// version changes (to a fresh process-wide generation) every time
	// one of the chunk's slots or nodes is about to change: see
	// layout.View.BlockVersion.
	version int64
	// slotVer[j] is the version slot j last changed at (node j of the
	// block set, replaced or about to be mutated): layout.View.Block.
	slotVer [chunkSize]int64
	nodes   [chunkSize]*NodeInfo
	// idx[j] is nodes[j].idx as it was when slot j was last set (a node
	// that has gained its indexes since leaves it nil): a hint, read
	// only so that mutable starts fetching a cold node's indexes while
	// the node itself is on its way, never trusted.
	idx [chunkSize]*podIndexes
}

// bump records that slot is about to change: a fresh version for the
// chunk and the slot.
func (c *chunk) bump(slot int) {
	v := nextGeneration()
	c.version, c.slotVer[slot] = v, v
}

// mid is the middle level: 64 chunks (4096 nodes); chunks past the last
// node are nil.
type mid struct {
	owner  uint64
	chunks [chunkSize]*chunk
}

type tree struct {
	owner uint64
	mids  []*mid
}

// ovmap is a map made of an immutable base and a small delta owned by one
// writer token. Lookups are O(1); a write by a new owner copies the delta;
// when the delta grows past a fraction of the base it is folded in
// (amortised O(1) per write).
type ovmap[V any] struct {
	base  map[string]V
	delta map[string]ventry[V]
	owner uint64
}

type ventry[V any] struct {
	v   V
	del bool
}

func (m *ovmap[V]) get(k string) (V, bool) {
	if e, ok := m.delta[k]; ok {
		if e.del {
			var zero V
			return zero, false
		}
		return e.v, true
	}
	v, ok := m.base[k]
	return v, ok
}

func (m *ovmap[V]) own(tok uint64) {
	if m.owner == tok && m.delta != nil {
		return
	}
	d := make(map[string]ventry[V], len(m.delta)+1)
	for k, e := range m.delta {
		d[k] = e
	}
	m.delta = d
	m.owner = tok
}

func (m *ovmap[V]) set(tok uint64, k string, v V) {
	m.own(tok)
	m.delta[k] = ventry[V]{v: v}
	m.maybeCompact(tok)
}

func (m *ovmap[V]) del(tok uint64, k string) {
	m.own(tok)
	if _, inBase := m.base[k]; inBase {
		m.delta[k] = ventry[V]{del: true}
	} else {
		delete(m.delta, k)
	}
	m.maybeCompact(tok)
}

func (m *ovmap[V]) maybeCompact(tok uint64) {
	if len(m.delta) <= 32+len(m.base)/8 {
		return
	}
	nb := make(map[string]V, len(m.base)+len(m.delta))
	for k, v := range m.base {
		nb[k] = v
	}
	for k, e := range m.delta {
		if e.del {
			delete(nb, k)
		} else {
			nb[k] = e.v
		}
	}
	m.base = nb
	m.delta = make(map[string]ventry[V])
	m.owner = tok
}

// state is the content of a Snapshot or of one Fork layer.
type state struct {
	tok    uint64
	tree   *tree
	n      int
	names  nameIndex
	images ovmap[int32] // image name -> number of nodes that have it
	// nodeSet changes (to a fresh generation) whenever a node is added,
	// removed or replaced: see layout.View.NodeSetVersion.
	nodeSet int64
	rec     *recycler // a Fork's; nil for a Cache or Snapshot
	// objs are the cluster objects other than nodes and pods
	// (objects.go); copy-on-write by tok like the node tree.
	objs *objects.Set
	// dec reads devices from the nodes and pods this state parses; nil
	// means NvidiaDevices (decoder()). Set once by NewCacheWithDevices,
	// copied with the state.
	dec DeviceDecoder
	// aff indexes the pods' pod (anti-)affinity terms
	// (affinity_index.go); copy-on-write by tok.
	aff affIndex
}

// decoder returns the state's DeviceDecoder.
func (s *state) decoder() DeviceDecoder {
	if s.dec == nil {
		return NvidiaDevices
	}
	return s.dec
}

// recycler lets a Fork reuse the copies a reverted layer made. While a
// layer above the base is open, every tree header, chunk and NodeInfo that
// copy-on-write makes is logged; Revert hands the top layer's copies to
// the spare lists (nothing else can reach them: the layer below shares
// none, and a Snapshot of the fork clears the log, since it shares them
// all); the next copies are made in spare memory. A Fork+AddPod+Revert
// cycle then allocates nothing.
type recycler struct {
	trees  []*tree
	mids   []*mid
	chunks []*chunk
	nodes  []*NodeInfo
	marks  [][4]int // per open layer: the log lengths when it opened

	spareTrees  []*tree
	spareMids   []*mid
	spareChunks []*chunk
	spareNodes  []*NodeInfo

	aff affRecycler // the affinity index's trie nodes
}

func (r *recycler) logging() bool { return r != nil && len(r.marks) > 0 }

// open starts a layer's log.
func (r *recycler) open() {
	r.marks = append(r.marks, [4]int{len(r.trees), len(r.mids), len(r.chunks), len(r.nodes)})
	r.aff.open()
}

// revert moves the top layer's copies to the spare lists.
func (r *recycler) revert() {
	m := r.marks[len(r.marks)-1]
	r.marks = r.marks[:len(r.marks)-1]
	r.spareTrees = moveTail(r.spareTrees, &r.trees, m[0])
	r.spareMids = moveTail(r.spareMids, &r.mids, m[1])
	r.spareChunks = moveTail(r.spareChunks, &r.chunks, m[2])
	r.spareNodes = moveTail(r.spareNodes, &r.nodes, m[3])
	r.aff.revert()
}

// commit folds the top layer's log into the layer below; at the base,
// which is never reverted, the log is dropped.
func (r *recycler) commit() {
	r.marks = r.marks[:len(r.marks)-1]
	r.aff.commit()
	if len(r.marks) == 0 {
		r.forget()
	}
}

// forget drops the log without recycling: the copies are shared now.
func (r *recycler) forget() {
	clear(r.trees)
	clear(r.mids)
	clear(r.chunks)
	clear(r.nodes)
	r.trees, r.mids, r.chunks, r.nodes = r.trees[:0], r.mids[:0], r.chunks[:0], r.nodes[:0]
	for i := range r.marks {
		r.marks[i] = [4]int{}
	}
	r.aff.forget()
}

func moveTail[T any](spare []*T, log *[]*T, from int) []*T {
	spare = append(spare, (*log)[from:]...)
	clear((*log)[from:])
	*log = (*log)[:from]
	return spare
}

func (r *recycler) newTree() *tree {
	if !r.logging() {
		return &tree{}
	}
	return take(&r.spareTrees, &r.trees)
}

func (r *recycler) newMid() *mid {
	if !r.logging() {
		return &mid{}
	}
	return take(&r.spareMids, &r.mids)
}

func (r *recycler) newChunk() *chunk {
	if !r.logging() {
		return &chunk{}
	}
	return take(&r.spareChunks, &r.chunks)
}

func (r *recycler) newNode() *NodeInfo {
	if !r.logging() {
		return &NodeInfo{}
	}
	return take(&r.spareNodes, &r.nodes)
}

// take pops a spare object (or makes one) and logs it.
func take[T any](spare, log *[]*T) *T {
	var x *T
	if k := len(*spare); k > 0 {
		x, (*spare)[k-1] = (*spare)[k-1], nil
		*spare = (*spare)[:k-1]
	} else {
		x = new(T)
	}
	*log = append(*log, x)
	return x
}

func (s *state) node(i int) *NodeInfo {
	return s.tree.mids[i>>midShift].chunks[(i>>chunkShift)&chunkMask].nodes[i&chunkMask]
}

// A *state is the layout.View of a Snapshot or Fork (see viewOf): a
// block is a chunk.
var _ layout.View[NodeInfo] = (*state)(nil)

// A block is a chunk: a compile-time check that layout.BlockSize is
// chunkSize (a negative constant does not convert to uint).
const _ = uint(layout.BlockSize-chunkSize) + uint(chunkSize-layout.BlockSize)

func init() { layout.ViewOf = viewOf }

// viewOf is layout.ViewOf: the state of a non-nil *Snapshot or *Fork.
// A Fork's cur is reassigned in place by Fork, Revert and Commit, so its
// address stays the fork's current content.
func viewOf(c any) any {
	switch c := c.(type) {
	case *Snapshot:
		if c != nil {
			return &c.st
		}
	case *Fork:
		if c != nil {
			return &c.st
		}
	}
	return nil
}

// NumNodes is layout.View's.
func (s *state) NumNodes() int { return s.n }

// NumBlocks is layout.View's: ⌈n/chunkSize⌉.
func (s *state) NumBlocks() int { return (s.n + chunkSize - 1) / chunkSize }

// NodeSetVersion is layout.View's.
func (s *state) NodeSetVersion() int64 { return s.nodeSet }

// BlockVersion is layout.View's: the version of chunk b (nodes b*64 ..).
func (s *state) BlockVersion(b int) int64 {
	if uint(b) >= uint(s.NumBlocks()) {
		panic("snapshot: block index out of range")
	}
	return s.chunkAt(b).version
}

// Block is layout.View's: block b's nodes and slot versions (views of
// its chunk).
func (s *state) Block(b int) ([]*NodeInfo, []int64) {
	nb := s.NumBlocks()
	if uint(b) >= uint(nb) {
		panic("snapshot: block index out of range")
	}
	c := s.chunkAt(b)
	k := chunkSize
	if b == nb-1 {
		k = s.n - b*chunkSize
	}
	return c.nodes[:k:k], c.slotVer[:k:k]
}

func (s *state) chunkAt(b int) *chunk {
	return s.tree.mids[b>>chunkShift].chunks[b&chunkMask]
}

func (s *state) index(name string) (int, bool) {
	return s.names.index(s, name)
}

func (s *state) ownTree() *tree {
	t := s.tree
	if t == nil {
		t = &tree{owner: s.tok}
		s.tree = t
		return t
	}
	if t.owner != s.tok {
		nt := s.rec.newTree()
		old := nt.mids
		nt.owner = s.tok
		nt.mids = append(old[:0], t.mids...)
		if len(old) > len(t.mids) {
			clear(old[len(t.mids):])
		}
		s.tree = nt
		t = nt
	}
	return t
}

func (s *state) ownMid(mi int) *mid {
	t := s.ownTree()
	m := t.mids[mi]
	if m.owner != s.tok {
		nm := s.rec.newMid()
		*nm = *m
		nm.owner = s.tok
		m = nm
		t.mids[mi] = m
	}
	return m
}

func (s *state) ownChunk(ci int) *chunk {
	m := s.ownMid(ci >> chunkShift)
	c := m.chunks[ci&chunkMask]
	if c.owner != s.tok {
		nc := s.rec.newChunk()
		*nc = *c
		nc.owner = s.tok
		c = nc
		m.chunks[ci&chunkMask] = c
	}
	return c
}

// mutable returns node i, copied if this writer does not own it. p is
// the pod about to be added to it or removed from it (nil: not known),
// whose affinity index update decides whether a copy fetches the node's
// labels early (readsLabels).
func (s *state) mutable(i int, p *PodInfo) *NodeInfo {
	// The node is copied before the path to it, so that on a cold node
	// the copy's loads overlap with those of the mid and chunk copies
	// rather than wait behind the atomic increment in bump.
	// The indexes' address comes from the chunk's hint, not from the
	// node: their fetch then overlaps with the node's instead of
	// following it.
	c, j := s.chunkAt(i>>chunkShift), i&chunkMask
	warmIndexes(c.idx[j])
	ni := c.nodes[j]
	if ni.owner != s.tok {
		nn := s.rec.newNode()
		ni.cloneInto(nn, s.tok, s.readsLabels(p))
		ni = nn
	}
	s.set(i, ni)
	return ni
}

func (s *state) set(i int, ni *NodeInfo) {
	c, j := s.ownChunk(i>>chunkShift), i&chunkMask
	c.bump(j)
	c.nodes[j] = ni
	c.idx[j] = nil
	if ni != nil {
		c.idx[j] = ni.idx
	}
}

func (s *state) appendNode(ni *NodeInfo) {
	ni.owner = s.tok
	i := s.n
	t := s.ownTree()
	if i>>midShift == len(t.mids) {
		t.mids = append(t.mids, &mid{owner: s.tok})
	}
	if m := s.ownMid(i >> midShift); m.chunks[(i>>chunkShift)&chunkMask] == nil {
		m.chunks[(i>>chunkShift)&chunkMask] = &chunk{owner: s.tok}
	}
	s.n++
	s.set(i, ni)
	s.names.set(s, ni.name, i)
	s.addImages(ni, 1)
	s.affNode(ni, 1)
	s.nodeSet = nextGeneration()
}

// removeAt removes node i by moving the last node into its slot; O(1).
func (s *state) removeAt(i int) *NodeInfo {
	ni := s.node(i)
	last := s.n - 1
	if i != last {
		moved := s.node(last)
		s.set(i, moved)
		s.names.set(s, moved.name, i)
	}
	s.set(last, nil)
	s.n--
	if s.n&chunkMask == 0 { // the last chunk is empty: drop it
		s.ownMid(s.n >> midShift).chunks[(s.n>>chunkShift)&chunkMask] = nil
		if s.n&(1<<midShift-1) == 0 { // and the last mid too
			t := s.ownTree()
			t.mids = t.mids[:s.n>>midShift]
		}
	}
	s.addImages(ni, -1)
	s.affNode(ni, -1)
	s.nodeSet = nextGeneration()
	return ni
}

func (s *state) addImages(ni *NodeInfo, d int32) {
	for name := range ni.images {
		c, _ := s.images.get(name)
		c += d
		if c <= 0 {
			s.images.del(s.tok, name)
		} else {
			s.images.set(s.tok, name, c)
		}
	}
}

// replaceNode swaps in a new node object for node i, keeping its pods.
func (s *state) replaceNode(i int, fresh *NodeInfo) {
	old := s.node(i)
	s.addImages(old, -1)
	s.set(i, fresh)
	s.addImages(fresh, 1)
	s.affRelabel(old, fresh)
	s.nodeSet = nextGeneration()
}

func (s *state) nodeOrErr(name string) (int, error) {
	i, ok := s.index(name)
	if !ok {
		return 0, fmt.Errorf("node %q: %w", name, ErrNodeNotFound)
	}
	return i, nil
}

// freeze returns a read-only copy of s and gives s a new token, so that
// later writes through s copy instead of changing what the copy sees.
func (s *state) freeze() state {
	c := *s
	c.rec = nil
	s.tok = newToken()
	return c
}
