package score

import "github.com/schedkit/schedkit/snapshot"

// cpuMemTotals adds wLA × LeastAllocated + wBA × BalancedAllocation of
// each node to tot[i]: one pass that reads each node's CPUMemory cache
// line once, with the pod's figures in registers, and lets
// LeastAllocated's integer divisions overlap BalancedAllocation's float
// ones. A node whose cpu or memory allocatable is outside (0, maxSafe]
// takes the general per-node path. Both scores lie in [0, MaxScore] by
// construction (LeastAllocated: a weighted mean of values in [0, 100];
// BalancedAllocation: 50 + (50 + with - without)/2 with with, without in
// [50, 100]), so the profile needs no range check on them.
func cpuMemTotals(nodes []*snapshot.NodeInfo, la *leastPod, ba *balancedPod, wLA, wBA int64, tot []int64) {
	tot = tot[:len(nodes)]
	lc, lm, wc, wm := la.cpu, la.mem, la.wc, la.wm
	ws := wc + wm
	bc, bm := ba.cpu, ba.mem
	for i, n := range nodes {
		cm := n.CPUMemory()
		c, m := cm.Allocatable[0], cm.Allocatable[1]
		if uint64(c-1) >= maxSafe || uint64(m-1) >= maxSafe {
			tot[i] += wLA*la.node(cm) + wBA*ba.node(cm)
			continue
		}
		sLA := weightedMean(leastFast(cm.NonZeroRequested[0], lc, c)*wc+leastFast(cm.NonZeroRequested[1], lm, m)*wm, ws)
		with := balance2(fraction(addSat(cm.Requested[0], bc), c), fraction(addSat(cm.Requested[1], bm), m))
		without := balance2(cm.RequestedFraction[0], cm.RequestedFraction[1])
		tot[i] += wLA*sLA + wBA*balancedScore(with, without)
	}
}

// node is LeastAllocated's cpu+memory path for one node: a resource with
// allocatable <= 0 is left out of the weighted mean, as upstream.
func (la *leastPod) node(cm *snapshot.CPUMemory) int64 {
	c, m := cm.Allocatable[0], cm.Allocatable[1]
	var s, ws int64
	if uint64(c-1) < maxSafe {
		s, ws = leastFast(cm.NonZeroRequested[0], la.cpu, c)*la.wc, la.wc
	} else if c > 0 {
		s, ws = leastSlow(cm.NonZeroRequested[0], la.cpu, c)*la.wc, la.wc
	}
	if uint64(m-1) < maxSafe {
		s += leastFast(cm.NonZeroRequested[1], la.mem, m) * la.wm
		ws += la.wm
	} else if m > 0 {
		s += leastSlow(cm.NonZeroRequested[1], la.mem, m) * la.wm
		ws += la.wm
	}
	return weightedMean(s, ws)
}

// node is BalancedAllocation's cpu+memory path for one node: two float64
// divisions with the pod, as upstream; the node's own fractions were
// computed (the same divisions) when the node last changed.
func (ba *balancedPod) node(cm *snapshot.CPUMemory) int64 {
	c, m := cm.Allocatable[0], cm.Allocatable[1]
	if c <= 0 || m <= 0 {
		// At most one fraction: std = 0 with and without the pod, so
		// 50 + (50+100-100)/2.
		return balancedScore(MaxScore, MaxScore)
	}
	with := balance2(fraction(addSat(cm.Requested[0], ba.cpu), c), fraction(addSat(cm.Requested[1], ba.mem), m))
	without := balance2(cm.RequestedFraction[0], cm.RequestedFraction[1])
	return balancedScore(with, without)
}

// fusedPair is the LeastAllocated and BalancedAllocation pair of a
// profile, both on their fast paths.
type fusedPair struct {
	la, ba   int // indexes in the profile
	least    *leastPod
	balanced *balancedPod
}

// findFusedPair looks for the pair among the prepared, non-normalising
// scorers.
func findFusedPair(ps []PodScorer, plain []int) (fusedPair, bool) {
	f := fusedPair{la: -1, ba: -1}
	for _, i := range plain {
		switch s := ps[i].(type) {
		case *leastPod:
			if s.fast && f.least == nil {
				f.la, f.least = i, s
			}
		case *balancedPod:
			if s.fast && f.balanced == nil {
				f.ba, f.balanced = i, s
			}
		}
	}
	return f, f.least != nil && f.balanced != nil
}
