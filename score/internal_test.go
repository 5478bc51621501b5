package score

import (
	"fmt"
	"math"
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

func TestLeastMostRequestedScoreReference(t *testing.T) {
	// Against upstream's formulas on values where upstream's int64 products
	// do not overflow.
	for _, capacity := range []int64{1, 3, 7, 100, 4000, 1 << 40, maxSafe} {
		for _, requested := range []int64{0, 1, capacity / 3, capacity / 2, capacity - 1, capacity, capacity + 1} {
			wantLeast := int64(0)
			if requested <= capacity {
				wantLeast = (capacity - requested) * 100 / capacity
			}
			wantMost := min(requested, capacity) * 100 / capacity
			require.Equalf(t, wantLeast, leastRequestedScore(requested, capacity), "least(%d, %d)", requested, capacity)
			require.Equalf(t, wantMost, mostRequestedScore(requested, capacity), "most(%d, %d)", requested, capacity)
		}
	}
}
