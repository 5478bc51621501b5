package framework

import (
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
)

func TestNodeName(t *testing.T) {
	nodes := []*v1.Node{mkNode("n1").Capacity("pods", "10").Obj(), mkNode("n2").Capacity("pods", "10").Obj()}
	mismatch := []got{{Code: CodeNodeName, Unresolvable: true}}

	res, g := runFilter(t, nodeNamePlugin{}, mkPod("p").Obj(), nodes)
	assert.Nil(t, res.Filter, "a pod without spec.nodeName is not checked")
	assert.Nil(t, res.NodeNames)
	assert.Equal(t, map[string][]got{"n1": {}, "n2": {}}, g)

	res, g = runFilter(t, nodeNamePlugin{}, mkPod("p").Node("n1").Obj(), nodes)
	assert.Equal(t, []string{"n1"}, res.NodeNames, "PreFilter narrows to spec.nodeName")
	assert.Equal(t, map[string][]got{"n1": {}, "n2": mismatch}, g)

	res, g = runFilter(t, nodeNamePlugin{}, mkPod("p").Node("ghost").Obj(), nodes)
	assert.Equal(t, []string{"ghost"}, res.NodeNames)
	assert.Equal(t, map[string][]got{"n1": mismatch, "n2": mismatch}, g)
	assert.Equal(t, "node(s) didn't match the requested node name", (&Reason{Code: CodeNodeName}).Message())
}

func TestNodePorts(t *testing.T) {
	port := func(ip string, proto v1.Protocol, p int32) v1.ContainerPort {
		return v1.ContainerPort{HostIP: ip, Protocol: proto, HostPort: p, ContainerPort: p}
	}
	withPorts := func(name string, ports ...v1.ContainerPort) *v1.Pod {
		p := mkPod(name).Req().Obj()
		p.Spec.Containers[0].Ports = ports
		return p
	}
	conflict := []got{{Code: CodeNodePorts}}
	tests := []struct {
		name    string
		pod     *v1.Pod
		inUse   []v1.ContainerPort
		want    []got
		skipped bool
	}{
		{name: "nothing running", pod: withPorts("p", port("", "", 8080)), want: []got{}},
		{name: "no host ports", pod: mkPod("p").Req().Obj(), inUse: []v1.ContainerPort{port("", "", 8080)}, want: []got{}, skipped: true},
		{name: "same port, different protocol", pod: withPorts("p", port("127.0.0.1", v1.ProtocolUDP, 8080)), inUse: []v1.ContainerPort{port("127.0.0.1", v1.ProtocolTCP, 8080)}, want: []got{}},
		{name: "same ip, protocol and port", pod: withPorts("p", port("127.0.0.1", v1.ProtocolTCP, 8080)), inUse: []v1.ContainerPort{port("127.0.0.1", v1.ProtocolTCP, 8080)}, want: conflict},
		{name: "different ips", pod: withPorts("p", port("127.0.0.1", v1.ProtocolTCP, 8080)), inUse: []v1.ContainerPort{port("127.0.0.2", v1.ProtocolTCP, 8080)}, want: []got{}},
		{name: "0.0.0.0 in use conflicts with any ip", pod: withPorts("p", port("127.0.0.1", v1.ProtocolTCP, 8001)), inUse: []v1.ContainerPort{port("0.0.0.0", v1.ProtocolTCP, 8001)}, want: conflict},
		{name: "0.0.0.0 requested conflicts with any ip", pod: withPorts("p", port("0.0.0.0", v1.ProtocolTCP, 8001)), inUse: []v1.ContainerPort{port("127.0.0.1", v1.ProtocolTCP, 8001)}, want: conflict},
		{name: "empty ip means 0.0.0.0, empty protocol means TCP", pod: withPorts("p", port("", "", 8001)), inUse: []v1.ContainerPort{port("10.0.0.1", v1.ProtocolTCP, 8001)}, want: conflict},
		{name: "0.0.0.0 on another protocol", pod: withPorts("p", port("0.0.0.0", v1.ProtocolUDP, 8001)), inUse: []v1.ContainerPort{port("0.0.0.0", v1.ProtocolTCP, 8001)}, want: []got{}},
		{name: "second port conflicts", pod: withPorts("p", port("", "", 9000), port("", v1.ProtocolSCTP, 9001)), inUse: []v1.ContainerPort{port("", v1.ProtocolSCTP, 9001)}, want: conflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := mkNode("n1").Capacity("pods", "10").Obj()
			var bound []*v1.Pod
			if len(tc.inUse) > 0 {
				b := withPorts("bound", tc.inUse...)
				b.Spec.NodeName = "n1"
				bound = append(bound, b)
			}
			res, g := runFilter(t, nodePortsPlugin{}, tc.pod, []*v1.Node{node}, bound...)
			assert.Equal(t, tc.skipped, res.Filter == nil, "skipped")
			assert.Equal(t, tc.want, g["n1"], "NodePorts(n1)")
		})
	}

	// Ports of restartable init containers count, on both sides.
	sidecar := mkPod("bound").Sidecar().Node("n1").Obj()
	sidecar.Spec.InitContainers[0].Ports = []v1.ContainerPort{port("", "", 7000)}
	_, g := runFilter(t, nodePortsPlugin{}, withPorts("p", port("", "", 7000)), []*v1.Node{mkNode("n1").Capacity("pods", "10").Obj()}, sidecar)
	assert.Equal(t, conflict, g["n1"], "sidecar port in use")
	assert.Equal(t, "node(s) didn't have free ports for the requested pod ports", (&Reason{Code: CodeNodePorts}).Message())
}
