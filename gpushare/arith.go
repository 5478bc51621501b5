package gpushare

// Saturating helpers: sums are internal/arith's (Add, Sub), shared with
// the other packages; satMul is the product of two non-negative amounts.

import "math"

// satMul returns a*b for a, b >= 0, clamped to math.MaxInt64.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// clampScore clamps s to [0, MaxScore].
func clampScore(s int64) int64 { return min(max(s, 0), MaxScore) }
