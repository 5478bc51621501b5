package framework

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// Parallel filtering: a cycle's candidates, in visiting order from the
// rotating start index, are cut into chunks that workers take in order,
// so that the first numToFind feasible nodes, and the reasons of a cycle
// that finds none, are those of a sequential scan whatever the
// parallelism.

// chunk is how many consecutive candidates one worker filters at a time.
const chunk = 128

// worker is one filtering goroutine's scratch: the reasons of the nodes it
// rejected and the nodes it accepted (with their positions in visiting
// order), for all the chunks it processed, back to back.
type worker struct {
	reasons  []Reason
	feasible []*snapshot.NodeInfo
	pos      []int32
	// scratch takes the reasons of nodes rejected once this worker has
	// found a feasible node: the cycle then has a feasible node and
	// never reads reasons, so they are dropped (room for 16, as
	// PodFilter's contract promises).
	scratch []Reason
	// block is the snapshot block nodeAt read last: candidates blockLo
	// up to blockLo+len(block)-1.
	block   []*snapshot.NodeInfo
	blockLo int
}

// chunkResult locates one chunk's output in its worker's buffers.
type chunkResult struct {
	w      int32
	rs, re int32 // reasons[rs:re]
	fs, fe int32 // feasible[fs:fe], pos[fs:fe]
}

// nodeAt returns candidate i (an index into the candidates, not a
// visiting position) for worker wk. A snapshot's or fork's nodes are read
// from its blocks, one interface call per block: wk keeps the block it
// read last.
func (s *Scheduler) nodeAt(wk *worker, cluster score.Cluster, i int) *snapshot.NodeInfo {
	switch {
	case s.narrowed:
		return s.cands[i]
	case s.view != nil:
		if j := i - wk.blockLo; uint(j) < uint(len(wk.block)) {
			return wk.block[j]
		}
		b := i / layout.BlockSize
		wk.block, _ = s.view.Block(b)
		wk.blockLo = b * layout.BlockSize
		return wk.block[i-wk.blockLo]
	}
	return cluster.Node(i)
}

// filterNodes fills s.feasible with the first numToFind feasible
// candidates in visiting order (candidate (next+pos) mod numCand at
// position pos) and returns how many candidates were filtered up to and
// including the last of them (all, if fewer are feasible). Workers filter
// chunks of positions in order and stop taking new chunks once enough
// feasible nodes are known, so the result is the sequential one whatever
// the parallelism.
func (s *Scheduler) filterNodes(cluster score.Cluster, numCand, numToFind int) int {
	s.feasible = s.feasible[:0]
	if numCand == 0 || numToFind == 0 {
		return 0
	}
	s.view, _ = nodeview.ViewOf(cluster)
	defer func() { s.view = nil }()
	numChunks := (numCand + chunk - 1) / chunk
	if cap(s.chunks) < numChunks {
		s.chunks = make([]chunkResult, numChunks)
	}
	s.chunks = s.chunks[:numChunks]
	for i := range s.ws {
		wk := &s.ws[i]
		wk.reasons, wk.feasible, wk.pos = wk.reasons[:0], wk.feasible[:0], wk.pos[:0]
		wk.block, wk.blockLo = nil, 0
	}
	s.run = runState{cluster: cluster, numCand: numCand, numToFind: numToFind, numChunks: numChunks}
	s.run.nextChunk.Store(0)
	s.run.found.Store(0)
	defer func() { s.run.cluster = nil }()
	workers := min(s.workers, numChunks)
	if workers <= 1 {
		s.filterChunks(0, true)
	} else {
		var wg sync.WaitGroup
		for w := 1; w < workers; w++ {
			wg.Add(1)
			go func() { defer wg.Done(); s.filterChunks(w, false) }()
		}
		s.filterChunks(0, false)
		wg.Wait()
	}

	// The workers' buffers hold this cycle's nodes until the next one;
	// drop them so a finished snapshot can be collected.
	defer func() {
		for i := range s.ws {
			clear(s.ws[i].feasible)
			clear(s.ws[i].scratch[:cap(s.ws[i].scratch)])
			s.ws[i].block = nil
		}
	}()
	claimed := min(int(s.run.nextChunk.Load()), numChunks)
	for c := range claimed {
		cr := s.chunks[c]
		wk := &s.ws[cr.w]
		take := min(int(cr.fe-cr.fs), numToFind-len(s.feasible))
		s.feasible = append(s.feasible, wk.feasible[cr.fs:int(cr.fs)+take]...)
		if len(s.feasible) == numToFind {
			return int(wk.pos[int(cr.fs)+take-1]) + 1
		}
	}
	return numCand
}

// runState is the shared state of one cycle's filtering workers.
type runState struct {
	cluster                       score.Cluster
	numCand, numToFind, numChunks int
	nextChunk, found              atomic.Int64
}

// filterChunks is one filtering worker: it takes chunks in order until
// enough feasible nodes are known or none is left. The sequential worker
// also stops inside a chunk once the count is reached.
func (s *Scheduler) filterChunks(w int, sequential bool) {
	r, wk := &s.run, &s.ws[w]
	for r.found.Load() < int64(r.numToFind) {
		c := int(r.nextChunk.Add(1) - 1)
		if c >= r.numChunks {
			return
		}
		cr := chunkResult{w: int32(w), rs: int32(len(wk.reasons)), fs: int32(len(wk.feasible))}
		start, end := c*chunk, min((c+1)*chunk, r.numCand)
		limit := r.numToFind // a chunk alone never needs more
		if sequential {
			limit -= int(r.found.Load())
		}
		idx := (s.next + start) % r.numCand
		n := 0
		for pos := start; pos < end && n < limit; pos++ {
			ni := s.nodeAt(wk, r.cluster, idx)
			if idx++; idx == r.numCand {
				idx = 0
			}
			if s.filterNode(ni, wk) {
				wk.feasible = append(wk.feasible, ni)
				wk.pos = append(wk.pos, int32(pos))
				n++
			}
		}
		cr.re, cr.fe = int32(len(wk.reasons)), int32(len(wk.feasible))
		s.chunks[c] = cr
		r.found.Add(int64(n))
	}
}

// filterNode runs the prepared filters on ni; on the first failure it
// labels the reasons the filter appended to wk.reasons and reports false
// (once the worker has found a feasible node, it keeps no reasons).
func (s *Scheduler) filterNode(ni *snapshot.NodeInfo, wk *worker) bool {
	if len(wk.feasible) > 0 {
		// The reasons will not be read: no labels (no read of the
		// node's name), no growth of wk.reasons.
		var fits bool
		wk.scratch, fits = fitsAll(s.pfs, ni, wk.scratch)
		return fits
	}
	n0 := len(wk.reasons)
	for j, f := range s.pfs {
		wk.reasons = f.Filter(ni, wk.reasons)
		if len(wk.reasons) > n0 {
			_, fused := f.(*fusedFilter) // labels its reasons itself
			name := s.pfNames[j]
			fused = fused || name == "" // as does nominatedFilter
			for k := n0; k < len(wk.reasons); k++ {
				if !fused {
					wk.reasons[k].Plugin = name
				}
				wk.reasons[k].Node = ni.Name()
			}
			return false
		}
	}
	return true
}

// diagnose collects the reasons of a cycle that found no feasible node
// (every candidate was filtered, so every chunk is complete).
func (s *Scheduler) diagnose(numAll, numCand int, narrowing []string) *Diagnosis {
	d := &Diagnosis{NumAllNodes: numAll}
	n := 0
	for c := range (numCand + chunk - 1) / chunk {
		cr := s.chunks[c]
		n += int(cr.re - cr.rs)
	}
	d.Reasons = make([]Reason, 0, n)
	plugins := map[string]bool{}
	for c := range (numCand + chunk - 1) / chunk {
		cr := s.chunks[c]
		rs := s.ws[cr.w].reasons[cr.rs:cr.re]
		d.Reasons = append(d.Reasons, rs...)
		for i := range rs {
			plugins[rs[i].Plugin] = true
		}
	}
	if narrowing != nil {
		sorted := slices.Clone(narrowing)
		sort.Strings(sorted)
		d.NotCandidates = numAll - numCand
		d.NotCandidate = Reason{Code: CodeNotCandidate, Unresolvable: true,
			Text: "node(s) didn't satisfy plugin(s) [" + strings.Join(sorted, " ") + "]"}
		for _, p := range narrowing {
			plugins[p] = true
		}
	}
	for p := range plugins {
		d.UnschedulablePlugins = append(d.UnschedulablePlugins, p)
	}
	sort.Strings(d.UnschedulablePlugins)
	return d
}
