package gpushare

// Saturating helpers beyond internal/arith.Add and Sub, which
// the policies use for sums and differences.

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
