package gpushare

// Saturating helpers. They mirror snapshot.SatAdd/SatSub on purpose:
// snapshot will import gpushare for device accounting, so gpushare cannot
// import snapshot.

import "math"

// satAdd returns a+b clamped to [math.MinInt64, math.MaxInt64].
func satAdd(a, b int64) int64 {
	s := a + b
	if (s > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// satSub returns a-b clamped to [math.MinInt64, math.MaxInt64].
func satSub(a, b int64) int64 {
	if b == math.MinInt64 {
		if a >= 0 {
			return math.MaxInt64
		}
		return a - b
	}
	return satAdd(a, -b)
}

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
