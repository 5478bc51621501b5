package gpushare

import (
	"fmt"
	"math/bits"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/fit"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

const (
	// MaxScore is the highest node score, score.MaxScore (upstream's
	// framework.MaxNodeScore).
	MaxScore = score.MaxScore
	// MilliPerDevice is the capacity of one whole GPU in milli-GPU
	// (snapshot.MilliPerDevice).
	MilliPerDevice = snapshot.MilliPerDevice
	// MaxDevices is the largest number of devices of one node that the
	// policies consider (snapshot.MaxDevices); devices at index MaxDevices
	// and above are ignored (NodeState.Validate rejects such nodes).
	MaxDevices = snapshot.MaxDevices
)

// Device is one GPU of a node: the snapshot's counted data
// (snapshot.Device), which the policies read and NodeState.Place updates.
type Device = snapshot.Device

// NodeState is one node as the GPU policies see it: free CPU and memory,
// its devices in device-index order, and the classes of GPU tasks already
// placed on it. The policies only read it; NodeState.Place updates it.
//
// The zero NodeState is a node with no free resource and no device.
type NodeState struct {
	// FreeMilliCPU is allocatable minus requested CPU, in milli-cores.
	FreeMilliCPU int64
	// FreeMemory is allocatable minus requested memory, in bytes.
	FreeMemory int64
	// Devices lists the node's GPUs; the index is the device index that
	// DeviceSet refers to. Only the first MaxDevices are considered.
	Devices []Device
	// ResidentClasses is the set of classes of the GPU tasks placed on the
	// node (GPUClustering's "GPU affinity"); CPU-only tasks add nothing.
	ResidentClasses ClassSet
}

// devices returns n.Devices truncated to MaxDevices.
func (n *NodeState) devices() []Device {
	if len(n.Devices) > MaxDevices {
		return n.Devices[:MaxDevices]
	}
	return n.Devices
}

// FreeMilliGPU returns the sum of the devices' free milli-GPU. O(devices).
func (n *NodeState) FreeMilliGPU() int64 {
	var s int64
	for _, d := range n.devices() {
		s = arith.Add(s, d.FreeMilliGPU)
	}
	return s
}

// Validate reports the first field of n that is out of range, wrapping
// ErrInvalidNode: more than MaxDevices devices, a negative capacity, or a
// free amount outside [0, capacity]. Negative FreeMilliCPU or FreeMemory are
// valid (an over-committed node); nothing fits there.
func (n *NodeState) Validate() error {
	if len(n.Devices) > MaxDevices {
		return fmt.Errorf("%w: len(Devices) = %d, want <= %d", ErrInvalidNode, len(n.Devices), MaxDevices)
	}
	for i, d := range n.Devices {
		if d.CapacityMilliGPU < 0 {
			return fmt.Errorf("%w: Devices[%d].CapacityMilliGPU = %d, want >= 0", ErrInvalidNode, i, d.CapacityMilliGPU)
		}
		if d.FreeMilliGPU < 0 || d.FreeMilliGPU > d.CapacityMilliGPU {
			return fmt.Errorf("%w: Devices[%d].FreeMilliGPU = %d, want 0..%d", ErrInvalidNode, i, d.FreeMilliGPU, d.CapacityMilliGPU)
		}
	}
	return nil
}

// DeviceSet is a set of device indexes in [0, MaxDevices), one bit each
// (snapshot.DeviceSet).
type DeviceSet = snapshot.DeviceSet

// hosts reports whether device d can take one device's share of task t.
func hosts(d *Device, t *Task) bool { return d.FreeMilliGPU >= t.MilliGPU && t.Allows(d.Model) }

// usableDevices counts the devices of n that can take one share of t.
func usableDevices(n *NodeState, t *Task) int {
	c := 0
	devs := n.devices()
	for i := range devs {
		if hosts(&devs[i], t) {
			c++
		}
	}
	return c
}

// fitsCPUMemory is upstream's NodeResourcesFit for CPU and memory, the
// library's one fit check (internal/fit) on the node's free amounts: a
// request of 0 always fits, even on an over-committed node.
func fitsCPUMemory(n *NodeState, t *Task) bool {
	return !fit.Short(t.MilliCPU, n.FreeMilliCPU, 0) && !fit.Short(t.Memory, n.FreeMemory, 0)
}

// Fits reports whether task t can be placed on node n: enough free CPU and
// memory (a zero request always fits), and for a GPU task at least GPUCount devices of an allowed model
// with FreeMilliGPU >= MilliGPU each. This is upstream's NodeResourcesFit for
// CPU and memory plus the simulator's Open-Gpu-Share filter (see the
// package doc). O(devices); allocates nothing.
func Fits(n *NodeState, t Task) bool {
	if !fitsCPUMemory(n, &t) {
		return false
	}
	if !t.UsesGPU() {
		return true
	}
	return usableDevices(n, &t) >= t.GPUCount
}

// ExclusiveDevices returns the lowest-index devices of n that can each take
// a share of t, GPUCount of them — the simulator's AllocateExclusiveGpuId
// for whole-GPU tasks (with standard devices, the lowest-index idle GPUs).
// It returns the empty set for CPU-only tasks and ok = false when n has too
// few such devices. O(devices).
func ExclusiveDevices(n *NodeState, t Task) (s DeviceSet, ok bool) {
	if !t.UsesGPU() {
		return 0, true
	}
	need := t.GPUCount
	devs := n.devices()
	for i := range devs {
		if need == 0 {
			break
		}
		if hosts(&devs[i], &t) {
			s = s.With(i)
			need--
		}
	}
	return s, need == 0
}

// BestFitDevices is the simulator's default device choice ("best",
// allocateGpuIdBasedOnBestFit): a shared task goes on the device with the
// least free milli-GPU that still fits it (lowest index on ties); other
// tasks get ExclusiveDevices. ok is false when nothing fits. O(devices).
func BestFitDevices(n *NodeState, t Task) (DeviceSet, bool) {
	if !t.Shared() {
		return ExclusiveDevices(n, t)
	}
	best := -1
	devs := n.devices()
	for i := range devs {
		if hosts(&devs[i], &t) && (best < 0 || devs[i].FreeMilliGPU < devs[best].FreeMilliGPU) {
			best = i
		}
	}
	if best < 0 {
		return 0, false
	}
	return DeviceSet(0).With(best), true
}

// Place commits task t to node n on devices devs: it subtracts MilliCPU and
// Memory, subtracts MilliGPU from each device in devs and adds t's class to
// ResidentClasses. devs must hold exactly GPUCount devices that can each take
// a share of t (empty for CPU-only tasks) and n must have the CPU and memory;
// otherwise Place returns an error wrapping ErrInvalidPlacement and leaves n
// unchanged. It writes n.Devices in place (callers that share the slice must
// copy it first). O(devices).
func (n *NodeState) Place(t Task, devs DeviceSet) error {
	if !fitsCPUMemory(n, &t) {
		return fmt.Errorf("%w: task needs %dm CPU and %d bytes of memory, node has %dm and %d",
			ErrInvalidPlacement, t.MilliCPU, t.Memory, n.FreeMilliCPU, n.FreeMemory)
	}
	want := 0
	if t.UsesGPU() {
		want = t.GPUCount
	}
	if devs.Len() != want {
		return fmt.Errorf("%w: %d devices given, task needs %d", ErrInvalidPlacement, devs.Len(), want)
	}
	devices := n.devices()
	for v := uint64(devs); v != 0; v &= v - 1 {
		i := bits.TrailingZeros64(v)
		if i >= len(devices) {
			return fmt.Errorf("%w: device %d does not exist (node has %d)", ErrInvalidPlacement, i, len(devices))
		}
		if !hosts(&devices[i], &t) {
			return fmt.Errorf("%w: device %d (%s, %dm free) cannot take %dm",
				ErrInvalidPlacement, i, devices[i].Model, devices[i].FreeMilliGPU, t.MilliGPU)
		}
	}
	n.FreeMilliCPU -= t.MilliCPU
	n.FreeMemory -= t.Memory
	for v := uint64(devs); v != 0; v &= v - 1 {
		devices[bits.TrailingZeros64(v)].FreeMilliGPU -= t.MilliGPU
	}
	if c, ok := t.Class(); ok {
		n.ResidentClasses = n.ResidentClasses.With(c)
	}
	return nil
}
