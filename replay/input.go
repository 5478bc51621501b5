package replay

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/snapshot"
)

// NewInput builds an [Input] from Kubernetes objects the way
// examples/simulate reads them (-objects, and its trace input), so that a
// program of its own replays the same pods:
//
//   - pods in phase Succeeded or Failed are left out (counted in
//     Input.Terminal): upstream's scheduler never sees them, so they
//     neither run nor are scheduled, with or without unbind;
//   - pods with spec.nodeName are Bound; with unbind they are scheduled
//     anew (a copy with spec.nodeName cleared) except static and mirror
//     pods (annotated kubernetes.io/config.mirror, or
//     kubernetes.io/config.source other than "api"), which the kubelet
//     runs on its own node and no scheduler moves;
//   - the other pods are Arrivals in the order given, Batch is set (they
//     are queued at once, as a cluster's pending pods are); set At, Leave
//     and Leaves for Config.Departures, or clear Batch for one-by-one
//     arrivals;
//   - a pod whose GPU demand is a share of devices (not
//     snapshot.GPURequest.Whole) that dec names a MilliResource for (as
//     openb.Devices does for the Alibaba GPU-sharing scheduler's
//     annotations) and that does not request it, also requests it on its
//     first container (count × milli), in a copy, so that
//     NodeResourcesFit checks the node's GPU total and resource scorers
//     can weigh GPUs.
//
// dec (nil: snapshot.NvidiaDevices) reads the devices of nodes and pods;
// Input.Devices records it for Run.
//
// Errors wrap [ErrInput] and name the object: a nil object, a node listed
// twice or invalid (snapshot.Cache.AddNode), a bound pod on a node not
// among nodes, an invalid pod (snapshot.DecodePodInfo), a pod to schedule
// listed twice. Bound pods are checked before the pods to schedule. The objects
// given are not changed; Input shares the unchanged ones. O(nodes + pods).
func NewInput(nodes []*v1.Node, pods []*v1.Pod, unbind bool, dec snapshot.DeviceDecoder) (*Input, error) {
	b, err := NewInputBuilder(nodes, dec, BuildOptions{Unbind: unbind})
	if err != nil {
		return nil, err
	}
	if err := b.AddAll(pods); err != nil {
		return nil, err
	}
	return b.Input(), nil
}

// BuildOptions are an [InputBuilder]'s settings.
type BuildOptions struct {
	// Unbind schedules the pods that have spec.nodeName anew (as
	// NewInput's unbind).
	Unbind bool
	// Lean keeps each arrival as a lean record (snapshot.PodInfo.Lean):
	// the pod objects are not retained, and the replicas of a workload
	// share one template, so that an Input holds millions of pods. Run
	// schedules a lean arrival as the full record parsed from its
	// PodInfo.Pod; decisions are the same. Bound pods stay objects.
	Lean bool
}

// InputBuilder builds an [Input] pod by pod, as NewInput does from a
// list, so that a caller generating or streaming pods need not hold them
// all as objects at once. Not safe for concurrent use.
type InputBuilder struct {
	in    *Input
	opts  BuildOptions
	names map[string]bool
	seen  map[snapshot.PodKey]bool
	nodes *snapshot.Cache
}

// NewInputBuilder starts an Input over nodes, checked as NewInput checks
// them (errors wrap [ErrInput] and name the node: nil, listed twice,
// invalid). dec (nil: snapshot.NvidiaDevices) reads the devices. O(nodes).
func NewInputBuilder(nodes []*v1.Node, dec snapshot.DeviceDecoder, o BuildOptions) (*InputBuilder, error) {
	cache := snapshot.NewCacheWithDevices(dec)
	names := make(map[string]bool, len(nodes))
	for i, n := range nodes {
		if n == nil {
			return nil, fmt.Errorf("%w: nodes[%d]: nil node", ErrInput, i)
		}
		if names[n.Name] {
			return nil, fmt.Errorf("%w: node %s: listed twice", ErrInput, n.Name)
		}
		names[n.Name] = true
		if err := cache.AddNode(n); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
	}
	return &InputBuilder{in: &Input{Nodes: nodes, Batch: true, Devices: dec}, opts: o, names: names,
		seen: map[snapshot.PodKey]bool{}, nodes: cache}, nil
}

// Nodes returns a snapshot of the builder's nodes, without pods (for
// their allocatable and devices). O(1).
func (b *InputBuilder) Nodes() *snapshot.Snapshot { return b.nodes.Snapshot() }

// Add adds pod: a bound pod (spec.nodeName set, unless unbound) to
// Input.Bound, another to Input.Arrivals, prepared as NewInput prepares
// them; a pod in phase Succeeded or Failed only counts in Input.Terminal. Errors are NewInput's and change nothing; a pod is checked as it
// is added, so a bound pod after a pod to schedule is checked after it.
// O(size of the pod); pod is not changed (and not retained as an arrival
// with BuildOptions.Lean).
func (b *InputBuilder) Add(pod *v1.Pod) error {
	if pod == nil {
		return fmt.Errorf("%w: nil pod", ErrInput)
	}
	if terminal(pod) {
		b.in.Terminal++
		return nil
	}
	if b.bound(pod) {
		return b.addBound(pod)
	}
	return b.addPending(pod)
}

// AddAll adds pods as NewInput does: nil pods are refused first, then
// the bound pods are added (and checked), then the others. An error (see
// NewInput) may leave the pods before the failing one added.
func (b *InputBuilder) AddAll(pods []*v1.Pod) error {
	var bound, pending []*v1.Pod
	terminals := 0
	for i, p := range pods {
		switch {
		case p == nil:
			return fmt.Errorf("%w: pods[%d]: nil pod", ErrInput, i)
		case terminal(p):
			terminals++
		case b.bound(p):
			bound = append(bound, p)
		default:
			pending = append(pending, p)
		}
	}
	b.in.Terminal += terminals
	for _, p := range bound {
		if err := b.addBound(p); err != nil {
			return err
		}
	}
	for _, p := range pending {
		if err := b.addPending(p); err != nil {
			return err
		}
	}
	return nil
}

// Input returns the Input built so far (shared with the builder: add no
// more pods once it is used).
func (b *InputBuilder) Input() *Input { return b.in }

// bound reports whether p stays on its node (spec.nodeName set and not
// unbound).
func (b *InputBuilder) bound(p *v1.Pod) bool {
	return p.Spec.NodeName != "" && (!b.opts.Unbind || nodeBound(p))
}

func (b *InputBuilder) addBound(p *v1.Pod) error {
	if !b.names[p.Spec.NodeName] {
		return fmt.Errorf("%w: pod %s/%s: spec.nodeName %q: no such node in the input", ErrInput, p.Namespace, p.Name, p.Spec.NodeName)
	}
	pi, err := snapshot.DecodePodInfo(p, b.in.Devices)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	b.in.Bound = append(b.in.Bound, withGPURequest(p, pi))
	return nil
}

// addPending adds p as an arrival (a copy without spec.nodeName if it
// has one: an unbound pod).
func (b *InputBuilder) addPending(p *v1.Pod) error {
	if p.Spec.NodeName != "" {
		c := *p
		c.Spec.NodeName = ""
		p = &c
	}
	pi, err := snapshot.DecodePodInfo(p, b.in.Devices)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	if b.seen[pi.Key()] {
		return fmt.Errorf("%w: pod %s: listed twice", ErrInput, pi.Key())
	}
	if pp := withGPURequest(p, pi); pp != p {
		if pi, err = snapshot.DecodePodInfo(pp, b.in.Devices); err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
	}
	b.seen[pi.Key()] = true
	if b.opts.Lean {
		pi = pi.Lean()
	}
	b.in.Arrivals = append(b.in.Arrivals, Arrival{Pod: pi})
	return nil
}

// withGPURequest returns pod with its device-share demand also requested
// as the demand's MilliResource (on the first container), or pod itself
// for a pod without a share demand (none, whole devices, or no
// MilliResource) or requesting it already. pi is pod parsed.
func withGPURequest(pod *v1.Pod, pi *snapshot.PodInfo) *v1.Pod {
	t, g := gpushare.TaskOf(pi), pi.GPU()
	if g.Whole || g.MilliResource == "" || !t.UsesGPU() || len(pod.Spec.Containers) == 0 {
		return pod
	}
	if _, ok := pod.Spec.Containers[0].Resources.Requests[g.MilliResource]; ok {
		return pod
	}
	c := *pod
	c.Spec.Containers = append([]v1.Container(nil), pod.Spec.Containers...)
	ctr := &c.Spec.Containers[0]
	req := make(v1.ResourceList, len(ctr.Resources.Requests)+1)
	for k, v := range ctr.Resources.Requests {
		req[k] = v
	}
	req[g.MilliResource] = *resource.NewQuantity(t.TotalMilliGPU(), resource.DecimalSI)
	ctr.Resources.Requests = req
	return &c
}

// terminal reports whether p's phase is Succeeded or Failed.
func terminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

// nodeBound reports whether p belongs to its node: a mirror pod (the API
// object of a static pod, annotated kubernetes.io/config.mirror) or a
// static pod itself (kubernetes.io/config.source other than "api").
func nodeBound(p *v1.Pod) bool {
	if _, ok := p.Annotations["kubernetes.io/config.mirror"]; ok {
		return true
	}
	src, ok := p.Annotations["kubernetes.io/config.source"]
	return ok && src != "api"
}
