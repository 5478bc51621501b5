package score

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// kernelNodes is n nodes whose cpu and memory allocatable are each absent,
// zero, tiny or realistic (about one node in four lacks one of them, as
// the parity generator's realistic nodes), with 0–4 bound pods, some
// without requests, some over-committing the node; huge adds nodes with
// an allocatable of 2^56 or more.
func kernelNodes(t *testing.T, r *rand.Rand, n int, huge bool) []*snapshot.NodeInfo {
	c := snapshot.NewCache()
	pick := func(id snapshot.ResourceID, real int64) (apiresource.Quantity, bool) {
		q := func(x int64) apiresource.Quantity {
			if id == snapshot.CPU {
				return *apiresource.NewMilliQuantity(x, apiresource.DecimalSI)
			}
			return *apiresource.NewQuantity(x, apiresource.BinarySI)
		}
		switch r.IntN(8) {
		case 0:
			return apiresource.Quantity{}, false
		case 1:
			return q(0), true
		case 2:
			return q(1 + r.Int64N(4)), true
		case 3:
			if huge {
				return q(fastMax + r.Int64N(fastMax)), true
			}
		}
		return q(1 + r.Int64N(real)), true
	}
	for i := range n {
		alloc := v1.ResourceList{}
		if q, ok := pick(snapshot.CPU, 96000); ok {
			alloc[v1.ResourceCPU] = q
		}
		if q, ok := pick(snapshot.Memory, 512<<30); ok {
			alloc[v1.ResourceMemory] = q
		}
		node := snapshottest.MakeNode(fmt.Sprintf("n%03d", i)).Obj()
		node.Status.Allocatable = alloc
		require.NoError(t, c.AddNode(node))
		for j := range r.IntN(5) {
			b := snapshottest.MakePod(fmt.Sprintf("p%d-%d", i, j)).Node(node.Name)
			if r.IntN(4) > 0 {
				b.Req("cpu", fmt.Sprintf("%dm", r.Int64N(16000)), "memory", fmt.Sprint(r.Int64N(64<<30)))
			}
			require.NoError(t, c.AddPod(b.Obj()))
		}
	}
	var nodes []*snapshot.NodeInfo
	for _, ni := range c.Snapshot().Nodes() {
		nodes = append(nodes, ni)
	}
	return nodes
}

// The fused pair's loops (cpuMemPod.add over records and its
// unit-weight form addUnit; addLines over the NodeInfos' lines and its
// loops linesWeighted and linesUnit) give every node what the general per-node methods give (leastPod.node,
// balancedPod.node: upstream's rules, checked against its vectors
// elsewhere), nodes without cpu or memory allocatable included (divided
// by 1 and masked) and nodes of 2^56 or more (slow records).
func TestFusedKernelsMatchGeneralPath(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 30 {
		huge := round%3 == 2
		nodes := kernelNodes(t, r, 1+r.IntN(200), huge)
		la := &leastPod{fast: true, cpu: r.Int64N(4000), mem: r.Int64N(8 << 30), wc: 1, wm: 1}
		ba := &balancedPod{fast: true, cpu: la.cpu, mem: la.mem}
		if r.IntN(2) == 0 {
			la.wc, la.wm = 1+r.Int64N(100), 1+r.Int64N(100)
		}
		wLA, wBA := int64(1), int64(1)
		if r.IntN(2) == 0 {
			wLA, wBA = 1+r.Int64N(10), 1+r.Int64N(10)
		}
		want := make([]int64, len(nodes))
		for i, n := range nodes {
			cm := nodeview.CPUMemory(n)
			want[i] = wLA*la.node(cm) + wBA*ba.node(cm)
		}
		desc := fmt.Sprintf("round %d: pod %d/%d weights %d,%d × %d,%d", round, la.cpu, la.mem, la.wc, la.wm, wLA, wBA)
		lines := nodeview.CPUMemories(nodes)
		recs := make([]cpuMemRec, len(lines))
		slow := 0
		for i, cm := range lines {
			recs[i] = makeRec(cm)
			if recs[i].alloc[0] < 0 {
				slow++
			}
		}
		if huge {
			require.Positive(t, slow, "%s: no slow record among nodes of 2^56", desc)
		} else {
			require.Zero(t, slow, "%s: slow records without huge nodes", desc)
		}
		k := newCPUMemPod(la, ba, wLA, wBA)
		got := make([]int64, len(nodes))
		k.addLines(lines, got)
		require.Equal(t, want, got, "addLines, %s", desc)
		if !huge {
			clear(got)
			k.linesWeighted(lines, got)
			require.Equal(t, want, got, "linesWeighted, %s", desc)
			if k.unit {
				clear(got)
				k.linesUnit(lines, got)
				require.Equal(t, want, got, "linesUnit, %s", desc)
			}
		}
		clear(got)
		k.add(recs, lines, got)
		require.Equal(t, want, got, "add, %s", desc)
		if k.unit {
			k.unit = false // the weighted loop with unit weights
			clear(got)
			k.add(recs, lines, got)
			require.Equal(t, want, got, "add (weighted loop, unit weights), %s", desc)
		}
	}
}

// leastRec equals the division it replaces (leastRequestedScore) over
// the whole range a fast record allows: allocatable a in [1, 2^56),
// used in [0, a], podReq in [0, 2^63): every a up to 300 with every
// used, and random a of every bit length with used and podReq drawn near
// the points where the quotient changes.
func TestLeastRecExact(t *testing.T) {
	check := func(used, podReq, a int64) {
		got := leastRecOf(used, podReq, a)
		if want := leastRequestedScore(used, podReq, a); got != want {
			t.Fatalf("leastRec(%d, %d, %d) = %d, want %d", used, podReq, a, got, want)
		}
	}
	for a := int64(1); a <= 300; a++ {
		for used := int64(0); used <= a; used++ {
			check(used, 0, a)
			check(0, used, a)
		}
	}
	r := rand.New(rand.NewPCG(3, 5))
	for range 2_000_000 {
		a := 1 + r.Int64N(int64(1)<<(1+r.IntN(56))-1)
		// A quotient k changes where (a-x)×100 crosses k×a: x near
		// a - ⌈k×a/100⌉.
		k := r.Int64N(101)
		x := a - (k*(a/100) + (k*(a%100)+99)/100) + r.Int64N(5) - 2
		x = min(max(x, 0), a)
		used := r.Int64N(x + 1)
		check(used, x-used, a)
		check(r.Int64N(a+1), r.Int64N(math.MaxInt64), a)
	}
	check(fastMax-1, 0, fastMax-1)
	check(0, 0, fastMax-1)
	check(1, 0, fastMax-1)
	check(0, math.MaxInt64, fastMax-1)
}

// leastRecOf is leastRec with its arguments made as makeRec and
// newCPUMemPod make them.
func leastRecOf(used, podReq, a int64) int64 {
	free := (a - min(used, a)) * MaxScore
	return int64(leastRec(uint64(free), uint64(min(podReq, fastMax)*MaxScore), uint64(a), recip(a)))
}

// recip(a) lies in [(2^64/a)(1 − 2^-48) − 2, 2^64/a] for every a a fast
// record can hold: every a up to 2^16, every power of two and its
// neighbours, and random a of every bit length.
func TestRecipBounds(t *testing.T) {
	check := func(a int64) {
		inv := recip(a)
		// inv×a <= 2^64 (equality only for a power of two, where
		// 2^64/a is an integer).
		hi, lo := bits.Mul64(inv, uint64(a))
		if hi > 1 || (hi == 1 && lo != 0) {
			t.Fatalf("recip(%d) = %d: above 2^64/a", a, inv)
		}
		// inv×a >= 2^64×(1 − 2^-48) − 2a, i.e. 2^64 − inv×a <= 2^16 + 2a.
		if hi == 0 && -lo > 1<<16+2*uint64(a) {
			t.Fatalf("recip(%d) = %d: 2^64 − inv×a = %d, more than 2^16 + 2a", a, inv, -lo)
		}
	}
	for a := int64(1); a <= 1<<16; a++ {
		check(a)
	}
	for b := range 56 {
		for d := int64(-2); d <= 2; d++ {
			if a := int64(1)<<b + d; a >= 1 && a < fastMax {
				check(a)
			}
		}
	}
	r := rand.New(rand.NewPCG(5, 8))
	for range 1_000_000 {
		check(1 + r.Int64N(int64(1)<<(1+r.IntN(56))-1))
	}
	check(fastMax - 1)
}

// FuzzLeastRec checks leastRec against leastRequestedScore for any
// fast-record input.
func FuzzLeastRec(f *testing.F) {
	f.Add(uint64(0), uint64(0), uint64(1))
	f.Add(uint64(1), uint64(0), uint64(3))
	f.Add(uint64(4000), uint64(100), uint64(8000))
	f.Add(uint64(1<<33), uint64(128<<20), uint64(16061896*1024))
	f.Add(uint64(fastMax-2), uint64(1), uint64(fastMax-1))
	f.Fuzz(func(t *testing.T, used, podReq, a uint64) {
		a = 1 + a%(fastMax-1)
		used %= a + 1
		podReq &= math.MaxInt64
		got := leastRecOf(int64(used), int64(podReq), int64(a))
		if want := leastRequestedScore(int64(used), int64(podReq), int64(a)); got != want {
			t.Fatalf("leastRec(%d, %d, %d) = %d, want %d", used, podReq, a, got, want)
		}
	})
}

// balancedRec equals upstream's arithmetic as balancedPod.node does it
// (saturating sum, Fraction's clamp to 1, Balance2, balancedScore) for
// requests below, at and far above the allocatable.
func TestBalancedRecExact(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 1))
	amount := func(a int64) int64 {
		switch r.IntN(4) {
		case 0:
			return r.Int64N(a + 1)
		case 1:
			return a + r.Int64N(3) - 1
		case 2:
			return r.Int64N(math.MaxInt64)
		}
		return r.Int64N(2 * a)
	}
	for range 1_000_000 {
		c := 1 + r.Int64N(int64(1)<<(1+r.IntN(56))-1)
		m := 1 + r.Int64N(int64(1)<<(1+r.IntN(56))-1)
		uc, um := min(amount(c), c), min(amount(m), m) // a record's req: clamped to a
		pc, pm := max(amount(c), 0), max(amount(m), 0)
		without := arith.Balance2(arith.Fraction(uc, c), arith.Fraction(um, m))
		want := balancedScore(arith.Balance2(arith.Fraction(arith.Add(uc, pc), c), arith.Fraction(arith.Add(um, pm), m)), without)
		if got := balancedRec(uint64(uc)+uint64(pc), uint64(c), uint64(um)+uint64(pm), uint64(m), without); got != want {
			t.Fatalf("balancedRec(%d+%d, %d, %d+%d, %d, %d) = %d, want %d", uc, pc, c, um, pm, m, without, got, want)
		}
	}
}

// vecRecs is a chunk of n fast records for pod requests (pc, pm) at and
// around the points where LeastAllocated's quotient changes: allocatable
// amounts of every bit length up to maxBits (and just below 2^maxBits),
// used amounts putting (a − used − podReq) × 100 just below, at and just
// above k×a, plus random ones, nodes without cpu or memory, and requests
// at, below and far above the allocatable.
func vecRecs(r *rand.Rand, n, maxBits int, pc, pm int64) []cpuMemRec {
	recs := make([]cpuMemRec, n)
	amount := func(p int64) (a, nz, rq int64) {
		a = 1 + r.Int64N(int64(1)<<(1+r.IntN(maxBits))-1)
		if r.IntN(6) == 0 {
			a = int64(1)<<maxBits - 1 - r.Int64N(1000)
		}
		switch r.IntN(4) {
		case 0:
			nz = r.Int64N(a + 1)
		case 1:
			// x = used + podReq where the quotient changes.
			k := r.Int64N(101)
			x := a - (k*(a/100) + (k*(a%100)+99)/100) + r.Int64N(5) - 2
			nz = min(max(x-p, 0), a)
		case 2:
			nz = a - r.Int64N(3)
		default:
			nz = r.Int64N(max(a-p, 0) + 1)
		}
		nz = max(nz, 0)
		switch r.IntN(3) {
		case 0:
			rq = nz
		case 1:
			rq = r.Int64N(a + 1)
		default:
			rq = max(a-p+r.Int64N(5)-2, 0)
		}
		return a, nz, rq
	}
	for i := range recs {
		var cm layout.CPUMemory
		for j, p := range [2]int64{pc, pm} {
			a, nz, rq := amount(p)
			if r.IntN(8) == 0 {
				a = 0 // absent
			}
			cm.Allocatable[j], cm.NonZeroRequested[j], cm.Requested[j] = a, nz, rq
		}
		cm.Balance = arith.NodeBalance(cm.Requested, cm.Allocatable)
		recs[i] = makeRec(&cm)
	}
	return recs
}

// The AVX2 kernel (fusedUnitAVX2, through addUnitVec) gives every record
// what the general per-node methods give, with records at the quotient
// boundaries up to just below vecMax; chunks with larger nodes (up to
// 2^56) go through the scalar loop, which gives the same.
func TestFusedUnitVec(t *testing.T) {
	if !vecKernel {
		t.Skip("no AVX2 on this machine: addUnit uses the scalar loop, checked by TestFusedKernelsMatchGeneralPath")
	}
	r := rand.New(rand.NewPCG(17, 4))
	vectored := 0
	for round := range 4000 {
		pc, pm := r.Int64N(int64(1)<<(1+r.IntN(50))), r.Int64N(int64(1)<<(1+r.IntN(50)))
		if round%7 == 0 {
			pc = math.MaxInt64 - r.Int64N(10)
		}
		la := &leastPod{fast: true, cpu: pc, mem: pm, wc: 1, wm: 1}
		ba := &balancedPod{fast: true, cpu: pc, mem: pm}
		k := newCPUMemPod(la, ba, 1, 1)
		require.True(t, k.unit && k.fast)
		n := 4 + r.IntN(chunkSize-3)
		maxBits := 45
		if round%5 == 4 {
			maxBits = 56
		}
		recs := vecRecs(r, n, maxBits, pc, pm)
		lines := make([]*layout.CPUMemory, n)
		want := make([]int64, n)
		var bits uint64
		for i := range recs {
			require.GreaterOrEqual(t, recs[i].alloc[0], int64(0))
			bits |= vecBits(&recs[i])
			// The general methods read the record's figures back as a
			// line.
			cm := recLine(&recs[i])
			lines[i] = cm
			want[i] = la.node(cm) + ba.node(cm) + int64(i)
		}
		if maxBits == 45 {
			require.Less(t, bits, uint64(vecMax))
			vectored++
		}
		got := make([]int64, n)
		for i := range got {
			got[i] = int64(i) // added to, not overwritten
		}
		k.addUnitVec(recs, lines, got)
		require.Equal(t, want, got, "round %d: pod %d/%d", round, pc, pm)
		for i := range got {
			got[i] = int64(i)
		}
		k.addUnitLoop(recs, lines, got)
		require.Equal(t, want, got, "round %d (scalar loop): pod %d/%d", round, pc, pm)
	}
	require.Greater(t, vectored, 3000)
}

// recLine is a fast record's figures as a CPUMemory line: allocatable
// (0 where absent), NonZeroRequested as a − free/100, Requested as req,
// Balance: what makeRec made the record from, up to the requests above
// the allocatable that the record clamps (which score the same).
func recLine(r *cpuMemRec) *layout.CPUMemory {
	var cm layout.CPUMemory
	h := uint64(r.alloc[0]) >> 56
	for j := range 2 {
		a := int64(uint64(r.alloc[j]) & low56)
		if h>>j&1 == 0 {
			a = 0
		}
		cm.Allocatable[j] = a
		if a > 0 {
			cm.NonZeroRequested[j] = a - r.free[j]/MaxScore
			cm.Requested[j] = r.req[j]
		}
	}
	cm.Balance = int64(uint64(r.alloc[1]) >> 56)
	return &cm
}

// FuzzFusedUnitVec checks the AVX2 kernel against the general per-node
// methods for any record a node's figures make and any pod.
func FuzzFusedUnitVec(f *testing.F) {
	f.Add(int64(4000), int64(8<<30), int64(1), int64(1), int64(0), int64(0), int64(0), int64(0), int64(500), int64(1<<30))
	f.Add(int64(vecMax-1), int64(vecMax-101), int64(vecMax/2), int64(3), int64(vecMax/3), int64(1), int64(7), int64(0), int64(math.MaxInt64), int64(5))
	f.Add(int64(0), int64(16<<30), int64(0), int64(4<<30), int64(0), int64(4<<30), int64(0), int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, ac, am, nc, nm, rc, rm, d0, d1, pc, pm int64) {
		if !vecKernel {
			t.Skip("no AVX2 on this machine")
		}
		pc, pm = pc&math.MaxInt64, pm&math.MaxInt64
		la := &leastPod{fast: true, cpu: pc, mem: pm, wc: 1, wm: 1}
		ba := &balancedPod{fast: true, cpu: pc, mem: pm}
		k := newCPUMemPod(la, ba, 1, 1)
		recs := make([]cpuMemRec, 4)
		lines := make([]*layout.CPUMemory, 4)
		want := make([]int64, 4)
		for i := range recs {
			// Four variants: as given, and with the requests moved by
			// d0 and d1 (wrapped into range). Amounts below vecMax, so
			// that the vector loop takes them.
			var cm layout.CPUMemory
			for j, v := range [2][3]int64{{ac, nc, rc}, {am, nm, rm}} {
				a := v[0] & (vecMax - 1)
				shift := [2]int64{d0, d1}[j] * int64(i)
				nz, rq := (v[1]+shift)&math.MaxInt64, (v[2]+shift)&math.MaxInt64
				if a > 0 {
					nz, rq = nz%(a+1), rq%(2*a+1)
				}
				cm.Allocatable[j], cm.NonZeroRequested[j], cm.Requested[j] = a, nz, rq
			}
			cm.Balance = arith.NodeBalance(cm.Requested, cm.Allocatable)
			lines[i] = &cm
			recs[i] = makeRec(&cm)
			require.GreaterOrEqual(t, recs[i].alloc[0], int64(0))
			want[i] = la.node(&cm) + ba.node(&cm)
		}
		got := make([]int64, 4)
		fusedUnitAVX2(&recs[0], &got[0], 4, &k.vec)
		require.Equal(t, want, got)
	})
}

// The offsets fused_amd64.s reads cpuMemRec and vecPod at.
func TestKernelLayout(t *testing.T) {
	var r cpuMemRec
	require.Equal(t, [4]uintptr{0, 16, 32, 64}, [4]uintptr{unsafe.Offsetof(r.alloc), unsafe.Offsetof(r.free), unsafe.Offsetof(r.req), unsafe.Sizeof(r)})
	var v vecPod
	require.Equal(t, [4]uintptr{0, 32, 64, 96}, [4]uintptr{unsafe.Offsetof(v.lc), unsafe.Offsetof(v.lm), unsafe.Offsetof(v.bc), unsafe.Offsetof(v.bm)})
}

// A column that scored a large view, then a smaller one, then a view
// larger than both keeps the records of the blocks past the smaller
// view's length whose versions it kept: every candidate is found, and
// each record is its node's.
func TestColumnShrinkThenGrow(t *testing.T) {
	cluster := func(c *snapshot.Cache, from, to int) *snapshot.Snapshot {
		for i := from; i < to; i++ {
			n := snapshottest.MakeNode(fmt.Sprintf("n%04d", i)).Capacity("cpu", "8", "memory", "32Gi", "pods", "110").Obj()
			require.NoError(t, c.AddNode(n))
		}
		return c.Snapshot()
	}
	check := func(col *column, snap *snapshot.Snapshot) {
		t.Helper()
		v, ok := nodeview.ViewOf(snap)
		require.True(t, ok)
		col.sync(v)
		var nodes []*snapshot.NodeInfo
		for _, ni := range snap.Nodes() {
			nodes = append(nodes, ni)
		}
		recs, found, _ := col.locate(nodes)
		require.True(t, found, "%d nodes", len(nodes))
		for i, ni := range nodes {
			require.Equal(t, makeRec(nodeview.CPUMemory(ni)), recs[i], "node %s", ni.Name())
		}
	}
	big := snapshot.NewCache()
	var col column
	check(&col, cluster(big, 0, 200))
	check(&col, cluster(snapshot.NewCache(), 0, 10))
	check(&col, cluster(big, 200, 300))
}

// GODEBUG turns the AVX2 loop off as it turns the runtime's AVX2 off.
func TestGodebugOff(t *testing.T) {
	for _, tc := range []struct {
		godebug string
		off     bool
	}{
		{"", false},
		{"cpu.avx2=off", true},
		{"gctrace=1, cpu.avx2=off", true},
		{"cpu.all=off", true},
		{"cpu.all=off,cpu.avx2=on", false},
		{"cpu.avx2=off,cpu.all=on", false},
		{"cpu.avx=off", false},
		{"cpu.avx2", false},
	} {
		require.Equal(t, tc.off, godebugOff(tc.godebug, "avx2"), "%q", tc.godebug)
	}
}
