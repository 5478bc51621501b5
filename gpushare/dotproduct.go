package gpushare

// DotProduct is the Dot-product baseline of the paper's evaluation (after
// Tetris; the simulator's DotProductScore with dimExtMethod=merge, normMethod=max,
// pkg/simulator/plugin/dot_product_score.go). With the node's free
// resources and the task's request normalised by the largest node
// (128000 milli-CPU, 8000 milli-GPU),
//
//	dot   = (cpuFree/128000)·(cpu/128000) + (gpuFree/8000)·(gpu/8000)
//	score = int64((1 − dot/2) × 100)
//
// The simulator scores a smaller dot product higher ("the larger the dot
// product, the lower the score"), which favours nodes with little free
// resource in the task's dimensions; scores fall in a narrow band, so the
// tie-break decides often. Devices: BestFitDevices. The zero value is ready
// to use.
type DotProduct struct{}

var _ NodeScorer = DotProduct{}
var _ Policy = DotProduct{}

// Name returns "DotProduct".
func (DotProduct) Name() string { return "DotProduct" }

// Score returns the DotProduct score of t on n and the devices; (0, 0) if t
// does not fit n. O(devices); allocates nothing.
func (DotProduct) Score(n *NodeState, t Task) (int64, DeviceSet) {
	if !Fits(n, t) {
		return 0, 0
	}
	devs, _ := BestFitDevices(n, t)
	node0 := float64(n.FreeMilliCPU) / maxSpecMilliCPU
	node1 := float64(n.FreeMilliGPU()) / maxSpecMilliGPU
	pod0 := float64(t.MilliCPU) / maxSpecMilliCPU
	pod1 := float64(t.TotalMilliGPU()) / maxSpecMilliGPU
	var dot float64
	dot += node0 * pod0
	dot += node1 * pod1
	dot /= 2
	return clampScore(int64(float64(MaxScore) * (1 - dot))), devs
}

// Choose returns Choose(DotProduct{}, nodes, t).
func (d DotProduct) Choose(nodes []NodeState, t Task) Decision { return Choose(d, nodes, t) }
