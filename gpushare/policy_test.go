package gpushare

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	_ NodeScorer = (*FGD)(nil)
	_ NodeScorer = BestFit{}
	_ NodeScorer = DotProduct{}
	_ NodeScorer = GPUPacking{}
	_ NodeScorer = GPUClustering{}
	_ Policy     = (*Random)(nil)
)

// shareWorkload: A = 0.5 GPU + 1 core (p 0.5), B = 1 GPU + 1 core (p 0.5).
func shareWorkload() *Workload {
	return mustWorkload([]Task{shared(1000, 500), whole(1000, 1)}, []float64{0.5, 0.5})
}

func TestFGDPutsShareOnPartlyUsedGPU(t *testing.T) {
	f := NewFGD(shareWorkload())
	task := shared(1000, 500)
	// Devices [1000, 600]. Before: A fits, nothing below 500 → 0; B fits on
	// device 0, device 1 (600 < 1000) is fragment → 0.5·600 = 300. F = 300.
	// On device 0 → [500, 600]: A 0; B has no idle GPU → all 1100: F' = 550,
	//   score = int(sigmoid((300−550)/1000)·100) = int(43.78) = 43.
	// On device 1 → [1000, 100]: A: 0.5·100 = 50; B: 0.5·100 = 50. F' = 100,
	//   score = int(sigmoid((300−100)/1000)·100) = int(54.98) = 54.
	n := node(32000, gpus("G2", 1000, 600))
	require.InDelta(t, 300, f.Workload().Fragmentation(&n), 1e-9)
	score, devs := f.Score(&n, task)
	assert.Equal(t, int64(54), score)
	assert.Equal(t, DeviceSet(0).With(1), devs, "FGD put the 0.5 share on %v, want the partly used device 1", devs.AppendIndexes(nil))

	// Between this node and an idle one, FGD picks the partly used node: on
	// [1000, 1000] F = 0 and F' = 0.5·500 (B sees device 0 at 500) = 250,
	// score int(sigmoid(−0.25)·100) = 43 < 54.
	idle := node(32000, gpus("G2", 1000, 1000))
	s, _ := f.Score(&idle, task)
	assert.Equal(t, int64(43), s)
	d := f.Choose([]NodeState{idle, n}, task)
	assert.Equal(t, Decision{Node: 1, Devices: DeviceSet(0).With(1), Score: 54}, d)
}

func TestFGDWholeAndCPUTasks(t *testing.T) {
	f := NewFGD(shareWorkload())
	// Whole GPU on [1000, 600]: ExclusiveDevices → device 0 → [0, 600]:
	// A: 0.5·0 (600 ≥ 500, nothing smaller); B: no idle GPU → 0.5·600 = 300.
	// F = 300 → F' = 300, score int(sigmoid(0)·100) = 50.
	n := node(32000, gpus("G2", 1000, 600))
	s, devs := f.Score(&n, whole(1000, 1))
	assert.Equal(t, int64(50), s)
	assert.Equal(t, DeviceSet(0).With(0), devs)
	// CPU-only task taking all CPU: both shapes lose CPU → all 1600 free
	// counts: F' = 1600, score int(sigmoid(−1.3)·100) = int(21.42) = 21.
	s, devs = f.Score(&n, cpuOnly(32000))
	assert.Equal(t, int64(21), s)
	assert.Equal(t, DeviceSet(0), devs)
}

func TestBaselineScores(t *testing.T) {
	tests := []struct {
		name   string
		scorer NodeScorer
		node   NodeState
		task   Task
		score  int64
		devs   []int
	}{
		{
			// 1 − ½·(64000−8000)/128000 − ½·(2000−1000)/8000 = 1 − 0.21875 − 0.0625 → 71.875 → 71
			name: "BestFit whole GPU", scorer: BestFit{},
			node: node(64000, gpus("T4", 1000, 1000)), task: whole(8000, 1), score: 71, devs: []int{0},
		},
		{
			// 1 − ½·(8000−8000)/128000 − ½·(300−300)/8000 = 1 → 100; device 1 is the tightest fit
			name: "BestFit exact fit", scorer: BestFit{},
			node: node(8000, gpus("T4", 0, 300)), task: shared(8000, 300), score: 100, devs: []int{1},
		},
		{
			// dot = (64000/128000)(8000/128000) + (2000/8000)(1000/8000) = 0.03125 + 0.03125;
			// 1 − 0.0625/2 = 0.96875 → 96
			name: "DotProduct", scorer: DotProduct{},
			node: node(64000, gpus("T4", 1000, 1000)), task: whole(8000, 1), score: 96, devs: []int{0},
		},
		{
			// all 8 GPUs idle: max(33 − 8, 8) = 25
			name: "GpuPacking idle node", scorer: GPUPacking{},
			node: node(96000, gpus("G2", 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000)), task: shared(1000, 300), score: 25, devs: []int{0},
		},
		{
			// device 0 (400) fits 300: 400·100/1000 = 40; 100 − 40/10 = 96
			name: "GpuPacking shared GPU", scorer: GPUPacking{},
			node: node(96000, gpus("G2", 400, 1000)), task: shared(1000, 300), score: 96, devs: []int{0},
		},
		{
			// device 0 (200) too small: needs 1 idle GPU on a used node: max(50 − 1, 33) = 49
			name: "GpuPacking idle GPU of used node", scorer: GPUPacking{},
			node: node(96000, gpus("G2", 200, 1000)), task: shared(1000, 300), score: 49, devs: []int{1},
		},
		{
			name: "GpuPacking CPU-only", scorer: GPUPacking{},
			node: node(96000, gpus("G2", 200, 1000)), task: cpuOnly(1000), score: 0,
		},
		{
			// base = 25·(8000 − 4000)/8000 = 12; only shared tasks on the node: +75
			name: "GpuClustering same class", scorer: GPUClustering{},
			node: NodeState{FreeMilliCPU: 96000, FreeMemory: 1 << 40, Devices: gpus("G2", 500, 500, 1000, 1000, 1000, 0, 0, 0), ResidentClasses: ClassSet(0).With(0)},
			task: shared(1000, 500), score: 87, devs: []int{0},
		},
		{
			// base 12; shared and 1-GPU classes present: +50
			name: "GpuClustering mixed classes", scorer: GPUClustering{},
			node: NodeState{FreeMilliCPU: 96000, FreeMemory: 1 << 40, Devices: gpus("G2", 500, 500, 1000, 1000, 1000, 0, 0, 0), ResidentClasses: ClassSet(0).With(0).With(1)},
			task: shared(1000, 500), score: 62, devs: []int{0},
		},
		{
			// base 12; only other classes: +0
			name: "GpuClustering other class", scorer: GPUClustering{},
			node: NodeState{FreeMilliCPU: 96000, FreeMemory: 1 << 40, Devices: gpus("G2", 500, 500, 1000, 1000, 1000, 0, 0, 0), ResidentClasses: ClassSet(0).With(0)},
			task: whole(1000, 1), score: 12, devs: []int{2},
		},
		{
			// empty 8-GPU node: base 25·0/8000 = 0, no class yet: +25
			name: "GpuClustering empty node", scorer: GPUClustering{},
			node: node(96000, gpus("G2", 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000)), task: whole(1000, 2), score: 25, devs: []int{0, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			score, devs := tc.scorer.Score(&tc.node, tc.task)
			assert.Equal(t, tc.score, score, "Score(%s) = %d, want %d", tc.name, score, tc.score)
			assert.Equal(t, tc.devs, devs.AppendIndexes(nil))
		})
	}
}

func TestChooseTiesGoToLowestIndex(t *testing.T) {
	nodes := []NodeState{node(1000, gpus("G2", 100)), node(8000, gpus("G2", 1000)), node(8000, gpus("G2", 1000))}
	// Node 0 does not fit; nodes 1 and 2 score the same.
	d := Choose(BestFit{}, nodes, shared(1000, 500))
	assert.Equal(t, 1, d.Node)
	assert.Equal(t, -1, Choose(BestFit{}, nodes, whole(1000, 2)).Node)
	assert.Equal(t, -1, Choose(BestFit{}, nil, cpuOnly(0)).Node)
}

func TestRandom(t *testing.T) {
	nodes := []NodeState{
		node(1000, gpus("G2", 100, 100)),       // does not fit
		node(8000, gpus("G2", 600, 700, 1000)), // fits
		node(8000, gpus("G2", 500)),            // fits
	}
	task := shared(1000, 500)
	a, b := NewRandom(7), NewRandom(7)
	hits := map[int]int{}
	devHits := map[int]int{}
	for range 3000 {
		d := a.Choose(nodes, task)
		assert.Equal(t, d, b.Choose(nodes, task), "same seed, same draws")
		require.True(t, d.Node == 1 || d.Node == 2, "chose node %d", d.Node)
		require.Equal(t, 1, d.Devices.Len())
		hits[d.Node]++
		if d.Node == 1 {
			devHits[d.Devices.AppendIndexes(nil)[0]]++
		}
	}
	assert.InDelta(t, 1500, hits[1], 150)
	for i := range 3 {
		assert.InDelta(t, 500, devHits[i], 100, "device %d", i)
	}
	assert.Equal(t, -1, a.Choose(nodes, whole(1000, 4)).Node)
	d := a.Choose(nodes, whole(1000, 1))
	assert.Equal(t, Decision{Node: 1, Devices: DeviceSet(0).With(2), Score: MaxScore}, d)
}
