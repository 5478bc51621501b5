// Package arith is the arithmetic schedkit's packages share: saturating
// int64 sums (quantities never wrap: a sum past the int64 range stays at
// its bound) and the BalancedAllocation formula's parts, so that each is
// written once — snapshot keeps a node's cached balance term with
// [NodeBalance], score's BalancedAllocation computes the pod's side with
// [Fraction] and [Balance2], bit for bit the same.
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

// Fraction is upstream BalancedAllocation's per-resource fraction,
// min(1, float64(requested)/float64(allocatable)) (kube-scheduler v1.37
// noderesources/balanced_allocation.go); allocatable > 0.
func Fraction(requested, allocatable int64) float64 {
	f := float64(requested) / float64(allocatable)
	if f > 1 {
		f = 1
	}
	return f
}

// Balance2 is upstream BalancedAllocation's balancedResourceScore for two
// resources' fractions f0 and f1 in [0, 1]: int64((1 − |(f0 − f1)/2|) ×
// 100) (the population standard deviation of two numbers is half their
// distance), in [50, 100].
func Balance2(f0, f1 float64) int64 {
	std := math.Abs((f0 - f1) / 2)
	return int64((1 - std) * 100)
}

// NodeBalance is BalancedAllocation's term of a node alone for cpu and
// memory (index 0 and 1): [Balance2] of the two [Fraction]s, a fraction
// being 0 where allocatable <= 0. In [50, 100]; bit for bit what score's
// BalancedAllocation computes from the same amounts.
func NodeBalance(requested, allocatable [2]int64) int64 {
	var f [2]float64
	for i := range f {
		if allocatable[i] > 0 {
			f[i] = Fraction(requested[i], allocatable[i])
		}
	}
	return Balance2(f[0], f[1])
}
