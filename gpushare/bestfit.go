package gpushare

import "github.com/schedkit/schedkit/internal/arith"

// Normalisers of BestFit and DotProduct: the largest node of the openb
// cluster (128 cores, 8 GPUs), the simulator's MaxSpecCpu and MaxSpecGpu
// (pkg/type/open-gpu-share/utils/const.go).
const (
	maxSpecMilliCPU = 128000
	maxSpecMilliGPU = 8000
)

// BestFit is the Best-fit baseline of the paper's evaluation (the
// simulator's BestFitScore, pkg/simulator/plugin/best_fit_score.go): prefer the node
// with the least free CPU and GPU left after placement,
//
//	score = int64((1 − ½·(cpuFree − cpu)/128000 − ½·(gpuFree − gpu)/8000) × 100)
//
// with gpuFree the node's total free milli-GPU and gpu = GPUCount × MilliGPU,
// clamped to [0, MaxScore] (only nodes above 128 cores or 8 GPUs reach the
// clamp). Devices: BestFitDevices. The zero value is ready to use.
type BestFit struct{}

var _ NodeScorer = BestFit{}
var _ Policy = BestFit{}

// Name returns "BestFit".
func (BestFit) Name() string { return "BestFit" }

// Score returns the BestFit score of t on n and the devices; (0, 0) if t
// does not fit n. O(devices); allocates nothing.
func (BestFit) Score(n *NodeState, t Task) (int64, DeviceSet) {
	if !Fits(n, t) {
		return 0, 0
	}
	devs, _ := BestFitDevices(n, t)
	var score float64
	score += float64(arith.Sub(n.FreeMilliCPU, t.MilliCPU)) / maxSpecMilliCPU * 0.5
	score += float64(arith.Sub(n.FreeMilliGPU(), t.TotalMilliGPU())) / maxSpecMilliGPU * 0.5
	return clampScore(int64((1.0 - score) * float64(MaxScore))), devs
}

// Choose returns Choose(BestFit{}, nodes, t).
func (b BestFit) Choose(nodes []NodeState, t Task) Decision { return Choose(b, nodes, t) }
