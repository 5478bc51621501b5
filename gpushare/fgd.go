package gpushare

import "math"

// FGD is Fragmentation Gradient Descent (Weng et al., "Beware of
// Fragmentation", USENIX ATC '23): place a task where it increases the
// fragmentation of the target workload the least.
//
// Score is the authors' FGDScore (pkg/simulator/plugin/fgd_score.go):
// with F the node's fragmentation before and F' after the placement,
//
//	score = int64(sigmoid((F − F') / 1000) × 100),  sigmoid(x) = 1/(1+e^−x)
//
// so a decrease of fragmentation scores above 50. For a shared task every
// device with enough free milli-GPU is tried and the first device with the
// highest integer score wins (the simulator quantises the device choice
// too); whole-device and CPU-only tasks use ExclusiveDevices. F' subtracts
// the task's MilliCPU from the node's free CPU.
type FGD struct {
	w *Workload
}

var _ NodeScorer = (*FGD)(nil)
var _ Policy = (*FGD)(nil)

// NewFGD returns the FGD policy for target workload w (see
// WorkloadFromTasks). It panics if w is nil.
func NewFGD(w *Workload) *FGD {
	if w == nil {
		panic("gpushare: NewFGD with nil workload")
	}
	return &FGD{w: w}
}

// Name returns "FGD".
func (*FGD) Name() string { return "FGD" }

// Workload returns the target workload.
func (f *FGD) Workload() *Workload { return f.w }

// Score returns the FGD score of t on n in [0, MaxScore] and the chosen
// devices; (0, 0) if t does not fit n. O(shapes × devices) to measure the
// node once, then O(shapes) per candidate device (only the devices taken
// change; workloads above 128 shapes or amounts near the int64 range
// measure every candidate from scratch, O(shapes × devices)); allocates
// nothing.
func (f *FGD) Score(n *NodeState, t Task) (int64, DeviceSet) {
	if !Fits(n, t) {
		return 0, 0
	}
	var nf nodeFits
	before := f.w.fitsOf(n, &nf)
	if !t.Shared() {
		devs, _ := ExclusiveDevices(n, t)
		return fgdScore(before - f.w.fragmentAfter(&nf, t.MilliCPU, devs, t.MilliGPU)), devs
	}
	devs := n.devices()
	best, bestScore := -1, int64(0)
	for i := range devs {
		if !hosts(&devs[i], &t) || sameAsEarlier(devs, i, &t) {
			continue
		}
		s := fgdScore(before - f.w.fragmentAfter(&nf, t.MilliCPU, DeviceSet(0).With(i), t.MilliGPU))
		if best < 0 || s > bestScore {
			best, bestScore = i, s
		}
	}
	return bestScore, DeviceSet(0).With(best)
}

// sameAsEarlier reports whether an earlier device that can host t has the
// same model and free milli-GPU as device i: i then yields the same
// fragmentation and cannot beat it (ties keep the first).
func sameAsEarlier(devs []Device, i int, t *Task) bool {
	for k := 0; k < i; k++ {
		if devs[k].FreeMilliGPU == devs[i].FreeMilliGPU && devs[k].Model == devs[i].Model && hosts(&devs[k], t) {
			return true
		}
	}
	return false
}

// fgdScore maps a fragmentation decrease in milli-GPU to [0, MaxScore].
func fgdScore(decrease float64) int64 {
	s := 1.0 / (1.0 + math.Exp(-decrease/1000)) * float64(MaxScore)
	if math.IsNaN(s) {
		return 0
	}
	return clampScore(int64(s))
}

// Choose returns Choose(f, nodes, t).
func (f *FGD) Choose(nodes []NodeState, t Task) Decision { return Choose(f, nodes, t) }
