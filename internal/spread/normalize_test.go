package spread

import (
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/selector"
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

// TestNormalizeMatchesFormula: Normalize without requireAll equals
// upstream's NormalizeScore written plainly (0 for -1; 100 each when the
// max is 0; else 100 × (max + min − s) / max, min and max over all the
// scores) on random raw scores: few distinct values (its memo's case),
// many, values that collide in the memo (equal modulo 16), and the int64
// extremes.
func TestNormalizeMatchesFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 7))
	s := &Score[*fakeNode, fakePod]{}
	for trial := range 2000 {
		n := 1 + rng.IntN(300)
		raw := make([]int64, n)
		for j := range raw {
			switch trial % 4 {
			case 0:
				raw[j] = int64(rng.IntN(6)) * 7
			case 1:
				raw[j] = rng.Int64N(1 << 20)
			case 2:
				raw[j] = int64(rng.IntN(4))*16 + 3
			default:
				raw[j] = []int64{0, 1, math.MaxInt64 / 200, int64(rng.IntN(50))}[rng.IntN(4)]
			}
			if rng.IntN(20) == 0 {
				raw[j] = -1
			}
		}
		lo, hi := int64(math.MaxInt64), int64(0)
		for _, sc := range raw {
			lo, hi = min(lo, sc), max(hi, sc)
		}
		want := make([]int64, n)
		for j, sc := range raw {
			switch {
			case sc == -1:
				want[j] = 0
			case hi == 0:
				want[j] = 100
			default:
				want[j] = 100 * (hi + lo - sc) / hi
			}
		}
		got := append([]int64(nil), raw...)
		s.Normalize(make([]*fakeNode, n), got)
		require.Equal(t, want, got, "trial %d raw %v", trial, raw)
	}
}

// fakeNode and fakePod instantiate Score for Normalize, which reads no
// node without requireAll.
type fakePod struct{}

func (fakePod) Pod() *v1.Pod { return nil }

type fakeNode struct{}

func (*fakeNode) Node() *v1.Node           { return nil }
func (*fakeNode) Labels() []selector.Label { return nil }
func (*fakeNode) Pods() []fakePod          { return nil }

// cpuTime is the process's CPU time (user + system): on a shared
// machine a steadier measure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// normalizeDividing is Normalize without requireAll and without its
// memo (one division per node), for BenchmarkNormalize.
func normalizeDividing(scores []int64) {
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, sc := range scores {
		lo, hi = min(lo, sc), max(hi, sc)
	}
	d := newDivider(hi)
	for j, sc := range scores {
		switch {
		case sc == -1:
			scores[j] = 0
		case hi == 0:
			scores[j] = 100
		default:
			scores[j] = d.div(100 * (hi + lo - sc))
		}
	}
}

// BenchmarkNormalize: raw scores of the system defaults over 3 zones (6
// distinct values) and of a many-valued spread, per node count, with
// and without Normalize's memo.
func BenchmarkNormalize(b *testing.B) {
	s := &Score[*fakeNode, fakePod]{}
	for _, distinct := range []int{6, 1000} {
		for _, n := range []int{1000, 5000} {
			rng := rand.New(rand.NewPCG(1, 1))
			raw := make([]int64, n)
			for j := range raw {
				raw[j] = 40 + int64(rng.IntN(distinct))*13
			}
			nodes := make([]*fakeNode, n)
			buf := make([]int64, n)
			for _, impl := range []string{"divide", "memo"} {
				b.Run(fmt.Sprintf("distinct=%d/nodes=%d/impl=%s", distinct, n, impl), func(b *testing.B) {
					b.ReportAllocs()
					c0 := cpuTime()
					for b.Loop() {
						copy(buf, raw)
						if impl == "memo" {
							s.Normalize(nodes, buf)
						} else {
							normalizeDividing(buf)
						}
					}
					b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}
