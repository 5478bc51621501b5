package snapshot

import (
	"runtime"

	"github.com/schedkit/schedkit/internal/spread"
)

// The pod-topology-spread index (internal/spread's groups.go says what it
// is for): every NodeInfo keeps its pods that a spread constraint may
// count — not terminating — grouped by class (namespace and labels, an
// interned handle computed once by NewPodInfo), with a count per group.
// addPod and removePod keep it (O(groups on the node), allocation-free
// unless the slice is full); cloneInto copies it into the clone's own
// memory, so a Fork's copy of a node never writes what the parent reads,
// and a recycled NodeInfo reuses its old slice (a steady Fork → AddPod →
// Revert loop still allocates nothing). Snapshot, Fork and Commit are
// unchanged: the index lives in the nodes they already copy on write.
//
// The groups sit with the affinity list (affinity.go) behind one pointer,
// podIndexes, so that NodeInfo keeps its 512 bytes.

func init() {
	spread.GroupsOf = func(n any) []spread.Group {
		if ni := n.(*NodeInfo); ni.idx != nil {
			return ni.idx.spreadGroups
		}
		return nil
	}
}

// podIndexes are a node's per-node inter-pod indexes. A NodeInfo owns
// its podIndexes (cloneInto copies it) and may change it in place.
type podIndexes struct {
	// affinityPods are the pods with pod (anti-)affinity (affinity.go);
	// its backing array is never written in place (Forks share it).
	affinityPods []*PodInfo
	// affBuf is this node's own memory for affinityPods (affinity.go).
	affBuf []*PodInfo
	// spreadGroups count the pods per class; private to this node.
	spreadGroups []spread.Group
}

// ownIndexes makes sure n has its podIndexes (a node that never had a
// pod has none); one allocation, the first time.
func (n *NodeInfo) ownIndexes() {
	if n.idx == nil {
		n.idx = newPodIndexes(0)
	}
}

func (n *NodeInfo) addSpreadPod(p *PodInfo) {
	if p.shape.spreadClass == (spread.Class{}) {
		return
	}
	n.ownIndexes()
	n.idx.spreadGroups = spread.AddToGroups(n.idx.spreadGroups, p.shape.spreadClass, p.shape.tmpl.Namespace, p.shape.tmpl.Labels)
}

func (n *NodeInfo) removeSpreadPod(p *PodInfo) {
	if n.idx != nil {
		n.idx.spreadGroups = spread.RemoveFromGroups(n.idx.spreadGroups, p.shape.spreadClass)
	}
}

// warmIndexes loads a word of x and of its first spread group, so that
// the lines a clone of their node copies are on their way; reads only.
// x may be nil, or stale (a chunk's hint: state.mutable).
func warmIndexes(x *podIndexes) {
	if x == nil {
		return
	}
	if g := x.spreadGroups; len(g) > 0 {
		runtime.KeepAlive(g[0].N)
	}
}

// cloneIndexesInto gives c (just made a copy of n, whose own podIndexes
// were idx, nil for a fresh NodeInfo) a private copy of n's indexes, in
// idx's memory when it has room (one more group than n has), so that a
// recycled NodeInfo allocates nothing.
func (n *NodeInfo) cloneIndexesInto(c *NodeInfo, idx *podIndexes) {
	if n.idx == nil {
		if idx != nil {
			clear(idx.spreadGroups[:cap(idx.spreadGroups)])
			idx.affinityPods, idx.spreadGroups = nil, idx.spreadGroups[:0]
		}
		c.idx = idx
		return
	}
	if idx == nil {
		idx = newPodIndexes(len(n.idx.spreadGroups) + 1)
	}
	buf := idx.spreadGroups
	clear(buf[:cap(buf)]) // drop the old content's label maps
	if cap(buf) < len(n.idx.spreadGroups)+1 {
		buf = make([]spread.Group, 0, len(n.idx.spreadGroups)+2)
	}
	idx.affinityPods = n.idx.affinityPods
	idx.spreadGroups = append(buf[:0], n.idx.spreadGroups...)
	c.idx = idx
}
