package snapshot

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/arith"
)

// Device-level GPU accounting, as plain counted data. A node carries
// devices (GPUs with a model and a capacity in milli-GPU, 1000 = one GPU);
// a pod asks for a share of one device or for whole devices, optionally
// restricted to models; a bound or held pod records which devices it uses
// ([PodInfo.Devices]), and NodeInfo subtracts its share from each. The
// snapshot never chooses devices: the choice is an input (the gpu-index
// annotation, [PodInfo.WithDevices]) made by whoever places the pod — the
// framework's cycle asks a [DeviceChooser] (package gpushare implements the
// FGD paper's policies as choosers), and the reservation ledger takes one
// as an option. A GPU pod whose devices are unknown is counted in
// Requested like any pod but charged to no device (see [NodeInfo.Devices]).
// The Kubernetes mapping is the one of the Alibaba GPU sharing scheduler
// used by the openb trace (see
// ../shared/data/alibaba-clusterdata-gpu-v2023/SOURCE.md), with plain
// nvidia.com/gpu whole-device requests as a fallback.
const (
	// ResourceGPUCount (node allocatable) is the number of GPUs.
	ResourceGPUCount v1.ResourceName = "alibabacloud.com/gpu-count"
	// ResourceGPUMilli (node allocatable) is the node's total milli-GPU;
	// each device gets ResourceGPUMilli / ResourceGPUCount (1000 when the
	// key is absent; an explicit 0, or less than one milli-GPU per device,
	// gives devices of capacity 0, on which no GPU pod fits).
	ResourceGPUMilli v1.ResourceName = "alibabacloud.com/gpu-milli"
	// LabelGPUModel (node label) is the model of the node's GPUs.
	LabelGPUModel = "alibabacloud.com/gpu-card-model"
	// ResourceNvidiaGPU (node allocatable, pod request) counts whole GPUs
	// when the node has no ResourceGPUCount.
	//
	// The device model holds at most MaxDevices (64) devices per
	// node and per pod. Beyond that, GPUs are counted as the ordinary
	// extended resource upstream counts them as ("scalar accounting"): a
	// node with more than 64 GPUs (ResourceGPUCount or ResourceNvidiaGPU,
	// as GPU time-slicing advertises, e.g. 8 GPUs x 16 replicas = 128) has
	// no devices, and a pod requesting more than 64 nvidia.com/gpu has no
	// device demand; NodeResourcesFit checks the count against the node's
	// allocatable, and the GPUDevices filter lets whole-GPU nvidia.com/gpu
	// demands through to such a node. The pod annotations stay limited to
	// 64 devices (an error above).
	ResourceNvidiaGPU v1.ResourceName = "nvidia.com/gpu"
	// LabelNvidiaGPUModel is the model label GPU feature discovery sets.
	LabelNvidiaGPUModel = "nvidia.com/gpu.product"

	// AnnotationGPUCount (pod) is the number of devices the pod needs.
	AnnotationGPUCount = "alibabacloud.com/gpu-count"
	// AnnotationGPUMilli (pod) is the milli-GPU it needs on each device,
	// 1..1000 (values above 1000 are read as 1000, as the trace's tooling
	// clamps them).
	AnnotationGPUMilli = "alibabacloud.com/gpu-milli"
	// AnnotationGPUModel (pod) lists the allowed models, "|"-separated.
	AnnotationGPUModel = "alibabacloud.com/gpu-card-model"
	// AnnotationGPUIndex (bound pod) lists the device indexes it uses,
	// "-"-separated ("0-1-2").
	AnnotationGPUIndex = "alibabacloud.com/gpu-index"
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
	// Model is the GPU model, e.g. "V100M16" (the node label
	// LabelGPUModel or LabelNvidiaGPUModel).
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
	// devices, also counted as that extended resource) rather than from
	// the annotations.
	Whole bool
}

// parseGPURequest reads the pod's device demand from the annotations, or
// from an nvidia.com/gpu request. Errors name the pod and annotation.
func parseGPURequest(pod *v1.Pod, req *Vector) (GPURequest, DeviceSet, bool, error) {
	var g GPURequest
	a := pod.Annotations
	bad := func(key, val, why string) error {
		return fmt.Errorf("pod %s/%s: metadata.annotations[%s]=%q: %s: %w", pod.Namespace, pod.Name, key, val, why, ErrInvalidObject)
	}
	if s, ok := a[AnnotationGPUCount]; ok && s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return g, 0, false, bad(AnnotationGPUCount, s, "want a non-negative integer")
		}
		if n > MaxDevices {
			return g, 0, false, bad(AnnotationGPUCount, s, fmt.Sprintf("more than %d devices", MaxDevices))
		}
		g.Count = n
		g.MilliGPU = MilliPerDevice
		if m, ok := a[AnnotationGPUMilli]; ok && m != "" {
			v, err := strconv.ParseInt(strings.TrimSpace(m), 10, 64)
			if err != nil || v < 0 {
				return g, 0, false, bad(AnnotationGPUMilli, m, "want a non-negative integer")
			}
			g.MilliGPU = min(v, MilliPerDevice)
		}
		if g.Count == 0 || g.MilliGPU == 0 {
			g = GPURequest{}
		}
	} else if id, ok := LookupResource(ResourceNvidiaGPU); ok && req.Get(id) > 0 && req.Get(id) <= MaxDevices {
		// Above MaxDevices: no device demand, scalar accounting only.
		g.Count, g.MilliGPU = int(req.Get(id)), MilliPerDevice
		g.Whole = true
	}
	if g.Count > 0 {
		for _, m := range strings.Split(a[AnnotationGPUModel], "|") {
			if m = strings.TrimSpace(m); m != "" {
				g.Models = append(g.Models, m)
			}
		}
	}
	var set DeviceSet
	assigned := false
	if s, ok := a[AnnotationGPUIndex]; ok && s != "" && g.Count > 0 {
		for _, f := range strings.Split(s, "-") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 || i >= MaxDevices {
				return g, 0, false, bad(AnnotationGPUIndex, s, "want device indexes 0..63 separated by '-'")
			}
			set = set.With(i)
		}
		if set.Len() != g.Count {
			return g, 0, false, bad(AnnotationGPUIndex, s, fmt.Sprintf("names %d devices, the pod asks for %d", set.Len(), g.Count))
		}
		assigned = true
	}
	return g, set, assigned, nil
}

// GPU returns the pod's device demand (Count 0 for none). Read-only.
func (p *PodInfo) GPU() *GPURequest { return &p.gpu }

// Devices returns the devices the pod uses on its node and whether they
// are known (from the gpu-index annotation or [PodInfo.WithDevices]).
func (p *PodInfo) Devices() (DeviceSet, bool) { return p.devices, p.assigned }

// WithDevices returns a copy of p that uses the given devices; O(1), one
// allocation. p is unchanged.
func (p *PodInfo) WithDevices(devs DeviceSet) *PodInfo {
	c := *p
	c.devices, c.assigned = devs, true
	return &c
}

// parseDevices builds a node's devices from its allocatable and labels:
// nil for none, and for more than MaxDevices GPUs (scalar
// accounting, see ResourceNvidiaGPU). An explicit gpu-milli of 0 is zero
// capacity, not an absent value.
func parseDevices(node *v1.Node, alloc *Vector) []Device {
	count, perDevice, model := int64(0), MilliPerDevice, ""
	if id, ok := LookupResource(ResourceGPUCount); ok && alloc.Get(id) > 0 {
		count = alloc.Get(id)
		if _, set := node.Status.Allocatable[ResourceGPUMilli]; set {
			mid, _ := LookupResource(ResourceGPUMilli)
			perDevice = max(0, alloc.Get(mid)) / count
		}
		model = node.Labels[LabelGPUModel]
	} else if id, ok := LookupResource(ResourceNvidiaGPU); ok && alloc.Get(id) > 0 {
		count = alloc.Get(id)
		model = node.Labels[LabelNvidiaGPUModel]
	}
	if count == 0 || count > MaxDevices {
		return nil
	}
	devs := make([]Device, count)
	for i := range devs {
		devs[i] = Device{Model: model, CapacityMilliGPU: perDevice, FreeMilliGPU: perDevice}
	}
	return devs
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

// chargeDevices charges (sign +1) or releases (-1) the pod's device
// shares: the devices the pod records (PodInfo.Devices). A GPU pod without
// recorded devices is charged to none: the snapshot makes no device choice.
func (n *NodeInfo) chargeDevices(p *PodInfo, sign int64) {
	if p.gpu.Count == 0 || !p.assigned || len(n.devices) == 0 {
		return
	}
	for v := uint64(p.devices); v != 0; v &= v - 1 {
		i := bits.TrailingZeros64(v)
		if i < len(n.devices) {
			n.devices[i].FreeMilliGPU = arith.Sub(n.devices[i].FreeMilliGPU, sign*p.gpu.MilliGPU)
		}
	}
}
