package fgdlab

import (
	"math"
	"strconv"
)

// MaxX is the last point of the x axis: 130 % arrived GPU demand.
const MaxX = 130

// Curve is one run's GPU allocation ratio (%) at each 1 % of arrived GPU
// demand, x = 0..MaxX, computed as the authors' merge_alloc_discrete
// script does; NaN where the run has no sample.
type Curve [MaxX + 1]float64

// curveBuilder collects one sample per submitted pod.
type curveBuilder struct {
	gpus float64
	bins [][]float64 // per rounded arrived %: allocation samples in arrival order
}

func newCurveBuilder(gpus int) *curveBuilder {
	return &curveBuilder{gpus: float64(gpus), bins: make([][]float64, MaxX+2)}
}

// add records the state after one pod: arrived and used milli-GPU.
// arrive_ratio = round(arrived/gpus/10, 0) and alloc_ratio =
// round(used/gpus/10, 2), both Python rounding of a float (half to even on
// the exact value).
func (c *curveBuilder) add(arrived, used int64) {
	x := int(math.RoundToEven(float64(arrived) / c.gpus / 10))
	if x < 0 {
		return
	}
	for x >= len(c.bins) {
		c.bins = append(c.bins, nil)
	}
	c.bins[x] = append(c.bins[x], pyRound2(float64(used)/c.gpus/10))
}

// curve returns, per x, the numpy-rounded pandas mean of the samples with
// arrive_ratio == x, or if there are none of those with x−1 <= arrive_ratio
// <= x+1 (merge_alloc_discrete_0920.py L113-121).
func (c *curveBuilder) curve() Curve {
	var out Curve
	var buf []float64
	for x := 0; x <= MaxX; x++ {
		samples := c.bins[x]
		if len(samples) == 0 {
			buf = buf[:0]
			for _, nb := range []int{x - 1, x, x + 1} {
				if nb >= 0 && nb < len(c.bins) {
					buf = append(buf, c.bins[nb]...)
				}
			}
			samples = buf
		}
		if len(samples) == 0 {
			out[x] = math.NaN()
			continue
		}
		out[x] = npRound2(pairwiseSum(samples) / float64(len(samples)))
	}
	return out
}

// pyRound2 is Python's round(x, 2) for a float: correctly rounded, ties to
// even.
func pyRound2(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 2, 64), 64)
	return v
}

// npRound2 is numpy's round(x, 2): rint(x*100)/100.
func npRound2(x float64) float64 { return math.RoundToEven(x*100) / 100 }

// pairwiseSum is numpy's pairwise summation of float64 (the sum behind a
// pandas mean): blocks of up to 128 summed with 8 accumulators, halves above.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		var s float64
		for _, v := range a {
			s += v
		}
		return s
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += a[i+j]
			}
		}
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += a[i]
		}
		return s
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
	}
}
