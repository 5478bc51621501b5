package gpushare

// GPUPacking is the GPU-packing baseline of the paper's evaluation (the
// simulator's GpuPackingScore, pkg/simulator/plugin/gpu_packing_score.go): fill
// partly used GPUs first, then idle GPUs of used nodes, then idle nodes.
// For a GPU task, with idle the number of idle devices of the node:
//
//	all devices idle:                 max(33 − idle, idle)
//	needs k idle devices (k ≥ 1):     max(50 − k, 33)
//	only partly used devices needed:  max(100 − Σ(free·100/capacity)/10, 50)
//
// (integer arithmetic; the devices needed are taken in increasing order of
// free milli-GPU, lowest index first on ties). CPU-only tasks score 0 on
// every node. Devices: BestFitDevices. The zero value is ready to use.
type GPUPacking struct{}

var _ NodeScorer = GPUPacking{}
var _ Policy = GPUPacking{}

// Name returns "GpuPacking".
func (GPUPacking) Name() string { return "GpuPacking" }

// Score returns the GpuPacking score of t on n and the devices; (0, 0) if t
// does not fit n. O(devices²) for the ordering of at most MaxDevices
// devices; allocates nothing.
func (GPUPacking) Score(n *NodeState, t Task) (int64, DeviceSet) {
	if !Fits(n, t) {
		return 0, 0
	}
	devs, _ := BestFitDevices(n, t)
	if !t.UsesGPU() {
		return 0, devs
	}
	all := n.devices()
	idle := 0
	for i := range all {
		if all[i].Idle() {
			idle++
		}
	}
	if idle == len(all) {
		return clampScore(max(MaxScore/3-int64(idle), int64(idle))), devs
	}
	// Take the GPUCount hosting devices of least free milli-GPU (stable).
	var used DeviceSet
	idleUsed := 0
	var freePct int64
	for need := t.GPUCount; need > 0; need-- {
		pick := -1
		for i := range all {
			if used.Has(i) || !hosts(&all[i], &t) {
				continue
			}
			if pick < 0 || all[i].FreeMilliGPU < all[pick].FreeMilliGPU {
				pick = i
			}
		}
		if pick < 0 {
			return 0, 0
		}
		used = used.With(pick)
		if all[pick].Idle() {
			idleUsed++
		} else if all[pick].CapacityMilliGPU > 0 {
			freePct += all[pick].FreeMilliGPU * 100 / all[pick].CapacityMilliGPU
		}
	}
	if idleUsed > 0 {
		return clampScore(max(MaxScore/2-int64(idleUsed), MaxScore/3)), devs
	}
	return clampScore(max(MaxScore-freePct/10, MaxScore/2)), devs
}

// Choose returns Choose(GPUPacking{}, nodes, t).
func (g GPUPacking) Choose(nodes []NodeState, t Task) Decision { return Choose(g, nodes, t) }
