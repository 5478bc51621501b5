package snapshot

import (
	"slices"

	"github.com/schedkit/schedkit/internal/interpod"
)

// Pods with pod affinity or anti-affinity, per node (upstream NodeInfo's
// PodsWithAffinity; its PodsWithRequiredAntiAffinity is the subset with
// required anti-affinity terms). interpod.ScanIndex reads only these
// pods for existing pods' terms; a Snapshot or Fork serves InterPodAffinity
// from its incremental index instead (affinity_index.go). The list is
// kept on add and remove. A Fork's copy of a node shares the list with
// the parent, so the shared array is never written: the first change
// copies the list into the node's own buffer (affBuf, which a recycled
// NodeInfo keeps), later ones change that buffer in place. O(pods with
// affinity on the node), allocating only when the buffer is too small,
// only for such pods.

func init() {
	interpod.TermsOf = func(p any) *interpod.Terms { return p.(*PodInfo).shape.affinity }
}

// PodsWithAffinity returns the node's pods that have pod affinity or pod
// anti-affinity (any terms), in no particular order. Read-only; O(1).
func (n *NodeInfo) PodsWithAffinity() []*PodInfo {
	if n.idx == nil {
		return nil
	}
	a := n.idx.affinityPods
	return a[:len(a):len(a)]
}

func (n *NodeInfo) addAffinityPod(p *PodInfo) {
	if p.shape.affinity == nil {
		return
	}
	n.ownIndexes()
	x := n.idx
	if x.ownsAffinityPods() && len(x.affinityPods) < cap(x.affBuf) {
		x.affinityPods = append(x.affinityPods, p)
		return
	}
	if cap(x.affBuf) < len(x.affinityPods)+1 {
		x.affBuf = make([]*PodInfo, 0, max(4, 2*len(x.affinityPods)+1))
	}
	buf := x.affBuf[:cap(x.affBuf)]
	k := copy(buf, x.affinityPods)
	buf[k] = p
	clear(buf[k+1:]) // drop a recycled buffer's old pods
	x.affinityPods = buf[: k+1 : cap(buf)]
}

// ownsAffinityPods reports whether affinityPods lies in the node's own
// buffer (and so may be changed in place).
func (x *podIndexes) ownsAffinityPods() bool {
	return len(x.affinityPods) > 0 && cap(x.affBuf) > 0 && &x.affinityPods[:1][0] == &x.affBuf[:1][0]
}

func (n *NodeInfo) removeAffinityPod(p *PodInfo) {
	if p.shape.affinity == nil || n.idx == nil {
		return
	}
	x := n.idx
	i := slices.Index(x.affinityPods, p)
	if i < 0 {
		return
	}
	if len(x.affinityPods) == 1 {
		x.affinityPods = nil
		return
	}
	if !x.ownsAffinityPods() {
		if cap(x.affBuf) < len(x.affinityPods) {
			x.affBuf = make([]*PodInfo, 0, len(x.affinityPods))
		}
		buf := x.affBuf[:cap(x.affBuf)]
		clear(buf[copy(buf, x.affinityPods):])
		x.affinityPods = buf[:len(x.affinityPods):cap(buf)]
	}
	last := len(x.affinityPods) - 1
	x.affinityPods[i] = x.affinityPods[last]
	x.affinityPods[last] = nil
	x.affinityPods = x.affinityPods[:last]
}
