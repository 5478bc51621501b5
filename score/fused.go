package score

import (
	"math"
	"math/bits"
	"strings"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/layout"
)

// cpuMemRec is a node's cpu and memory figures in the form the fused
// LeastAllocated + BalancedAllocation loop reads them: one 64-byte record
// per node, made from its [layout.CPUMemory] line by makeRec when the
// node last changed (the column's copies; without a column the loop
// reads the lines themselves, addLines). Index 0 is cpu, 1 memory.
//
// A fast record (alloc[0] >= 0) has, per resource, with a the
// allocatable when it is > 0 and 1 otherwise (a node without it: that
// resource's LeastAllocated part is then 0, as free is):
//
//   - alloc: a in [1, fastMax), the top byte free; alloc[0]'s top byte
//     holds the presence bits (bit 0 cpu, bit 1 memory: allocatable > 0),
//     alloc[1]'s the node's Balance (CPUMemory.Balance, in [50, 100]);
//   - free: (a − min(NonZeroRequested, a)) × 100 (0 when absent), so
//     that LeastAllocated's (a − min(used + podReq, a)) × 100 is
//     free − min(podReq × 100, free);
//   - req: min(Requested, a); BalancedAllocation's fraction of
//     min(req + podReq, a) is the same;
//   - inv: recip(a), at most 2^64/a and within a relative 2^-48 (and 2) of it,
//     so that LeastAllocated's division by a is a multiplication and one
//     exact correction (leastRec).
//
// A node outside that range (an allocatable or request negative, an
// allocatable of fastMax or more, a balance outside [50, 100]) gets a
// slow record, alloc[0] < 0, which the loop hands to the general
// per-node methods.
type cpuMemRec struct {
	alloc [2]int64
	free  [2]int64
	req   [2]int64
	inv   [2]uint64
}

// low56 masks the amount of a fast record's alloc.
const low56 = 1<<56 - 1

// slowRec is the record of a node the fast loop does not score.
var slowRec = cpuMemRec{alloc: [2]int64{math.MinInt64, 0}}

// makeRec is cm's record (see cpuMemRec). O(1): two float64 divisions
// and one branch, taken only for a slow record.
func makeRec(cm *layout.CPUMemory) cpuMemRec {
	var r cpuMemRec
	// Non-zero for a slow record: an allocatable outside [0, fastMax),
	// a negative request, a balance outside [50, 100].
	bad := uint64(cm.Balance-MaxScore/2) / uint64(MaxScore/2+1)
	var has int64
	for j := range 2 {
		a, nz, rq := cm.Allocatable[j], cm.NonZeroRequested[j], cm.Requested[j]
		bad |= uint64(a)>>56 | uint64(nz)>>63 | uint64(rq)>>63
		h := int64(0)
		if a > 0 {
			h = 1 // a SETcc, no branch
		}
		has |= h << j
		a |= h ^ 1 // an absent (0) allocatable as 1
		r.alloc[j], r.free[j], r.req[j] = a, (a-min(nz, a))*MaxScore&-h, min(rq, a)
		r.inv[j] = recip(a)
	}
	if bad != 0 {
		return slowRec
	}
	r.alloc[0] |= has << 56
	r.alloc[1] |= cm.Balance << 56
	return r
}

// recip is 2^64/a for 1 <= a < fastMax, lowered by at most a relative
// 2^-48 and then 2: float64(a) and the quotient are each within a
// relative 2^-53, and the factor 1 − 2^-49 takes the estimate of 2^63/a
// below it before truncation to an even number (2^63/a converts as an
// int64: a conversion to uint64 of 2^63 or more, for a <= 2, would branch
// on a 1 standing in for an absent resource). A float64 division
// instead of a 64-bit integer one: with a quotient of up to 64 bits the
// integer division takes several times longer on many x86 processors.
// TestRecipBounds checks the bounds.
func recip(a int64) uint64 {
	return uint64(int64(0x1p63/float64(a)*(1-0x1p-49))) << 1
}

// fastMax bounds the allocatable amounts of a fast record: 0 <= x <
// fastMax leaves x's top byte free, and 100×x < 2^63.
const fastMax = 1 << 56

// noSpread is BalancedAllocation's score of a node with at most one of
// cpu and memory allocatable: one fraction (or none) has standard
// deviation 0 with and without the pod, so balancedScore(100, 100).
const noSpread = MaxScore/2 + MaxScore/4

// cpuMemPod is the pod's side of the fused pair, made once per pod.
type cpuMemPod struct {
	la       *leastPod
	ba       *balancedPod
	rc, rm   int64 // LeastAllocated: pod requests
	lc, lm   int64 // the same × 100, at most fastMax × 100
	wc, wm   int64 // LeastAllocated: resource weights
	bc, bm   int64 // BalancedAllocation: pod requests
	wLA, wBA int64 // the profile's weights
	// wsInv[h] is ceil(2^32/ws) for the weight sum ws of the resources
	// a node has (h: bit 0 cpu, bit 1 memory; wsInv[0] is 0, the sum is
	// then 0 and so is the score): with weights in [1, 100] and
	// 0 <= s <= MaxScore×ws, s×wsInv>>32 is s/ws truncated (it exceeds
	// s/ws by less than s/2^32 < 1/ws, too little to reach the next
	// integer).
	wsInv [4]uint64
	// fast: the pod's requests are non-negative, so that the fast
	// records' sums cannot wrap; otherwise every node goes through the
	// general methods.
	fast bool
	unit bool   // wc = wm = wLA = wBA = 1
	vec  vecPod // the pod's figures for fusedUnitAVX2 (unit only)
	// allVec: the vector loop is known to take all the records add is
	// given (the column said so), so addUnitVec need not look.
	allVec bool
}

func newCPUMemPod(la *leastPod, ba *balancedPod, wLA, wBA int64) cpuMemPod {
	k := cpuMemPod{la: la, ba: ba, rc: la.cpu, rm: la.mem, lc: min(la.cpu, fastMax) * MaxScore, lm: min(la.mem, fastMax) * MaxScore,
		wc: la.wc, wm: la.wm, bc: ba.cpu, bm: ba.mem, wLA: wLA, wBA: wBA}
	for h, ws := range [4]int64{0, la.wc, la.wm, la.wc + la.wm} {
		if ws > 0 {
			k.wsInv[h] = (1<<32 + uint64(ws) - 1) / uint64(ws)
		}
	}
	k.fast = min(la.cpu, la.mem, k.bc, k.bm) >= 0
	k.unit = la.wc == 1 && la.wm == 1 && wLA == 1 && wBA == 1
	if k.unit && k.fast {
		k.vec = newVecPod(&k)
	}
	return k
}

// touchBlock is how many NodeInfo lines addLines loads before scoring
// them: 32 lines fit in L1 several times over and cover the miss latency
// (measured on 15000 nodes: 16 and 64 were slower).
const touchBlock = 32

// addLines adds the pair's weighted score of each node (its CPUMemory
// line lines[i], read from its NodeInfo) to tot[i], in blocks of
// touchBlock nodes. A first pass over a block loads each node's cpu and
// memory allocatable and checks that all lie in [0, fastMax); such a
// block is scored by a loop with the pod's figures in registers, no call,
// no per-node range check and no data-dependent branch, dividing by the
// allocatable amounts; a block with any other node goes through the
// general per-node methods.
//
// Records (add) are not made here: made per pod, their reciprocals and
// packing cost more than the divisions they save (ProfileRealisticLines:
// 29–33 cpu-ns/node against 12–27 at load 37); they pay in the column,
// made once per node change.
//
// The first pass is also a prefetch: a scan of thousands of nodes reads
// their lines from L3 or memory (one line per 512-byte NodeInfo, a new
// page every 8 nodes), and a loop of a few instructions per node has all
// of a block's misses in flight at once, where the scoring loop (about a
// hundred instructions and four divisions per node) fits only two or
// three nodes in the processor's out-of-order window and would wait for
// each line in turn.
func (k *cpuMemPod) addLines(lines []*layout.CPUMemory, tot []int64) {
	tot = tot[:len(lines)]
	for start := 0; start < len(lines); start += touchBlock {
		end := min(start+touchBlock, len(lines))
		block, out := lines[start:end], tot[start:end]
		var or uint64
		for _, cm := range block {
			or |= uint64(cm.Allocatable[0]) | uint64(cm.Allocatable[1])
		}
		switch {
		case or >= fastMax || !k.fast:
			for i, cm := range block {
				out[i] += k.wLA*k.la.node(cm) + k.wBA*k.ba.node(cm)
			}
		case k.unit:
			k.linesUnit(block, out)
		default:
			k.linesWeighted(block, out)
		}
	}
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

// linesWeighted adds the pair's weighted score of each node (its
// CPUMemory line) to tot; every node's cpu and memory allocatable lie in
// [0, fastMax), so that leastPart's range checks are known to pass and
// the weighted mean is a multiplication by wsInv
// (TestFusedKernelsMatchGeneralPath checks it against the general
// methods). A zero allocatable is divided as 1 and masked (see add).
func (k *cpuMemPod) linesWeighted(nodes []*layout.CPUMemory, tot []int64) {
	tot = tot[:len(nodes)]
	for i, cm := range nodes {
		c, m := cm.Allocatable[0], cm.Allocatable[1]
		hc, hm := has(c), has(m)
		c, m = c|(hc^1), m|(hm^1)
		s := leastPick(cm.NonZeroRequested[0], k.rc, c)*(k.wc&-hc) + leastPick(cm.NonZeroRequested[1], k.rm, m)*(k.wm&-hm)
		sLA := int64(uint64(s) * k.wsInv[hc|hm<<1] >> 32)
		with := arith.Balance2(arith.Fraction(arith.Add(cm.Requested[0], k.bc), c), arith.Fraction(arith.Add(cm.Requested[1], k.bm), m))
		sBA := balancedHalf(with, cm.Balance)
		if hc&hm == 0 {
			sBA = noSpread
		}
		tot[i] += k.wLA*sLA + k.wBA*sBA
	}
}

// linesUnit is linesWeighted for wc = wm = wLA = wBA = 1 (the default
// configuration), without the multiplications, as addUnit.
func (k *cpuMemPod) linesUnit(nodes []*layout.CPUMemory, tot []int64) {
	tot = tot[:len(nodes)]
	for i, cm := range nodes {
		c, m := cm.Allocatable[0], cm.Allocatable[1]
		hc, hm := has(c), has(m)
		both := hc & hm
		c, m = c|(hc^1), m|(hm^1)
		sLA := (leastPick(cm.NonZeroRequested[0], k.rc, c)&-hc + leastPick(cm.NonZeroRequested[1], k.rm, m)&-hm) >> both
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

// add adds the pair's weighted score of each node to tot[i]: recs[i] is
// the node's record, lines[i] its CPUMemory line (read only for a slow
// record). A fast record is scored with no call, no division by the
// node's allocatable and no data-dependent branch but the test for a slow
// record (a node without cpu or memory is masked, not branched on: a
// quarter of real clusters' nodes lack one, and a branch there
// mispredicts); a slow one by the general
// per-node methods (leastPod.node, balancedPod.node), which the fast
// loop equals (TestFusedKernelsMatchGeneralPath).
func (k *cpuMemPod) add(recs []cpuMemRec, lines []*layout.CPUMemory, tot []int64) {
	if !k.fast {
		for i, cm := range lines {
			tot[i] += k.wLA*k.la.node(cm) + k.wBA*k.ba.node(cm)
		}
		return
	}
	if k.unit {
		k.addUnit(recs, lines, tot)
		return
	}
	tot = tot[:len(recs)]
	lines = lines[:len(recs)]
	for i := range recs {
		r := &recs[i]
		if r.alloc[0] < 0 {
			tot[i] += k.wLA*k.la.node(lines[i]) + k.wBA*k.ba.node(lines[i])
			continue
		}
		a0, a1 := uint64(r.alloc[0]), uint64(r.alloc[1])
		c, m, h := a0&low56, a1&low56, a0>>56
		s := leastRec(uint64(r.free[0]), uint64(k.lc), c, r.inv[0])*uint64(k.wc) +
			leastRec(uint64(r.free[1]), uint64(k.lm), m, r.inv[1])*uint64(k.wm)
		sLA := int64(s * k.wsInv[h&3] >> 32)
		sBA := balancedRec(uint64(r.req[0])+uint64(k.bc), c, uint64(r.req[1])+uint64(k.bm), m, int64(a1>>56))
		if h != 3 {
			sBA = noSpread
		}
		tot[i] += k.wLA*sLA + k.wBA*sBA
	}
}

// addUnit is add's loop for wc = wm = wLA = wBA = 1 (the default
// configuration), without the multiplications: the mean of the parts a
// node has is their sum shifted right by one when it has both, by none
// otherwise (an absent part is 0).
func (k *cpuMemPod) addUnit(recs []cpuMemRec, lines []*layout.CPUMemory, tot []int64) {
	if vecKernel {
		k.addUnitVec(recs, lines, tot)
		return
	}
	k.addUnitLoop(recs, lines, tot)
}

// addUnitLoop is addUnit's per-node loop.
func (k *cpuMemPod) addUnitLoop(recs []cpuMemRec, lines []*layout.CPUMemory, tot []int64) {
	tot = tot[:len(recs)]
	lines = lines[:len(recs)]
	for i := range recs {
		r := &recs[i]
		if r.alloc[0] < 0 {
			tot[i] += k.la.node(lines[i]) + k.ba.node(lines[i])
			continue
		}
		a0, a1 := uint64(r.alloc[0]), uint64(r.alloc[1])
		c, m := a0&low56, a1&low56
		both := (a0>>56 + 1) >> 2 // presence bits 3: 1, else 0
		sLA := (leastRec(uint64(r.free[0]), uint64(k.lc), c, r.inv[0]) +
			leastRec(uint64(r.free[1]), uint64(k.lm), m, r.inv[1])) >> both
		sBA := balancedRec(uint64(r.req[0])+uint64(k.bc), c, uint64(r.req[1])+uint64(k.bm), m, int64(a1>>56))
		if both == 0 {
			sBA = noSpread
		}
		tot[i] += int64(sLA) + sBA
	}
}

// vecPod is the pod's side of fusedUnitAVX2, each figure four times
// (one per lane): LeastAllocated's requests × 100 (lc, lm: as
// cpuMemPod's, at most fastMax × 100) and BalancedAllocation's requests
// clamped to fastMax (bc, bm: a fast record's amounts are below it, so
// min(req + bc, a) is unchanged, and the sums stay below 2^63 for the
// kernel's signed compares).
type vecPod struct {
	lc, lm, bc, bm [4]int64
}

func newVecPod(k *cpuMemPod) vecPod {
	var v vecPod
	for i := range 4 {
		v.lc[i], v.lm[i] = k.lc, k.lm
		v.bc[i], v.bm[i] = min(k.bc, fastMax), min(k.bm, fastMax)
	}
	return v
}

// vecMax bounds the allocatable amounts of the records fusedUnitAVX2
// scores: below 2^45 (35 billion cores in milli-CPU, 32 TiB), every
// integer its arithmetic converts (allocatable, LeastAllocated's n <=
// 100a < 2^52, BalancedAllocation's min(req + podReq, a) <= a) is below
// 2^52, so exact in a float64. A record of a larger node, or a slow one,
// is scored by the scalar loop.
const vecMax = 1 << 45

// vecBits ORs a record's cpu and memory allocatable with its slow bit
// (alloc[0]'s sign): below vecMax exactly when the vector loop takes it,
// and so for a chunk when the OR of its records' vecBits is.
func vecBits(r *cpuMemRec) uint64 {
	return (uint64(r.alloc[0])|uint64(r.alloc[1]))&low56 | uint64(r.alloc[0])&(1<<63)
}

// godebugOff reports whether the GODEBUG setting godebug turns the
// processor feature off: the last of its comma-separated cpu.<feature>
// and cpu.all settings is "off" (the form the Go runtime reads, e.g.
// GODEBUG=cpu.avx2=off). O(len(godebug)).
func godebugOff(godebug, feature string) bool {
	off := false
	for kv := range strings.SplitSeq(godebug, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok && (k == "cpu."+feature || k == "cpu.all") {
			off = v == "off"
		}
	}
	return off
}

// addUnitVec is addUnit with fusedUnitAVX2 scoring four records at once,
// when every record of the chunk is fast with amounts below vecMax
// (known when allVec is set, looked for otherwise); a chunk with another
// record, and the last len(recs) mod 4 records, go through addUnitLoop.
// Per record it computes what addUnitLoop does, in 64-bit integer and
// float64 lanes, with every integer converted exactly (all are below
// 2^52, see vecMax):
//
//   - LeastAllocated's quotient ⌊n/a⌋ is the truncated float64 quotient
//     fl(n/a): when n/a is an integer k, fl(n/a) = k; otherwise n/a lies
//     at least 1/a > 2^-45 from every integer, and fl(n/a) < 128 lies
//     within half an ulp (2^-47) of it, so on the same side of each.
//   - BalancedAllocation's fractions are float64(min(req + podReq, a)) /
//     float64(a), then the same subtraction, halving, |·|, 1 − std and
//     ×100 as arith.Balance2, truncated: the same float64 operations on
//     the same numbers as balancedRec, each correctly rounded.
//
// So the totals are addUnitLoop's bit for bit
// (TestFusedKernelsMatchGeneralPath, TestFusedUnitVec, FuzzFusedUnitVec).
func (k *cpuMemPod) addUnitVec(recs []cpuMemRec, lines []*layout.CPUMemory, tot []int64) {
	n := len(recs)
	tot, lines = tot[:n], lines[:n]
	var bits uint64
	if !k.allVec {
		for i := range recs {
			bits |= vecBits(&recs[i])
		}
	}
	if bits >= vecMax || n < 4 {
		k.addUnitLoop(recs, lines, tot)
		return
	}
	v := n &^ 3
	fusedUnitAVX2(&recs[0], &tot[0], v, &k.vec)
	k.addUnitLoop(recs[v:], lines[v:], tot[v:])
}

// leastRec is leastRequestedScore(used, podReq, a) for a fast record's
// 1 <= a < fastMax, free = (a − min(used, a)) × 100, podReq100 =
// min(podReq, fastMax) × 100 with podReq >= 0, and inv = recip(a):
// n = free − min(podReq100, free) is (a − min(used+podReq, a)) × 100 <=
// 100a < 2^63, and the quotient q = ⌊n/a⌋ (at most 100) is
// est = ⌊n×inv/2^64⌋ or one more. inv <= 2^64/a gives est <= q; inv >=
// (2^64/a)(1 − 2^-48) − 2 gives n×inv/2^64 >= n/a − 100×2^-48 − 2n/2^64
// > n/a − 1 (2n/2^64 < 0.8), so est >= q − 1; the remainder n − est×a
// tells which.
// TestLeastRecExact checks it against the division.
func leastRec(free, podReq100, a, inv uint64) uint64 {
	n := free - min(podReq100, free)
	q, _ := bits.Mul64(n, inv)
	if n-q*a >= a {
		q++
	}
	return q
}

// balancedRec is BalancedAllocation's score of a node with both cpu and
// memory (allocatable c, m; balance without the pod bal), with the
// node's requests plus the pod's xc and xm: upstream's float64
// fractions, min(1, x/a) computed as min(x, a)/a (the same float64: a
// quotient of x >= a is clamped to 1 either way, and a/a is 1), then
// balancedHalf.
func balancedRec(xc, c, xm, m uint64, bal int64) int64 {
	fc := float64(int64(min(xc, c))) / float64(int64(c))
	fm := float64(int64(min(xm, m))) / float64(int64(m))
	return balancedHalf(arith.Balance2(fc, fm), bal)
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
