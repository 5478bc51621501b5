package gpushare

// GPUClustering is the GPU-clustering baseline of the paper's evaluation
// (the simulator's GpuClusteringScore, pkg/simulator/plugin/gpu_clustering_score.go):
// keep tasks of the same class (shared, 1-GPU, 2-GPU, ...) together. With
// base = 25·(8000 − gpuFree)/8000 (integer division, gpuFree clamped to
// [0, 8000]) and the node's ResidentClasses:
//
//	only the task's class on the node:       base + 75
//	the task's class among others:           base + 50
//	no GPU task on the node yet:             base + 25
//	only other classes:                      base
//
// CPU-only tasks score 0 on every node. Devices: BestFitDevices. The zero
// value is ready to use.
type GPUClustering struct{}

var _ NodeScorer = GPUClustering{}
var _ Policy = GPUClustering{}

// Name returns "GpuClustering".
func (GPUClustering) Name() string { return "GpuClustering" }

// Score returns the GpuClustering score of t on n and the devices; (0, 0)
// if t does not fit n. O(devices); allocates nothing.
func (GPUClustering) Score(n *NodeState, t Task) (int64, DeviceSet) {
	if !Fits(n, t) {
		return 0, 0
	}
	devs, _ := BestFitDevices(n, t)
	c, ok := t.Class()
	if !ok {
		return 0, devs
	}
	free := min(max(n.FreeMilliGPU(), 0), maxSpecMilliGPU)
	base := MaxScore / 4 * (maxSpecMilliGPU - free) / maxSpecMilliGPU
	switch r := n.ResidentClasses; {
	case r.Has(c) && r.Len() == 1:
		return clampScore(base + MaxScore*3/4), devs
	case r.Has(c):
		return clampScore(base + MaxScore*2/4), devs
	case r == 0:
		return clampScore(base + MaxScore/4), devs
	default:
		return clampScore(base), devs
	}
}

// Choose returns Choose(GPUClustering{}, nodes, t).
func (g GPUClustering) Choose(nodes []NodeState, t Task) Decision { return Choose(g, nodes, t) }
