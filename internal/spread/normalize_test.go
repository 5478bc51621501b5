package spread

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDividerMatchesDivision: divider.div(x) equals Go's x / d for
// divisors from 1 to beyond the fast path's 2⁵² bound and dividends
// around every multiple of d (q×d − 1, q×d, q×d + 1, where float64
// rounding would put a plain float quotient on the wrong side), negative
// ones, 0, and the largest int64s (the slow path).
func TestDividerMatchesDivision(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 5))
	ds := []int64{1, 2, 3, 7, 100, 101, 999, 1 << 20, 1<<52 - 1, 1 << 52, 1<<52 + 1, math.MaxInt64}
	for range 200 {
		ds = append(ds, 1+rng.Int64N(1<<10), 1+rng.Int64N(1<<40), 1+rng.Int64N(1<<52))
	}
	for _, d := range ds {
		v := newDivider(d)
		xs := []int64{0, 1, d - 1, d, d + 1, -1, -d, 1<<52 - 1, 1 << 52, math.MaxInt64, math.MinInt64 + 1}
		for range 200 {
			q := rng.Int64N(1<<52/d + 1)
			xs = append(xs, q*d-1, q*d, q*d+1, rng.Int64N(1<<52), rng.Int64())
		}
		for _, x := range xs {
			require.Equal(t, x/d, v.div(x), "%d / %d", x, d)
		}
	}
}

// TestRoundMatchesMathRound: round(x) is int64(math.Round(x)) on the
// halves, their neighbours one ulp away, the fast path's bounds and
// random scores.
func TestRoundMatchesMathRound(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 6))
	xs := []float64{0, 0.5, 1.5, 2.5, 1 << 51, 1<<52 - 0.5, 1<<52 - 1, 1 << 52, 1<<52 + 1, 1 << 62, -0.5, -1.5, -3.7, math.Copysign(0, -1)}
	for _, h := range []float64{0.5, 1.5, 2.5, 1e6 + 0.5, 1<<51 + 0.5} {
		xs = append(xs, math.Nextafter(h, 0), math.Nextafter(h, math.Inf(1)))
	}
	for range 100_000 {
		xs = append(xs, rng.Float64()*1000, float64(rng.IntN(1000))+0.5, rng.Float64()*(1<<53))
	}
	for _, x := range xs {
		require.Equal(t, int64(math.Round(x)), round(x), "%v", x)
	}
}
