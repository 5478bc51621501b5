package mirror

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// Scores is one pod's scores over the candidates of a cycle, made by
// [Mirror.Score]. Immutable; safe for concurrent use. It is for the cycle
// its candidates came from: [Scores.Of] knows a candidate by identity,
// so the host must not change an entry in place between Score and Of
// (upstream's cycle snapshot does not).
type Scores[N comparable] struct {
	m      *Mirror[N]
	ps     score.PodScorer
	snap   *snapshot.Snapshot   // what the scorer read: the mirror's or the ledger's
	ledger bool                 // snap is the ledger's
	r      *resolved[N]         // the candidates, indexed
	raw    []int64              // raw[i]: candidate i's score
	nodes  []*snapshot.NodeInfo // nodes[i]: the node scored for candidate i (a Normalizer's only)
}

// scratch is a Score call's per-candidate node buffer, pooled.
type scratch struct{ nodes []*snapshot.NodeInfo }

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// resolved is a candidate list found in a published view: each
// candidate's node (ours, or converted) and position (-1: converted). The
// score plugins of one cycle share it (see resolve).
type resolved[N comparable] struct {
	syncs uint64   // m.syncs when made
	v     *view[N] // the view searched
	first *N       // &candidates[0]
	n     int
	ours  []*snapshot.NodeInfo
	pos   []int32
	// at: per position of v.list that view.find answers (an entry's
	// first), the index + 1 of the first held candidate that is the
	// entry there (0: none).
	at []int32
}

// held reports whether candidate i is held and is n: its list entry
// (the view's own copy, not the host's slice) compared with n.
func (r *resolved[N]) held(i int, n N) bool {
	return i < r.n && r.pos[i] >= 0 && r.v.list[r.pos[i]] == n
}

// near returns the index of a held candidate that is n, or -1: the
// calling goroutine's last answer (m.nearC) or the index after it when
// that candidate is n (see held), else [resolved.index]. A host scoring
// its candidates in order per worker, with one or more plugins per node,
// makes a guess right and the check sequential reads. A candidate
// listed twice may be answered by either index: both hold the score of
// the same node.
func (r *resolved[N]) near(m *Mirror[N], n N) int {
	c := m.nearC.cursor()
	i := int(c.Load())
	if !r.held(i, n) {
		if i++; !r.held(i, n) {
			if i = r.index(n); i < 0 {
				return -1
			}
		}
		c.Store(int32(i))
	}
	return i
}

// index returns the index of the first held candidate that is n, or -1:
// n's position in the view (view.find: a hash and a probe, no read of n)
// and a read of at.
func (r *resolved[N]) index(n N) int {
	if p := r.v.find(n); p >= 0 {
		return int(r.at[p]) - 1
	}
	return -1
}

// resolve finds candidates in the published view: by position (a
// candidate following the previous one's position, as a host's filtered
// list in list order, costs one comparison; any other, a hash probe),
// then one generation read each (none when the last call was a Sync that
// succeeded: it read them all); a listed entry changed since it was
// mirrored is refreshed ([Mirror.refresh]), and a candidate the mirror
// does not hold (altered for this call) is converted. Each held
// candidate's index is recorded at the list position view.find gives
// its entry, for [Scores.Of]. The result is kept and returned again for
// the same candidate slice (same first element and length) until the
// next Sync (the adapter's score plugins share one cycle's list).
// With par, the candidates are found in pieces of at least scorePiece
// on the host's workers (see [Mirror.Score]); the error is then
// ErrPiecesLeftOut when a piece was left out (see [Parallel]), else
// the one serial resolution would return: the first failing
// candidate's.
// Errors: a candidate that does not convert. O(candidates) (plus a probe
// each when the list names an entry twice, and one per piece) and
// O(len(list)) bytes zeroed, no map look-up.
func (m *Mirror[N]) resolve(candidates []N, par Parallel) (*resolved[N], error) {
	// verified: v is the view of the last Sync, which succeeded and read
	// the generation of every listed entry, so a candidate that is a
	// listed entry (same identity) has its entry's generation (the caller
	// does not change candidates in place between Syncs): no second read.
	// Otherwise (a Sync failed since, or runs now) each generation is read.
	s1 := m.syncs.Load()
	verified := m.synced.Load() == s1
	v, syncs := m.cur.Load(), m.syncs.Load()
	verified = verified && syncs == s1
	// A view published since by a refresh lists the same entries at the
	// same positions: r stays good until the next Sync.
	if r := m.res.Load(); r != nil && r.syncs == syncs && r.n == len(candidates) && (r.n == 0 || r.first == &candidates[0]) {
		return r, nil
	}
	r := &resolved[N]{syncs: syncs, v: v, n: len(candidates), ours: make([]*snapshot.NodeInfo, len(candidates)), pos: make([]int32, len(candidates))}
	if len(candidates) > 0 {
		r.first = &candidates[0]
	}
	// The error of the range that starts first: the first failing
	// candidate's.
	var mu sync.Mutex
	var first error
	firstLo := 0
	all := inPieces(par, len(candidates), func(lo, hi int) {
		if err := m.resolveRange(r, candidates, lo, hi, verified); err != nil {
			mu.Lock()
			if first == nil || lo < firstLo {
				first, firstLo = err, lo
			}
			mu.Unlock()
		}
	})
	if !all {
		// Left out before any failure found (or not): the first
		// failing candidate is unknown. r, incomplete, is not kept.
		return nil, ErrPiecesLeftOut
	}
	if first != nil {
		return nil, first
	}
	r.at = make([]int32, len(v.list))
	for i, p := range r.pos {
		if p >= 0 && v.dups {
			// An entry listed twice may have been found at a later
			// position; index looks it up at its first.
			p = int32(v.find(candidates[i]))
		}
		if p >= 0 && r.at[p] == 0 {
			r.at[p] = int32(i) + 1 // a candidate twice: the first is found
		}
	}
	m.res.Store(r)
	return r, nil
}

// resolveRange finds candidates[lo:hi] in r.v, setting r.ours and r.pos
// there (see resolve); it stops at the first candidate that does not
// convert and returns its error. Ranges may be resolved concurrently.
func (m *Mirror[N]) resolveRange(r *resolved[N], candidates []N, lo, hi int, verified bool) error {
	v := r.v
	k, next := len(v.list), 0 // the position after the previous candidate's
	for i := lo; i < hi; i++ {
		c := candidates[i]
		p := -1
		if next < k && v.list[next] == c {
			p = next
		} else {
			p = v.find(c)
		}
		if p >= 0 {
			e := v.ents.at(p)
			if e.ours != nil && !verified {
				if g := m.src.Generation(c); e.gen != g {
					e = m.refresh(p, c, g)
				}
			}
			if e.ours != nil {
				r.ours[i], next = e.ours, p+1
				if next == k {
					next = 0
				}
			} else {
				p = -1
			}
		}
		if r.pos[i] = int32(p); p < 0 {
			var err error
			if r.ours[i], err = m.Convert(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// Score prepares s for pod on the last synced snapshot — or, with a ledger
// set, on [reserve.Ledger.Snapshot], so holds and named reservations count
// as requested — and scores candidates in one PodScorer call. It returns
// nil and no error when the scorer skips the pod (Prepare returned nil).
// Candidates are found in the synced list once per Sync and candidate
// slice (see resolve); a candidate the mirror does not hold as it is
// (altered for this call) is converted ([Mirror.Convert]). The caller
// must not change candidates in place between Syncs. Errors: the
// scorer's, or a candidate that does not convert. O(candidates) plus the
// scorer's pass and the refreshes, no map look-up (a ledger's view adds
// a name look-up per candidate); allocates the result, O(candidates)
// bytes, and once per Sync and candidate slice O(len(list)) bytes (see
// resolve).
//
// With par, the scorer's pass runs in pieces of at least scorePiece
// candidates (disjoint batches, which a PodScorer may score
// concurrently) handed to par: the host's workers score a large list
// in parallel, as its own Score phase does. nil scores on the calling
// goroutine. A par that leaves a piece out (see [Parallel]) fails the
// call with ErrPiecesLeftOut.
func (m *Mirror[N]) Score(s score.Scorer, pod *snapshot.PodInfo, candidates []N, par Parallel) (*Scores[N], error) {
	r, err := m.resolve(candidates, par)
	if err != nil {
		return nil, err
	}
	v, l := r.v, m.Ledger()
	snap := v.snap
	if l != nil {
		snap = l.Snapshot()
	}
	ps, err := s.Prepare(pod, snap)
	if err != nil || ps == nil {
		return nil, err
	}
	sc := &Scores[N]{m: m, ps: ps, snap: snap, ledger: l != nil, r: r, raw: make([]int64, len(candidates))}
	nodes := r.ours
	if sc.ledger {
		b := scratchPool.Get().(*scratch)
		defer func() { clear(b.nodes); scratchPool.Put(b) }()
		nodes = resize(b.nodes, len(candidates))
		b.nodes = nodes
	}
	batch := func(lo, hi int) {
		if sc.ledger {
			for i := lo; i < hi; i++ {
				nodes[i] = sc.scored(r.ours[i])
			}
		}
		ps.Score(nodes[lo:hi], sc.raw[lo:hi])
	}
	if !inPieces(par, len(candidates), batch) {
		return nil, ErrPiecesLeftOut
	}
	if _, ok := ps.(score.Normalizer); ok {
		sc.nodes = append([]*snapshot.NodeInfo(nil), nodes...)
	}
	return sc, nil
}

// Parallel runs work(i) for i in [0, pieces), possibly concurrently, and
// returns when those it started have returned: a host's worker pool,
// e.g. kube-scheduler's Parallelizer.Until. It may leave pieces out
// (Until does once its context is done; a piece whose work panicked and
// was recovered has not finished either): the call using it then fails
// with [ErrPiecesLeftOut].
type Parallel func(pieces int, work func(i int))

// ErrPiecesLeftOut is the error of a [Mirror.Score] whose Parallel did
// not finish every piece: some candidates were not found or scored.
var ErrPiecesLeftOut = errors.New("mirror: the host's workers left pieces of the candidates out")

// scorePiece is the fewest candidates [Mirror.Score] hands to a
// Parallel piece: several microseconds of a built-in scorer's work,
// above what a host's dispatch of a piece costs, and small enough that
// the few hundred candidates of an adaptive percentageOfNodesToScore
// (10% of 5,000 nodes) are split across the host's workers instead of
// waiting on one goroutine: PreScore's pass is on the cycle's serial
// path, where upstream's Score phase is parallel.
const scorePiece = 128

// maxPieces bounds the pieces of one call: two per processor that can
// run them (GOMAXPROCS), so that a processor busy elsewhere is evened
// out, without paying the host's dispatch (a goroutine each, in
// upstream's Until) for pieces that cannot run at once.
func maxPieces() int { return 2 * runtime.GOMAXPROCS(0) }

// inPieces calls f(lo, hi) on ranges that cover [0, k) once each and
// reports whether every call returned: with par and k of at least
// 2·scorePiece, on min(⌊k/scorePiece⌋, maxPieces()) ranges whose sizes
// differ by at most one (each at least scorePiece candidates) through
// par; else f(0, k) on the calling goroutine.
func inPieces(par Parallel, k int, f func(lo, hi int)) bool {
	if par == nil || k < 2*scorePiece {
		f(0, k)
		return true
	}
	pieces := int64(min(k/scorePiece, maxPieces()))
	at := func(i int64) int { return int(i * int64(k) / pieces) } // int64: i·k overflows 32 bits
	var done atomic.Int64
	par(int(pieces), func(i int) {
		f(at(int64(i)), at(int64(i)+1))
		done.Add(1)
	})
	return done.Load() == pieces
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// scored is the node to score for the mirror's node ours: the ledger's
// node of that name when the scores read a ledger that has it, else ours.
func (s *Scores[N]) scored(ours *snapshot.NodeInfo) *snapshot.NodeInfo {
	if !s.ledger {
		return ours
	}
	if n := s.snap.Get(ours.Name()); n != nil {
		return n
	}
	return ours
}

// Of returns n's score: the one [Mirror.Score] computed when n was a
// candidate the mirror held (the calling goroutine's hint checked
// against the mirror's copy of the list, else a hash probe; no read of
// n, no allocation), else n scored on its own (allocates). Errors: n
// does not convert.
func (s *Scores[N]) Of(n N) (int64, error) {
	if i := s.r.near(s.m, n); i >= 0 {
		return s.raw[i], nil
	}
	ours, err := s.m.Convert(n)
	if err != nil {
		return 0, err
	}
	out := []int64{0}
	s.ps.Score([]*snapshot.NodeInfo{s.scored(ours)}, out)
	return out[0], nil
}

// Normalize rewrites the scores of n nodes with the PodScorer's
// [score.Normalizer]; a no-op without one. at(i) is node i's name and its
// score, read and then written; node i is candidate i of [Mirror.Score]
// when the names agree (as upstream's score lists follow the candidates),
// else looked up by name. Errors: the normaliser's (scores unchanged), or
// a name the scored snapshot does not hold. O(n).
func (s *Scores[N]) Normalize(n int, at func(i int) (string, *int64)) error {
	norm, ok := s.ps.(score.Normalizer)
	if !ok {
		return nil
	}
	nodes, vals := make([]*snapshot.NodeInfo, n), make([]int64, n)
	for i := range n {
		name, v := at(i)
		if i < len(s.nodes) && s.nodes[i].Name() == name {
			nodes[i] = s.nodes[i]
		} else {
			nodes[i] = s.snap.Get(name)
		}
		if vals[i] = *v; nodes[i] == nil {
			return fmt.Errorf("mirror: Normalize: %w: %s", snapshot.ErrNodeNotFound, name)
		}
	}
	if err := norm.Normalize(nodes, vals); err != nil {
		return err
	}
	for i := range n {
		_, v := at(i)
		*v = vals[i]
	}
	return nil
}
