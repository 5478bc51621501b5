package snapshot

import "strconv"

// Insufficient is one resource a pod lacks on a node, as a value: the one
// "does not fit" reason of schedkit, upstream's
// noderesources.InsufficientResource (kube-scheduler v1.37
// pkg/scheduler/framework/plugins/noderesources/fit.go fitsRequest). The
// fit filter (framework.Reason embeds it), the reservation ledger
// (reserve.Insufficient is this type) and GPU sharing all report it.
//
// Units are those of [Vector]: milli-CPU, bytes, counts. The pod does not
// fit because Requested > Capacity − Used.
//
//   - [Pods]: Requested is 1, Used the pods counted on the node; the
//     message is "Too many pods".
//   - A GPU device shortfall names the device resource (for instance the
//     ID of [ResourceGPUMilli]): Requested is the pod's share × devices,
//     Used and Capacity are summed over the node's devices.
//   - Any other resource: the message is "Insufficient <name>".
//
// No preemption can make the pod fit when Requested > Capacity (upstream's
// UnschedulableAndUnresolvable). The zero value names CPU with all
// amounts 0.
type Insufficient struct {
	// Resource is the resource that does not fit.
	Resource ResourceID
	// Requested is what the pod needs from the node's free capacity.
	Requested int64
	// Used is what the node already has committed.
	Used int64
	// Capacity is the node's allocatable amount.
	Capacity int64
}

// Message returns upstream's reason string: "Too many pods" for [Pods],
// else "Insufficient <name>" ("Insufficient cpu"). It allocates the
// string except for Pods; O(len(name)).
func (in Insufficient) Message() string {
	if in.Resource == Pods {
		return "Too many pods"
	}
	return "Insufficient " + string(in.Resource.Name())
}

// String returns the message and the amounts, for logs and errors:
// "Insufficient cpu (requested 3000, used 3000, capacity 4000)".
func (in Insufficient) String() string {
	return in.Message() + " (requested " + strconv.FormatInt(in.Requested, 10) + ", used " + strconv.FormatInt(in.Used, 10) +
		", capacity " + strconv.FormatInt(in.Capacity, 10) + ")"
}
