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
	in := &Input{Nodes: nodes, Batch: true, Devices: dec}
	var pending []*v1.Pod
	for i, p := range pods {
		switch {
		case p == nil:
			return nil, fmt.Errorf("%w: pods[%d]: nil pod", ErrInput, i)
		case unbind && p.Spec.NodeName != "" && !nodeBound(p):
			c := *p
			c.Spec.NodeName = ""
			pending = append(pending, &c)
		case p.Spec.NodeName != "":
			in.Bound = append(in.Bound, p)
		default:
			pending = append(pending, p)
		}
	}
	for i, p := range in.Bound {
		if !names[p.Spec.NodeName] {
			return nil, fmt.Errorf("%w: pod %s/%s: spec.nodeName %q: no such node in the input", ErrInput, p.Namespace, p.Name, p.Spec.NodeName)
		}
		pi, err := snapshot.DecodePodInfo(p, dec)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
		in.Bound[i] = withGPURequest(p, pi)
	}
	seen := make(map[snapshot.PodKey]bool, len(pending))
	for _, p := range pending {
		pi, err := snapshot.DecodePodInfo(p, dec)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
		if seen[pi.Key()] {
			return nil, fmt.Errorf("%w: pod %s: listed twice", ErrInput, pi.Key())
		}
		seen[pi.Key()] = true
		if pp := withGPURequest(p, pi); pp != p {
			if pi, err = snapshot.DecodePodInfo(pp, dec); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrInput, err)
			}
		}
		in.Arrivals = append(in.Arrivals, Arrival{Pod: pi})
	}
	return in, nil
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
