package score

import "github.com/schedkit/schedkit/snapshot"

// cpuMemKernel scores nodes with LeastAllocated (la, into outLA) and
// BalancedAllocation (ba, into outBA) on their cpu+memory fast paths; either
// may be nil. It is the only copy of both fast paths: each scorer's Score
// calls it alone, and Profile.Score calls it with both when a profile has
// the pair (the default profile does), so that each node's cache lines
// are loaded once and LeastAllocated's integer divisions overlap
// BalancedAllocation's float divisions (about 12% faster than two loops).
func cpuMemKernel(nodes []*snapshot.NodeInfo, la *leastPod, ba *balancedPod, outLA, outBA []int64) {
	if la != nil {
		outLA = outLA[:len(nodes)]
	}
	if ba != nil {
		outBA = outBA[:len(nodes)]
	}
	for i, n := range nodes {
		a := n.Allocatable()
		c, m := a.MilliCPU(), a.Memory()
		if la != nil {
			u := n.NonZeroRequested()
			var s, ws int64
			if uint64(c-1) < maxSafe {
				s, ws = leastFast(u.MilliCPU(), la.cpu, c)*la.wc, la.wc
			} else if c > 0 {
				s, ws = leastSlow(u.MilliCPU(), la.cpu, c)*la.wc, la.wc
			}
			if uint64(m-1) < maxSafe {
				s += leastFast(u.Memory(), la.mem, m) * la.wm
				ws += la.wm
			} else if m > 0 {
				s += leastSlow(u.Memory(), la.mem, m) * la.wm
				ws += la.wm
			}
			outLA[i] = weightedMean(s, ws)
		}
		if ba != nil {
			if c <= 0 || m <= 0 {
				// At most one fraction: std = 0 with and without the
				// pod, so 50 + (50+100-100)/2.
				outBA[i] = balancedScore(MaxScore, MaxScore)
				continue
			}
			u := n.Requested()
			uc, um := u.MilliCPU(), u.Memory()
			// Four float64 divisions, as upstream. (A one-division
			// variant with an exactness check measured slower.)
			with := balance2(fraction(addSat(uc, ba.cpu), c), fraction(addSat(um, ba.mem), m))
			without := balance2(fraction(uc, c), fraction(um, m))
			outBA[i] = balancedScore(with, without)
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
