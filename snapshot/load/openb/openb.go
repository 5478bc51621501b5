package openb

import (
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
)

const (
	// ResourceGPUCount (node allocatable) is the number of GPUs.
	ResourceGPUCount v1.ResourceName = "alibabacloud.com/gpu-count"
	// ResourceGPUMilli (node allocatable) is the node's total milli-GPU;
	// each device gets ResourceGPUMilli / ResourceGPUCount (1000 when the
	// key is absent; an explicit 0, or less than one milli-GPU per device,
	// gives devices of capacity 0, on which no GPU pod fits). A pod's
	// device shortfall in the reservation ledger names it
	// (GPURequest.MilliResource).
	ResourceGPUMilli v1.ResourceName = "alibabacloud.com/gpu-milli"
	// LabelGPUModel (node label) is the model of the node's GPUs.
	LabelGPUModel = "alibabacloud.com/gpu-card-model"

	// AnnotationGPUCount (pod) is the number of devices the pod needs,
	// 0..snapshot.MaxDevices.
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

// Devices is the snapshot.DeviceDecoder of this schema.
//
// A node with ResourceGPUCount > 0 has that many devices (none above
// snapshot.MaxDevices) of capacity ResourceGPUMilli / ResourceGPUCount
// (snapshot.MilliPerDevice without ResourceGPUMilli) and of the model in
// LabelGPUModel; any other node is decoded by snapshot.NvidiaDevices.
//
// A pod with a non-empty AnnotationGPUCount asks for that many devices
// with AnnotationGPUMilli each (snapshot.MilliPerDevice without it; a count
// or share of 0 is no demand); its shortfalls name ResourceGPUCount and
// ResourceGPUMilli. Without the annotation, its demand is
// snapshot.NvidiaDevices' (an nvidia.com/gpu request). Either demand is
// restricted to the models of AnnotationGPUModel and records the devices
// of AnnotationGPUIndex. Errors name the pod and annotation and wrap
// snapshot.ErrInvalidObject: a count or share that is not a non-negative
// integer, a count above snapshot.MaxDevices, an index outside
// [0, MaxDevices) or an index list whose length is not the count.
var Devices snapshot.DeviceDecoder = decoder{}

type decoder struct{}

// NodeDevices implements snapshot.DeviceDecoder; see Devices.
func (decoder) NodeDevices(node *v1.Node, alloc *snapshot.Vector) []snapshot.Device {
	id, ok := snapshot.LookupResource(ResourceGPUCount)
	if !ok || alloc.Get(id) <= 0 {
		return snapshot.NvidiaDevices.NodeDevices(node, alloc)
	}
	count, perDevice := alloc.Get(id), snapshot.MilliPerDevice
	if count > snapshot.MaxDevices {
		return nil
	}
	if _, set := node.Status.Allocatable[ResourceGPUMilli]; set {
		mid, _ := snapshot.LookupResource(ResourceGPUMilli)
		perDevice = max(0, alloc.Get(mid)) / count
	}
	devs := make([]snapshot.Device, count)
	for i := range devs {
		devs[i] = snapshot.Device{Model: node.Labels[LabelGPUModel], CapacityMilliGPU: perDevice, FreeMilliGPU: perDevice}
	}
	return devs
}

// PodDevices implements snapshot.DeviceDecoder; see Devices.
func (decoder) PodDevices(pod *v1.Pod, req *snapshot.Vector) (snapshot.GPURequest, snapshot.DeviceSet, bool, error) {
	var g snapshot.GPURequest
	a := pod.Annotations
	bad := func(key, val, why string) error {
		return fmt.Errorf("pod %s/%s: metadata.annotations[%s]=%q: %s: %w", pod.Namespace, pod.Name, key, val, why, snapshot.ErrInvalidObject)
	}
	if s, ok := a[AnnotationGPUCount]; ok && s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return g, 0, false, bad(AnnotationGPUCount, s, "want a non-negative integer")
		}
		if n > snapshot.MaxDevices {
			return g, 0, false, bad(AnnotationGPUCount, s, fmt.Sprintf("more than %d devices", snapshot.MaxDevices))
		}
		g.Count = n
		g.MilliGPU = snapshot.MilliPerDevice
		if m, ok := a[AnnotationGPUMilli]; ok && m != "" {
			v, err := strconv.ParseInt(strings.TrimSpace(m), 10, 64)
			if err != nil || v < 0 {
				return g, 0, false, bad(AnnotationGPUMilli, m, "want a non-negative integer")
			}
			g.MilliGPU = min(v, snapshot.MilliPerDevice)
		}
		if g.Count == 0 || g.MilliGPU == 0 {
			g = snapshot.GPURequest{}
		} else {
			g.CountResource, g.MilliResource = ResourceGPUCount, ResourceGPUMilli
		}
	} else {
		g, _, _, _ = snapshot.NvidiaDevices.PodDevices(pod, req)
		if g.Count > 0 {
			g.MilliResource = ResourceGPUMilli
		}
	}
	if g.Count > 0 {
		for _, m := range strings.Split(a[AnnotationGPUModel], "|") {
			if m = strings.TrimSpace(m); m != "" {
				g.Models = append(g.Models, m)
			}
		}
	}
	var set snapshot.DeviceSet
	assigned := false
	if s, ok := a[AnnotationGPUIndex]; ok && s != "" && g.Count > 0 {
		for _, f := range strings.Split(s, "-") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 || i >= snapshot.MaxDevices {
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

// MustPodInfo is snapshot.DecodePodInfo(pod, Devices) that panics on
// error; for tests and examples.
func MustPodInfo(pod *v1.Pod) *snapshot.PodInfo {
	pi, err := snapshot.DecodePodInfo(pod, Devices)
	if err != nil {
		panic(err)
	}
	return pi
}
