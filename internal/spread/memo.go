package spread

import (
	"slices"
	"strconv"
	"sync"
	"unique"

	"github.com/schedkit/schedkit/internal/layout"
)

// The per-block memo. The per-node groups (groups.go) make a pass read
// one entry per class instead of one per pod, but a pass still reads
// every node: O(nodes × groups per node) per pod scheduled. Between two
// pods of one workload, though, one node changes (the last pod bound),
// and a Snapshot or Fork says which: its nodes come in blocks of
// layout.BlockSize (64) with a version per block and per node that
// changes whenever the node changes, process-wide unique (layout.View).
// A [Memo] keeps, per query — the constraints' topology keys and
// selectors, the pod's namespace and what the pass counts (filter or
// score) — and per block: the block version it saw, per node its version,
// its value of each topology key and its matching pods per constraint,
// and per constraint the block's partial counts per domain. A pass then
// re-reads only the nodes whose version changed (their labels and
// groups) and sums the blocks' partial counts:
//
//	O(blocks × domains per block + changed nodes × (labels × constraints + groups))
//
// — for a zone constraint over 5,000 nodes, 79 blocks × 3 zones plus the
// one node changed since the last pod, instead of 5,000 nodes. A
// hostname constraint has a domain per node, so its pass stays O(nodes),
// each node a single entry read from the memo. Used only when every
// constraint's inclusion policies include every node for the pod (no
// required node affinity to honour, taints not honoured or nothing to
// honour): inclusion depends on the pod, the memo does not key on it.
//
// Memory: per query, per node of the cluster, one handle and one count
// per constraint; at most [maxQueries] queries (least recently used
// dropped). The memo holds no node or pod, so it keeps no snapshot alive.
// Its results are the same as the direct pass's whatever the memo holds
// (versions are never reused), so callers that find it busy (another
// goroutine holds it) run the direct pass instead of waiting.

// Blocks is the block structure of a snapshot.Snapshot or Fork (package
// nodeview's View satisfies Blocks[*snapshot.NodeInfo]; layout.View
// documents the methods).
type Blocks[N any] interface {
	NumNodes() int
	NumBlocks() int
	BlockVersion(b int) int64
	Block(b int) (nodes []N, versions []int64)
}

// mode says which nodes a pass counts, and under which domain.
type mode uint8

const (
	// modeFilter counts nodes with every constraint's key ([NewFilter]).
	modeFilter mode = iota
	// modeScoreAll is modeFilter without the hostname constraints
	// ([NewScore] with requireAll).
	modeScoreAll
	// modeScoreAny counts every node, a missing key as the domain "",
	// without the hostname constraints ([NewScore] without requireAll).
	modeScoreAny
)

// Memo caches per-block partial counts of PodTopologySpread passes (see
// above). The zero Memo is ready; safe for concurrent use (a pass that
// finds it in use does without it). [NewConfig] gives every Config one.
type Memo struct {
	mu      sync.Mutex
	queries []*query // most recently used first
	key     []byte   // scratch for the query key
}

// maxQueries bounds the queries a Memo keeps: the workloads a scheduler
// interleaves.
const maxQueries = 8

// maxClasses bounds a query's selector verdicts per constraint (a
// cluster with more pod classes recomputes them).
const maxClasses = 1 << 14

type query struct {
	key    string
	mode   mode
	ns     string
	cs     []Constraint // the first pod's (equal keys: equal selectors)
	ms     []*matcher   // per constraint, verdicts per pod class
	blocks []*block     // per block of the cluster last counted; nil: none yet
	// doms[i] numbers the domains of constraint i (not a hostname one)
	// for the node codes, in the order first seen, up to codeDomains;
	// append-only, so a code keeps its meaning for the query's life.
	doms [][]unique.Handle[string]
}

// Node codes. Every node of a block carries a code that names its
// inputs to a score: per constraint, a missing key, or its domain (a
// hostname constraint: its count of matching pods), so that two nodes
// with the same code (in one query) have the same raw score for any
// pod's pass, and [Score.rawWhole] computes it once per code instead of
// once per node. The code is mixed-radix over at most 2 constraints: a
// hostname constraint's count 0..codeCounts-1 or missing (radix
// codeCounts+1), another's domain number (query.doms) 0..codeDomains-1 or
// missing (radix codeDomains+1); a node beyond those (or a query of more
// constraints) has noCode.
const (
	codeCounts  = 15
	codeDomains = 7
	numCodes    = (codeCounts + 1) * (codeCounts + 1)
	noCode      = uint16(0xFFFF)
)

// code returns the node code of a node with values vs and counts cn of
// the query's constraints (numbering new domains). O(constraints ×
// codeDomains).
func (q *query) code(vs []unique.Handle[string], cn []int32) uint16 {
	if len(q.cs) > 2 {
		return noCode
	}
	var missing unique.Handle[string]
	code := 0
	for i := range q.cs {
		v := vs[i]
		if q.cs[i].hostname {
			x := codeCounts // missing
			if v != missing {
				if cn[i] < 0 || cn[i] >= codeCounts {
					return noCode
				}
				x = int(cn[i])
			}
			code = code*(codeCounts+1) + x
			continue
		}
		x := codeDomains // missing
		if v != missing {
			if q.doms == nil {
				q.doms = make([][]unique.Handle[string], len(q.cs))
			}
			ds := q.doms[i]
			if x = slices.Index(ds, v); x < 0 {
				if len(ds) == codeDomains {
					return noCode
				}
				x, q.doms[i] = len(ds), append(ds, v)
			}
		}
		code = code*(codeDomains+1) + x
	}
	return uint16(code)
}

// block is a query's memo of one block of nodes. Immutable once in a
// query: a refresh makes a new one, so that a [Score] may keep reading
// the blocks of its pass without the lock.
type block struct {
	version int64 // the block's version
	n       int   // nodes in the block
	// counted is the number of nodes the query's mode counts (all of
	// them in modeScoreAny, those with every key otherwise).
	counted int
	slotVer [layout.BlockSize]int64
	// code[j] is node j's node code (see query.code).
	code [layout.BlockSize]uint16
	// vals[j*k+i] is node j's value of constraint i's key (the zero
	// handle: missing), cnt[j*k+i] its pods constraint i matches; k
	// constraints.
	vals []unique.Handle[string]
	cnt  []int32
	// agg[i] is constraint i's partial count per domain over the
	// block's counted nodes (a domain of a counted node is there even
	// with 0).
	agg [][]domain
}

// memoCounts adds, for every constraint of cs (pod namespace ns), the
// matching pods per domain over bv's nodes that mode md counts to out
// (len(cs) entries), using and updating the memo, and returns the
// query's blocks for this pass (read-only; a fresh slice). It returns
// nil, adding nothing, when m or bv is nil or another pass holds the
// memo.
func memoCounts[N NodeInfo[P], P PodInfo](m *Memo, md mode, cs []Constraint, ns string, bv Blocks[N], out []domains) []*block {
	if m == nil || bv == nil || !m.mu.TryLock() {
		return nil
	}
	defer m.mu.Unlock()
	q := m.lookup(md, cs, ns)
	nb := bv.NumBlocks()
	if cap(q.blocks) < nb {
		q.blocks = append(q.blocks[:cap(q.blocks)], make([]*block, nb-cap(q.blocks))...)
	}
	q.blocks = q.blocks[:nb]
	for b, e := range q.blocks {
		if v := bv.BlockVersion(b); e == nil || v != e.version {
			nodes, vers := bv.Block(b)
			e = refresh(q, e, nodes, vers)
			e.version = v
			q.blocks[b] = e
		}
		for i := range e.agg {
			for _, d := range e.agg[i] {
				out[i].add(d.v, d.n)
			}
		}
	}
	return append([]*block(nil), q.blocks...)
}

// lookup returns the query for (md, cs, ns), made (empty) if new. The
// most recently used query is found without building the key when cs
// is the very slice it was made with (the constraints the
// SelectorCache shares between the pods of a workload; the query keeps
// that slice alive, so its address names it).
func (m *Memo) lookup(md mode, cs []Constraint, ns string) *query {
	if len(m.queries) > 0 {
		if q := m.queries[0]; q.mode == md && q.ns == ns && len(cs) > 0 && len(q.cs) == len(cs) && &q.cs[0] == &cs[0] {
			q.checkMatchers()
			return q
		}
	}
	b := appendKeyField(append(m.key[:0], byte('0'+md)), ns)
	for i := range cs {
		b = appendKeyField(b, cs[i].TopologyKey)
		for j := range cs[i].Selector {
			b = cs[i].Selector[j].AppendKey(b)
		}
		b = append(b, ';')
	}
	m.key = b
	for i, q := range m.queries {
		if q.key != string(b) {
			continue
		}
		copy(m.queries[1:i+1], m.queries[:i])
		m.queries[0] = q
		q.checkMatchers()
		return q
	}
	q := &query{key: string(b), mode: md, ns: ns, cs: cs, ms: make([]*matcher, len(cs))}
	for i := range cs {
		q.ms[i] = newMatcher(cs[i].Selector, ns)
	}
	if len(m.queries) < maxQueries {
		m.queries = append(m.queries, nil)
	}
	copy(m.queries[1:], m.queries)
	m.queries[0] = q
	return q
}

// checkMatchers starts again a matcher that holds more than maxClasses
// verdicts.
func (q *query) checkMatchers() {
	for i, mt := range q.ms {
		if len(mt.big) > maxClasses {
			q.ms[i] = newMatcher(q.cs[i].Selector, q.ns)
		}
	}
}

func appendKeyField(b []byte, s string) []byte {
	return append(append(strconv.AppendInt(b, int64(len(s)), 10), ':'), s...)
}

// refresh returns block old (nil: none) brought up to date with nodes
// (versions vers), as a new block: the nodes whose version changed are
// read again (their labels and groups), the others copied. When the
// changed nodes kept their values of every key (a pod bound or removed:
// the usual change between two passes) and the block its nodes, the
// partial counts are old's plus each changed node's change of count:
// O(changed nodes × (labels × constraints + groups + constraints ×
// domains in the block)); otherwise they are summed again, adding
// O(nodes × constraints × domains in the block).
func refresh[N NodeInfo[P], P PodInfo](q *query, old *block, nodes []N, vers []int64) *block {
	k := len(q.cs)
	e := newBlock(k)
	incremental := old != nil && old.n == len(nodes)
	if old != nil {
		e.slotVer, e.code = old.slotVer, old.code
		copy(e.vals, old.vals)
		copy(e.cnt, old.cnt)
	}
	if incremental {
		e.counted = old.counted
		for i := range e.agg {
			e.agg[i] = append(e.agg[i], old.agg[i]...)
		}
	}
	var missing unique.Handle[string]
	for j, ni := range nodes {
		if old != nil && e.slotVer[j] == vers[j] {
			continue
		}
		ls := ni.Labels()
		groups := GroupsOf(ni)
		vs, cn := e.vals[j*k:(j+1)*k], e.cnt[j*k:(j+1)*k]
		// Whether the node counts, by its old values (the same as its
		// new ones while incremental holds).
		counted := q.mode == modeScoreAny || !slices.Contains(vs, missing)
		for i := range q.cs {
			v, _ := valueOf(ls, q.cs[i].key)
			c := int32(q.ms[i].count(groups))
			if incremental && v != vs[i] {
				incremental = false
			}
			if incremental {
				// Same value: the domain's partial count moves by the
				// node's change of count (a counted node's domain is in
				// agg).
				if d := c - cn[i]; d != 0 && counted && (q.mode == modeFilter || !q.cs[i].hostname) {
					dv := v
					if dv == missing {
						dv = emptyValue
					}
					e.agg[i] = addDomain(e.agg[i], dv, int(d))
				}
			}
			vs[i], cn[i] = v, c
		}
		e.code[j] = q.code(vs, cn)
		e.slotVer[j] = vers[j]
	}
	e.n = len(nodes)
	if incremental {
		return e
	}
	e.counted = 0
	for i := range e.agg {
		e.agg[i] = e.agg[i][:0]
	}
	for j := range e.n {
		vs := e.vals[j*k : (j+1)*k]
		if q.mode != modeScoreAny {
			all := true
			for _, v := range vs {
				all = all && v != missing
			}
			if !all {
				continue
			}
		}
		e.counted++
		for i := range q.cs {
			if q.mode != modeFilter && q.cs[i].hostname {
				continue
			}
			v := vs[i]
			if v == missing {
				v = emptyValue
			}
			e.agg[i] = addDomain(e.agg[i], v, int(e.cnt[j*k+i]))
		}
	}
	return e
}

// smallBlock is a block of a query with up to two constraints (zone and
// hostname: the system defaults, most pods' own) and its arrays, in one
// allocation.
type smallBlock struct {
	b    block
	vals [2 * layout.BlockSize]unique.Handle[string]
	cnt  [2 * layout.BlockSize]int32
	agg  [2][]domain
	// aggBuf holds the partial counts of up to 4 domains per constraint
	// (zones; a block's hostnames and other keys spill to the heap).
	aggBuf [2][4]domain
}

// newBlock returns an empty block for k constraints.
func newBlock(k int) *block {
	if k <= 2 {
		m := &smallBlock{}
		m.b.vals, m.b.cnt, m.b.agg = m.vals[:k*layout.BlockSize], m.cnt[:k*layout.BlockSize], m.agg[:k]
		for i := range k {
			m.agg[i] = m.aggBuf[i][:0]
		}
		return &m.b
	}
	return &block{
		vals: make([]unique.Handle[string], layout.BlockSize*k),
		cnt:  make([]int32, layout.BlockSize*k),
		agg:  make([][]domain, k),
	}
}

// addDomain adds n to domain v of a short list, creating it.
func addDomain(ds []domain, v unique.Handle[string], n int) []domain {
	for i := range ds {
		if ds[i].v == v {
			ds[i].n += n
			return ds
		}
	}
	return append(ds, domain{v, n})
}
