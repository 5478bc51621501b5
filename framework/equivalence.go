package framework

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/bits"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/prefetch"
	"github.com/schedkit/schedkit/internal/scoring"
	"github.com/schedkit/schedkit/snapshot"
)

// The equivalence cache. Pods with equal specs and requests (an
// equivalence class: a Deployment's replicas, a simulator's copies of one
// job) get the same filter verdict and the same raw scores on a node in a
// given state, so a
// Scheduler remembers them per class and per node and, for the next pod
// of the class, recomputes only the nodes that changed since — found by
// comparing snapshot block versions (one per 64 nodes), then, in a
// changed block, the ticks at which the Scheduler's caps table saw its
// nodes move (equivalence_caps.go; 64 contiguous words, not 64
// NodeInfos, and no node versions per class). What stays O(nodes) per
// pod is a gather of the cached results in visiting order (O(blocks)
// plus the feasible nodes: verdicts are bits), the normalising scorers'
// Normalize and the choice of the highest total. The idea is Borg's (Verma et al.,
// "Large-scale cluster management at Google with Borg", EuroSys 2015,
// §3.4: equivalence classes and score caching); upstream kube-scheduler
// had a predicate-only equivalence cache from v1.10 until v1.13.
//
// The cache holds many classes (Config.EquivalenceClasses: by default as
// many as a budget of per-node entries allows), finds a class by the hash
// of its key, and admits a class the first time it is seen while it has
// room, so that a workload mixing hundreds of specs is served from it
// too: a pod then costs the nodes changed since its class last looked
// (one per pod placed since, so about the number of classes in use) plus
// the O(nodes) passes, and each class one full cycle when it is first
// seen. When every node is scored and the filters and scorers split into
// a static part and a request part (equivalence_shape.go), classes share
// both instead: a pod then costs the nodes changed since its request
// shape last looked (about the number of shapes in use) plus two passes
// over a byte and an int64 per node, whatever the number of classes.
//
// Decisions are exactly those of the uncached cycle: the same filters and
// scorers run on the same nodes, only fewer times; the cached path is
// taken when no PreFilter narrows the candidates to named nodes and every
// filter and scorer promises to be node-local (isNodeLocal,
// internal/scoring's NodeLocal). With percentageOfNodesToScore below 100 the cycle
// visits the same nodes in the same order as the uncached one, refreshing
// only the blocks it reaches.

// doorSlots is the size of the admission table of a full cache: a class
// is admitted if it was seen before and no class seen since hashed to its
// slot.
const doorSlots = 1024

// With Config.EquivalenceClasses 0 the cache keeps as many classes as
// fit in equivalenceNodeBudget per-node entries (classes × nodes), and at
// least minEquivalenceClasses: 838 classes at 5,000 nodes, 279 at 15,000,
// 64 from 65,536 nodes up. A class's entry is 8 + 8 × (normalising
// scorers) bytes and a bit per node, 8 more with a ranking (ranked.go),
// 2 more once it diagnosed a pod (equivalence_diag.go).
const (
	equivalenceNodeBudget = 1 << 22
	minEquivalenceClasses = 64
)

// classEntry is one class's cached per-node results. Slices are indexed
// by node index; blocks, seen, okm and feas by snapshot block. A block
// whose version equals blocks[b] holds exactly the nodes recorded; one
// whose version moved holds them for its nodes that have not moved since
// the caps table's tick seen[b] (equivalence_caps.go): a class keeps no
// node versions. Per node a class holds 8 bytes of plain score and 8 per
// normalising scorer, and one bit of verdict.
type classEntry struct {
	key  []byte
	hash uint64
	used uint64 // LRU tick

	// ready: pfs and pp are prepared for the node set nodeSet.
	ready   bool
	nodeSet int64
	pfs     []PodFilter   // fused filters point into fused
	fused   []fusedFilter // cap fixed at preparation
	pp      scoring.PodProfile

	n      int
	blocks []int64   // per block: its version the results are for (0: none)
	seen   []uint64  // per block: the caps table's tick when they were made
	okm    []uint64  // per block: bit j set if node j of the block passes the filters (ok)
	feas   []int32   // per block: how many of its nodes are ok
	need   blockNeed // what pfs demand of a block (equivalence_caps.go)
	plain  []int64   // weighted sum of non-normalising scores, if ok
	raw    [][]int64 // raw[k][i]: normalising scorer k's raw score, if ok

	byMax bool // every normaliser NormalizesByMax (a ranking may be kept)
	rank  ranking

	// The shared shapes path (equivalence_shape.go), when shaped: the
	// per-node arrays above are then not used (nor allocated). The static
	// and the request filters (fused ones point into sfused and rfused,
	// cap fixed), the keys of the class's static part and request shape,
	// and their entries as last found (valid while their generation is).
	shaped         bool
	spfs, rpfs     []PodFilter
	sfused, rfused []fusedFilter
	staticKey      string
	shapeKey       string
	static         *staticEntry
	staticGen      uint64
	shape          *shapeEntry
	shapeGen       uint64

	names []string  // the plugin names of pfs ("" for a fused filter)
	diag  classDiag // reason kinds per node (equivalence_diag.go)
}

// EquivalenceStats counts a Scheduler's cycles by how the equivalence
// cache served them; see [Scheduler.EquivalenceStats].
type EquivalenceStats struct {
	// Cached cycles were served from a class's entry, filtering and
	// scoring only the nodes that changed since the class last saw them
	// (on blocks it had not seen: all of their nodes).
	Cached uint64
	// Filled cycles ran for a class just given an entry, filtering and
	// scoring the nodes they visited into it.
	Filled uint64
	// Uncached cycles ran without the cache: it is off, the profile has
	// no scorers, a filter or scorer is not NodeLocal, the cluster is not
	// a *snapshot.Snapshot or *snapshot.Fork (a type embedding one does
	// not count), a PreFilter narrowed the candidates or rejected the pod,
	// the class was seen for the first time recently (not admitted), or
	// the cached cycle failed (a scorer's score out of range, perhaps on a
	// node the uncached cycle would not have scored) and the full cycle
	// decided instead.
	Uncached uint64
	// Diagnosed cycles found no feasible node in the cache and took the
	// diagnosis from the class's remembered reasons, or ran the full cycle
	// for it (counted here, not in Cached or Filled).
	Diagnosed uint64
	// Classes is the number of classes with an entry now.
	Classes int
}

// EquivalenceStats returns how the equivalence cache served the cycles
// so far (those over a non-empty cluster). O(1).
func (s *Scheduler) EquivalenceStats() EquivalenceStats {
	st := s.classes.stats
	st.Classes = len(s.classes.entries)
	return st
}

// classCache is an LRU set of classes, found by the hash of their key.
type classCache struct {
	stats EquivalenceStats
	// fixed is Config.EquivalenceClasses: > 0 the capacity, 0 the
	// budget's (capacity), < 0 off.
	fixed   int
	entries []*classEntry
	index   map[uint64]*classEntry // by hash (a key collision runs uncached)
	tick    uint64
	key     []byte // the key get made last
	hash    uint64 // its hash
	seed    maphash.Seed
	door    [doorSlots]uint64 // hashes of classes seen once (direct-mapped)

	// scratch for refreshing a block
	batch    []*snapshot.NodeInfo
	batchIdx []int32
	tmp      []int64
	scratch  []Reason
	segs     [][2]int32 // node ranges a cached cycle visited, in order
	rawBuf   []int64
	raws     [][]int64 // evalStatic's raw scores per normaliser
	dirty    []int32   // blocks a ranked cycle found changed

	shapes   lru[shapeEntry, *shapeEntry]   // request shapes (equivalence_shape.go)
	statics  lru[staticEntry, *staticEntry] // static parts
	changes  changeLog                      // the nodes changed, for the shapes
	logNodes []*snapshot.NodeInfo           // shapeFor's scratch
	groups   *shapeGroups                   // scheduleShaped's scratch
	caps     capsTable                      // block capacities (equivalence_caps.go)
}

// classKey appends pod's equivalence key to buf: the protobuf encoding of
// its spec, then its requests as snapshot derives them (they also depend
// on the status of a pod resized in place; Pending depends on the spec
// alone), then its GPU request (from annotations).
func classKey(buf []byte, pod *snapshot.PodInfo) ([]byte, error) {
	spec := &pod.Pod().Spec
	n := spec.Size()
	start := len(buf)
	buf = append(buf, make([]byte, n)...)[:start+n]
	if _, err := spec.MarshalToSizedBuffer(buf[start:]); err != nil {
		return buf, fmt.Errorf("framework: pod %s: encoding spec: %w", pod.Key(), err)
	}
	req := pod.Requests()
	buf = appendVector(buf, &req.Requested)
	buf = appendVector(buf, &req.Scoring)
	buf = binary.AppendVarint(buf, req.NonZeroMilliCPU)
	buf = binary.AppendVarint(buf, req.NonZeroMemory)
	g := pod.GPU()
	buf = binary.AppendVarint(buf, int64(g.Count))
	buf = binary.AppendVarint(buf, g.MilliGPU)
	for _, m := range g.Models {
		buf = binary.AppendUvarint(buf, uint64(len(m)))
		buf = append(buf, m...)
	}
	devs, assigned := pod.Devices()
	buf = binary.AppendUvarint(buf, uint64(devs))
	if assigned {
		buf = append(buf, 1)
	}
	return buf, nil
}

// appendVector appends v's amounts up to its last non-zero one, after
// their count (so equal vectors of different lengths encode alike).
func appendVector(buf []byte, v *snapshot.Vector) []byte {
	n := v.Len()
	for n > 0 && v.Get(snapshot.ResourceID(n-1)) == 0 {
		n--
	}
	buf = binary.AppendUvarint(buf, uint64(n))
	for r := range n {
		buf = binary.AppendVarint(buf, v.Get(snapshot.ResourceID(r)))
	}
	return buf
}

// capacity is how many classes the cache keeps for a cluster of n nodes:
// Config.EquivalenceClasses, or with 0 the budget's share (see
// equivalenceNodeBudget).
func (c *classCache) capacity(n int) int {
	if c.fixed != 0 {
		return c.fixed
	}
	return max(minEquivalenceClasses, equivalenceNodeBudget/max(n, 1))
}

// get returns the entry of pod's class, or nil and whether the class may
// get one (admit) in a cluster of n nodes. ok is false when the pod's key
// cannot be made (its spec does not encode): the cycle then runs
// uncached. O(spec size): the entry is found by hash.
func (c *classCache) get(pod *snapshot.PodInfo, n int) (e *classEntry, admit, ok bool) {
	var err error
	if c.key, err = classKey(c.key[:0], pod); err != nil {
		return nil, false, false
	}
	h := maphash.Bytes(c.seed, c.key)
	c.hash = h
	c.tick++
	if e := c.index[h]; e != nil {
		if !bytes.Equal(e.key, c.key) {
			return nil, false, true // another class has the hash: uncached
		}
		e.used = c.tick
		return e, false, true
	}
	// Admission: while there is room, at once. In a full cache a class
	// gets an entry (evicting another) only the second time it is seen
	// recently — a one-off spec runs the uncached cycle and evicts nothing
	// (TinyLFU's doorkeeper: Einziger et al., "TinyLFU: A Highly
	// Efficient Cache Admission Policy", 2017).
	if len(c.entries) < c.capacity(n) {
		return nil, true, true
	}
	if slot := &c.door[h%uint64(len(c.door))]; *slot != h {
		*slot = h
		return nil, false, true
	}
	return nil, true, true
}

// insert gives the class get last looked up an entry in a cluster of n
// nodes, evicting the least recently used one when the cache is full
// (and, if the capacity shrank as the cluster grew, forgetting the least
// recently used ones beyond it). O(1), or O(classes) when it evicts.
func (c *classCache) insert(n int) *classEntry {
	if c.index == nil {
		c.index = make(map[uint64]*classEntry)
	}
	limit := c.capacity(n)
	for len(c.entries) > limit {
		c.evict() // the last entry (the least recently used) is discarded
		last := len(c.entries) - 1
		c.entries[last] = nil
		c.entries = c.entries[:last]
	}
	var e *classEntry
	if len(c.entries) < limit {
		e = &classEntry{}
		c.entries = append(c.entries, e)
	} else {
		e = c.entries[c.evict()]
	}
	e.key, e.hash, e.used = append(e.key[:0], c.key...), c.hash, c.tick
	c.index[e.hash] = e
	return e
}

// evict drops the least recently used entry, moves it to the end of
// c.entries and returns its index there.
func (c *classCache) evict() int {
	lru := 0
	for i, x := range c.entries {
		if x.used < c.entries[lru].used {
			lru = i
		}
	}
	last := len(c.entries) - 1
	c.entries[lru], c.entries[last] = c.entries[last], c.entries[lru]
	e := c.entries[last]
	delete(c.index, e.hash)
	e.drop()
	return last
}

// drop forgets the entry's results and per-pod state, keeping its memory.
func (e *classEntry) drop() {
	e.ready = false
	e.rank.valid = false
	e.nodeSet = 0
	clear(e.pfs)
	clear(e.fused)
	e.pfs, e.fused, e.pp = e.pfs[:0], e.fused[:0], nil
	clear(e.blocks)
	e.n = 0
	e.shaped = false
	clear(e.spfs)
	clear(e.rpfs)
	e.spfs, e.rpfs, e.sfused, e.rfused, e.shape, e.static = nil, nil, nil, nil, nil, nil
}

// prepare makes e ready for node set nodeSet of n nodes with the cycle's
// prepared filters (s.pfs after fuse, copied) and profile, and marks every
// node unknown.
func (e *classEntry) prepare(s *Scheduler, pp scoring.PodProfile, vc nodeview.View, pod *snapshot.PodInfo, n int) {
	nodeSet := vc.NodeSetVersion()
	e.drop()
	e.fused = make([]fusedFilter, 0, len(s.pfs))
	for _, pf := range s.pfs {
		if ff, ok := pf.(*fusedFilter); ok {
			e.fused = append(e.fused, *ff)
			pf = &e.fused[len(e.fused)-1]
		}
		e.pfs = append(e.pfs, pf)
	}
	e.names = append(e.names[:0], s.pfNames...)
	e.diag.reset()
	e.pp, e.nodeSet, e.n, e.ready = pp, nodeSet, n, true
	k := pp.NumNormalizing()
	e.byMax = true
	for j := range k {
		e.byMax = e.byMax && pp.NormalizesByMax(j)
	}
	// The shared shapes path serves cycles that score every node without
	// breakdowns (s.percentage and s.breakdown are the Scheduler's for
	// good, and n the node set's).
	if e.byMax && !s.breakdown && numFeasibleNodesToFind(s.percentage, n) >= n && pp.Split() &&
		s.classes.prepareShaped(e, vc, pod) {
		e.shaped = true
		return
	}
	nb := (n + layout.BlockSize - 1) / layout.BlockSize
	e.blocks = resize(e.blocks, nb)
	clear(e.blocks)             // versions are never 0 for a block with nodes
	e.feas = resize(e.feas, nb) // read only in blocks seen
	e.need = needOf(e.pfs)
	e.seen = resize(e.seen, nb) // read only in blocks seen (blocks[b] != 0)
	e.okm = resize(e.okm, nb)
	e.plain = resize(e.plain, n)
	if cap(e.raw) < k {
		e.raw = make([][]int64, k)
	}
	e.raw = e.raw[:k]
	for j := range e.raw {
		e.raw[j] = resize(e.raw[j], n)
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// refreshBlock recomputes the nodes of block b that changed since e last
// saw it: those that moved since (the caps table's moved ticks,
// equivalence_caps.go) are filtered again and, if they pass, scored —
// unless the block's capacities show that one of e's filters fails on all
// of its nodes: then every node of the block is infeasible and none is
// filtered; a node whose own capacities show it is not filtered either.
// On an error (a scorer out of range) the entry is dropped.
func (c *classCache) refreshBlock(e *classEntry, vc nodeview.View, b int) error {
	v := vc.BlockVersion(b)
	if v == e.blocks[b] {
		return nil
	}
	nodes, _ := vc.Block(b)
	lo := b * layout.BlockSize
	bc, own := c.caps.block(vc, b)
	moved := c.caps.moved[lo : lo+len(nodes)]
	if e.need.active && e.need.rejects(bc) {
		e.okm[b], e.feas[b], e.blocks[b], e.seen[b] = 0, 0, v, c.caps.clock
		return nil
	}
	all := e.blocks[b] == 0 // never seen: the entry holds another class's results
	since, mask := e.seen[b], e.okm[b]
	if all {
		mask = 0
	}
	c.batch, c.batchIdx = c.batch[:0], c.batchIdx[:0]
	var vis visits
	for j := range nodes {
		if moved[j] > since || all {
			vis.add(j)
		}
	}
	for i, k := range vis.start(nodes) {
		vis.ahead(nodes, i)
		j := int(k)
		ni := nodes[j]
		fits := false
		if !e.need.active || !e.need.rejects(&own[j]) {
			c.scratch, fits = fitsAll(e.pfs, ni, c.scratch)
		}
		mask &^= 1 << j
		if fits {
			mask |= 1 << j
			c.batch = append(c.batch, ni)
			c.batchIdx = append(c.batchIdx, int32(lo+j))
		}
	}
	if len(c.batch) > 0 {
		tmp := resize(c.tmp, len(c.batch))
		c.tmp = tmp
		clear(tmp)
		if err := e.pp.AddPlain(c.batch, tmp); err != nil {
			clear(c.batch)
			e.drop()
			return err
		}
		for j, i := range c.batchIdx {
			e.plain[i] = tmp[j]
		}
		for k := range e.raw {
			e.pp.Raw(k, c.batch, tmp)
			for j, i := range c.batchIdx {
				e.raw[k][i] = tmp[j]
			}
		}
		clear(c.batch)
	}
	e.okm[b], e.feas[b], e.blocks[b], e.seen[b] = mask, int32(bits.OnesCount64(mask)), v, c.caps.clock
	return nil
}

// prefetchAhead is how many visits ahead a [visits] pass asks for a
// node's head: a visit's work (the filters on lines already in cache)
// is short, a miss on the head long.
const prefetchAhead = 4

// visits is the nodes of a block that a pass visits, in order (indexes
// into the block), so that the pass can ask the processor for their
// heads ahead of the visits (internal/prefetch): a pass over the nodes
// that moved in a block of a large cluster otherwise stalls on each
// node's head, a miss. Add the visits, then range over start and call
// ahead at each.
type visits struct {
	idx [layout.BlockSize]uint8
	n   int
}

func (v *visits) add(j int) { v.idx[v.n] = uint8(j); v.n++ }

// start asks for the first prefetchAhead visits' heads and returns the
// visits' indexes.
func (v *visits) start(nodes []*snapshot.NodeInfo) []uint8 {
	for _, j := range v.idx[:min(v.n, prefetchAhead)] {
		prefetch.Head(nodes[j])
	}
	return v.idx[:v.n]
}

// ahead asks for the head of the visit prefetchAhead after the i-th.
func (v *visits) ahead(nodes []*snapshot.NodeInfo, i int) {
	if i += prefetchAhead; i < v.n {
		prefetch.Head(nodes[v.idx[i]])
	}
}

// okBits returns the bits of block b's ok mask for its nodes lo-b×BlockSize
// up to hi-b×BlockSize (exclusive; lo < hi, both in the block).
func okBits(mask uint64, b, lo, hi int) uint64 {
	a := lo - b*layout.BlockSize
	return mask >> a << a & (^uint64(0) >> (layout.BlockSize - (hi - b*layout.BlockSize)))
}

// fitsAll reports whether ni passes every prepared filter, keeping no
// reasons (scratch takes them; it is returned for reuse).
func fitsAll(pfs []PodFilter, ni *snapshot.NodeInfo, scratch []Reason) ([]Reason, bool) {
	if scratch == nil {
		scratch = make([]Reason, 0, 16)
	}
	for _, f := range pfs {
		if ff, ok := f.(*fusedFilter); ok {
			if !ff.fits(ni) {
				return scratch, false
			}
		} else if scratch = f.Filter(ni, scratch[:0]); len(scratch) > 0 {
			clear(scratch)
			return scratch[:0], false
		}
	}
	return scratch, true
}

// runClass runs the cached cycle for class e and reports whether it
// decided d; kind is then set to served, or to Diagnosed when no node is
// feasible and d carries the Diagnosis made from the class's reason kinds
// (diagnoseClass). Otherwise d is reset for the full cycle, which runs
// instead: after an error (the class is dropped, and kind stays) or when
// no node is feasible and diagnoseClass declined (kind is set to
// Diagnosed).
func (s *Scheduler) runClass(e *classEntry, vc nodeview.View, d *Decision, served *uint64, kind **uint64) bool {
	ok, err := s.scheduleClass(e, vc, d)
	switch {
	case err != nil:
		e.drop()
	case ok:
		*kind = served
		return true
	default:
		*kind = &s.classes.stats.Diagnosed
		if s.diagnoseClass(e, vc, d) { // equivalence_diag.go
			return true
		}
	}
	*d = Decision{Pod: d.Pod}
	return false
}

// scheduleClass is the cycle for a pod of class e over vc, every node a
// candidate, from the cache: it visits the nodes from s.next (wrapping)
// as the uncached cycle does, refreshing each block on first touch, takes
// the feasible ones until numToFind, then normalises and leaves the
// totals in s.totals and the nodes in s.feasible for finish. ok is false
// when no node is feasible (the caller then runs the full cycle for its
// diagnosis; s.next is not moved).
func (s *Scheduler) scheduleClass(e *classEntry, vc nodeview.View, d *Decision) (ok bool, err error) {
	c := &s.classes
	n := e.n
	numToFind := numFeasibleNodesToFind(s.percentage, n)
	if e.shaped {
		return s.scheduleShaped(e, vc, d) // equivalence_shape.go
	}
	if numToFind >= n && e.byMax && !s.breakdown {
		return s.scheduleRanked(e, vc, d) // ranked.go
	}
	e.rank.valid = false // blocks are refreshed below without it
	fe := resize(s.feasible, n)
	s.totals = resize(s.totals, max(n, cap(s.totals)))
	tot := s.totals[:n]
	m, processed := 0, n
	start := s.next % n
	c.segs = c.segs[:0]
scan:
	for _, r := range [2][2]int{{start, n}, {0, start}} {
		for lo := r[0]; lo < r[1]; {
			b := lo / layout.BlockSize
			hi := min(r[1], (b+1)*layout.BlockSize)
			if err := c.refreshBlock(e, vc, b); err != nil {
				clear(fe[:m])
				return false, fmt.Errorf("framework: scoring pod %s: %w", d.Pod.Key(), err)
			}
			if e.feas[b] == 0 { // nothing to gather
				lo = hi
				continue
			}
			// The feasible nodes of the segment, from the block's ok bits.
			bn, _ := vc.Block(b)
			blo := b * layout.BlockSize
			plain := e.plain[blo : blo+len(bn)]
			for x := okBits(e.okm[b], b, lo, hi); x != 0; x &= x - 1 {
				j := bits.TrailingZeros64(x)
				fe[m], tot[m] = bn[j], plain[j]
				if m++; m == numToFind {
					processed = (blo+j-start+n)%n + 1
					c.segs = append(c.segs, [2]int32{int32(lo), int32(blo + j + 1)})
					break scan
				}
			}
			c.segs = append(c.segs, [2]int32{int32(lo), int32(hi)})
			lo = hi
		}
	}
	s.feasible = fe[:m]
	d.Feasible, d.Evaluated = m, processed
	if m == 0 {
		return false, nil
	}
	totals := tot[:m]
	for k := range e.raw {
		// The normaliser's raw scores of the same nodes, gathered the
		// same way over the visited segments (each within one block).
		raw := resize(c.rawBuf, n)
		c.rawBuf = raw
		src, mk := e.raw[k], 0
		for _, sg := range c.segs {
			lo, hi := int(sg[0]), int(sg[1])
			b := lo / layout.BlockSize
			r := src[b*layout.BlockSize : min(n, (b+1)*layout.BlockSize)]
			for x := okBits(e.okm[b], b, lo, hi); x != 0; x &= x - 1 {
				raw[mk] = r[bits.TrailingZeros64(x)]
				mk++
			}
		}
		if err := e.pp.AddNormalized(k, s.feasible, raw[:m], totals); err != nil {
			return false, fmt.Errorf("framework: scoring pod %s: %w", d.Pod.Key(), err)
		}
	}
	s.next = (s.next + processed) % n
	return true, nil
}

// isNodeLocal reports whether f keeps internal/scoring's NodeLocal
// promise (its verdicts may be cached per node and shared between pods
// with the same spec): every built-in filter does (GPUDevices leaves out,
// at PreFilter, model names no node has; that set changes only with the
// node set); a custom filter says so with a method NodeLocal() bool
// returning true. Exactly these types: one embedding a built-in filter
// may read anything else, and does not inherit the promise.
func isNodeLocal(f Filter) bool {
	switch f.(type) {
	case nodeNamePlugin, *nodeNamePlugin, nodeUnschedulablePlugin, *nodeUnschedulablePlugin, taintTolerationPlugin, *taintTolerationPlugin,
		*nodeAffinityPlugin, nodePortsPlugin, *nodePortsPlugin, *nodeResourcesFitPlugin, gpuDevicesPlugin, *gpuDevicesPlugin:
		return true
	}
	return scoring.IsNodeLocal(f)
}
