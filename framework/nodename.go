package framework

import "github.com/schedkit/schedkit/snapshot"

var (
	_ Filter = NodeName{}
	_ Filter = NodePorts{}
)

// NodeName is upstream's NodeName filter (kube-scheduler v1.37
// nodename/node_name.go): a pod with spec.nodeName set fits only the node
// of that name. Its PreFilter narrows the candidates to that node (the
// other nodes are reported as [CodeNotCandidate], as upstream's
// PreFilterResult does); a pod without spec.nodeName is not checked.
type NodeName struct{}

// Name returns "NodeName".
func (NodeName) Name() string { return NodeNameName }

// PreFilter narrows to spec.nodeName; O(1).
func (NodeName) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	name := pod.Pod().Spec.NodeName
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

// NodePorts is upstream's NodePorts filter (kube-scheduler v1.37
// nodeports/node_ports.go): a node fails ([CodeNodePorts], resolvable by
// preemption) when a host port the pod uses (regular and restartable init
// containers) conflicts with one in use there: same protocol and port, and
// the same host IP or either side on 0.0.0.0 ([snapshot.HostPort.Conflicts]).
// Per node: O(pod ports × used ports), allocates nothing; a pod without
// host ports is not checked.
type NodePorts struct{}

// Name returns "NodePorts".
func (NodePorts) Name() string { return NodePortsName }

// PreFilter keeps the pod's host ports.
func (NodePorts) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
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
