package reserve

import (
	"fmt"
	"time"

	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
)

// GangMember is one pod of a gang and the node chosen for it.
type GangMember struct {
	Pod  *snapshot.PodInfo
	Node string
}

// GangUnfit says why a gang did not land: member Member (an index into the
// members passed to [Ledger.ReserveGang]) does not fit on its node, counting
// the members before it.
type GangUnfit struct {
	Member  int
	Reasons []Insufficient
}

// ReserveGang holds every member on its node, or none: members are checked
// in order, each counting the holds of the members before it (two members
// on one node must fit together), and if any does not fit — or any is held
// or bound on another node — the ledger is exactly as before. A member
// already held on its own node counts as landed and is left as it was on
// failure. All new holds share deadline (zero: none; see
// [Ledger.ReserveUntil]); afterwards they are ordinary holds (Unreserve,
// Confirm and Expire act on each pod).
//
// Results: nil, nil: all held; unfit, nil: nothing changed; nil, err:
// a nil pod or a pod listed twice ([ErrInvalid]), an unknown node
// ([ErrNodeNotFound]), a conflict ([ErrConflict]), the journal failed
// ([ErrJournal]) — each naming the member index — and nothing changed.
// One journal record for the whole gang, so a torn journal never replays
// part of a gang. O(members × resources); allocates O(members).
func (l *Ledger) ReserveGang(members []GangMember, deadline time.Time) (_ *GangUnfit, err error) {
	defer named("ReserveGang", &err)
	seen := make(map[snapshot.PodKey]int, len(members))
	for i, m := range members {
		if m.Pod == nil {
			return nil, fmt.Errorf("member %d: pod is nil: %w", i, ErrInvalid)
		}
		if j, dup := seen[m.Pod.Key()]; dup {
			return nil, fmt.Errorf("members %d and %d are both pod %s: %w", j, i, m.Pod.Key(), ErrInvalid)
		}
		seen[m.Pod.Key()] = i
	}
	dl := deadlineNanos(deadline)
	l.mu.Lock()
	defer l.mu.Unlock()
	ver := l.ver
	applied := make([]holdPlan, 0, len(members))
	rollback := func() {
		for i := len(applied) - 1; i >= 0; i-- {
			k := applied[i].pi.Key()
			l.returnDraw(k)
			i, _ := l.held.get(nodeview.HashKey(k), k, l.recs)
			l.dropRec(i)
		}
		l.ver = ver
	}
	for i, m := range members {
		var p plan
		reasons, err := l.plan(m.Pod, m.Node, &p)
		if err != nil {
			rollback()
			return nil, fmt.Errorf("member %d: %w", i, err)
		}
		if reasons != nil {
			rollback()
			return &GangUnfit{Member: i, Reasons: reasons}, nil
		}
		if p.noop {
			continue
		}
		pod := m.Pod
		if p.pi != nil {
			pod = p.pi
		}
		l.applyHold(pod, &p, dl)
		applied = append(applied, holdPlan{pi: pod, plan: p, deadline: dl})
	}
	if len(applied) > 0 {
		if err := l.logHolds(applied); err != nil {
			rollback()
			return nil, err
		}
	}
	return nil, nil
}
