package snapshot

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/internal/arith"
)

// Device-level GPU accounting. A node carries devices (GPUs with a model
// and a capacity in milli-GPU, 1000 = one GPU); a pod asks for a share of
// one device or for whole devices, optionally restricted to models; a bound
// or held pod records which devices it uses, and NodeInfo subtracts its
// share from each. The Kubernetes mapping is the one of the Alibaba GPU
// sharing scheduler used by the openb trace (see
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
	// The device model holds at most gpushare.MaxDevices (64) devices per
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
func parseGPURequest(pod *v1.Pod, req *Vector) (GPURequest, gpushare.DeviceSet, bool, error) {
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
		if n > gpushare.MaxDevices {
			return g, 0, false, bad(AnnotationGPUCount, s, fmt.Sprintf("more than %d devices", gpushare.MaxDevices))
		}
		g.Count = n
		g.MilliGPU = gpushare.MilliPerDevice
		if m, ok := a[AnnotationGPUMilli]; ok && m != "" {
			v, err := strconv.ParseInt(strings.TrimSpace(m), 10, 64)
			if err != nil || v < 0 {
				return g, 0, false, bad(AnnotationGPUMilli, m, "want a non-negative integer")
			}
			g.MilliGPU = min(v, gpushare.MilliPerDevice)
		}
		if g.Count == 0 || g.MilliGPU == 0 {
			g = GPURequest{}
		}
	} else if id, ok := LookupResource(ResourceNvidiaGPU); ok && req.Get(id) > 0 && req.Get(id) <= gpushare.MaxDevices {
		// Above MaxDevices: no device demand, scalar accounting only.
		g.Count, g.MilliGPU = int(req.Get(id)), gpushare.MilliPerDevice
		g.Whole = true
	}
	if g.Count > 0 {
		for _, m := range strings.Split(a[AnnotationGPUModel], "|") {
			if m = strings.TrimSpace(m); m != "" {
				g.Models = append(g.Models, m)
			}
		}
	}
	var set gpushare.DeviceSet
	assigned := false
	if s, ok := a[AnnotationGPUIndex]; ok && s != "" && g.Count > 0 {
		for _, f := range strings.Split(s, "-") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 || i >= gpushare.MaxDevices {
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
// are known (from the gpu-index annotation, [PodInfo.WithDevices], or chosen
// when the pod was added to a node without one).
func (p *PodInfo) Devices() (gpushare.DeviceSet, bool) { return p.devices, p.assigned }

// WithDevices returns a copy of p that uses the given devices; O(1), one
// allocation. p is unchanged.
func (p *PodInfo) WithDevices(devs gpushare.DeviceSet) *PodInfo {
	c := *p
	c.devices, c.assigned = devs, true
	return &c
}

// Task returns the pod as the gpushare policies see it: requested milli-CPU
// and memory and the device demand.
func (p *PodInfo) Task() gpushare.Task {
	return gpushare.Task{
		MilliCPU: p.req.Requested.MilliCPU(),
		Memory:   p.req.Requested.Memory(),
		GPUCount: p.gpu.Count,
		MilliGPU: p.gpu.MilliGPU,
		Models:   p.gpu.Models,
	}
}

// parseDevices builds a node's devices from its allocatable and labels:
// nil for none, and for more than gpushare.MaxDevices GPUs (scalar
// accounting, see ResourceNvidiaGPU). An explicit gpu-milli of 0 is zero
// capacity, not an absent value.
func parseDevices(node *v1.Node, alloc *Vector) []gpushare.Device {
	count, perDevice, model := int64(0), gpushare.MilliPerDevice, ""
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
	if count == 0 || count > gpushare.MaxDevices {
		return nil
	}
	devs := make([]gpushare.Device, count)
	for i := range devs {
		devs[i] = gpushare.Device{Model: model, CapacityMilliGPU: perDevice, FreeMilliGPU: perDevice}
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
	if n.allocatable.Get(id) <= gpushare.MaxDevices {
		return false
	}
	return len(g.Models) == 0 || slices.Contains(g.Models, n.node.Labels[LabelNvidiaGPUModel])
}

// Devices returns the node's GPUs with their free milli-GPU, in device
// index order (nil for a node without devices). Read-only: copy before
// calling gpushare.NodeState.Place on a state built from it.
func (n *NodeInfo) Devices() []gpushare.Device { return n.devices }

// GPUState returns the node as the gpushare policies see it: free
// milli-CPU and memory (never negative), its devices and the classes of the
// GPU pods on it. Devices is appended to buf[:0] (pass a reused buffer to
// avoid allocating), so Place on the result does not change the NodeInfo.
func (n *NodeInfo) GPUState(buf []gpushare.Device) gpushare.NodeState {
	var cs gpushare.ClassSet
	for c, k := range n.classCount {
		if k > 0 {
			cs = cs.With(gpushare.Class(c))
		}
	}
	buf = append(buf[:0], n.devices...)
	for i := range buf {
		buf[i].FreeMilliGPU = max(0, buf[i].FreeMilliGPU)
	}
	return gpushare.NodeState{
		FreeMilliCPU:    n.Free(CPU),
		FreeMemory:      n.Free(Memory),
		Devices:         buf,
		ResidentClasses: cs,
	}
}

// chargeDevices charges (sign +1) or releases (-1) the pod's device shares.
// A GPU pod without known devices is given the simulator's best-fit choice
// (gpushare.BestFitDevices) on the node's current free shares; the returned
// PodInfo records it.
func (n *NodeInfo) chargeDevices(p *PodInfo, sign int64) *PodInfo {
	if p.gpu.Count == 0 || len(n.devices) == 0 {
		return p
	}
	if sign > 0 && !p.assigned {
		st := n.GPUState(nil)
		set, ok := gpushare.BestFitDevices(&st, p.Task())
		if !ok {
			// Over-committed by the informer: take the first devices.
			set = 0
			for i := 0; i < len(n.devices) && set.Len() < p.gpu.Count; i++ {
				set = set.With(i)
			}
		}
		p = p.WithDevices(set)
	}
	for v := uint64(p.devices); v != 0; v &= v - 1 {
		i := bits.TrailingZeros64(v)
		if i < len(n.devices) {
			n.devices[i].FreeMilliGPU = arith.Sub(n.devices[i].FreeMilliGPU, sign*p.gpu.MilliGPU)
		}
	}
	if c, ok := p.Task().Class(); ok {
		if int(c) >= len(n.classCount) {
			cc := make([]int32, int(c)+1)
			copy(cc, n.classCount)
			n.classCount = cc
		}
		n.classCount[c] += int32(sign)
	}
	return p
}
