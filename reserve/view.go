package reserve

import (
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// The view is the ledger's snapshot of everything it counts: a
// [snapshot.Fork] that informer events change eagerly (nodes, bound pods)
// and that the ledger's own records — holds, confirmations, reservation
// placeholders — join lazily, when a snapshot is asked for: Reserve and
// Unreserve never touch it, and Snapshot() pays only for what changed since
// the previous one (plus an O(holds) map check). Fork.Snapshot is O(1) and
// later changes copy what they touch, so snapshots handed out stay
// immutable.

// viewEntry is a ledger-owned pod (or placeholder) in the view.
type viewEntry struct {
	node  string
	pi    *snapshot.PodInfo
	epoch uint64
}

func mustView(err error) {
	if err != nil {
		// Every view change is checked against the ledger's records first
		// (a pod key is in one phase on one node), so it cannot fail.
		panic("reserve: ledger invariant broken: " + err.Error())
	}
}

// syncView brings the ledger-owned part of the view up to date.
// O(holds + reservations) map look-ups, plus one view change per entry
// that changed.
func (l *Ledger) syncView() {
	l.epoch++
	for _, i := range l.owned {
		rec := &l.recs[i]
		if n := &l.nodes[rec.node]; n.present {
			l.want(rec.key, n.name, rec.pi)
		}
	}
	for _, r := range l.res {
		if n := &l.nodes[r.node]; n.present {
			ph := r.placeholder()
			l.want(ph.Key(), n.name, ph)
		}
	}
	for k, e := range l.inView {
		if e.epoch != l.epoch {
			mustView(l.view.RemovePod(k, e.node))
			delete(l.inView, k)
		}
	}
}

func (l *Ledger) want(k snapshot.PodKey, node string, pi *snapshot.PodInfo) {
	e, ok := l.inView[k]
	if ok && e.node == node && e.pi == pi {
		e.epoch = l.epoch
		l.inView[k] = e
		return
	}
	if ok {
		mustView(l.view.RemovePod(k, e.node))
	}
	mustView(l.view.AddPodInfo(pi, node))
	l.inView[k] = viewEntry{node: node, pi: pi, epoch: l.epoch}
}

// viewAddNode adds a node that was absent, with the bound pods the ledger
// kept for it (pods reported before their node, or left when it was
// removed). Holds and placeholders join at the next sync.
func (l *Ledger) viewAddNode(i int32, node *v1.Node) {
	var pods []*snapshot.PodInfo
	if l.nodes[i].refs > 0 {
		l.bound.Each(func(idx int32) {
			if l.recs[idx].node == i {
				pods = append(pods, l.recs[idx].pi)
			}
		})
	}
	if l.devices == nil {
		mustView(l.view.AddNodeInfo(node, pods...))
		return
	}
	// One by one, so that each GPU pod without devices is placed on the
	// node as the pods before it left it.
	mustView(l.view.AddNodeInfo(node))
	for _, pi := range pods {
		mustView(l.view.AddPodInfo(l.placeBound(pi, node.Name), node.Name))
	}
}

// viewRemoveNode drops a node, with everything on it, from the view.
func (l *Ledger) viewRemoveNode(name string) {
	mustView(l.view.RemoveNode(name))
	for k, e := range l.inView {
		if e.node == name {
			delete(l.inView, k)
		}
	}
}

// viewUnbind removes pod k from the view, wherever the ledger put it:
// as a bound pod on a present node, or as a ledger-owned entry.
func (l *Ledger) viewUnbind(k snapshot.PodKey, i int32, ok bool) {
	if e, in := l.inView[k]; in {
		mustView(l.view.RemovePod(k, e.node))
		delete(l.inView, k)
	}
	if ok && l.recs[i].phase == Bound {
		if n := &l.nodes[l.recs[i].node]; n.present {
			mustView(l.view.RemovePod(k, n.name))
		}
	}
}
