package framework

import (
	"github.com/schedkit/schedkit/snapshot"
)

// Filter is a filter plugin: it decides, node by node, whether a pod can
// run there (upstream's PreFilter + Filter extension points).
//
// PreFilter runs once per pod and does all per-pod work (parsing
// tolerations, affinity, requests); the [PodFilter] it returns then runs
// once per candidate node and must allocate nothing.
type Filter interface {
	// Name is the plugin name used in reasons and diagnoses
	// ("NodeResourcesFit").
	Name() string
	// PreFilter prepares the filter for pod. An error is for input the
	// filter cannot handle; a pod that fits nowhere is a
	// PreFilterResult.Reject or per-node reasons, never an error.
	PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error)
}

// PreFilterResult is what a [Filter] prepared for one pod.
type PreFilterResult struct {
	// Filter checks one node; nil means the pod passes this filter on every
	// node (upstream's Skip status), which costs nothing per node.
	Filter PodFilter
	// NodeNames, when non-nil, restricts the candidates to the named
	// nodes (upstream's PreFilterResult.NodeNames); the other nodes are
	// reported as [CodeNotCandidate] without being filtered. Names of
	// nodes not in the snapshot are ignored. nil means every node.
	NodeNames []string
	// Reject, when not empty, makes the pod unschedulable on every node
	// with this message (upstream's UnschedulableAndUnresolvable PreFilter
	// status); the cycle stops at the first rejecting filter.
	Reject string
}

// PodFilter is a [Filter] prepared for one pod.
type PodFilter interface {
	// Filter appends to reasons why node cannot run the pod and returns
	// the extended slice; a node that passes leaves reasons unchanged. It
	// must not allocate when reasons has spare capacity for what it
	// appends (the cycle passes a buffer with room for 16), must not keep
	// reasons, and must be safe for concurrent calls on different nodes.
	// The cycle sets Plugin and Node on the appended reasons.
	Filter(node *snapshot.NodeInfo, reasons []Reason) []Reason
}

// PodFilterFunc adapts a function to [PodFilter].
type PodFilterFunc func(node *snapshot.NodeInfo, reasons []Reason) []Reason

// Filter calls f.
func (f PodFilterFunc) Filter(node *snapshot.NodeInfo, reasons []Reason) []Reason {
	return f(node, reasons)
}

// Plugin names, as upstream spells them; each filter's Name() returns its
// own, and [Reason] names the failing plugin with it.
const (
	nodeNameName          = "NodeName"
	nodeUnschedulableName = "NodeUnschedulable"
	taintTolerationName   = "TaintToleration"
	nodeAffinityName      = "NodeAffinity"
	nodePortsName         = "NodePorts"
	nodeResourcesFitName  = "NodeResourcesFit"
)

// DefaultFilters returns the filters of upstream's default profile that
// need no volumes or pod affinity, in upstream's order: NodeName,
// NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts,
// NodeResourcesFit. A node's reasons come from the first filter it fails,
// as upstream stops at the first failing plugin. [NewPodTopologySpread] is
// not included yet (it bypasses the equivalence cache); append it, as
// upstream runs it after these (and the volume filters):
// append(DefaultFilters(), spreadFilter).
func DefaultFilters() []Filter {
	return []Filter{
		nodeNamePlugin{}, nodeUnschedulablePlugin{}, taintTolerationPlugin{}, &nodeAffinityPlugin{}, nodePortsPlugin{}, &nodeResourcesFitPlugin{},
	}
}
