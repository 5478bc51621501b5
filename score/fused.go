package score

import (
	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
)

// cpuMemTotals adds wLA × LeastAllocated + wBA × BalancedAllocation of
// each node to tot[i], reading each node's CPUMemory cache line and
// nothing else, in blocks of touchBlock nodes. A first pass over a block
// loads each node's cpu and memory allocatable and checks that all lie in
// [1, fastMax]; such a block is scored by a loop with the pod's figures in
// registers, no call and no per-node range check, in which
// LeastAllocated's integer divisions overlap BalancedAllocation's float
// ones; a block with any other node goes through the general per-node
// methods.
//
// The first pass is also a prefetch: a scan of thousands of nodes reads
// their lines from L3 or memory (one line per 512-byte NodeInfo, a new
// page every 8 nodes), and a loop of a few instructions per node has all
// of a block's misses in flight at once, where the scoring loop (about a
// hundred instructions and four divisions per node) fits only two or
// three nodes in the processor's out-of-order window and would wait for
// each line in turn.
func cpuMemTotals(nodes []*snapshot.NodeInfo, la *leastPod, ba *balancedPod, wLA, wBA int64, tot []int64) {
	tot = tot[:len(nodes)]
	k := newCPUMemPod(la, ba, wLA, wBA)
	unit := la.wc == 1 && la.wm == 1 && wLA == 1 && wBA == 1
	for start := 0; start < len(nodes); start += touchBlock {
		end := min(start+touchBlock, len(nodes))
		block, out := nodes[start:end], tot[start:end]
		var or uint64
		for _, n := range block {
			cm := nodeview.CPUMemory(n)
			or |= uint64(cm.Allocatable[0]-1) | uint64(cm.Allocatable[1]-1)
		}
		switch {
		case or >= fastMax:
			for i, n := range block {
				cm := nodeview.CPUMemory(n)
				out[i] += wLA*la.node(cm) + wBA*ba.node(cm)
			}
		case unit:
			k.unitWeights(block, out)
		default:
			k.weighted(block, out)
		}
	}
}

// touchBlock is how many nodes cpuMemTotals loads before scoring them: 32
// lines fit in L1 several times over and cover the miss latency (measured
// on 15000 nodes: 16 and 64 were slower).
const touchBlock = 32

// fastMax bounds the allocatable amounts of cpuMemPod's loops: for
// 1 <= x <= fastMax, (x-1) has no bit at or above 56, so one OR over a
// block checks every amount, and fastMax <= maxSafe.
const fastMax = 1 << 56

// cpuMemPod is the pod's side of cpuMemTotals.
type cpuMemPod struct {
	lc, lm, wc, wm int64 // LeastAllocated: pod requests, resource weights
	bc, bm         int64 // BalancedAllocation: pod requests
	wLA, wBA       int64 // the profile's weights
	// wsInv is ceil(2^32/ws) for ws = wc+wm: with weights in [1, 100]
	// and 0 <= s <= MaxScore×ws, s×wsInv>>32 is s/ws truncated (it
	// exceeds s/ws by less than s/2^32 < 1/ws, too little to reach the
	// next integer).
	wsInv uint64
}

func newCPUMemPod(la *leastPod, ba *balancedPod, wLA, wBA int64) *cpuMemPod {
	ws := uint64(la.wc + la.wm)
	return &cpuMemPod{lc: la.cpu, lm: la.mem, wc: la.wc, wm: la.wm, bc: ba.cpu, bm: ba.mem, wLA: wLA, wBA: wBA,
		wsInv: (1<<32 + ws - 1) / ws}
}

// weighted adds the pair's weighted score of each node to tot; every
// node's cpu and memory allocatable lie in [1, fastMax], so that
// leastPart's range checks are known to pass and the weighted mean is a
// multiplication by wsInv (TestProfileFusedPairMatchesScorers checks it
// against the plain scorers).
func (k *cpuMemPod) weighted(nodes []*snapshot.NodeInfo, tot []int64) {
	tot = tot[:len(nodes)]
	for i, n := range nodes {
		cm := nodeview.CPUMemory(n)
		c, m := cm.Allocatable[0], cm.Allocatable[1]
		s := leastFast(cm.NonZeroRequested[0], k.lc, c)*k.wc + leastFast(cm.NonZeroRequested[1], k.lm, m)*k.wm
		sLA := int64(uint64(s) * k.wsInv >> 32)
		with := arith.Balance2(arith.Fraction(arith.Add(cm.Requested[0], k.bc), c), arith.Fraction(arith.Add(cm.Requested[1], k.bm), m))
		tot[i] += k.wLA*sLA + k.wBA*balancedHalf(with, cm.Balance)
	}
}

// unitWeights is weighted for wc = wm = wLA = wBA = 1 (the default
// configuration), without the multiplications: folding it into weighted
// made the default pair about 6 % slower, and a shared per-node helper is
// too large for the compiler to inline.
func (k *cpuMemPod) unitWeights(nodes []*snapshot.NodeInfo, tot []int64) {
	tot = tot[:len(nodes)]
	for i, n := range nodes {
		cm := nodeview.CPUMemory(n)
		c, m := cm.Allocatable[0], cm.Allocatable[1]
		sLA := (leastFast(cm.NonZeroRequested[0], k.lc, c) + leastFast(cm.NonZeroRequested[1], k.lm, m)) >> 1
		with := arith.Balance2(arith.Fraction(arith.Add(cm.Requested[0], k.bc), c), arith.Fraction(arith.Add(cm.Requested[1], k.bm), m))
		tot[i] += sLA + balancedHalf(with, cm.Balance)
	}
}

// balancedHalf is balancedScore for with, without in [50, 100] (a
// standard deviation of fractions in [0, 1] is at most 0.5), where the
// halving of a non-negative number is a shift.
func balancedHalf(with, without int64) int64 {
	return MaxScore/2 + (MaxScore/2+with-without)>>1
}

// node is LeastAllocated's cpu+memory path for one node: the general
// loop's arithmetic (leastPart) over the node's CPUMemory line.
func (la *leastPod) node(cm *layout.CPUMemory) int64 {
	sc, wc := leastPart(cm.NonZeroRequested[0], la.cpu, cm.Allocatable[0], la.wc)
	sm, wm := leastPart(cm.NonZeroRequested[1], la.mem, cm.Allocatable[1], la.wm)
	return weightedMean(sc+sm, wc+wm)
}

// node is BalancedAllocation's cpu+memory path for one node: two float64
// divisions with the pod, as upstream; the node's own balance
// (CPUMemory.Balance) was computed, the same way, when the node last
// changed.
func (ba *balancedPod) node(cm *layout.CPUMemory) int64 {
	c, m := cm.Allocatable[0], cm.Allocatable[1]
	if c <= 0 || m <= 0 {
		// At most one fraction: std = 0 with and without the pod, so
		// 50 + (50+100-100)/2.
		return balancedScore(MaxScore, MaxScore)
	}
	with := arith.Balance2(arith.Fraction(arith.Add(cm.Requested[0], ba.cpu), c), arith.Fraction(arith.Add(cm.Requested[1], ba.mem), m))
	without := cm.Balance
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
