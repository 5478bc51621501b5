package framework

import "github.com/schedkit/schedkit/snapshot"

var (
	_ Filter = nodeNamePlugin{}
	_ Filter = nodePortsPlugin{}
)

// nodeNamePlugin is the filter [NewNodeName] returns.
type nodeNamePlugin struct{}

// NewNodeName returns the NodeName filter; it has no arguments and allocates
// nothing.
//
// NodeName is upstream's NodeName filter (kube-scheduler v1.37
// nodename/node_name.go): a pod with spec.nodeName set fits only the node
// of that name. Its PreFilter narrows the candidates to that node (the
// other nodes are reported as [CodeNotCandidate], as upstream's
// PreFilterResult does); a pod without spec.nodeName is not checked.
func NewNodeName() Filter { return nodeNamePlugin{} }

// Name returns "NodeName".
func (nodeNamePlugin) Name() string { return nodeNameName }

// PreFilter narrows to spec.nodeName; O(1).
func (nodeNamePlugin) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	name := pod.NodeName()
	if name == "" {
		return PreFilterResult{}, nil
	}
	return PreFilterResult{Filter: nodeNameFilter(name), NodeNames: []string{name}}, nil
}

type nodeNameFilter string

func (want nodeNameFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	if ni.Name() != string(want) {
		reasons = append(reasons, Reason{Code: CodeNodeName, Unresolvable: true})
	}
	return reasons
}

// nodePortsPlugin is the filter [NewNodePorts] returns.
type nodePortsPlugin struct{}

// NewNodePorts returns the NodePorts filter; it has no arguments and allocates
// nothing.
//
// NodePorts is upstream's NodePorts filter (kube-scheduler v1.37
// nodeports/node_ports.go): a node fails ([CodeNodePorts], resolvable by
// preemption) when a host port the pod uses (regular and restartable init
// containers) conflicts with one in use there: same protocol and port, and
// the same host IP or either side on 0.0.0.0 ([snapshot.HostPort.Conflicts]).
// Per node: O(pod ports × used ports), allocates nothing; a pod without
// host ports is not checked.
func NewNodePorts() Filter { return nodePortsPlugin{} }

// Name returns "NodePorts".
func (nodePortsPlugin) Name() string { return nodePortsName }

// PreFilter keeps the pod's host ports.
func (nodePortsPlugin) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	ports := pod.HostPorts()
	if len(ports) == 0 {
		return PreFilterResult{}, nil
	}
	return PreFilterResult{Filter: portsFilter(ports)}, nil
}

type portsFilter []snapshot.HostPort

func (ports portsFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	for _, p := range ports {
		if ni.PortConflict(p) {
			return append(reasons, Reason{Code: CodeNodePorts})
		}
	}
	return reasons
}
