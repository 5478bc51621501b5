package framework

import (
	"cmp"
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

// worker is one filtering goroutine's scratch: the tallies of the reasons
// of the nodes it rejected (and, with Config.NodeReasons, the reasons
// themselves) and the nodes it accepted (with their positions in visiting
// order), for all the chunks it processed, back to back.
type worker struct {
	// tally counts the rejected nodes' reasons per kind (sameReason),
	// each entry holding the worker's first node's reason of that kind,
	// at visiting position first[i] (chunks are taken in order, so it is
	// the worker's smallest). Its size is the number of kinds, so it
	// stops growing whatever the chunks' distribution.
	tally []ReasonCount
	first []int32
	// reasons takes a rejected node's reasons from its filter; kept per
	// node only with Config.NodeReasons, else reused for every node.
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
	rs, re int32 // reasons[rs:re] (Config.NodeReasons)
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
	for i := range s.ws { // before any return: diagnose reads the tallies
		wk := &s.ws[i]
		clear(wk.tally) // the last cycle's, read by diagnose
		clear(wk.reasons)
		wk.first = wk.first[:0]
		wk.tally, wk.reasons, wk.feasible, wk.pos = wk.tally[:0], wk.reasons[:0], wk.feasible[:0], wk.pos[:0]
		wk.block, wk.blockLo = nil, 0
	}
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
			if s.filterNode(ni, wk, pos) {
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
// labels the reasons the filter appended, counts them in the worker's
// tally (pos: ni's visiting position) and reports false. The reasons are kept per node
// only with Config.NodeReasons; otherwise wk.reasons is reused, so a
// rejected node allocates nothing (and reads its name only when it is
// the chunk's first with a reason of its kind). Once the worker has found
// a feasible node, it keeps no reasons at all.
func (s *Scheduler) filterNode(ni *snapshot.NodeInfo, wk *worker, pos int) bool {
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
				r := &wk.reasons[k]
				if !fused {
					r.Plugin = name
				}
				if s.nodeReasons {
					r.Node = ni.Name()
				}
				k := len(wk.tally)
				if wk.tally = tallyReason(wk.tally, 0, r, 1, ni); len(wk.tally) > k {
					wk.first = append(wk.first, int32(pos))
				}
			}
			if !s.nodeReasons {
				clear(wk.reasons[n0:]) // drop the taint and strings
				wk.reasons = wk.reasons[:n0]
			}
			return false
		}
	}
	return true
}

// tallyReason counts n more nodes giving r in tally[t0:]: the entry of
// r's kind ([sameReason]) or a new one holding r, its Node set to ni's
// name when ni is non-nil. O(entries), allocates only to grow tally.
func tallyReason(tally []ReasonCount, t0 int, r *Reason, n int, ni *snapshot.NodeInfo) []ReasonCount {
	for i := t0; i < len(tally); i++ {
		if sameReason(&tally[i].Reason, r) {
			tally[i].Count += n
			return tally
		}
	}
	tally = append(tally, ReasonCount{Count: n, Reason: *r})
	if ni != nil {
		tally[len(tally)-1].Reason.Node = ni.Name()
	}
	return tally
}

// sameReason reports whether a and b are of one kind for a
// [Diagnosis.Counts] entry: same plugin, code, resource, text and
// resolvability (details such as amounts and taints may differ).
func sameReason(a, b *Reason) bool {
	return a.Code == b.Code && a.Resource == b.Resource && a.Unresolvable == b.Unresolvable &&
		a.Plugin == b.Plugin && a.Text == b.Text
}

// diagnose collects the reasons of a cycle that found no feasible node
// (every candidate was filtered, so every chunk is complete): the chunks'
// tallies merged in visiting order, and with Config.NodeReasons the
// reasons node by node. O(chunks × distinct reasons) plus, with
// NodeReasons, O(rejected nodes); allocates O(distinct reasons), nothing
// per node without NodeReasons.
func (s *Scheduler) diagnose(numAll, numCand int, narrowing []string) *Diagnosis {
	d := &Diagnosis{NumAllNodes: numAll}
	chunks := s.chunks[:(numCand+chunk-1)/chunk]
	// The workers' kinds in order of first visiting position, merged:
	// each kind then comes with its first node overall.
	s.order = s.order[:0]
	for w := range s.ws {
		for i, p := range s.ws[w].first {
			s.order = append(s.order, [3]int32{p, int32(w), int32(i)})
		}
	}
	slices.SortFunc(s.order, func(a, b [3]int32) int { return cmp.Compare(a[0], b[0]) })
	merged := s.tally[:0]
	for _, o := range s.order {
		tc := &s.ws[o[1]].tally[o[2]]
		merged = tallyReason(merged, 0, &tc.Reason, tc.Count, nil)
	}
	n := 0
	for _, cr := range chunks {
		n += int(cr.re - cr.rs)
	}
	s.tally = merged
	defer clear(s.tally)
	d.Counts = make([]ReasonCount, len(merged))
	plugins := make([]string, 0, len(merged)+len(narrowing))
	for i := range merged {
		d.Counts[i] = merged[i]
		d.Counts[i].Message = merged[i].Reason.Message()
		plugins = append(plugins, merged[i].Reason.Plugin)
	}
	if s.nodeReasons {
		d.Reasons = make([]Reason, 0, n)
		for _, cr := range chunks {
			d.Reasons = append(d.Reasons, s.ws[cr.w].reasons[cr.rs:cr.re]...)
		}
	}
	if narrowing != nil {
		sorted := slices.Clone(narrowing)
		sort.Strings(sorted)
		d.NotCandidates = numAll - numCand
		d.NotCandidate = Reason{Code: CodeNotCandidate, Unresolvable: true,
			Text: "node(s) didn't satisfy plugin(s) [" + strings.Join(sorted, " ") + "]"}
		plugins = append(plugins, narrowing...)
	}
	slices.Sort(plugins)
	if plugins = slices.Compact(plugins); len(plugins) > 0 {
		d.UnschedulablePlugins = plugins
	}
	return d
}
