package gpushare

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handWorkload: A = 0.5 GPU + 4 cores (p 0.5), B = 1 GPU + 8 cores (p 0.3),
// C = CPU-only 2 cores (p 0.2).
func handWorkload() *Workload {
	return mustWorkload([]Task{shared(4000, 500), whole(8000, 1), cpuOnly(2000)}, []float64{0.5, 0.3, 0.2})
}

func TestFragmentationHandWorked(t *testing.T) {
	w := handWorkload()
	tests := []struct {
		name string
		node NodeState
		want float64
	}{
		{
			// A fits, no device below 500 → 0; B fits, no device below 1000 → 0;
			// C is CPU-only → all 2000 free is fragment for it.
			// 0.5·0 + 0.3·0 + 0.2·2000 = 400
			name: "two idle GPUs",
			node: node(32000, gpus("G2", 1000, 1000)),
			want: 400,
		},
		{
			// A fits on device 1; device 0 (300 < 500) is fragment: 0.5·300 = 150
			// B fits on device 1; device 0 (300 < 1000) is fragment: 0.3·300 = 90
			// C: all 1300 free: 0.2·1300 = 260
			// 150 + 90 + 260 = 500
			name: "one GPU partly used",
			node: node(32000, gpus("G2", 300, 1000)),
			want: 500,
		},
		{
			// A and B have GPUs but not CPU (2000 < 4000, 8000): all 2000 free counts
			// for both; C fits but is CPU-only: all counts.
			// 0.5·2000 + 0.3·2000 + 0.2·2000 = 2000
			name: "CPU-limited node",
			node: node(2000, gpus("G2", 1000, 1000)),
			want: 2000,
		},
		{
			// A fits on device 0 (600), device 1 (200) is fragment: 0.5·200 = 100
			// B needs 1000: no device → all 800 free: 0.3·800 = 240
			// C: 0.2·800 = 160
			// 100 + 240 + 160 = 500
			name: "no idle GPU",
			node: node(32000, gpus("G2", 600, 200)),
			want: 500,
		},
		{
			// Nothing free: 0.
			name: "full node",
			node: node(32000, gpus("G2", 0, 0)),
			want: 0,
		},
		{
			name: "no devices",
			node: node(32000, nil),
			want: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := w.Fragmentation(&tc.node)
			assert.InDelta(t, tc.want, got, 1e-9, "Fragmentation(%s) = %v, want %v", tc.name, got, tc.want)
		})
	}
}

func TestFragmentationModels(t *testing.T) {
	// One shape: 0.5 GPU on a T4 (p 1).
	w := mustWorkload([]Task{{MilliCPU: 1000, GPUCount: 1, MilliGPU: 500, Models: []string{"T4"}}}, []float64{1})
	v100 := node(32000, gpus("V100M16", 1000, 400))
	// No T4: no access, all 1400 free is fragment.
	assert.InDelta(t, 1400, w.Fragmentation(&v100), 1e-9)
	mixed := node(32000, append(gpus("T4", 1000), gpus("V100M16", 1000)...))
	// The T4 hosts it; the V100 (wrong model) is fragment: 1000.
	assert.InDelta(t, 1000, w.Fragmentation(&mixed), 1e-9)
	// A model list with an empty entry only is no constraint.
	free := mustWorkload([]Task{{MilliCPU: 1000, GPUCount: 1, MilliGPU: 500, Models: []string{""}}}, []float64{1})
	assert.InDelta(t, 400, free.Fragmentation(&v100), 1e-9) // 400 < 500 on device 1
}

func TestClusterFragmentationAndRatio(t *testing.T) {
	w := handWorkload()
	nodes := []NodeState{node(32000, gpus("G2", 1000, 1000)), node(32000, gpus("G2", 300, 1000))}
	// 400 + 500 (see TestFragmentationHandWorked); free 2000 + 1300.
	assert.InDelta(t, 900, w.ClusterFragmentation(nodes), 1e-9)
	assert.InDelta(t, 900.0/3300, w.FragmentationRatio(nodes), 1e-12)
	assert.Equal(t, 0.0, w.FragmentationRatio(nil))
	assert.Equal(t, 0.0, w.FragmentationRatio([]NodeState{node(1000, gpus("G2", 0))}))
}

func TestWorkloadFromTasks(t *testing.T) {
	a, b, c, d := shared(4000, 500), whole(8000, 1), cpuOnly(2000), whole(16000, 2)
	a2 := a
	a2.Memory = 123 << 20 // memory is not part of a shape
	var tasks []Task
	for range 4 {
		tasks = append(tasks, a)
	}
	tasks = append(tasks, a2, b, b, b, c, d)
	// 10 tasks: A×5, B×3, C×1, D×1. Coverage 80 % → 8 tasks: A (5) then B (8).
	// Weights (5/10)/(8/10) = 0.625 and (3/10)/(8/10) = 0.375.
	w, err := WorkloadFromTasks(tasks, 80)
	require.NoError(t, err)
	require.Equal(t, 2, w.Len())
	s0, p0 := w.Shape(0)
	s1, p1 := w.Shape(1)
	assert.Equal(t, a, s0)
	assert.Equal(t, b, s1)
	assert.InDelta(t, 0.625, p0, 1e-15)
	assert.InDelta(t, 0.375, p1, 1e-15)

	// Coverage 100 %: all four shapes, count/total. C and D tie at 1: the
	// larger MilliCPU (D, 16000) comes first.
	w, err = WorkloadFromTasks(tasks, 100)
	require.NoError(t, err)
	require.Equal(t, 4, w.Len())
	s2, _ := w.Shape(2)
	s3, p3 := w.Shape(3)
	assert.Equal(t, d, s2)
	assert.Equal(t, c, s3)
	assert.InDelta(t, 0.1, p3, 1e-15)
}

func TestWorkloadErrors(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
		want error
	}{
		{"no task", func() error { _, err := WorkloadFromTasks(nil, 95); return err }, ErrInvalidWorkload},
		{"coverage 0", func() error { _, err := WorkloadFromTasks([]Task{{}}, 0); return err }, ErrInvalidWorkload},
		{"coverage NaN", func() error { _, err := WorkloadFromTasks([]Task{{}}, math.NaN()); return err }, ErrInvalidWorkload},
		{"bad task", func() error { _, err := WorkloadFromTasks([]Task{{MilliGPU: 2000, GPUCount: 1}}, 95); return err }, ErrInvalidTask},
		{"no shape", func() error { _, err := NewWorkload(nil, nil); return err }, ErrInvalidWorkload},
		{"length", func() error { _, err := NewWorkload([]Task{{}}, []float64{1, 2}); return err }, ErrInvalidWorkload},
		{"negative weight", func() error { _, err := NewWorkload([]Task{{}}, []float64{-1}); return err }, ErrInvalidWorkload},
		{"infinite weight", func() error { _, err := NewWorkload([]Task{{}}, []float64{math.Inf(1)}); return err }, ErrInvalidWorkload},
		{"zero sum", func() error { _, err := NewWorkload([]Task{{}}, []float64{0}); return err }, ErrInvalidWorkload},
		{"bad shape", func() error { _, err := NewWorkload([]Task{{MilliCPU: -1}}, []float64{1}); return err }, ErrInvalidTask},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.want), "error %q does not wrap %v", err, tc.want)
		})
	}
}

func TestNewWorkloadNormalises(t *testing.T) {
	w := mustWorkload([]Task{shared(1000, 500), cpuOnly(1000)}, []float64{3, 1})
	_, p0 := w.Shape(0)
	_, p1 := w.Shape(1)
	assert.Equal(t, 0.75, p0)
	assert.Equal(t, 0.25, p1)
}
