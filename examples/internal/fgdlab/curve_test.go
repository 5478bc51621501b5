package fgdlab

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRounding(t *testing.T) {
	// Python round(x, 2) rounds the exact binary value: 0.125 is exact → ties
	// to even (0.12); 2.675 is stored as 2.67499999… → 2.67.
	assert.Equal(t, 0.12, pyRound2(0.125))
	assert.Equal(t, 2.67, pyRound2(2.675))
	assert.Equal(t, 93.13, pyRound2(93.1349999))
	// numpy round(x, 2) = rint(x*100)/100: 2.675*100 rounds to 267.5 in
	// float64, rint ties to even → 268: numpy says 2.68 where Python says 2.67.
	assert.Equal(t, 2.68, npRound2(2.675))
	assert.Equal(t, 0.12, npRound2(0.125))
}

func TestPairwiseSum(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 127, 128, 129, 300} {
		a := make([]float64, n)
		var naive float64
		for i := range a {
			a[i] = 0.1 * float64(i%7+1)
			naive += a[i]
		}
		assert.InDelta(t, naive, pairwiseSum(a), 1e-9, "n=%d", n)
	}
	// 8 accumulators: ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)) then a8. In
	// float64 1e16+1 = 1e16 and −1e16+1 = −1e16, so the block sums to 0 and
	// the result is 1; a left-to-right sum gives 2.
	big, one := 1e16, 1.0
	a := []float64{big, one, -big, one, 0, 0, 0, 0, one}
	assert.Equal(t, 1.0, pairwiseSum(a))
	var naive float64
	for _, v := range a {
		naive += v
	}
	assert.Equal(t, 2.0, naive)
}

func TestCurveBins(t *testing.T) {
	// 100 GPUs: arrived 1000 milli = 1 %, 1500 = 1.5 % → rounds to 2 (even).
	c := newCurveBuilder(100)
	c.add(1000, 1000)
	c.add(1500, 1000)
	c.add(4000, 3000)
	got := c.curve()
	assert.Equal(t, 1.0, got[1])
	assert.Equal(t, 1.0, got[2])
	// x = 3 has no sample: mean of x = 2..4 → (1 + 3) / 2.
	assert.Equal(t, 2.0, got[3])
	assert.Equal(t, 3.0, got[4])
	assert.True(t, math.IsNaN(got[10]))
}

func TestReadExpected(t *testing.T) {
	in := "workload,sc_policy,tune,seed,total_gpus"
	for x := 0; x <= MaxX; x++ {
		in += "," + strconv.Itoa(x)
	}
	row := func(w, p, tune, seed string, v string) string {
		r := "\n" + w + "," + p + "," + tune + "," + seed + ",6212"
		for x := 0; x <= MaxX; x++ {
			r += "," + v
		}
		return r
	}
	csv := in + row("openb_pod_list_default", "06-FGD", "1.3", "42", "95.5") +
		row("openb_pod_list_cpu050", "06-FGD", "1.3", "42", "1") +
		row("openb_pod_list_default", "05-BestFit", "1.3", "43", "")
	exp, err := ReadExpected(strings.NewReader(csv), "openb_pod_list_default", TuneRatio)
	require.NoError(t, err)
	assert.Equal(t, 95.5, exp["FGD"][42][MaxX])
	assert.True(t, math.IsNaN(exp["BestFit"][43][0]))
	assert.Len(t, exp, 2)

	_, err = ReadExpected(strings.NewReader("workload,seed\n"), "x", 1.3)
	assert.True(t, errors.Is(err, ErrFormat), "%v", err)
	_, err = ReadExpected(strings.NewReader(in+row("openb_pod_list_default", "06-FGD", "1.3", "4x", "1")), "openb_pod_list_default", 1.3)
	assert.True(t, errors.Is(err, ErrFormat), "%v", err)
}

func TestArrivals(t *testing.T) {
	// Four pods of 1, 0.5, 0 and 2 GPUs on two 2-GPU nodes (capacity 4000
	// milli, target 1.3 × 4000 = 5200): the shuffled four (3500) come first,
	// then clones while the next per-GPU milli keeps the total ≤ 5200.
	nodes := []openb.Node{{Name: "b", MilliCPU: 8000, MemoryMiB: 1024, GPUs: 2, Model: "T4"}, {Name: "a", MilliCPU: 8000, MemoryMiB: 1024, GPUs: 2, Model: "T4"}}
	pods := []openb.Pod{
		{Name: "p3", MilliCPU: 1000, NumGPU: 2, GPUMilli: 1000},
		{Name: "p0", MilliCPU: 1000, NumGPU: 1, GPUMilli: 1000},
		{Name: "p1", MilliCPU: 1000, NumGPU: 1, GPUMilli: 500},
		{Name: "p2", MilliCPU: 1000},
	}
	e, err := NewExperiment(nodes, pods)
	require.NoError(t, err)
	for _, seed := range []int64{1, 2, 3} {
		order, rank := e.Arrivals(seed)
		first := append([]int32(nil), order[:4]...)
		assert.ElementsMatch(t, []int32{0, 1, 2, 3}, first)
		var total int64
		for _, p := range order {
			total += e.tasks[p].TotalMilliGPU()
		}
		assert.LessOrEqual(t, total, int64(5200+1000), "seed %d", seed) // a 2-GPU clone may overshoot by 1000
		assert.ElementsMatch(t, []int{0, 1}, rank)
		o2, r2 := e.Arrivals(seed)
		assert.Equal(t, order, o2)
		assert.Equal(t, rank, r2)
		run, err := e.Replay("FGD", seed)
		require.NoError(t, err)
		assert.Equal(t, len(order), run.Pods)
		assert.LessOrEqual(t, run.Used, int64(4000))
	}
	_, err = e.Replay("Nope", 1)
	assert.Error(t, err)
	_, err = NewExperiment(nil, pods)
	assert.Error(t, err)
}
