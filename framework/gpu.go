package framework

import (
	"fmt"
	"slices"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// GPUDevicesName is the name of the [NewGPUDevices] filter.
const GPUDevicesName = "GPUDevices"

// gpuDevicesPlugin is the filter [NewGPUDevices] returns.
type gpuDevicesPlugin struct{}

// NewGPUDevices returns the GPUDevices filter; it has no arguments and allocates
// nothing.
//
// GPUDevices is the device-level filter for GPU sharing (no upstream
// equivalent: upstream counts GPUs as an opaque integer): a pod asking for
// N devices (or a milli-GPU share of one, snapshot.GPURequest) fits
// a node with at least N devices of an allowed model, each with that much
// free milli-GPU. It is the device half of the FGD simulator's
// Open-Gpu-Share filter (gpushare.Fits; NodeResourcesFit does cpu and
// memory). Pods without a device demand skip it. Append it to
// [DefaultFilters] for GPU-sharing clusters.
//
// A node with more nvidia.com/gpu than the device model holds (more than
// snapshot.MaxDevices, e.g. a GPU time-slicing node) has no devices: its
// GPUs are scalar-accounted (see [snapshot.ResourceNvidiaGPU]). A pod whose
// demand is a whole-GPU nvidia.com/gpu request ([snapshot.GPURequest].Whole)
// passes this filter there when the node's nvidia.com/gpu.product label is
// an allowed model (or the pod names none); NodeResourcesFit checks the
// count.
//
// Reasons: CodeCustom with Text "Insufficient GPU devices" (not enough free
// devices of an allowed model) or "node(s) had no GPU of an allowed model".
// Per node: O(1) from the node's FilterBlock for pods needing at most 4
// devices, O(devices) for more; allocates nothing.
func NewGPUDevices() Filter { return gpuDevicesPlugin{} }

var _ Filter = gpuDevicesPlugin{}

// Name returns GPUDevicesName.
func (gpuDevicesPlugin) Name() string { return GPUDevicesName }

// PreFilter skips pods that ask for no device and looks the pod's models
// up once (their numbers in the nodes' FilterBlocks).
func (gpuDevicesPlugin) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	g := pod.GPU()
	if g.Count == 0 {
		return PreFilterResult{}, nil
	}
	f := &gpuFilter{t: gpushare.TaskOf(pod), g: g, nvidia: snapshot.NoResource}
	// A shortfall counts devices: the reason names the decoder's
	// device-count resource (NoResource when no node declares it).
	f.devices, _ = snapshot.LookupResource(g.CountResource)
	if g.Whole {
		f.nvidia, _ = snapshot.LookupResource(snapshot.ResourceNvidiaGPU)
	}
	for _, m := range f.t.Models {
		if m == "" {
			continue
		}
		f.constrained = true
		// A model no node has matches nothing: leave it out.
		if id, ok := layout.GPUModelID(m); ok {
			f.models = append(f.models, id)
		}
	}
	return PreFilterResult{Filter: f}, nil
}

type gpuFilter struct {
	// devices is the resource a device shortfall names: the demand's
	// CountResource (nvidia.com/gpu for whole GPUs).
	devices snapshot.ResourceID
	t       gpushare.Task
	// constrained: the pod names at least one model; models are the ids
	// of those some node has (gpushare.Task.Allows by id: every device of
	// a node has the node's one model).
	constrained bool
	models      []int32
	g           *snapshot.GPURequest // the pod's, read-only
	// nvidia is nvidia.com/gpu's ID for a whole-GPU nvidia.com/gpu
	// demand, else NoResource: a node without devices is looked at
	// further only when it has more of it than devices can model.
	nvidia snapshot.ResourceID
}

// allowed reports whether the node's devices are of a model the pod
// allows (false for a node without devices).
func (f *gpuFilter) allowed(fb *layout.FilterBlock) bool {
	return fb.NumDevices > 0 && (!f.constrained || slices.Contains(f.models, fb.GPUModel))
}

// fits reports whether the node has GPUCount devices of an allowed model
// with MilliGPU free each: from the FilterBlock when the pod needs at most
// len(GPUFree) devices, else by walking the devices.
func (f *gpuFilter) fits(node *snapshot.NodeInfo) bool {
	fb := nodeview.FilterBlock(node)
	if !f.allowed(fb) {
		return fb.NumDevices == 0 && f.nvidia != snapshot.NoResource &&
			node.Allocatable().Get(f.nvidia) > snapshot.MaxDevices && node.ScalarGPUDemand(f.g)
	}
	if k := f.t.GPUCount; k <= len(fb.GPUFree) && f.t.MilliGPU <= 1<<16-1 {
		return int64(fb.GPUFree[k-1]) >= f.t.MilliGPU
	}
	return f.usable(node) >= f.t.GPUCount
}

// usable counts the node's devices with MilliGPU free (all of a model
// the pod allows, or none).
func (f *gpuFilter) usable(node *snapshot.NodeInfo) int {
	n := 0
	for _, d := range node.Devices() {
		if d.FreeMilliGPU >= f.t.MilliGPU {
			n++
		}
	}
	return n
}

// Filter checks one node. It reads the node's FilterBlock only, unless
// the pod needs more devices than the block summarises or the node fails.
func (f *gpuFilter) Filter(node *snapshot.NodeInfo, reasons []Reason) []Reason {
	if f.fits(node) {
		return reasons
	}
	fb := nodeview.FilterBlock(node)
	usable, text := 0, "node(s) had no GPU of an allowed model"
	if f.allowed(fb) {
		text = "Insufficient GPU devices"
		if k := f.t.GPUCount; k <= len(fb.GPUFree) && f.t.MilliGPU <= 1<<16-1 {
			// Fewer than k devices are usable: all among the freest k-1.
			for _, free := range fb.GPUFree[:k-1] {
				if int64(free) >= f.t.MilliGPU {
					usable++
				}
			}
		} else {
			usable = f.usable(node)
		}
	}
	numDevs := int(fb.NumDevices)
	return append(reasons, Reason{Plugin: GPUDevicesName, Node: node.Name(), Code: CodeCustom, Text: text,
		Insufficient: snapshot.Insufficient{Resource: f.devices, Requested: int64(f.t.GPUCount), Used: int64(numDevs - usable), Capacity: int64(numDevs)},
		Unresolvable: numDevs < f.t.GPUCount})
}

// deviceChooser returns the chooser of a Scheduler: the profile's first
// scorer that is a snapshot.DeviceChooser, else fallback (nil for none).
func deviceChooser(p *score.Profile, fallback snapshot.DeviceChooser) snapshot.DeviceChooser {
	for _, w := range p.Scorers() {
		if dc, ok := w.Scorer.(snapshot.DeviceChooser); ok {
			return dc
		}
	}
	return fallback
}

// chooseDevices picks the devices a GPU pod uses on the chosen node with
// dc (see Config.DeviceChooser). It returns the pod unchanged when it asks
// for no device, the node has none, or dc is nil and the demand is a
// whole-GPU nvidia.com/gpu request; with dc nil an annotated demand is an
// error.
func chooseDevices(dc snapshot.DeviceChooser, pod *snapshot.PodInfo, node *snapshot.NodeInfo) (*snapshot.PodInfo, error) {
	if pod.GPU().Count == 0 || len(node.Devices()) == 0 {
		return pod, nil
	}
	if dc == nil && pod.GPU().Whole {
		// Whole GPUs of an nvidia.com/gpu request: the kubelet's device
		// plugin picks them; NodeResourcesFit counts them.
		return pod, nil
	}
	if dc == nil {
		return nil, fmt.Errorf("framework: pod %s asks for GPU devices on node %s and no device chooser is configured (Config.DeviceChooser, e.g. gpushare.BestFit{}, or a scorer that is a snapshot.DeviceChooser): %w", pod.Key(), node.Name(), ErrInvalidConfig)
	}
	devs, ok := dc.ChooseDevices(pod, node)
	name := fmt.Sprintf("%T", dc)
	if n, isNamed := dc.(interface{ Name() string }); isNamed {
		name = n.Name()
	}
	if !ok {
		// The filters let through a node whose devices cannot take the
		// pod: the profile lacks the GPUDevices filter.
		return nil, fmt.Errorf("framework: %s found no devices for pod %s on node %s (add the GPUDevices filter): %w", name, pod.Key(), node.Name(), ErrInvalidConfig)
	}
	// A chooser that breaks its contract would corrupt the device
	// accounting silently: check its answer.
	if devs.Len() != pod.GPU().Count || uint64(devs)>>uint(len(node.Devices())) != 0 {
		return nil, fmt.Errorf("framework: device chooser %s chose devices %v for pod %s on node %s, which has %d devices; the pod asks for %d: %w",
			name, devs.AppendIndexes(nil), pod.Key(), node.Name(), len(node.Devices()), pod.GPU().Count, ErrInvalidConfig)
	}
	return pod.WithDevices(devs), nil
}
