package framework

import (
	"slices"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
)

// Diagnosis from the equivalence cache. A pod of a cached class that fits
// no node needs every node's reasons for its Diagnosis; filtering every
// node again for them made each such pod cost O(nodes) filter calls, and
// once a large cluster fills up most arrivals are such pods. A class
// entry therefore remembers, per node, which kinds of reasons
// (sameReason) the node gives, and per block the block version and the
// caps table's tick they are for (as the entry's results: see
// equivalence_caps.go); a diagnosis filters again only the nodes that
// moved since (and, for each kind, the first node giving it, whose exact
// reason — amounts, taint, name — the Diagnosis reports), then counts
// kinds in visiting order. The tallies are merged by the same code as the full cycle's
// (diagnose), so the Diagnosis is the one the full cycle returns.

// classDiag is a class entry's per-node reason kinds.
type classDiag struct {
	valid bool // kind, bver and seen are for the entry's current node set
	// kind[i]: node i's reason set, 1 + index into sets (0: unknown);
	// valid while node i's block has version bver[b], or node i has not
	// moved since the caps table's tick seen[b].
	kind []uint16
	bver []int64
	seen []uint64
	// sets are the reason sets nodes gave: for each reason a node's
	// filter appended, in order, the index of its kind in kinds.
	sets [][]uint16
	// kinds holds one reason of each kind seen (its amounts, taint and
	// node are those of whichever node gave it first, and unused).
	kinds []Reason
	at    []int32 // per kind: its entry in the tally being built, or -1
	// A diagnosis's scratch, per set: how many nodes give it, the
	// visiting position and index of the first, and the sets given by
	// some node in order of their first position.
	cnt, firstPos, firstNode, order []int32
}

// maxDiagKinds bounds a class's reason kinds and sets (kind is a uint16);
// a class past it is diagnosed by the full cycle.
const maxDiagKinds = 1 << 15

// reset forgets every node's reasons (a new preparation: node indexes
// may name other nodes, the filters may have changed).
func (g *classDiag) reset() {
	g.valid = false
	clear(g.kinds) // taints and strings
	g.sets, g.kinds = g.sets[:0], g.kinds[:0]
}

// nodeReasons appends the reasons the prepared filters pfs (named names,
// "" for a fused one, which labels its own) give for ni, from the first
// filter it fails, labelled as filterNode labels them; none if it passes.
func nodeReasons(pfs []PodFilter, names []string, ni *snapshot.NodeInfo, buf []Reason) []Reason {
	for j, f := range pfs {
		n0 := len(buf)
		if buf = f.Filter(ni, buf); len(buf) > n0 {
			if _, fused := f.(*fusedFilter); !fused && names[j] != "" {
				for k := n0; k < len(buf); k++ {
					buf[k].Plugin = names[j]
				}
			}
			return buf
		}
	}
	return buf
}

// setOf returns 1 + the index of the reason set reasons gives, adding
// the set and any new kinds; 0 when the bound is passed.
func (g *classDiag) setOf(reasons []Reason) uint16 {
	var key [8]uint16
	ks := key[:0]
	for i := range reasons {
		k := slices.IndexFunc(g.kinds, func(r Reason) bool { return sameReason(&r, &reasons[i]) })
		if k < 0 {
			if len(g.kinds) >= maxDiagKinds {
				return 0
			}
			k = len(g.kinds)
			g.kinds = append(g.kinds, reasons[i])
			g.kinds[k].Node, g.kinds[k].Taint = "", nil
			g.at = append(g.at, -1)
		}
		ks = append(ks, uint16(k))
	}
	for i, s := range g.sets {
		if slices.Equal(s, ks) {
			return uint16(i + 1)
		}
	}
	if len(g.sets) >= maxDiagKinds-1 {
		return 0
	}
	g.sets = append(g.sets, slices.Clone(ks))
	return uint16(len(g.sets))
}

// diagnoseClass fills d for a pod of class e that fits no node of vc
// (scheduleClass found none; every block of e is refreshed): the
// Diagnosis, Feasible and Evaluated the full cycle gives, from the
// entry's reason kinds. It reports false, leaving d alone, when the full
// cycle must diagnose instead: per-node reasons are asked for
// (Config.NodeReasons), several workers filter (their merge order is
// theirs), or a node unexpectedly passes the filters.
//
// Cost: the prepared filters on the nodes changed since the class's last
// diagnosis and on the first node of each kind, plus an O(nodes) pass
// over the remembered kinds; allocates the Diagnosis (O(kinds)) and, the
// first time, O(nodes) for the entry.
func (s *Scheduler) diagnoseClass(e *classEntry, vc nodeview.View, d *Decision) bool {
	if s.nodeReasons || s.workers > 1 || len(e.names) != len(e.pfs) {
		return false
	}
	g, n, nb := &e.diag, e.n, vc.NumBlocks()
	if !g.valid {
		g.kind, g.bver, g.seen = resize(g.kind, n), resize(g.bver, nb), resize(g.seen, nb)
		clear(g.kind)
		clear(g.bver)
		g.valid = true
	}
	for k := range g.at {
		g.at[k] = -1
	}
	wk := &s.ws[0]
	clear(wk.tally)
	wk.tally, wk.first = wk.tally[:0], wk.first[:0]
	defer func() { clear(wk.tally); wk.tally = wk.tally[:0] }()
	buf := wk.scratch[:0]
	defer func() { clear(buf[:cap(buf)]); wk.scratch = buf[:0] }()
	caps := &s.classes.caps
	// The kinds of the nodes that moved, block by block.
	for b := range nb {
		v := vc.BlockVersion(b)
		if v == g.bver[b] {
			continue
		}
		caps.block(vc, b)
		nodes, _ := vc.Block(b)
		lo := b * layout.BlockSize
		moved, kind, since := caps.moved[lo:lo+len(nodes)], g.kind[lo:lo+len(nodes)], g.seen[b]
		var vis visits
		for j := range nodes {
			if kind[j] == 0 || moved[j] > since {
				vis.add(j)
			}
		}
		for i, k := range vis.start(nodes) {
			vis.ahead(nodes, i)
			j := int(k)
			ni := nodes[j]
			clear(buf)
			if buf = nodeReasons(e.pfs, e.names, ni, buf[:0]); len(buf) == 0 {
				return false // feasible after all: let the full cycle decide
			}
			if kind[j] = g.setOf(buf); kind[j] == 0 {
				return false
			}
		}
		g.bver[b], g.seen[b] = v, caps.clock
	}
	// The nodes per reason set, counted in visiting order; then the
	// sets in the order their first node comes, each adding its count
	// to its kinds' tallies. A kind's first node is the first node of the
	// first set (in that order) that holds it, and gives its own reason.
	ns := len(g.sets)
	g.cnt, g.firstPos, g.firstNode = resize(g.cnt, ns), resize(g.firstPos, ns), resize(g.firstNode, ns)
	clear(g.cnt)
	g.order = g.order[:0]
	start := s.next % n
	pos := int32(0)
	for _, r := range [2][2]int{{start, n}, {0, start}} {
		for i, k := range g.kind[r[0]:r[1]] {
			set := k - 1
			if g.cnt[set] == 0 {
				g.firstPos[set], g.firstNode[set] = pos, int32(r[0]+i)
				g.order = append(g.order, int32(set))
			}
			g.cnt[set]++
			pos++
		}
	}
	for _, set := range g.order {
		for p, k := range g.sets[set] {
			if t := g.at[k]; t >= 0 {
				wk.tally[t].Count += int(g.cnt[set])
				continue
			}
			i := int(g.firstNode[set])
			nodes, _ := vc.Block(i / layout.BlockSize)
			ni := nodes[i%layout.BlockSize]
			clear(buf)
			buf = nodeReasons(e.pfs, e.names, ni, buf[:0])
			g.at[k] = int32(len(wk.tally))
			wk.tally = append(wk.tally, ReasonCount{Count: int(g.cnt[set]), Reason: buf[p]})
			wk.tally[len(wk.tally)-1].Reason.Node = ni.Name()
			wk.first = append(wk.first, g.firstPos[set])
		}
	}
	numChunks := (n + chunk - 1) / chunk
	s.chunks = resize(s.chunks, numChunks)
	clear(s.chunks) // no per-node reasons kept
	d.Diagnosis = s.diagnose(n, n, nil)
	d.Feasible, d.Evaluated = 0, n
	return true
}
