package score

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Upstream's published vectors for the shape function: kube-scheduler
// v1.37.2 noderesources/requested_to_capacity_ratio_test.go
// TestBrokenLinearFunction (unscaled points).
func TestBrokenLinearUpstreamVectors(t *testing.T) {
	type at struct{ p, want int64 }
	tests := []struct {
		shape []shapePoint
		at    []at
	}{
		{
			// Between (10,1) and (90,9): 1 + 8*(p-10)/80, truncated.
			shape: []shapePoint{{10, 1}, {90, 9}},
			at:    []at{{-10, 1}, {0, 1}, {9, 1}, {10, 1}, {15, 1}, {19, 1}, {20, 2}, {89, 8}, {90, 9}, {99, 9}, {100, 9}, {110, 9}},
		},
		{
			// (0,2)-(40,10): 2 + 8p/40; (40,10)-(100,0): 10 - 10(p-40)/60, truncated toward zero.
			shape: []shapePoint{{0, 2}, {40, 10}, {100, 0}},
			at:    []at{{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0}},
		},
		{
			shape: []shapePoint{{0, 2}, {40, 2}, {100, 2}},
			at:    []at{{-10, 2}, {0, 2}, {20, 2}, {30, 2}, {40, 2}, {70, 2}, {100, 2}, {110, 2}},
		},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprintf("case_%d", i), func(t *testing.T) {
			for _, a := range tc.at {
				require.Equalf(t, a.want, brokenLinear(tc.shape, a.p), "f(%d) over %v", a.p, tc.shape)
			}
		})
	}
}

func TestMulDiv(t *testing.T) {
	tests := []struct{ a, b, c, want int64 }{
		{100, 5, 10, 50},                            // small: plain arithmetic
		{100, math.MaxInt64, math.MaxInt64, 100},    // 128-bit product
		{100, math.MaxInt64 / 2, math.MaxInt64, 49}, // 100*(2^62-1)/(2^63-1) = 49.99…
		{100, math.MaxInt64, 1, math.MaxInt64},      // quotient too large: saturates
		{100, -5, 10, -50},                          // negative b: plain
		{100, math.MinInt64, 1, math.MinInt64},      // negative overflow saturates
		{0, math.MaxInt64, 7, 0},                    // zero factor
		{MaxScore, 1 << 61, 1 << 62, 50},            // 100*2^61/2^62 = 50 (the product needs 128 bits)
	}
	for _, tc := range tests {
		require.Equalf(t, tc.want, mulDiv(tc.a, tc.b, tc.c), "mulDiv(%d, %d, %d)", tc.a, tc.b, tc.c)
	}
}

// Against upstream's formulas evaluated in exact big-integer arithmetic,
// where upstream's int64 would overflow too; the sum used+podReq saturates
// at MaxInt64 first (it is over any capacity then).
func TestLeastMostRequestedScoreReference(t *testing.T) {
	ref := func(used, podReq, capacity int64) (least, most int64) {
		r := new(big.Int).Add(big.NewInt(used), big.NewInt(podReq))
		c := big.NewInt(capacity)
		if r.Cmp(c) <= 0 {
			d := new(big.Int).Sub(c, r)
			least = d.Mul(d, big.NewInt(100)).Quo(d, c).Int64()
		}
		if r.Cmp(c) > 0 {
			r.Set(c)
		}
		most = r.Mul(r, big.NewInt(100)).Quo(r, c).Int64()
		return least, most
	}
	caps := []int64{1, 3, 7, 100, 4000, 1 << 40, maxSafe - 1, maxSafe, maxSafe + 1, math.MaxInt64 / 3, math.MaxInt64 - 1, math.MaxInt64}
	for _, capacity := range caps {
		for _, requested := range []int64{0, 1, capacity / 3, capacity / 2, capacity - 1, capacity, capacity + 1, math.MaxInt64} {
			if requested < 0 {
				continue // capacity+1 wrapped
			}
			for _, split := range []int64{0, requested / 2, requested} {
				used, podReq := split, requested-split
				wantLeast, wantMost := ref(used, podReq, capacity)
				require.Equalf(t, wantLeast, leastRequestedScore(used, podReq, capacity), "least(%d+%d, %d)", used, podReq, capacity)
				require.Equalf(t, wantMost, mostRequestedScore(used, podReq, capacity), "most(%d+%d, %d)", used, podReq, capacity)
			}
		}
	}
	// Two large non-negative amounts whose sum overflows int64: over any capacity.
	require.Equal(t, int64(0), leastRequestedScore(math.MaxInt64, math.MaxInt64, 1000))
	require.Equal(t, int64(100), mostRequestedScore(math.MaxInt64, math.MaxInt64, 1000))
	require.Equal(t, int64(0), leastRequestedScore(math.MaxInt64, math.MaxInt64, math.MaxInt64))
	require.Equal(t, int64(100), mostRequestedScore(math.MaxInt64, math.MaxInt64, math.MaxInt64))
}

// upstreamBalanced is upstream's balancedResourceScorer for two resources,
// transcribed literally (noderesources/balanced_allocation.go): the
// reference for the cpu+memory fast path.
func upstreamBalanced(requested, allocated, allocatable [2]int64) int64 {
	score := func(req [2]int64) int64 {
		var fr []float64
		for i := range req {
			if allocatable[i] == 0 {
				continue
			}
			f := float64(req[i]) / float64(allocatable[i])
			if f > 1 {
				f = 1
			}
			fr = append(fr, f)
		}
		std := 0.0
		if len(fr) == 2 {
			std = math.Abs((fr[0] - fr[1]) / 2)
		}
		return int64((1 - std) * float64(100))
	}
	with, without := score(requested), score(allocated)
	return 100/2 + (100/2+with-without)/2
}

func TestBalancedFastPathMatchesUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(uc, um, pc, pm, c, m int64) {
		t.Helper()
		p := &balancedPod{fast: true, cpu: pc, mem: pm}
		want := upstreamBalanced([2]int64{uc + pc, um + pm}, [2]int64{uc, um}, [2]int64{c, m})
		if got := p.score2(uc, um, c, m); got != want {
			t.Fatalf("score2(used %d,%d pod %d,%d alloc %d,%d) = %d, upstream %d", uc, um, pc, pm, c, m, got, want)
		}
	}
	pick := func(limit int64) int64 { return r.Int64N(limit) }
	for range 1_000_000 {
		c, m := 1+pick(200_000), 1+pick(1<<40)
		switch r.IntN(6) {
		case 0: // random
			check(pick(c+c/4), pick(m+m/4), pick(c/2+1), pick(m/2+1), c, m)
		case 1: // equal fractions n/d with and without the pod: s lands on 100
			d := 1 + pick(1000)
			n := pick(d + 1)
			x, y := 1+pick(1<<20), 1+pick(1<<20)
			check(n*x, n*y, 0, 0, d*x, d*y)
			check(0, 0, n*x, n*y, d*x, d*y)
			check(n*x/2, n*y/2, n*x-n*x/2, n*y-n*y/2, d*x, d*y)
		case 2: // |f0 - f1| = j/50 exactly: s is an integer in exact arithmetic
			k := 1 + pick(1_000_000)
			a := 50 * k
			j := pick(51)
			u0 := pick(a - j*k + 1)
			check(u0, u0+j*k, 0, 0, a, a)
			check(0, 0, u0, u0+j*k, a, a)
		case 3: // caps: requests at or beyond allocatable
			check(c+pick(10), m+pick(10), pick(c), pick(m), c, m)
		case 4: // round node sizes and requests (the common real case)
			cc, mm := 1000*(1+pick(128)), (1<<30)*(1+pick(512))
			check(100*pick(cc/100+1), (1<<20)*pick(mm>>20+1), 100*pick(40), (1<<20)*pick(8192), cc, mm)
		default: // tiny allocatable
			check(pick(5), pick(5), pick(5), pick(5), 1+pick(4), 1+pick(4))
		}
	}
}

// cpuMemPod.wsInv divides a weighted sum of LeastAllocated parts by the
// weight sum exactly, for every weight sum a node can have (one weight or
// two, each in [1, 100]) and every sum a node can reach (0 to MaxScore ×
// ws).
func TestWeightSumReciprocal(t *testing.T) {
	check := func(inv uint64, ws int64) {
		for s := int64(0); s <= MaxScore*ws; s++ {
			if got := int64(uint64(s) * inv >> 32); got != s/ws {
				t.Fatalf("%d×wsInv>>32 = %d, want %d/%d = %d", s, got, s, ws, s/ws)
			}
		}
	}
	for ws := int64(2); ws <= 200; ws++ {
		wc := min(ws-1, 100)
		k := newCPUMemPod(&leastPod{wc: wc, wm: ws - wc}, &balancedPod{}, 1, 1)
		check(k.wsInv[3], ws)
		if ws <= 101 {
			check(k.wsInv[1], wc)
			check(k.wsInv[2], ws-wc)
		}
	}
}
