// Package quantity converts resource.Quantity values to int64 for every
// schedkit package (snapshot's vectors and pod requests, whatif's scale-up
// estimates, the informer test model), so that the conversion and its
// saturation are written once.
//
// apimachinery's Quantity.Cmp, MilliValue and RoundUp rescale an
// inf.Dec-backed quantity to a common scale before they look at it: a
// quantity such as "1e999999999", which ParseQuantity accepts in
// microseconds, makes them build a billion-digit integer (minutes, and
// gigabytes of memory). [Scaled] decides from the decimal exponent and the
// unscaled value's bit length first, so its cost is bounded by the size of
// the quantity's digits, never by its exponent. Parsing itself
// (resource.ParseQuantity) has the same trap on other strings
// ("1e-999999999"): [Screen] tells them before they are parsed, for the
// loaders.
//
// Layer: the bottom. quantity imports no schedkit package.
package quantity

import (
	"math"
	"math/big"
	"math/bits"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Scaled returns q in units of 10^s (s ≤ 0: resource.Milli gives
// milli-units, resource.Nano nano-units, 0 whole units), rounded away from
// zero to an integer, and whether q was already an exact integer number of
// those units.
//
// Results beyond int64 saturate: math.MaxInt64 for positive quantities,
// math.MinInt64 for negative ones. For every non-negative quantity the
// result is the one apimachinery gives when it fits (ScaledValue, which
// rounds up) and math.MaxInt64 otherwise; for a negative quantity it is
// -Scaled(-q) (apimachinery's int64 path rounds negatives away from zero
// the same way; its inf.Dec path is inconsistent and its overflow wraps).
// exact is what q.DeepCopy().RoundUp(s) reports.
//
// Cost: O(1) and no allocation when q is held in an int64 (an integer,
// or a fraction such as "500m"; apimachinery's canonical digits, written
// to a stack buffer), or is an inf.Dec of at most 18 significant digits
// and a decimal exponent within ±64 (then the canonical form costs a few
// allocations in apimachinery); otherwise one conversion to inf.Dec (a
// few allocations) and big-integer work bounded by the number of q's
// digits (at worst quadratic in them, as apimachinery's own String) —
// independent of its exponent. s > 0 panics (no caller needs coarser
// units). Safe for concurrent use: q is read only.
func Scaled(q resource.Quantity, s resource.Scale) (v int64, exact bool) {
	if s > 0 {
		panic("quantity.Scaled: scale must be ≤ 0")
	}
	k := int64(-s) // multiply the value by 10^k
	if q.IsZero() {
		// Before AsInt64, which multiplies a zero such as "0e999999999"
		// by 10 once per unit of its exponent.
		return 0, true
	}
	if i, ok := q.AsInt64(); ok {
		return mulPow10(i, k), true
	}
	// A fraction such as "500m" (an int64 backing with a negative scale,
	// the common cpu request) or a small inf.Dec: its canonical digits
	// and exponent, written into a buffer on the stack, decide it in
	// int64 arithmetic without the big-integer path's allocations.
	var buf [canonBuf]byte
	digits, exp := q.AsCanonicalBytes(buf[:0])
	if v, exact, ok := fromCanonical(digits, exp, k); ok {
		return v, exact
	}
	return scaledBig(q, k)
}

// scaledBig is Scaled in units of 10^-k for a non-zero q by big-integer
// arithmetic: every quantity, any exponent (the reference the fast paths
// are tested against: TestScaledPathsAgree, FuzzScaled).
func scaledBig(q resource.Quantity, k int64) (v int64, exact bool) {
	// q is a copy: AsDec converts an int64 backing in the copy only, and an
	// inf.Dec backing is shared with the caller and only read here.
	d := q.AsDec()
	u := d.UnscaledBig()
	if u.Sign() == 0 {
		return 0, true
	}
	neg := u.Sign() < 0
	// value·10^k = u·10^e.
	e := k - int64(d.Scale())
	var mag uint64 // |result|, saturating
	switch {
	case e >= 0:
		exact = true
		if e > 18 || u.BitLen() > 63 { // |u| ≥ 1, 10^19 > MaxInt64
			mag = math.MaxUint64
			break
		}
		var t big.Int
		t.Abs(u)
		t.Mul(&t, pow10(e))
		mag = clampU(&t)
	case u.BitLen() <= 3*int(min(-e, math.MaxInt32)):
		// |u| < 2^(3·-e) < 10^-e: a non-zero fraction of one unit.
		mag = 1
	default:
		// -e < BitLen/3: 10^-e is no bigger than u.
		var quo, rem big.Int
		quo.Abs(u)
		quo.QuoRem(&quo, pow10(-e), &rem)
		exact = rem.Sign() == 0
		if !exact {
			quo.Add(&quo, big.NewInt(1))
		}
		mag = clampU(&quo)
	}
	if mag > math.MaxInt64 {
		if neg {
			return math.MinInt64, exact
		}
		return math.MaxInt64, exact
	}
	if neg {
		return -int64(mag), exact
	}
	return int64(mag), exact
}

// canonBuf is the room fromCanonical's digits need: a sign and 18
// digits (a longer mantissa goes to the big-integer path anyway).
const canonBuf = 24

// maxCanonExp bounds the canonical exponents fromCanonical trusts. The
// exponent AsCanonicalBytes returns is an int32 that wraps for a quantity
// whose decimal exponent lies beyond the int32 range (a scale near
// ±2^31, built in code); a wrapped exponent lies within a few dozen of
// the opposite end of the range (far more for an inf.Dec only with a
// mantissa of about 2^31 digits), never within ±maxCanonExp, so an
// exponent in that window is the true one.
const maxCanonExp = 64

// pow10s[i] is 10^i, i in [0, 18].
var pow10s = [19]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// fromCanonical is Scaled for a non-zero quantity given by its canonical
// form (digits: an optional '-' and the decimal mantissa; the value is
// mantissa·10^exp) in units of 10^-k, with the same rounding (away from
// zero), exactness and saturation. ok is false, and the caller takes the
// big-integer path, for a mantissa of more than 18 digits or an exponent
// outside ±maxCanonExp. O(len(digits)), allocates nothing.
func fromCanonical(digits []byte, exp int32, k int64) (v int64, exact, ok bool) {
	neg := len(digits) > 0 && digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || exp < -maxCanonExp || exp > maxCanonExp {
		return 0, false, false
	}
	var m uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false, false
		}
		m = m*10 + uint64(c-'0')
	}
	if m == 0 {
		return 0, true, true
	}
	var mag uint64 // |result|, saturating
	switch e := int64(exp) + k; {
	case e > 18: // m ≥ 1 and 10^19 > MaxInt64
		mag, exact = math.MaxUint64, true
	case e >= 0:
		hi, lo := bits.Mul64(m, pow10s[e])
		mag, exact = lo, true
		if hi != 0 {
			mag = math.MaxUint64
		}
	case e < -18: // 1 ≤ m < 10^18 < 10^-e: a non-zero fraction of one unit
		mag = 1
	default:
		p := pow10s[-e]
		mag, exact = m/p, m%p == 0
		if !exact {
			mag++
		}
	}
	if mag > math.MaxInt64 {
		if neg {
			return math.MinInt64, exact, true
		}
		return math.MaxInt64, exact, true
	}
	if neg {
		return -int64(mag), exact, true
	}
	return int64(mag), exact, true
}

// mulPow10 returns i·10^k clamped to [math.MinInt64, math.MaxInt64].
func mulPow10(i, k int64) int64 {
	for ; k > 0 && i != 0; k-- {
		if i > math.MaxInt64/10 {
			return math.MaxInt64
		}
		if i < math.MinInt64/10 {
			return math.MinInt64
		}
		i *= 10
	}
	return i
}

func pow10(e int64) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(e), nil)
}

// clampU returns t (≥ 0) as a uint64, or math.MaxUint64 when it does not fit.
func clampU(t *big.Int) uint64 {
	if !t.IsUint64() {
		return math.MaxUint64
	}
	return t.Uint64()
}

// Milli is [Scaled] in milli-units (milli-CPU), without the exactness.
func Milli(q resource.Quantity) int64 {
	v, _ := Scaled(q, resource.Milli)
	return v
}

// Value is [Scaled] in whole units (bytes, counts), without the exactness.
func Value(q resource.Quantity) int64 {
	v, _ := Scaled(q, 0)
	return v
}

// Cmp returns -1, 0 or +1 as a is less than, equal to or greater than b:
// the answer of apimachinery's a.Cmp(b), exactly (no rounding), but at a
// cost bounded by the quantities' digits, never by their exponents
// (a.Cmp(b) on "1e999999999" builds a billion-digit integer). O(1) with
// no allocation when both are held in an int64 ("2", "500m" with the same
// scale: apimachinery's own fast path); otherwise a conversion of each to
// inf.Dec and big-integer work bounded by their digits. Safe for concurrent
// use: a and b are read only.
func Cmp(a, b resource.Quantity) int {
	if a.IsZero() || b.IsZero() { // before AsDec, which may expand the exponent of a zero
		return cmpSign(a.Sign(), b.Sign())
	}
	if sa, sb := a.Sign(), b.Sign(); sa != sb {
		return cmpSign(sa, sb)
	}
	if x, ok := a.AsInt64(); ok {
		if y, ok := b.AsInt64(); ok {
			return cmpSign(cmpInt(x, y), 0)
		}
	}
	// a and b are copies: AsDec converts an int64 backing in the copy
	// only, and an inf.Dec backing is shared and only read.
	da, db := a.AsDec(), b.AsDec()
	ua, ub := new(big.Int).Abs(da.UnscaledBig()), new(big.Int).Abs(db.UnscaledBig())
	// |value| = u·10^-scale lies in [10^(m-1), 10^m), m = digits(u) - scale.
	na, nb := int64(len(ua.Text(10))), int64(len(ub.Text(10)))
	sa, sb := int64(da.Scale()), int64(db.Scale())
	c := cmpInt(na-sa, nb-sb)
	if c == 0 {
		// Same magnitude: the scales differ by the digit counts' difference
		// at most, so aligning them costs O(digits).
		if sa < sb {
			ua.Mul(ua, pow10(sb-sa))
		} else if sb < sa {
			ub.Mul(ub, pow10(sa-sb))
		}
		c = ua.Cmp(ub)
	}
	if a.Sign() < 0 {
		return -c
	}
	return c
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func cmpSign(x, y int) int { return cmpInt(int64(x), int64(y)) }
