package snapshot

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/arith"
)

// Device-level GPU accounting, as plain counted data. A node carries
// devices (GPUs with a model and a capacity in milli-GPU, 1000 = one GPU);
// a pod asks for a share of one device or for whole devices, optionally
// restricted to models ([GPURequest]); a bound or held pod records which
// devices it uses ([PodInfo.Devices]), and NodeInfo subtracts its share
// from each. The snapshot never chooses devices: the choice is an input (a
// recorded choice the [DeviceDecoder] reads, [PodInfo.WithDevices]) made by
// whoever places the pod — the framework's cycle asks a [DeviceChooser]
// (package gpushare implements the FGD paper's policies as choosers), and
// the reservation ledger takes one as an option. A GPU pod whose devices
// are unknown is counted in Requested like any pod but charged to no
// device (see [NodeInfo.Devices]).
//
// Nor does the snapshot know any vendor's or trace's annotation schema:
// a [DeviceDecoder] reads devices from the objects. The default,
// [NvidiaDevices], reads the Kubernetes device plugin's nvidia.com/gpu
// (whole devices); package snapshot/load/openb reads the Alibaba GPU
// sharing scheduler's schema the openb trace uses (shares of a device,
// allowed models, recorded device indexes).
const (
	// ResourceNvidiaGPU (node allocatable, pod request) counts whole GPUs:
	// [NvidiaDevices] gives a node that many devices and a pod requesting
	// it a whole-device demand.
	//
	// The device model holds at most MaxDevices (64) devices per
	// node and per pod. Beyond that, GPUs are counted as the ordinary
	// extended resource upstream counts them as ("scalar accounting"): a
	// node with more than 64 GPUs (as GPU time-slicing advertises, e.g. 8
	// GPUs x 16 replicas = 128) has no devices, and a pod requesting more
	// than 64 nvidia.com/gpu has no device demand; NodeResourcesFit checks
	// the count against the node's allocatable, and the GPUDevices filter
	// lets whole-GPU nvidia.com/gpu demands through to such a node
	// ([NodeInfo.ScalarGPUDemand]).
	ResourceNvidiaGPU v1.ResourceName = "nvidia.com/gpu"
	// LabelNvidiaGPUModel is the model label GPU feature discovery sets.
	LabelNvidiaGPUModel = "nvidia.com/gpu.product"
)

const (
	// MilliPerDevice is the capacity of one whole GPU in milli-GPU.
	MilliPerDevice int64 = 1000
	// MaxDevices is the largest number of devices of one node (and of one
	// pod's demand) the device model holds; see ResourceNvidiaGPU for
	// nodes with more.
	MaxDevices = 64
)

// Device is one GPU of a node: plain counted data.
type Device struct {
	// Model is the GPU model, e.g. "V100M16" (from a node label, read by
	// the DeviceDecoder).
	Model string
	// CapacityMilliGPU is the device's capacity in milli-GPU, normally
	// MilliPerDevice. A device of capacity 0 never hosts anything.
	CapacityMilliGPU int64
	// FreeMilliGPU is the unallocated part in milli-GPU: capacity minus
	// the shares of the pods charged to the device. In a NodeInfo it can
	// fall below 0 when an informer reports pods that over-commit the
	// device.
	FreeMilliGPU int64
}

// Idle reports whether nothing is allocated on d and it has capacity: a
// "fully free" GPU in the FGD simulator's words.
func (d Device) Idle() bool { return d.CapacityMilliGPU > 0 && d.FreeMilliGPU == d.CapacityMilliGPU }

// DeviceSet is a set of device indexes in [0, MaxDevices), one bit each.
// The zero DeviceSet is empty.
type DeviceSet uint64

// Has reports whether device i is in s.
func (s DeviceSet) Has(i int) bool { return i >= 0 && i < MaxDevices && s&(1<<uint(i)) != 0 }

// With returns s ∪ {i}; i outside [0, MaxDevices) is ignored.
func (s DeviceSet) With(i int) DeviceSet {
	if i < 0 || i >= MaxDevices {
		return s
	}
	return s | 1<<uint(i)
}

// Len returns the number of devices in s.
func (s DeviceSet) Len() int { return bits.OnesCount64(uint64(s)) }

// AppendIndexes appends the indexes in s, ascending, to dst and returns it.
// It allocates only if dst lacks capacity.
func (s DeviceSet) AppendIndexes(dst []int) []int {
	for v := uint64(s); v != 0; v &= v - 1 {
		dst = append(dst, bits.TrailingZeros64(v))
	}
	return dst
}

// String lists the indexes in s, ascending, as "{0,2,5}" ("{}" when
// empty); for messages and %v. O(devices in s); allocates.
func (s DeviceSet) String() string {
	b := make([]byte, 0, 2+3*s.Len())
	b = append(b, '{')
	for i, d := range s.AppendIndexes(make([]int, 0, MaxDevices)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	return string(append(b, '}'))
}

// DeviceChooser picks the devices a GPU pod uses on a node: the caller's
// device policy, passed explicitly wherever a pod without recorded
// devices is placed (framework.Config, reserve.WithDeviceChooser; the
// gpushare policies implement it). ok is false when the pod's demand does
// not fit the node's devices; devices then is meaningless. A chooser reads
// pod and node only (both read-only) and must return GPU().Count devices
// of the node.
type DeviceChooser interface {
	ChooseDevices(pod *PodInfo, node *NodeInfo) (devices DeviceSet, ok bool)
}

// GPURequest is a pod's device demand.
type GPURequest struct {
	// Count is the number of distinct devices needed (0: none).
	Count int
	// MilliGPU is the share needed on each of them, in (0, 1000].
	MilliGPU int64
	// Models are the allowed device models; empty means any.
	Models []string
	// Whole reports a demand read from an nvidia.com/gpu request (whole
	// devices, also counted as that extended resource) rather than from a
	// share schema.
	Whole bool
	// CountResource and MilliResource name the resources a device
	// shortfall is reported as (Insufficient.Resource): the device count
	// (the GPUDevices filter's reasons) and the milli-GPU total (the
	// reservation ledger's); set by the decoder, "" for none.
	CountResource, MilliResource v1.ResourceName
}

// DeviceDecoder reads GPU devices from Kubernetes objects: how a node
// advertises its devices and how a pod asks for them is a vendor's or a
// scheduler's schema, not cluster state, so the snapshot takes it as an
// input. A Cache decodes with the decoder it was made with
// ([NewCacheWithDevices]; [NvidiaDevices] by default), and its snapshots
// and forks with the same ([Snapshot.DeviceDecoder]); a PodInfo built
// outside them names its decoder ([DecodePodInfo]). Implementations must be
// safe for concurrent use and deterministic (the same object gives the same
// answer).
type DeviceDecoder interface {
	// NodeDevices returns the node's devices, all free, in device index
	// order; nil for none. allocatable is the node's parsed
	// status.allocatable (read-only). At most MaxDevices devices: a node
	// with more GPUs than that has none (scalar accounting). Called once
	// per node object; it may allocate.
	NodeDevices(node *v1.Node, allocatable *Vector) []Device
	// PodDevices returns the pod's device demand (Count 0: none), the
	// devices it records using and whether it records any (a bound pod's
	// recorded choice; recorded implies devices.Len() == demand.Count).
	// requested is the pod's effective request vector (read-only).
	// Errors name the pod and field and wrap ErrInvalidObject.
	PodDevices(pod *v1.Pod, requested *Vector) (demand GPURequest, devices DeviceSet, recorded bool, err error)
}

// NvidiaDevices is the default DeviceDecoder, the Kubernetes device
// plugin's mapping: a node's allocatable nvidia.com/gpu gives that many
// devices of capacity MilliPerDevice and of the model in its
// nvidia.com/gpu.product label; a pod's nvidia.com/gpu request is a
// whole-device demand (Whole, any model) with no recorded devices (the
// kubelet's device plugin picks them). Above MaxDevices, neither: scalar
// accounting (see ResourceNvidiaGPU). Its demands name nvidia.com/gpu as
// CountResource and no MilliResource.
var NvidiaDevices DeviceDecoder = nvidiaDecoder{}

type nvidiaDecoder struct{}

// NodeDevices: see NvidiaDevices. O(devices); one allocation.
func (nvidiaDecoder) NodeDevices(node *v1.Node, alloc *Vector) []Device {
	id, ok := LookupResource(ResourceNvidiaGPU)
	if !ok {
		return nil
	}
	return uniformDevices(alloc.Get(id), MilliPerDevice, node.Labels[LabelNvidiaGPUModel])
}

// PodDevices: see NvidiaDevices. O(1); allocates nothing.
func (nvidiaDecoder) PodDevices(_ *v1.Pod, req *Vector) (GPURequest, DeviceSet, bool, error) {
	return nvidiaRequest(req), 0, false, nil
}

// nvidiaRequest returns the whole-device demand of an nvidia.com/gpu
// request in req (the pod's effective requests): Count = the request,
// MilliGPU = MilliPerDevice, Whole, CountResource nvidia.com/gpu, no
// MilliResource; the zero GPURequest when the request is
// absent, 0 or above MaxDevices (scalar accounting). O(1).
func nvidiaRequest(req *Vector) GPURequest {
	id, ok := LookupResource(ResourceNvidiaGPU)
	if !ok || req.Get(id) <= 0 || req.Get(id) > MaxDevices {
		return GPURequest{}
	}
	return GPURequest{Count: int(req.Get(id)), MilliGPU: MilliPerDevice, Whole: true, CountResource: ResourceNvidiaGPU}
}

// uniformDevices returns count devices of model, each of capacity
// perDevice milli-GPU (clamped to >= 0) and all free: nil when count is
// not in [1, MaxDevices]. O(count), one allocation.
func uniformDevices(count, perDevice int64, model string) []Device {
	if count <= 0 || count > MaxDevices {
		return nil
	}
	perDevice = max(0, perDevice)
	devs := make([]Device, count)
	for i := range devs {
		devs[i] = Device{Model: model, CapacityMilliGPU: perDevice, FreeMilliGPU: perDevice}
	}
	return devs
}

// GPU returns the pod's device demand (Count 0 for none). Read-only.
func (p *PodInfo) GPU() *GPURequest { return &p.shape.gpu }

// Devices returns the devices the pod uses on its node and whether they
// are known (recorded on the pod, as the DeviceDecoder read them, or set by
// [PodInfo.WithDevices]).
func (p *PodInfo) Devices() (DeviceSet, bool) { return p.devices, p.assigned }

// WithDevices returns a copy of p that uses the given devices; O(1), one
// allocation. p is unchanged.
func (p *PodInfo) WithDevices(devs DeviceSet) *PodInfo {
	c := *p
	c.devices, c.assigned = devs, true
	return &c
}

// ScalarGPUDemand reports whether g is a demand the node serves by scalar
// accounting alone: g is a whole-GPU nvidia.com/gpu request
// ([GPURequest].Whole), the node has more nvidia.com/gpu than the device
// model holds (so no devices, see [ResourceNvidiaGPU]), and its
// nvidia.com/gpu.product label is one of g.Models (or g names none).
// Whether the count fits is NodeResourcesFit's question (the extended
// resource). O(models), allocates nothing.
func (n *NodeInfo) ScalarGPUDemand(g *GPURequest) bool {
	if !g.Whole || len(n.devices) > 0 {
		return false
	}
	id, _ := LookupResource(ResourceNvidiaGPU)
	if n.allocatable.Get(id) <= MaxDevices {
		return false
	}
	return len(g.Models) == 0 || slices.Contains(g.Models, n.node.Labels[LabelNvidiaGPUModel])
}

// Devices returns the node's GPUs with their free milli-GPU, in device
// index order (nil for a node without devices): capacity minus the shares
// of the pods whose devices are recorded ([PodInfo.Devices]); a GPU pod
// without recorded devices is counted in Requested but charged to no
// device. Read-only.
func (n *NodeInfo) Devices() []Device { return n.devices }

// checkDevices returns an error (wrapping [ErrInvalidObject], naming the
// pod, the device and the node) when p records a device n does not have:
// charging it would lose the pod's share silently. O(1).
func (n *NodeInfo) checkDevices(p *PodInfo) error { return CheckRecordedDevices(p, n) }

// CheckRecordedDevices returns an error wrapping [ErrInvalidObject],
// naming the pod, the device and the node, when p, a GPU pod recording its
// devices ([PodInfo.Devices]), records one that n does not have; nil
// otherwise (and for a nil n). The Cache and reserve.Ledger call it before
// they count a bound pod on a known node. O(1), no allocation unless it
// fails.
func CheckRecordedDevices(p *PodInfo, n *NodeInfo) error {
	if n == nil || p.shape.gpu.Count == 0 || !p.assigned || p.devices == 0 {
		return nil
	}
	if top := 63 - bits.LeadingZeros64(uint64(p.devices)); top >= len(n.devices) {
		return fmt.Errorf("pod %s: records GPU device %d, node %s has %d: %w", p.key, top, n.name, len(n.devices), ErrInvalidObject)
	}
	return nil
}

// chargeDevices charges (sign +1) or releases (-1) the pod's device
// shares: the devices the pod records (PodInfo.Devices). A GPU pod without
// recorded devices is charged to none: the snapshot makes no device choice.
func (n *NodeInfo) chargeDevices(p *PodInfo, sign int64) {
	if p.shape.gpu.Count == 0 || !p.assigned || len(n.devices) == 0 {
		return
	}
	for v := uint64(p.devices); v != 0; v &= v - 1 {
		i := bits.TrailingZeros64(v)
		if i < len(n.devices) {
			n.devices[i].FreeMilliGPU = arith.Sub(n.devices[i].FreeMilliGPU, sign*p.shape.gpu.MilliGPU)
		}
	}
}
