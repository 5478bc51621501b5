package quantity

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxExponent bounds the decimal exponent ("e" suffix) that [Screen]
// lets through when apimachinery would rescale the quantity digit by
// digit; see Screen.
const MaxExponent = 10000

// ErrExponent is the error [Screen] wraps.
var ErrExponent = errors.New("quantity exponent out of range")

// Screen returns an error wrapping [ErrExponent] when resource.ParseQuantity
// (and so resource.Quantity's JSON decoding) would spend time growing with
// s's exponent rather than with its length, or would change its value
// silently. Those are the strings of the form
//
//	[+-] digits [. digits] (e|E) [+-] digits
//
// (blanks around them are trimmed, as Quantity.UnmarshalJSON trims them)
// whose mantissa is not zero and whose exponent e is
//
//   - beyond int32: apimachinery truncates it to 32 bits, so
//     "1e4294967297" parses as 10 and "1e2147483648" does not return for
//     minutes;
//   - below -MaxExponent: apimachinery rounds the value to nano-units
//     while parsing, dividing by 10^(-e): 1e-1000000 takes about 0.1 s,
//     1e-999999999 minutes;
//   - above MaxExponent with more than 18 significant digits in the
//     mantissa (which rules out apimachinery's int64 fast path): rounding
//     then multiplies by 10^e, and the quantity's String takes seconds
//     from e = 100000 on.
//
// Every other string gets nil: apimachinery either parses it in time
// bounded by its length (a positive exponent on up to 18 digits is kept
// as an int64 with that exponent: "1e999999999" parses in microseconds,
// and schedkit saturates it, see [Scaled]) or refuses it quickly. No
// Kubernetes quantity in use comes near the bounds (the largest int64 is
// about 9.2e18, a nano-unit 1e-9).
//
// Cost: O(len(s)); allocates only for the error. Safe for concurrent use.
func Screen(s string) error {
	t := strings.TrimSpace(s)
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	for i < len(t) && t[i] == '0' {
		i++
	}
	intDigits := digits(t[i:])
	i += intDigits
	fracDigits, nonzero := 0, intDigits > 0
	if i < len(t) && t[i] == '.' {
		i++
		fracDigits = digits(t[i:])
		nonzero = nonzero || strings.Trim(t[i:i+fracDigits], "0") != ""
		i += fracDigits
	}
	if i >= len(t) || t[i] != 'e' && t[i] != 'E' || !nonzero {
		return nil
	}
	exp := t[i+1:]
	d := strings.TrimLeft(exp, "+-")
	if len(exp)-len(d) > 1 || d == "" || digits(d) != len(d) {
		return nil // not an exponent: apimachinery refuses it
	}
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return nil // apimachinery refuses it (ParseInt, 64 bits)
	}
	// The significant digits apimachinery counts: the integer part
	// without its leading zeros ("0" if none) and the whole fraction.
	sig := max(intDigits, 1) + fracDigits
	switch {
	case e > math.MaxInt32 || e < math.MinInt32:
		return fmt.Errorf("%w: %q: exponent %d is beyond int32 (apimachinery truncates it)", ErrExponent, s, e)
	case e < -MaxExponent:
		return fmt.Errorf("%w: %q: exponent %d is below -%d", ErrExponent, s, e, MaxExponent)
	case e > MaxExponent && sig > 18:
		return fmt.Errorf("%w: %q: exponent %d is above %d on %d significant digits (at most 18 allowed there)", ErrExponent, s, e, MaxExponent, sig)
	}
	return nil
}

// digits returns the number of leading ASCII digits of s.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
