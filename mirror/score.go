package mirror

import (
	"fmt"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// Scores is one pod's scores over the candidates of a cycle, made by
// [Mirror.Score]. Immutable; safe for concurrent use.
type Scores[N comparable] struct {
	m      *Mirror[N]
	ps     score.PodScorer
	snap   *snapshot.Snapshot   // what the scorer read: the mirror's or the ledger's
	ledger bool                 // snap is the ledger's
	at     []*snapshot.NodeInfo // at[slot]: the mirrored node scored, raw[slot] its score
	raw    []int64
}

// Score prepares s for pod on the last synced snapshot — or, with a ledger
// set, on [reserve.Ledger.Snapshot], so holds and named reservations count
// as requested — and scores candidates in one PodScorer call. It returns
// nil and no error when the scorer skips the pod (Prepare returned nil).
// A candidate the mirror does not hold as it is (altered for this call) is
// converted ([Mirror.Convert]). Errors: the scorer's, or a candidate that
// does not convert. O(slots + candidates) plus the scorer's pass; allocates
// the result.
func (m *Mirror[N]) Score(s score.Scorer, pod *snapshot.PodInfo, candidates []N) (*Scores[N], error) {
	snap, l := m.Current(), m.Ledger()
	if l != nil {
		snap = l.Snapshot()
	}
	ps, err := s.Prepare(pod, snap)
	if err != nil || ps == nil {
		return nil, err
	}
	slots := len(m.cur.Load().slots)
	sc := &Scores[N]{m: m, ps: ps, snap: snap, ledger: l != nil, at: make([]*snapshot.NodeInfo, slots), raw: make([]int64, slots)}
	nodes, at, raw := make([]*snapshot.NodeInfo, len(candidates)), make([]int, len(candidates)), make([]int64, len(candidates))
	for i, n := range candidates {
		ours, slot := m.lookup(n)
		if ours == nil {
			if ours, err = m.Convert(n); err != nil {
				return nil, err
			}
		}
		if slot >= slots {
			slot = -1 // published after the view sc was sized for
		}
		if slot >= 0 {
			sc.at[slot] = ours
		}
		nodes[i], at[i] = sc.scored(ours), slot
	}
	ps.Score(nodes, raw)
	for i, slot := range at {
		if slot >= 0 {
			sc.raw[slot] = raw[i]
		}
	}
	return sc, nil
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
// candidate the mirror held (a look-up and an index, no allocation), else
// n scored on its own (allocates). Errors: n does not convert.
func (s *Scores[N]) Of(n N) (int64, error) {
	ours, slot := s.m.lookup(n)
	if ours != nil && slot < len(s.at) && s.at[slot] == ours {
		return s.raw[slot], nil
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
// score, read and then written. Errors: the normaliser's (scores
// unchanged), or a name the scored snapshot does not hold. O(n).
func (s *Scores[N]) Normalize(n int, at func(i int) (string, *int64)) error {
	norm, ok := s.ps.(score.Normalizer)
	if !ok {
		return nil
	}
	nodes, vals := make([]*snapshot.NodeInfo, n), make([]int64, n)
	for i := range n {
		name, v := at(i)
		if nodes[i], vals[i] = s.snap.Get(name), *v; nodes[i] == nil {
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
