package score

import (
	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/layout"
)

// cpuMemTotals adds wLA × LeastAllocated + wBA × BalancedAllocation of
// each node to tot[i], reading each node's CPUMemory cache line (nodes[i]:
// the line in the NodeInfo, nodeview.CPUMemories, or its copy in a
// [column]) and nothing else, in blocks of touchBlock nodes. A first pass over a block
// loads each node's cpu and memory allocatable and checks that all lie in
// [0, fastMax); such a block is scored by a loop with the pod's figures in
// registers, no call, no per-node range check and no data-dependent
// branch, in which LeastAllocated's integer divisions overlap
// BalancedAllocation's float ones; a block with any other node (a
// negative allocatable, or one of 2^56 or more) goes through the general
// per-node methods.
//
// A node without cpu or memory allocatable (0: absent or zero, common in
// real clusters: about one node in four of the parity generator's) stays
// on the fast loop: it divides by 1 instead and masks what upstream
// leaves out (that resource's LeastAllocated part; BalancedAllocation's
// whole term, a constant 75, as one fraction has no spread). A branch
// there would mispredict on every such node, and sending its whole block
// to the general methods made realistic clusters about twice as slow as
// plain ones.
//
// The first pass is also a prefetch: a scan of thousands of nodes reads
// their lines from L3 or memory (from the NodeInfos: one line per
// 512-byte NodeInfo, a new page every 8 nodes), and a loop of a few instructions per node has all
// of a block's misses in flight at once, where the scoring loop (about a
// hundred instructions and four divisions per node) fits only two or
// three nodes in the processor's out-of-order window and would wait for
// each line in turn.
func cpuMemTotals(nodes []*layout.CPUMemory, la *leastPod, ba *balancedPod, wLA, wBA int64, tot []int64) {
	tot = tot[:len(nodes)]
	k := newCPUMemPod(la, ba, wLA, wBA)
	unit := la.wc == 1 && la.wm == 1 && wLA == 1 && wBA == 1
	for start := 0; start < len(nodes); start += touchBlock {
		end := min(start+touchBlock, len(nodes))
		block, out := nodes[start:end], tot[start:end]
		var or uint64
		for _, cm := range block {
			or |= uint64(cm.Allocatable[0]) | uint64(cm.Allocatable[1])
		}
		switch {
		case or >= fastMax:
			for i, cm := range block {
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
// 0 <= x < fastMax, x has no bit at or above 56, so one OR over a block
// checks every amount, and fastMax <= maxSafe.
const fastMax = 1 << 56

// noSpread is BalancedAllocation's score of a node with at most one of
// cpu and memory allocatable: one fraction (or none) has standard
// deviation 0 with and without the pod, so balancedScore(100, 100).
const noSpread = MaxScore/2 + MaxScore/4

// cpuMemPod is the pod's side of cpuMemTotals.
type cpuMemPod struct {
	lc, lm, wc, wm int64 // LeastAllocated: pod requests, resource weights
	bc, bm         int64 // BalancedAllocation: pod requests
	wLA, wBA       int64 // the profile's weights
	// wsInv[h] is ceil(2^32/ws) for the weight sum ws of the resources
	// a node has (h: bit 0 cpu, bit 1 memory; wsInv[0] is unused, the
	// sum is then 0): with weights in [1, 100] and 0 <= s <= MaxScore×ws,
	// s×wsInv>>32 is s/ws truncated (it exceeds s/ws by less than s/2^32
	// < 1/ws, too little to reach the next integer).
	wsInv [4]uint64
}

func newCPUMemPod(la *leastPod, ba *balancedPod, wLA, wBA int64) *cpuMemPod {
	k := &cpuMemPod{lc: la.cpu, lm: la.mem, wc: la.wc, wm: la.wm, bc: ba.cpu, bm: ba.mem, wLA: wLA, wBA: wBA}
	for h, ws := range [4]int64{0, la.wc, la.wm, la.wc + la.wm} {
		if ws > 0 {
			k.wsInv[h] = (1<<32 + uint64(ws) - 1) / uint64(ws)
		}
	}
	return k
}

// has is 1 when x > 0, else 0 (a SETcc, no branch).
func has(x int64) int64 {
	var h int64
	if x > 0 {
		h = 1
	}
	return h
}

// leastPick is leastFast without the branch, for 1 <= capacity < fastMax
// and non-negative used and podReq: the request is clamped to the
// capacity (a conditional move), which gives 0 where leastFast returns
// early.
func leastPick(used, podReq, capacity int64) int64 {
	r := min(uint64(used)+uint64(podReq), uint64(capacity))
	return int64((uint64(capacity) - r) * uint64(MaxScore) / uint64(capacity))
}

// weighted adds the pair's weighted score of each node to tot; every
// node's cpu and memory allocatable lie in [0, fastMax), so that
// leastPart's range checks are known to pass and the weighted mean is a
// multiplication by wsInv (TestProfileFusedPairMatchesScorers and
// TestFusedKernelsMatchGeneralPath check it against the plain scorers).
// A zero allocatable is divided as 1 and masked (see cpuMemTotals).
func (k *cpuMemPod) weighted(nodes []*layout.CPUMemory, tot []int64) {
	tot = tot[:len(nodes)]
	for i, cm := range nodes {
		c, m := cm.Allocatable[0], cm.Allocatable[1]
		hc, hm := has(c), has(m)
		c, m = c|(hc^1), m|(hm^1)
		s := leastPick(cm.NonZeroRequested[0], k.lc, c)*(k.wc&-hc) + leastPick(cm.NonZeroRequested[1], k.lm, m)*(k.wm&-hm)
		sLA := int64(uint64(s) * k.wsInv[hc|hm<<1] >> 32)
		with := arith.Balance2(arith.Fraction(arith.Add(cm.Requested[0], k.bc), c), arith.Fraction(arith.Add(cm.Requested[1], k.bm), m))
		sBA := balancedHalf(with, cm.Balance)
		if hc&hm == 0 {
			sBA = noSpread
		}
		tot[i] += k.wLA*sLA + k.wBA*sBA
	}
}

// unitWeights is weighted for wc = wm = wLA = wBA = 1 (the default
// configuration), without the multiplications: folding it into weighted
// made the default pair about 6 % slower, and a shared per-node helper is
// too large for the compiler to inline. The mean of the parts a node has
// is their sum shifted right by one when it has both, by none otherwise.
func (k *cpuMemPod) unitWeights(nodes []*layout.CPUMemory, tot []int64) {
	tot = tot[:len(nodes)]
	for i, cm := range nodes {
		c, m := cm.Allocatable[0], cm.Allocatable[1]
		hc, hm := has(c), has(m)
		both := hc & hm
		c, m = c|(hc^1), m|(hm^1)
		sLA := (leastPick(cm.NonZeroRequested[0], k.lc, c)&-hc + leastPick(cm.NonZeroRequested[1], k.lm, m)&-hm) >> both
		with := arith.Balance2(arith.Fraction(arith.Add(cm.Requested[0], k.bc), c), arith.Fraction(arith.Add(cm.Requested[1], k.bm), m))
		sBA := balancedHalf(with, cm.Balance)
		if both == 0 {
			sBA = noSpread
		}
		tot[i] += sLA + sBA
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
