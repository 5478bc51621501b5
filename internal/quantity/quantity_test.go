package quantity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
)

var scales = []resource.Scale{0, resource.Milli, resource.Micro, resource.Nano}

// reference is the conversion schedkit used before Scaled: a Cmp against
// MaxInt64 units, then apimachinery's ScaledValue, and RoundUp for
// exactness. It is fast only while q's exponent is moderate.
func reference(q resource.Quantity, s resource.Scale) (int64, bool) {
	c := q.DeepCopy()
	exact := c.RoundUp(s)
	if q.Cmp(*resource.NewScaledQuantity(math.MaxInt64, s)) >= 0 {
		return math.MaxInt64, exact
	}
	return q.ScaledValue(s), exact
}

// randomQuantity writes a quantity string with up to 25 significant digits,
// an optional fraction, and an exponent or suffix between 10^-30 and 10^30.
func randomQuantity(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(4) == 0 {
		b.WriteByte('-')
	}
	digits := func(n int) {
		for range n {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	digits(1 + r.IntN(20))
	if r.IntN(3) == 0 {
		b.WriteByte('.')
		digits(1 + r.IntN(12))
	}
	switch r.IntN(3) {
	case 0:
		fmt.Fprintf(&b, "e%d", r.IntN(61)-30)
	case 1:
		b.WriteString([]string{"", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}[r.IntN(16)])
	}
	return b.String()
}

// TestScaledMatchesApimachinery: for random quantities of moderate
// exponents, Scaled returns what the old conversion returned for every
// non-negative quantity (ScaledValue rounded up, MaxInt64 beyond int64)
// and the same exactness; a negative quantity converts to -Scaled(-q)
// (apimachinery's ScaledValue reads garbage low bits of a negative inf.Dec
// beyond int64, e.g. "-229Ti" at scale 0, so it is no reference there).
func TestScaledMatchesApimachinery(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		str := randomQuantity(r)
		q := resource.MustParse(str)
		for _, s := range scales {
			got, gotExact := Scaled(q, s)
			wantRef, wantExact := reference(q, s)
			require.Equal(t, wantExact, gotExact, "exact %s at scale %d", str, s)
			if q.Sign() >= 0 {
				require.Equal(t, wantRef, got, "%s at scale %d", str, s)
				continue
			}
			pos := q.DeepCopy()
			pos.Neg()
			p, pExact := Scaled(pos, s)
			require.Equal(t, gotExact, pExact, "%s", str)
			if pos.Cmp(*resource.NewScaledQuantity(math.MaxInt64, s)) > 0 {
				require.Equal(t, int64(math.MinInt64), got, "%s at scale %d", str, s)
				continue
			}
			require.Equal(t, -p, got, "%s at scale %d", str, s)
		}
	}
}

func TestScaledCases(t *testing.T) {
	for _, c := range []struct {
		q     string
		s     resource.Scale
		want  int64
		exact bool
	}{
		{"0", resource.Milli, 0, true},
		{"100m", resource.Milli, 100, true},
		{"100m", 0, 1, false},
		{"1.5", 0, 2, false},
		{"-1.5", 0, -2, false},
		{"-100m", 0, -1, false},
		{"4Gi", 0, 4 << 30, true},
		{"1n", resource.Milli, 1, false},
		{"9223372036854775807", 0, math.MaxInt64, true},
		{"9223372036854775808", 0, math.MaxInt64, true},
		{"9223372036854775807", resource.Milli, math.MaxInt64, true},
		{"9223372036854775807m", resource.Milli, math.MaxInt64, true},
		{"-9223372036854775809", 0, math.MinInt64, true},
		{"1e18", resource.Nano, math.MaxInt64, true},
		{"1e999999999", resource.Milli, math.MaxInt64, true},
		{"-1e999999999", 0, math.MinInt64, true},
		{"123456789012345678901234567890e-20", 0, 1234567891, false},
		{"123456789012345678901234567890e-20", resource.Nano, 1234567890123456790, true},
	} {
		got, exact := Scaled(resource.MustParse(c.q), c.s)
		assert.Equal(t, c.want, got, "%s at scale %d", c.q, c.s)
		assert.Equal(t, c.exact, exact, "exact %s at scale %d", c.q, c.s)
	}
	// Quantities built in code (ParseQuantity itself is slow on "1e-999999999"), not parsed, can carry any scale.
	assert.Equal(t, int64(math.MaxInt64), Value(*resource.NewScaledQuantity(1, 1_000_000_000)))
	assert.Equal(t, int64(1), Value(*resource.NewScaledQuantity(1, -1_000_000_000)))
	assert.Equal(t, int64(5000), Milli(*resource.NewQuantity(5, resource.DecimalSI)))
	assert.Panics(t, func() { Scaled(resource.MustParse("1"), 3) })
}

// Huge exponents return at once (the old conversion built a number with
// as many digits as the exponent). A deadline, not a timing: the old code
// took minutes.
func TestScaledHugeExponentReturns(t *testing.T) {
	done := make(chan [4]int64, 1)
	go func() {
		var r [4]int64
		for i, s := range []string{"1e999999999", "-1e999999999", "1n", "123e5000000"} {
			r[i] = Milli(resource.MustParse(s))
		}
		done <- r
	}()
	select {
	case r := <-done:
		assert.Equal(t, [4]int64{math.MaxInt64, math.MinInt64, 1, math.MaxInt64}, r)
	case <-time.After(10 * time.Second):
		t.Fatal("Scaled on a huge exponent did not return within 10s")
	}
}

// TestScaledZeroWithHugeExponentReturns: a zero written with a huge
// exponent ("0e999999999", found by FuzzScaled) is 0 at once. Before the
// IsZero check, AsInt64 multiplied the zero by 10 once per unit of the
// exponent, about 2 s per quantity on this machine: the ten here took
// ~20 s.
func TestScaledZeroWithHugeExponentReturns(t *testing.T) {
	done := make(chan []int64, 1)
	go func() {
		var r []int64
		for range 10 {
			for _, s := range []string{"0e999999999"} {
				v, exact := Scaled(resource.MustParse(s), resource.Milli)
				if !exact {
					v = -1
				}
				r = append(r, v)
			}
		}
		done <- r
	}()
	select {
	case r := <-done:
		assert.Equal(t, make([]int64, 10), r)
	case <-time.After(10 * time.Second):
		t.Fatal("Scaled on a zero with a huge exponent did not return within 10s")
	}
}

// TestScaledPathsAgree: the int64 fast paths of Scaled (AsInt64, and the
// canonical digits of fractions and small inf.Decs) give what the
// big-integer path gives, value and exactness, on random parsed
// quantities and on quantities built in code with any scale — among them
// scales near ±2^31, whose canonical exponent wraps.
func TestScaledPathsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(q resource.Quantity, what string) {
		t.Helper()
		if q.IsZero() {
			return
		}
		for _, s := range scales {
			got, gotExact := Scaled(q, s)
			want, wantExact := scaledBig(q, int64(-s))
			require.Equal(t, want, got, "%s at scale %d", what, s)
			require.Equal(t, wantExact, gotExact, "exact %s at scale %d", what, s)
		}
	}
	for range 20_000 {
		str := randomQuantity(r)
		check(resource.MustParse(str), str)
	}
	edges := []int32{math.MinInt32, math.MinInt32 + 1, math.MinInt32 + 2, math.MinInt32 + 40, -maxCanonExp - 1, -maxCanonExp, -30, -19, -18, -12, -9, -3, -1,
		0, 1, 3, 17, 18, 19, maxCanonExp, maxCanonExp + 1, math.MaxInt32 - 40, math.MaxInt32 - 2, math.MaxInt32 - 1, math.MaxInt32}
	values := []int64{1, -1, 7, 10, 100, 999, 1000, -1000, 123456789, 1e17, 999999999999999999, 1e18, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for _, v := range values {
		for _, sc := range edges {
			check(*resource.NewScaledQuantity(v, resource.Scale(sc)), fmt.Sprintf("%d·10^%d", v, sc))
		}
	}
	for range 20_000 {
		v := r.Int64() >> r.IntN(64)
		if r.IntN(2) == 0 {
			v = -v
		}
		sc := int32(r.IntN(81) - 40)
		check(*resource.NewScaledQuantity(v, resource.Scale(sc)), fmt.Sprintf("%d·10^%d", v, sc))
	}
}

// TestScaledFractionAllocatesNothing: a fraction held in an int64 ("500m",
// the usual cpu request, at any scale) converts without allocating (the
// big-integer path allocated six times).
func TestScaledFractionAllocatesNothing(t *testing.T) {
	for _, str := range []string{"500m", "100m", "1.5", "250u", "7910m", "-300m"} {
		q := resource.MustParse(str)
		for _, s := range scales {
			allocs := testing.AllocsPerRun(100, func() { Scaled(q, s) })
			require.Zerof(t, allocs, "Scaled(%s, %d) allocated %v times", str, s, allocs)
		}
	}
}

// FuzzScaled compares Scaled with the old conversion on any parsable
// quantity whose decimal exponent is moderate, and checks the sign rules
// on all others.
func FuzzScaled(f *testing.F) {
	for _, s := range []string{"1", "100m", "1.5Gi", "-3.7", "9223372036854775807", "1e19", "12345678901234567890123e-5", "1e999999999", "0e999999999", "1n",
		"1e-10000", "1234567890123456789e10000", "-0.5e-10000", "1e2147483647", "1e-2147483648", "1e2147483648", "1e4294967297"} {
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, str string, si uint8) {
		if Screen(str) != nil {
			// apimachinery's ParseQuantity takes time growing with the
			// exponent on these (minutes for 1e-999999999): its cost, not
			// Scaled's. A string Screen lets through that is slow to
			// parse hangs this fuzzer.
			return
		}
		q, err := resource.ParseQuantity(str)
		if err != nil {
			return
		}
		s := scales[int(si)%len(scales)]
		got, exact := Scaled(q, s)
		switch {
		case q.Sign() == 0:
			require.Zero(t, got)
		case q.Sign() > 0:
			require.Positive(t, got)
		default:
			require.LessOrEqual(t, got, int64(0))
		}
		if q.Sign() != 0 {
			big, bigExact := scaledBig(q, int64(-s))
			require.Equal(t, big, got, "%s at scale %d: fast path against big-integer path", str, s)
			require.Equal(t, bigExact, exact, "exact %s at scale %d: fast path against big-integer path", str, s)
		}
		c := q.DeepCopy()
		if d := c.AsDec(); q.Sign() < 0 || d.Scale() < -40 || d.Scale() > 40 || d.UnscaledBig().BitLen() > 400 {
			return
		}
		want, wantExact := reference(q, s)
		require.Equal(t, want, got, "%s at scale %d", str, s)
		require.Equal(t, wantExact, exact, "exact %s at scale %d", str, s)
	})
}

var sinkScaled int64

// BenchmarkScaled: Scaled against its big-integer path (scaledBig, what
// Scaled did for every quantity that is not an int64 integer) in one
// binary, on a milli-CPU fraction, a byte count and a fractional inf.Dec.
func BenchmarkScaled(b *testing.B) {
	for _, tc := range []struct {
		q string
		s resource.Scale
	}{{"500m", resource.Milli}, {"1.5Gi", 0}, {"7910m", 0}} {
		q := resource.MustParse(tc.q)
		for _, path := range []struct {
			name string
			fn   func() int64
		}{
			{"big", func() int64 { v, _ := scaledBig(q, int64(-tc.s)); return v }},
			{"scaled", func() int64 { v, _ := Scaled(q, tc.s); return v }},
		} {
			b.Run(fmt.Sprintf("q=%s/scale=%d/path=%s", tc.q, tc.s, path.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					sinkScaled += path.fn()
				}
			})
		}
	}
}

// TestCmpMatchesApimachinery: for random quantities of moderate exponents
// (where apimachinery's Cmp is quick), Cmp equals a.Cmp(b), on pairs drawn
// independently and on pairs one unit of their last digit apart.
func TestCmpMatchesApimachinery(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2026))
	for range 20000 {
		a := resource.MustParse(randomQuantity(r))
		bs := randomQuantity(r)
		if r.IntN(3) == 0 {
			bs = a.String()
		}
		b := resource.MustParse(bs)
		if r.IntN(4) == 0 { // one unit apart, at a's own scale
			b = a.DeepCopy()
			db := b.AsDec()
			one := resource.NewScaledQuantity(1, resource.Scale(-db.Scale()))
			db.Add(db, one.AsDec())
		}
		require.Equal(t, a.Cmp(b), Cmp(a, b), "Cmp(%s, %s)", a.String(), b.String())
		require.Equal(t, b.Cmp(a), Cmp(b, a), "Cmp(%s, %s)", b.String(), a.String())
	}
}

func TestCmpCases(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1", "1000m", 0},
		{"0.5", "1", -1},
		{"1.9999", "2", -1},
		{"0", "0e999999999", 0},
		{"1e999999999", "2e999999999", -1},
		{"1e999999999", "10e999999998", 0},
		{"1e999999999", "1", 1},
		{"-1e999999999", "1", -1},
		{"-1e999999999", "-2e999999999", 1},
		{"1n", "1e-999999", 0}, // parsing rounds up to 1n
	} {
		got := make(chan int, 1)
		go func() { got <- Cmp(resource.MustParse(c.a), resource.MustParse(c.b)) }()
		select {
		case g := <-got:
			assert.Equal(t, c.want, g, "Cmp(%s, %s)", c.a, c.b)
		case <-time.After(10 * time.Second):
			t.Fatalf("Cmp(%s, %s) did not return within 10s", c.a, c.b)
		}
	}
}

func FuzzCmp(f *testing.F) {
	for _, s := range [][2]string{{"1", "1000m"}, {"0.5", "1"}, {"1e999999999", "2e999999998"}, {"-3.7", "-3.70"}, {"1Ki", "1024"}, {"0e99", "0"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, x, y string) {
		if Screen(x) != nil || Screen(y) != nil {
			return
		}
		a, err := resource.ParseQuantity(x)
		if err != nil {
			return
		}
		b, err := resource.ParseQuantity(y)
		if err != nil {
			return
		}
		c := Cmp(a, b)
		require.Equal(t, -c, Cmp(b, a), "Cmp(%s, %s) not antisymmetric", x, y)
		require.Zero(t, Cmp(a, a))
		for _, q := range []resource.Quantity{a, b} {
			c := q.DeepCopy()
			if d := c.AsDec(); d.Scale() < -40 || d.Scale() > 40 || d.UnscaledBig().BitLen() > 400 {
				return
			}
		}
		require.Equal(t, a.Cmp(b), c, "Cmp(%s, %s)", x, y)
	})
}
