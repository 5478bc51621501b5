package framework

import (
	"fmt"
	"math/bits"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
)

// The ranked cycle: a class's entry that serves cycles scoring every
// node keeps, besides each node's filter verdict and raw scores, each
// node's total and per block of layout.BlockSize nodes the highest
// total, how many nodes have it and how many are feasible. A pod of the
// class then costs the nodes changed since the class last looked (their
// block's summary is redone, O(BlockSize)), O(blocks) to find the highest
// total and count its ties, and O(blocks + BlockSize) to find the tie the
// random draw picks — not the O(nodes) gather, normalisation and choice
// of the cached cycle (equivalence.go). Node totals depend on every node
// only through each normaliser's largest raw score among the feasible
// nodes (score.DefaultNormalize's maximum: scoring.PodProfile's
// NormalizesByMax); when one of those moves, every total is redone, as
// the gather would.
//
// Decisions are those of the cached cycle, hence of the uncached one:
// the same feasible nodes (all of them are visited, in the same order
// from the rotating start index), the same totals, the same highest
// total, the same number of ties and the same draw picking the k-th tie
// in visiting order.

// ranking is a class entry's per-node totals and per-block summaries;
// valid when they agree with the entry's per-node results for the block
// versions it records.
type ranking struct {
	valid bool
	// maxRaw[k] is the largest raw score of normaliser k among the
	// feasible nodes (0 if none is larger) that tot was computed with.
	maxRaw []int64
	tot    []int64   // per node: its total, if feasible
	top    []int64   // per block: the highest total of its feasible nodes
	ties   []int32   // per block: how many of them have it
	raw    [][]int64 // raw[k][b]: block b's largest raw score of normaliser k (0 if none is larger)
}

// scheduleRanked is scheduleClass for a cycle that visits every node
// (numFeasibleNodesToFind is the node count), no breakdown, every
// normaliser by its maximum: it leaves the chosen node alone in
// s.feasible and its total in s.totals for finish, having made the
// random draw among ties itself (finish then draws nothing). ok is false
// when no node is feasible (s.next is not moved); an error (a score out
// of range) means the entry must be dropped.
func (s *Scheduler) scheduleRanked(e *classEntry, vc nodeview.View, d *Decision) (ok bool, err error) {
	c := &s.classes
	r := &e.rank
	n, nb, nk := e.n, len(e.blocks), len(e.raw)
	if !r.valid {
		r.maxRaw = resize(r.maxRaw, nk)
		r.tot = resize(r.tot, n)
		r.top, r.ties = resize(r.top, nb), resize(r.ties, nb)
		r.raw = resize(r.raw, nk)
		for k := range r.raw {
			r.raw[k] = resize(r.raw[k], nb)
		}
	}
	// Refresh every block (the cycle visits all nodes); redo the raw
	// summaries of those that changed.
	dirty := c.dirty[:0]
	for b := range nb {
		v0 := e.blocks[b]
		if err := c.refreshBlock(e, vc, b); err != nil {
			c.dirty = dirty
			return false, fmt.Errorf("framework: scoring pod %s: %w", d.Pod.Key(), err)
		}
		if r.valid && e.blocks[b] == v0 {
			continue
		}
		dirty = append(dirty, int32(b))
		lo, _ := blockRange(b, n)
		for k := range nk {
			m, raw := int64(0), e.raw[k][lo:]
			for x := e.okm[b]; x != 0; x &= x - 1 {
				m = max(m, raw[bits.TrailingZeros64(x)])
			}
			r.raw[k][b] = m
		}
	}
	c.dirty = dirty
	// The normalisers' maxima: if one moved, every total is redone.
	all := !r.valid
	for k := range nk {
		m := int64(0)
		for _, x := range r.raw[k] {
			m = max(m, x)
		}
		if m != r.maxRaw[k] {
			r.maxRaw[k], all = m, true
		}
	}
	r.valid = false // until the totals are redone
	for i := range nb {
		b := i
		if !all {
			if i >= len(dirty) {
				break
			}
			b = int(dirty[i])
		}
		if err := s.rankBlock(e, vc, b); err != nil {
			return false, fmt.Errorf("framework: scoring pod %s: %w", d.Pod.Key(), err)
		}
	}
	r.valid = true

	// The highest total, its ties and the feasible count.
	var top int64
	ties, feasible := 0, 0
	for b := range nb {
		if e.feas[b] == 0 {
			continue
		}
		switch t := r.top[b]; {
		case feasible == 0 || t > top:
			top, ties = t, int(r.ties[b])
		case t == top:
			ties += int(r.ties[b])
		}
		feasible += int(e.feas[b])
	}
	d.Feasible, d.Evaluated = feasible, n
	if feasible == 0 {
		return false, nil
	}
	// The k-th tie in visiting order, k drawn as selectHost draws it.
	k := 0
	if ties > 1 {
		k = s.rng.IntN(ties)
	}
	best := kthTie(n, s.next%n, k, func(b int) int {
		if e.feas[b] == 0 || r.top[b] != top {
			return 0
		}
		return int(r.ties[b])
	}, func(i int) bool { return e.okm[i/layout.BlockSize]>>(i%layout.BlockSize)&1 != 0 && r.tot[i] == top })
	if best < 0 {
		panic("framework: ranked cycle: the drawn tie was not found")
	}
	s.chooseAlone(vc, best, top)
	s.next = (s.next + n) % n
	return true, nil
}

// chooseAlone leaves node i of vc alone in s.feasible with total in
// s.totals, for finish (which then draws nothing).
func (s *Scheduler) chooseAlone(vc nodeview.View, i int, total int64) {
	nodes, _ := vc.Block(i / layout.BlockSize)
	s.feasible = append(s.feasible[:0], nodes[i%layout.BlockSize])
	s.totals = resize(s.totals, max(1, cap(s.totals)))
	s.totals[0] = total
}

// rankBlock redoes block b's node totals with the ranking's maxima and
// its summary (highest total and ties).
func (s *Scheduler) rankBlock(e *classEntry, vc nodeview.View, b int) error {
	c, r := &s.classes, &e.rank
	lo, _ := blockRange(b, e.n)
	r.top[b], r.ties[b] = 0, 0
	if e.feas[b] == 0 {
		return nil
	}
	nodes, _ := vc.Block(b)
	c.batch, c.batchIdx = c.batch[:0], c.batchIdx[:0]
	for x := e.okm[b]; x != 0; x &= x - 1 {
		j := bits.TrailingZeros64(x)
		c.batch = append(c.batch, nodes[j])
		c.batchIdx = append(c.batchIdx, int32(lo+j))
	}
	defer clear(c.batch)
	m := len(c.batch)
	tot := resize(c.tmp, m)
	c.tmp = tot
	raw := resize(c.rawBuf, max(m, cap(c.rawBuf)))[:m]
	c.rawBuf = raw[:cap(raw)]
	for j, i := range c.batchIdx {
		tot[j] = e.plain[i]
	}
	for k := range e.raw {
		for j, i := range c.batchIdx {
			raw[j] = e.raw[k][i]
		}
		if err := e.pp.AddNormalizedByMax(k, c.batch, raw, tot, r.maxRaw[k]); err != nil {
			return err
		}
	}
	top, ties := tot[0], int32(0)
	for j, i := range c.batchIdx {
		t := tot[j]
		r.tot[i] = t
		switch {
		case t > top:
			top, ties = t, 1
		case t == top:
			ties++
		}
	}
	r.top[b], r.ties[b] = top, ties
	return nil
}

// kthTie returns the k-th (from 0) of the n nodes in visiting order from
// start (wrapping) for which match reports true, or -1 if there are not
// that many; ties(b) is how many nodes of block b match, so that a whole
// block is skipped at once. O(blocks + BlockSize) calls.
func kthTie(n, start, k int, ties func(b int) int, match func(i int) bool) int {
	for _, rg := range [2][2]int{{start, n}, {0, start}} {
		for lo := rg[0]; lo < rg[1]; {
			b := lo / layout.BlockSize
			blo, bhi := blockRange(b, n)
			hi := min(rg[1], bhi)
			if lo == blo && hi == bhi { // a whole block: its count
				if t := ties(b); k >= t {
					k -= t
					lo = hi
					continue
				}
			}
			for i := lo; i < hi; i++ {
				if match(i) {
					if k == 0 {
						return i
					}
					k--
				}
			}
			lo = hi
		}
	}
	return -1
}

// blockRange returns the node indexes [lo, hi) of block b among n nodes.
func blockRange(b, n int) (lo, hi int) {
	lo = b * layout.BlockSize
	return lo, min(lo+layout.BlockSize, n)
}
