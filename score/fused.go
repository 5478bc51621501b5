package score

import "github.com/schedkit/schedkit/snapshot"

// cpuMemKernel is the only copy of the cpu+memory fast paths of
// LeastAllocated (la) and BalancedAllocation (ba). With tot == nil it
// writes each scorer's score into outLA / outBA (either scorer may be nil:
// each scorer's Score calls it alone). With tot != nil (Profile.Score, both
// scorers set) it adds wLA × LeastAllocated + wBA × BalancedAllocation to
// tot[i] instead: one pass that loads each node's CPUMemory cache line once
// and lets LeastAllocated's integer divisions overlap BalancedAllocation's
// float ones. Both scores lie in [0, MaxScore] by construction
// (LeastAllocated: a weighted mean of values in [0, 100];
// BalancedAllocation: 50 + (50 + with - without)/2 with with, without in
// [50, 100]), so the profile needs no range check on them.
func cpuMemKernel(nodes []*snapshot.NodeInfo, la *leastPod, ba *balancedPod, outLA, outBA []int64, wLA, wBA int64, tot []int64) {
	if tot != nil {
		tot = tot[:len(nodes)]
	}
	if la != nil && tot == nil {
		outLA = outLA[:len(nodes)]
	}
	if ba != nil && tot == nil {
		outBA = outBA[:len(nodes)]
	}
	for i, n := range nodes {
		cm := n.CPUMemory()
		c, m := cm.Allocatable[0], cm.Allocatable[1]
		var sLA, sBA int64
		if la != nil {
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
			sLA = weightedMean(s, ws)
		}
		if ba != nil {
			if c <= 0 || m <= 0 {
				// At most one fraction: std = 0 with and without the
				// pod, so 50 + (50+100-100)/2.
				sBA = balancedScore(MaxScore, MaxScore)
			} else {
				// Two float64 divisions with the pod, as upstream; the
				// node's own fractions were computed (the same
				// divisions) when the node last changed.
				with := balance2(fraction(addSat(cm.Requested[0], ba.cpu), c), fraction(addSat(cm.Requested[1], ba.mem), m))
				without := balance2(cm.RequestedFraction[0], cm.RequestedFraction[1])
				sBA = balancedScore(with, without)
			}
		}
		if tot != nil {
			tot[i] += wLA*sLA + wBA*sBA
			continue
		}
		if la != nil {
			outLA[i] = sLA
		}
		if ba != nil {
			outBA[i] = sBA
		}
	}
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
