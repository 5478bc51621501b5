package snapshot

import "github.com/schedkit/schedkit/internal/interpod"

// Pods with pod affinity or anti-affinity, per node (upstream NodeInfo's
// PodsWithAffinity; its PodsWithRequiredAntiAffinity is the subset with
// required anti-affinity terms). interpod.ScanIndex reads only these
// pods for existing pods' terms; a Snapshot or Fork serves InterPodAffinity
// from its incremental index instead (affinity_index.go). The list is
// kept on add and remove; a Fork's
// copy of a node shares the list's backing array with the parent, so the
// array is never written in place: add and remove build a new one
// (O(pods with affinity on the node), one allocation, only for such
// pods).

func init() {
	interpod.TermsOf = func(p any) *interpod.Terms { return p.(*PodInfo).shape.affinity }
}

// PodsWithAffinity returns the node's pods that have pod affinity or pod
// anti-affinity (any terms), in no particular order. Read-only; O(1).
func (n *NodeInfo) PodsWithAffinity() []*PodInfo {
	if n.idx == nil {
		return nil
	}
	return n.idx.affinityPods
}

func (n *NodeInfo) addAffinityPod(p *PodInfo) {
	if p.shape.affinity == nil {
		return
	}
	n.ownIndexes()
	s := make([]*PodInfo, len(n.idx.affinityPods), len(n.idx.affinityPods)+1)
	copy(s, n.idx.affinityPods)
	n.idx.affinityPods = append(s, p)
}

func (n *NodeInfo) removeAffinityPod(p *PodInfo) {
	if p.shape.affinity == nil || n.idx == nil {
		return
	}
	for i, q := range n.idx.affinityPods {
		if q == p {
			if len(n.idx.affinityPods) == 1 {
				n.idx.affinityPods = nil
				return
			}
			s := make([]*PodInfo, 0, len(n.idx.affinityPods)-1)
			s = append(s, n.idx.affinityPods[:i]...)
			n.idx.affinityPods = append(s, n.idx.affinityPods[i+1:]...)
			return
		}
	}
}
