package framework

import (
	"fmt"
	"slices"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// GPUDevicesName is the name of the [GPUDevices] filter.
const GPUDevicesName = "GPUDevices"

// GPUDevices is the device-level filter for GPU sharing (no upstream
// equivalent: upstream counts GPUs as an opaque integer): a pod asking for
// N devices (or a milli-GPU share of one, snapshot.AnnotationGPUMilli) fits
// a node with at least N devices of an allowed model, each with that much
// free milli-GPU. It is the device half of the FGD simulator's
// Open-Gpu-Share filter (gpushare.Fits; NodeResourcesFit does cpu and
// memory). Pods without a device demand skip it. Append it to
// [DefaultFilters] for GPU-sharing clusters.
//
// Reasons: CodeCustom with Text "Insufficient GPU devices" (not enough free
// devices of an allowed model) or "node(s) had no GPU of an allowed model".
// Per node: O(devices), allocates nothing.
type GPUDevices struct{}

var _ Filter = GPUDevices{}

// Name returns GPUDevicesName.
func (GPUDevices) Name() string { return GPUDevicesName }

// PreFilter skips pods that ask for no device and looks the pod's models
// up once ([snapshot.GPUModelID]).
func (GPUDevices) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	g := pod.GPU()
	if g.Count == 0 {
		return PreFilterResult{}, nil
	}
	f := &gpuFilter{t: pod.Task()}
	for _, m := range f.t.Models {
		if m == "" {
			continue
		}
		f.constrained = true
		// A model no node has matches nothing: leave it out.
		if id, ok := snapshot.GPUModelID(m); ok {
			f.models = append(f.models, id)
		}
	}
	return PreFilterResult{Filter: f}, nil
}

type gpuFilter struct {
	t gpushare.Task
	// constrained: the pod names at least one model; models are the ids
	// of those some node has (gpushare.Task.Allows by id: every device of
	// a node has the node's one model).
	constrained bool
	models      []int32
}

// Filter checks one node. It reads the node's FilterBlock only, unless
// the pod needs more devices than the block summarises.
func (f *gpuFilter) Filter(node *snapshot.NodeInfo, reasons []Reason) []Reason {
	fb := node.FilterBlock()
	numDevs := int(fb.NumDevices)
	usable, anyModel := 0, false
	if numDevs > 0 && (!f.constrained || slices.Contains(f.models, fb.GPUModel)) {
		anyModel = true
		if k := f.t.GPUCount; k <= len(fb.GPUFree) && f.t.MilliGPU <= 1<<16-1 {
			if int64(fb.GPUFree[k-1]) >= f.t.MilliGPU {
				return reasons
			}
			// Fewer than k usable devices, all among the freest.
			for _, free := range fb.GPUFree[:k-1] {
				if int64(free) >= f.t.MilliGPU {
					usable++
				}
			}
		} else {
			for _, d := range node.Devices() {
				if d.FreeMilliGPU >= f.t.MilliGPU {
					usable++
				}
			}
		}
	}
	if usable >= f.t.GPUCount {
		return reasons
	}
	text := "Insufficient GPU devices"
	if !anyModel {
		text = "node(s) had no GPU of an allowed model"
	}
	return append(reasons, Reason{Plugin: GPUDevicesName, Node: node.Name(), Code: CodeCustom, Text: text,
		Requested: int64(f.t.GPUCount), Used: int64(numDevs - usable), Capacity: int64(numDevs),
		Unresolvable: numDevs < f.t.GPUCount})
}

// chooseDevices picks the devices a GPU pod uses on the chosen node: the
// first scorer of the profile that is a score.DeviceChooser decides, else
// gpushare.BestFitDevices. It returns the pod unchanged when it asks for no
// device or the node has none.
func chooseDevices(p *score.Profile, pod *snapshot.PodInfo, node *snapshot.NodeInfo) (*snapshot.PodInfo, error) {
	if pod.GPU().Count == 0 || len(node.Devices()) == 0 {
		return pod, nil
	}
	for _, w := range p.Scorers() {
		if dc, ok := w.Scorer.(score.DeviceChooser); ok {
			devs, ok := dc.ChooseDevices(pod, node)
			if !ok {
				return nil, fmt.Errorf("framework: %s chose node %s for pod %s but no devices on it", w.Scorer.Name(), node.Name(), pod.Key())
			}
			return pod.WithDevices(devs), nil
		}
	}
	st := node.GPUState(nil)
	devs, ok := gpushare.BestFitDevices(&st, pod.Task())
	if !ok {
		return nil, fmt.Errorf("framework: node %s has no devices for pod %s (add the GPUDevices filter)", node.Name(), pod.Key())
	}
	return pod.WithDevices(devs), nil
}
