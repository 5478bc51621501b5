package framework

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/scoring"
	"github.com/schedkit/schedkit/snapshot"
)

// Shared request shapes: the equivalence cache's path for a class whose
// filters and scorers split into two parts (see shapeSplit and
// internal/scoring's PodProfile.Split):
//
//   - the static part reads the node object alone, never the node's pods
//     (NodeUnschedulable, TaintToleration, NodeAffinity, NodeName;
//     ImageLocality, TaintToleration's and NodeAffinity's scores). While
//     the node set is unchanged (layout.View.NodeSetVersion) it does not
//     change. It is evaluated once per node set and kept per static key
//     (staticEntry: the pod's tolerations, node selector, node affinity,
//     node name and images), shared by every class with that key: per
//     node a byte, 0 when a static filter rejects the node, else the
//     node's static group, one per distinct (weighted static plain score,
//     raw scores of the normalisers) — few in practice (at most
//     maxShapeGroups, else the class takes the per-node path);
//   - the request part reads the pod's requests and host ports and the
//     node's amounts and used ports (NodeResourcesFit, NodePorts;
//     LeastAllocated, MostAllocated, RequestedToCapacityRatio,
//     BalancedAllocation). It is kept per request shape (shapeEntry),
//     shared by every class with the same requests and host ports,
//     refreshed for the nodes changed since the shape last looked: a pod
//     placed costs each shape in use one node, not each class.
//
// A pod of the class then costs the shape's changed nodes, O(blocks), and
// passes over one byte and one int64 per node: the first counts per
// group the feasible nodes and their highest request score; the
// normalisers' maxima are those of the groups with a feasible node; each
// group's static total follows (normalised with AddNormalizedByMax
// exactly as the uncached cycle normalises each node), then the highest
// total; the second pass counts its ties per block, and the k-th tie in
// visiting order from the rotating start, k drawn as selectHost draws
// it, is found from the block counts. The decision is that of the
// uncached cycle: every node is visited (the path is taken only when the
// cycle scores every node, without breakdowns), a node is feasible
// exactly when both parts' filters pass, and its total is the sum of the
// same weighted scores.

// maxShapeGroups is the most static groups a class may have on the shared
// shapes path (its per-node code is a byte, 0 meaning rejected).
const maxShapeGroups = 255

// shapeEntry is one request shape's per-node results: dyn[i] is the
// weighted sum of the request-only scorers' scores of node i, or -1 when
// the request-only filters reject it (weights are at least 1 and scores
// at least 0, so a sum is never negative).
type shapeEntry struct {
	lruEntry
	nodeSet int64
	n       int
	pfs     []PodFilter   // the request-only filters
	fused   []fusedFilter // cap fixed at preparation
	pp      scoring.PodProfile
	pos     uint64 // the changeLog position its results are for
	dyn     []int64
}

// changeLog is a Scheduler's record of which nodes changed, shared by
// its request shapes: the node and block versions as last synced, and
// the indexes of the nodes found changed, in order, log[j] at position
// base+j. A shape whose results are for position p (all nodes as of
// then) is brought up to date by evaluating the nodes logged since p;
// with p < base (the log was restarted or trimmed since) it evaluates
// every node. Invariant: a node not logged since p has, in the view last
// synced, the version it had at p.
type changeLog struct {
	nodeSet int64
	n       int
	blocks  []int64
	vers    []int64
	log     []int32
	base    uint64
}

// sync brings the log up to vc: O(blocks) plus 64 per changed block.
// A new node set restarts it (every shape then evaluates every node).
func (cl *changeLog) sync(vc nodeview.View) {
	n, nb := vc.NumNodes(), vc.NumBlocks()
	if nodeSet := vc.NodeSetVersion(); nodeSet != cl.nodeSet || n != cl.n || cl.base == 0 {
		cl.base += uint64(len(cl.log)) + 1
		cl.log = cl.log[:0]
		cl.nodeSet, cl.n = nodeSet, n
		cl.blocks, cl.vers = resize(cl.blocks, nb), resize(cl.vers, n)
		for b := range nb {
			cl.blocks[b] = vc.BlockVersion(b)
			_, vers := vc.Block(b)
			copy(cl.vers[b*layout.BlockSize:], vers)
		}
		return
	}
	if len(cl.log) > 4*n+1024 { // trim: shapes behind evaluate every node
		cl.base += uint64(len(cl.log))
		cl.log = cl.log[:0]
	}
	for b := range nb {
		v := vc.BlockVersion(b)
		if v == cl.blocks[b] {
			continue
		}
		_, vers := vc.Block(b)
		lo := b * layout.BlockSize
		seen := cl.vers[lo : lo+len(vers)]
		for j, nv := range vers {
			if seen[j] != nv {
				seen[j] = nv
				cl.log = append(cl.log, int32(lo+j))
			}
		}
		cl.blocks[b] = v
	}
}

// end is the position after the last logged change.
func (cl *changeLog) end() uint64 { return cl.base + uint64(len(cl.log)) }

// staticEntry is one static key's per-node groups for node set nodeSet
// of n nodes (valid when n > 0).
type staticEntry struct {
	lruEntry
	nodeSet int64
	n       int
	code    []uint8   // per node: 0 rejected by a static filter, else its group g
	gPlain  []int64   // gPlain[g-1]: group g's weighted static plain score
	gRaw    [][]int64 // gRaw[k][g-1]: group g's raw score of normaliser k
	gRep    []int32   // gRep[g-1]: a node of group g
}

// lruEntry is what lru keeps of an entry: its key, when it was last used,
// and a generation that changes when it is dropped, so that a class
// holding a pointer to it knows.
type lruEntry struct {
	key  string
	used uint64
	gen  uint64
}

func (e *lruEntry) meta() *lruEntry { return e }

// lru is a set of entries by key, the least recently used dropped when a
// new one does not fit.
type lru[E any, P interface {
	*E
	meta() *lruEntry
	reset()
}] struct {
	entries []P
	index   map[string]P
	gen     uint64
}

// find returns the entry of key, made (empty, reset) if there is none;
// with limit entries or more, the least recently used ones are dropped
// first and the last one's memory reused. It marks the entry used at
// tick. O(1), or O(entries) when it drops.
func (c *lru[E, P]) find(key string, limit int, tick uint64) P {
	x := c.index[key]
	if x == nil {
		if c.index == nil {
			c.index = make(map[string]P)
		}
		limit = max(limit, 1)
		for len(c.entries) > limit {
			last := len(c.entries) - 1
			c.evict()
			c.entries[last] = nil
			c.entries = c.entries[:last]
		}
		if len(c.entries) < limit {
			x = new(E)
			c.entries = append(c.entries, x)
		} else {
			x = c.entries[c.evict()]
		}
		x.meta().key = key
		c.index[key] = x
	}
	x.meta().used = tick
	return x
}

// hold returns x, the entry of key a holder found when x had generation
// gen, if it still has it, else the entry find returns; either is marked
// used at tick.
func (c *lru[E, P]) hold(x P, gen uint64, key string, limit int, tick uint64) P {
	if x == nil || x.meta().gen != gen {
		return c.find(key, limit, tick)
	}
	x.meta().used = tick
	return x
}

// evict drops the least recently used entry, moves it to the end of
// c.entries and returns its index there. O(entries).
func (c *lru[E, P]) evict() int {
	lru := 0
	for i, x := range c.entries {
		if x.meta().used < c.entries[lru].meta().used {
			lru = i
		}
	}
	last := len(c.entries) - 1
	c.entries[lru], c.entries[last] = c.entries[last], c.entries[lru]
	c.drop(c.entries[last])
	return last
}

// drop forgets x's results (keeping its memory) and takes it out of the
// index; its generation changes.
func (c *lru[E, P]) drop(x P) {
	m := x.meta()
	if c.index[m.key] == x {
		delete(c.index, m.key)
	}
	c.gen++
	m.gen = c.gen
	x.reset()
}

func (sh *shapeEntry) reset() {
	sh.pp, sh.nodeSet, sh.n = nil, 0, 0
	clear(sh.pfs)
	clear(sh.fused)
	sh.pfs, sh.fused, sh.pos = sh.pfs[:0], sh.fused[:0], 0
}

func (st *staticEntry) reset() { st.nodeSet, st.n = 0, 0 }

// shapeSplit splits a class's prepared filters (after fuse) into the
// static ones and the request ones; ok is false when one of them is of
// neither kind (a custom filter, GPUDevices, PodTopologySpread, ...).
// Fused runs are split into two fusedFilters of their own.
func shapeSplit(pfs []PodFilter) (static, requests []PodFilter, sf, rf []fusedFilter, ok bool) {
	sf, rf = make([]fusedFilter, 0, len(pfs)), make([]fusedFilter, 0, len(pfs))
	for _, pf := range pfs {
		switch f := pf.(type) {
		case *fusedFilter:
			if f.gpu != nil {
				return nil, nil, nil, nil, false
			}
			if f.unschedulable || f.hasTaints {
				sf = append(sf, fusedFilter{unschedulable: f.unschedulable, taints: f.taints, hasTaints: f.hasTaints, names: f.names})
				static = append(static, &sf[len(sf)-1])
			}
			if f.fit != nil {
				rf = append(rf, fusedFilter{fit: f.fit, names: f.names})
				requests = append(requests, &rf[len(rf)-1])
			}
		case unschedulableFilter, taintFilter, nodeNameFilter, *affinityFilter:
			static = append(static, pf)
		case *fitFilter, portsFilter:
			requests = append(requests, pf)
		default:
			return nil, nil, nil, nil, false
		}
	}
	return static, requests, sf, rf, true
}

// partKeys returns the keys of pod's static part and request shape:
// everything the static filters and scorers read of a pod (tolerations,
// node selector, node affinity, node name, the images of its containers,
// init containers and image volumes, in order) and everything the
// request ones read (its containers' and init containers' resources,
// restart policies and ports, its overhead and pod-level resources, then
// the requests snapshot derives, which also depend on the status of a
// pod resized in place), protobuf encoded.
func partKeys(pod *snapshot.PodInfo) (static, shape string, err error) {
	src := &pod.Pod().Spec
	st := v1.PodSpec{Tolerations: src.Tolerations, NodeSelector: src.NodeSelector, NodeName: src.NodeName}
	if a := src.Affinity; a != nil && a.NodeAffinity != nil {
		st.Affinity = &v1.Affinity{NodeAffinity: a.NodeAffinity}
	}
	rq := v1.PodSpec{Overhead: src.Overhead, Resources: src.Resources}
	for _, cs := range [2]*[]v1.Container{&src.InitContainers, &src.Containers} {
		imgs, reqs := make([]v1.Container, len(*cs)), make([]v1.Container, len(*cs))
		for i, c := range *cs {
			imgs[i] = v1.Container{Image: c.Image}
			reqs[i] = v1.Container{Resources: c.Resources, RestartPolicy: c.RestartPolicy, Ports: c.Ports}
		}
		if cs == &src.Containers {
			st.Containers, rq.Containers = imgs, reqs
		} else {
			st.InitContainers, rq.InitContainers = imgs, reqs
		}
	}
	for _, vol := range src.Volumes {
		if vol.Image != nil {
			st.Volumes = append(st.Volumes, v1.Volume{VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: vol.Image.Reference}}})
		}
	}
	sb, err := st.Marshal()
	if err != nil {
		return "", "", fmt.Errorf("framework: pod %s: encoding its static part: %w", pod.Key(), err)
	}
	rb, err := rq.Marshal()
	if err != nil {
		return "", "", fmt.Errorf("framework: pod %s: encoding its requests: %w", pod.Key(), err)
	}
	req := pod.Requests()
	rb = appendVector(rb, &req.Pending)
	rb = appendVector(rb, &req.Requested)
	rb = appendVector(rb, &req.Scoring)
	return string(sb), string(rb), nil
}

// prepareShaped sets e up for the shared shapes path over vc (node set of
// e.n nodes): splits its filters, makes its keys and finds (or evaluates)
// its static part. It reports false, leaving e for the per-node path,
// when the filters do not split, the pod's keys cannot be made, a static
// score is out of range, or the nodes have too many static groups.
func (c *classCache) prepareShaped(e *classEntry, vc nodeview.View, pod *snapshot.PodInfo) bool {
	static, requests, sf, rf, ok := shapeSplit(e.pfs)
	if !ok {
		return false
	}
	sk, rk, err := partKeys(pod)
	if err != nil {
		return false
	}
	e.staticKey, e.shapeKey = sk, rk
	e.spfs, e.sfused = static, sf
	e.rpfs, e.rfused = requests, rf
	e.shape, e.static = nil, nil
	_, err = c.staticFor(e, vc)
	return err == nil
}

// staticFor returns e's static part over vc, evaluating it if it is not
// cached for vc's node set. Errors (a static score out of range, too many
// groups) drop the entry.
func (c *classCache) staticFor(e *classEntry, vc nodeview.View) (*staticEntry, error) {
	st := c.statics.hold(e.static, e.staticGen, e.staticKey, c.capacity(e.n), c.tick)
	e.static, e.staticGen = st, st.gen
	nodeSet := vc.NodeSetVersion()
	if st.n == e.n && st.nodeSet == nodeSet {
		return st, nil
	}
	if err := c.evalStatic(st, e, vc); err != nil {
		c.statics.drop(st)
		return nil, err
	}
	st.nodeSet, st.n = nodeSet, e.n
	return st, nil
}

// errTooManyGroups: the nodes have more than maxShapeGroups static groups.
var errTooManyGroups = fmt.Errorf("framework: more than %d static groups", maxShapeGroups)

// evalStatic evaluates the static part of class e (its static filters and
// its profile's node-object scorers) on every node of vc into st.
// O(nodes × (filters + scorers + groups)).
func (c *classCache) evalStatic(st *staticEntry, e *classEntry, vc nodeview.View) error {
	n := e.n
	st.code = resize(st.code, n)
	st.gPlain = st.gPlain[:0]
	st.gRaw = resize(st.gRaw, e.pp.NumNormalizing())
	for k := range st.gRaw {
		st.gRaw[k] = st.gRaw[k][:0]
	}
	st.gRep = st.gRep[:0]
	nk := len(st.gRaw)
	raws := resize(c.raws, nk)
	c.raws = raws
	defer clear(c.batch)
	for b := range vc.NumBlocks() {
		nodes, _ := vc.Block(b)
		lo := b * layout.BlockSize
		c.batch, c.batchIdx = c.batch[:0], c.batchIdx[:0]
		for j, ni := range nodes {
			var fits bool
			c.scratch, fits = fitsAll(e.spfs, ni, c.scratch)
			st.code[lo+j] = 0
			if fits {
				c.batch = append(c.batch, ni)
				c.batchIdx = append(c.batchIdx, int32(lo+j))
			}
		}
		m := len(c.batch)
		if m == 0 {
			continue
		}
		plain := resize(c.tmp, m)
		c.tmp = plain
		clear(plain)
		if err := e.pp.AddPlainPart(c.batch, plain, false); err != nil {
			return err
		}
		for k := range nk {
			raws[k] = resize(raws[k], m)
			e.pp.Raw(k, c.batch, raws[k])
		}
		last := 0
		for j, i := range c.batchIdx {
			// The node's group: the last one matched, else a search.
			g := 0
			if last > 0 && st.sameGroup(last-1, plain[j], raws, j) {
				g = last
			} else {
				for h := range st.gPlain {
					if st.sameGroup(h, plain[j], raws, j) {
						g = h + 1
						break
					}
				}
			}
			if g == 0 {
				if len(st.gPlain) == maxShapeGroups {
					return errTooManyGroups
				}
				st.gPlain = append(st.gPlain, plain[j])
				for k := range nk {
					st.gRaw[k] = append(st.gRaw[k], raws[k][j])
				}
				st.gRep = append(st.gRep, i)
				g = len(st.gPlain)
			}
			st.code[i], last = uint8(g), g
		}
	}
	return nil
}

// sameGroup reports whether static group h has the plain score plain and
// the raw scores raws[k][j].
func (st *staticEntry) sameGroup(h int, plain int64, raws [][]int64, j int) bool {
	if st.gPlain[h] != plain {
		return false
	}
	for k := range raws {
		if st.gRaw[k][h] != raws[k][j] {
			return false
		}
	}
	return true
}

// shapeFor returns e's shape over vc, refreshed: every node changed since
// the shape last looked (c.changes, synced to vc) is filtered and scored
// again. A shape not cached is made (dropping the least recently used one
// when there are as many as the capacity for n nodes). On an error (a
// score out of range) the shape is dropped.
func (c *classCache) shapeFor(e *classEntry, vc nodeview.View) (*shapeEntry, error) {
	sh := c.shapes.hold(e.shape, e.shapeGen, e.shapeKey, c.capacity(e.n), c.tick)
	e.shape, e.shapeGen = sh, sh.gen
	cl := &c.changes
	nodeSet := vc.NodeSetVersion()
	if sh.pp == nil || sh.nodeSet != nodeSet || sh.n != e.n {
		sh.prepare(e, nodeSet)
	}
	var err error
	if sh.pos < cl.base {
		for b := range vc.NumBlocks() {
			nodes, _ := vc.Block(b)
			if err = c.evalShape(sh, nodes, nil, b*layout.BlockSize); err != nil {
				break
			}
		}
	} else if log := cl.log[sh.pos-cl.base:]; len(log) > 0 {
		c.logNodes = c.logNodes[:0]
		for _, i := range log {
			nodes, _ := vc.Block(int(i) / layout.BlockSize)
			c.logNodes = append(c.logNodes, nodes[int(i)%layout.BlockSize])
		}
		err = c.evalShape(sh, c.logNodes, log, 0)
		clear(c.logNodes)
	}
	if err != nil {
		c.shapes.drop(sh)
		return nil, err
	}
	sh.pos = cl.end()
	return sh, nil
}

// prepare makes sh ready for node set nodeSet with class e's request
// filters and profile (any class of the shape gives the same results),
// every node unknown.
func (sh *shapeEntry) prepare(e *classEntry, nodeSet int64) {
	clear(sh.pfs)
	sh.fused = make([]fusedFilter, 0, len(e.rfused))
	sh.pfs = sh.pfs[:0]
	for _, pf := range e.rpfs {
		if ff, ok := pf.(*fusedFilter); ok {
			sh.fused = append(sh.fused, *ff)
			pf = &sh.fused[len(sh.fused)-1]
		}
		sh.pfs = append(sh.pfs, pf)
	}
	sh.pp, sh.nodeSet, sh.n, sh.pos = e.pp, nodeSet, e.n, 0
	sh.dyn = resize(sh.dyn, e.n)
}

// evalShape filters and scores nodes for sh: nodes[j] is node idx[j], or
// lo+j when idx is nil.
func (c *classCache) evalShape(sh *shapeEntry, nodes []*snapshot.NodeInfo, idx []int32, lo int) error {
	c.batch, c.batchIdx = c.batch[:0], c.batchIdx[:0]
	defer clear(c.batch)
	for j, ni := range nodes {
		i := lo + j
		if idx != nil {
			i = int(idx[j])
		}
		var fits bool
		c.scratch, fits = fitsAll(sh.pfs, ni, c.scratch)
		sh.dyn[i] = -1
		if fits {
			c.batch = append(c.batch, ni)
			c.batchIdx = append(c.batchIdx, int32(i))
		}
	}
	if len(c.batch) == 0 {
		return nil
	}
	tmp := resize(c.tmp, len(c.batch))
	c.tmp = tmp
	clear(tmp)
	if err := sh.pp.AddPlainPart(c.batch, tmp, true); err != nil {
		return err
	}
	for j, i := range c.batchIdx {
		sh.dyn[i] = tmp[j]
	}
	return nil
}

// shapeGroups is scheduleShaped's per-group scratch, indexed by a node's
// code (a byte: no bounds checks).
type shapeGroups struct {
	cnt [maxShapeGroups + 1]int32 // feasible nodes
	top [maxShapeGroups + 1]int64 // their highest request score
	// lanes of the first pass, so that consecutive nodes of one group do
	// not wait on each other's store
	lcnt [4][maxShapeGroups + 1]int32
	ltop [4][maxShapeGroups + 1]int64
	want [maxShapeGroups + 1]int64 // the request score a node needs to have the highest total; -2: none
	// per block: how many nodes have the highest total
	ties []int32
}

// scheduleShaped is scheduleRanked for a class on the shared shapes path:
// it leaves the chosen node alone in s.feasible and its total in
// s.totals for finish, having drawn among ties itself. ok is false when
// no node is feasible; an error (a score out of range) means the entry
// must be dropped. Three passes over the nodes' codes and request
// scores, without data-dependent branches but the last's stop.
func (s *Scheduler) scheduleShaped(e *classEntry, vc nodeview.View, d *Decision) (ok bool, err error) {
	c := &s.classes
	st, err := c.staticFor(e, vc)
	if err != nil {
		return false, fmt.Errorf("framework: scoring pod %s: %w", d.Pod.Key(), err)
	}
	c.changes.sync(vc)
	sh, err := c.shapeFor(e, vc)
	if err != nil {
		return false, fmt.Errorf("framework: scoring pod %s: %w", d.Pod.Key(), err)
	}
	n, ng := e.n, len(st.gPlain)+1
	if c.groups == nil {
		c.groups = new(shapeGroups)
	}
	sg := c.groups
	cnt, top, want := &sg.cnt, &sg.top, &sg.want
	for l := range sg.lcnt {
		clear(sg.lcnt[l][:ng])
		for g := range ng {
			sg.ltop[l][g] = -1
		}
	}
	code, dyn := st.code[:n], sh.dyn[:n]
	c0, c1, c2, c3 := &sg.lcnt[0], &sg.lcnt[1], &sg.lcnt[2], &sg.lcnt[3]
	t0, t1, t2, t3 := &sg.ltop[0], &sg.ltop[1], &sg.ltop[2], &sg.ltop[3]
	i := 0
	for ; i+4 <= n; i += 4 {
		// Infeasible nodes are counted in group 0, which is ignored.
		cs, ds := code[i:i+4:i+4], dyn[i:i+4:i+4]
		g0, g1, g2, g3 := cs[0], cs[1], cs[2], cs[3]
		x0, x1, x2, x3 := ds[0], ds[1], ds[2], ds[3]
		if x0 < 0 {
			g0 = 0
		}
		if x1 < 0 {
			g1 = 0
		}
		if x2 < 0 {
			g2 = 0
		}
		if x3 < 0 {
			g3 = 0
		}
		c0[g0]++
		c1[g1]++
		c2[g2]++
		c3[g3]++
		t0[g0] = max(t0[g0], x0)
		t1[g1] = max(t1[g1], x1)
		t2[g2] = max(t2[g2], x2)
		t3[g3] = max(t3[g3], x3)
	}
	for ; i < n; i++ {
		g, x := code[i], dyn[i]
		if x < 0 {
			g = 0
		}
		c0[g]++
		t0[g] = max(t0[g], x)
	}
	for g := range ng {
		cnt[g] = c0[g] + c1[g] + c2[g] + c3[g]
		top[g] = max(t0[g], t1[g], t2[g], t3[g])
	}
	// The groups with a feasible node: the normalisers' maxima among them,
	// then each group's static total.
	c.batch, c.batchIdx = c.batch[:0], c.batchIdx[:0]
	feasible := 0
	for g := 1; g < ng; g++ {
		if cnt[g] == 0 {
			continue
		}
		feasible += int(cnt[g])
		i := int(st.gRep[g-1])
		nodes, _ := vc.Block(i / layout.BlockSize)
		c.batch = append(c.batch, nodes[i%layout.BlockSize])
		c.batchIdx = append(c.batchIdx, int32(g))
	}
	defer clear(c.batch)
	d.Feasible, d.Evaluated = feasible, n
	if feasible == 0 {
		return false, nil
	}
	m := len(c.batch)
	gs := resize(c.tmp, m)
	c.tmp = gs
	for j, g := range c.batchIdx {
		gs[j] = st.gPlain[g-1]
	}
	raw := resize(c.rawBuf, max(m, cap(c.rawBuf)))[:m]
	c.rawBuf = raw[:cap(raw)]
	for k := range st.gRaw {
		mx := int64(0)
		for j, g := range c.batchIdx {
			raw[j] = st.gRaw[k][g-1]
			mx = max(mx, raw[j])
		}
		if err := e.pp.AddNormalizedByMax(k, c.batch, raw, gs, mx); err != nil {
			return false, fmt.Errorf("framework: scoring pod %s: %w", d.Pod.Key(), err)
		}
	}
	// The highest total and per group the request score a node needs to
	// have it (-2: none; infeasible nodes have -1).
	var best int64
	for j, g := range c.batchIdx {
		if t := gs[j] + top[g]; j == 0 || t > best {
			best = t
		}
	}
	for g := range ng {
		want[g] = -2
	}
	for j, g := range c.batchIdx {
		if gs[j]+top[g] == best {
			want[g] = top[g]
		}
	}
	// Its ties, per block.
	nb := (n + layout.BlockSize - 1) / layout.BlockSize
	sg.ties = resize(sg.ties, nb)
	nties := 0
	for b := range nb {
		lo, hi := blockRange(b, n)
		cs, ds := code[lo:hi], dyn[lo:hi]
		ds = ds[:len(cs)]
		t := int32(0)
		for j, g := range cs {
			if ds[j] == want[g] {
				t++
			}
		}
		sg.ties[b] = t
		nties += int(t)
	}
	// The k-th tie in visiting order from the rotating start, k drawn as
	// selectHost draws it.
	k := 0
	if nties > 1 {
		k = s.rng.IntN(nties)
	}
	chosen := kthTie(n, s.next%n, k, func(b int) int { return int(sg.ties[b]) },
		func(i int) bool { return dyn[i] == want[code[i]] })
	if chosen < 0 {
		panic("framework: shared shapes cycle: the drawn tie was not found")
	}
	s.chooseAlone(vc, chosen, best)
	return true, nil
}
