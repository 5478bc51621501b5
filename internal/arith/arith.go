// Package arith is the arithmetic schedkit's packages share: saturating
// int64 sums (quantities never wrap, DESIGN.md principle 6) and the
// BalancedAllocation formula's parts, so that each is written once —
// snapshot keeps a node's cached balance term with [NodeBalance], score's
// BalancedAllocation computes the pod's side with [Fraction] and
// [Balance2], bit for bit the same.
//
// Layer: the bottom. arith imports no schedkit package.
//
// Every function is O(1), allocates nothing and is small enough to
// inline.
package arith

import "math"

// Add returns a+b clamped to [math.MinInt64, math.MaxInt64].
func Add(a, b int64) int64 {
	s := a + b
	if (s > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// Sub returns a-b clamped to [math.MinInt64, math.MaxInt64].
func Sub(a, b int64) int64 {
	s := a - b
	if (s < a) != (b > 0) {
		if b > 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return s
}
