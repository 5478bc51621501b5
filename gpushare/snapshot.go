package gpushare

import "github.com/schedkit/schedkit/snapshot"

// The policies' view of snapshot state: the snapshot keeps devices as
// counted data (snapshot.NodeInfo.Devices, snapshot.PodInfo.GPU and
// Devices); these functions read it into the policies' NodeState and Task.

// TaskOf returns the pod as the policies see it: its requested milli-CPU
// and memory (snapshot.PodRequests.Requested, no non-zero defaults) and
// its device demand (snapshot.PodInfo.GPU). O(1); the Models slice is the
// PodInfo's (read-only).
func TaskOf(pod *snapshot.PodInfo) Task {
	g := pod.GPU()
	return Task{
		MilliCPU: pod.Requested().MilliCPU(),
		Memory:   pod.Requested().Memory(),
		GPUCount: g.Count,
		MilliGPU: g.MilliGPU,
		Models:   g.Models,
	}
}

// NodeStateOf returns the node as the policies see it: free milli-CPU and
// memory (snapshot.NodeInfo.Free, never negative), its devices with free
// milli-GPU clamped to >= 0 (an informer may over-commit a device) and the
// classes of the GPU pods on it. Devices is appended to buf[:0] (pass a
// reused buffer to avoid allocating), so Place on the result does not
// change the NodeInfo. O(devices + pods).
func NodeStateOf(node *snapshot.NodeInfo, buf []Device) NodeState {
	buf = append(buf[:0], node.Devices()...)
	for i := range buf {
		buf[i].FreeMilliGPU = max(0, buf[i].FreeMilliGPU)
	}
	var cs ClassSet
	if len(buf) > 0 {
		for _, p := range node.Pods() {
			if p.GPU().Count == 0 {
				continue
			}
			if c, ok := TaskOf(p).Class(); ok {
				cs = cs.With(c)
			}
		}
	}
	return NodeState{
		FreeMilliCPU:    node.Free(snapshot.CPU),
		FreeMemory:      node.Free(snapshot.Memory),
		Devices:         buf,
		ResidentClasses: cs,
	}
}

// ChooseDevices makes BestFit a snapshot.DeviceChooser: BestFitDevices on
// the node's devices (the FGD simulator's default device choice; CPU and
// memory are not checked). ok is false when the node has too few devices
// of an allowed model with the pod's share free. O(devices + pods); it
// allocates the node's device copy.
func (BestFit) ChooseDevices(pod *snapshot.PodInfo, node *snapshot.NodeInfo) (DeviceSet, bool) {
	st := NodeStateOf(node, nil)
	return BestFitDevices(&st, TaskOf(pod))
}

var _ snapshot.DeviceChooser = BestFit{}
