package snapshot

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/hashindex"
	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/internal/spread"
)

// PodKey identifies a pod by namespace and name.
type PodKey struct{ Namespace, Name string }

// KeyOf returns the key of pod.
func KeyOf(pod *v1.Pod) PodKey { return PodKey{pod.Namespace, pod.Name} }

// String formats the key as "namespace/name".
func (k PodKey) String() string { return k.Namespace + "/" + k.Name }

// HostPort is one host port a pod uses: IP ("" is normalised to 0.0.0.0),
// protocol ("" is normalised to TCP) and port (> 0).
type HostPort struct {
	IP       string
	Protocol v1.Protocol
	Port     int32
}

// defaultBindAllHostIP is the wildcard host IP; a port on it conflicts with
// the same protocol and port on any IP.
const defaultBindAllHostIP = "0.0.0.0"

// Conflicts reports whether two host ports collide: same protocol and port,
// and the same IP or either IP is 0.0.0.0 (upstream HostPortInfo.CheckConflict).
func (p HostPort) Conflicts(o HostPort) bool {
	return p.Port == o.Port && p.Protocol == o.Protocol &&
		(p.IP == o.IP || p.IP == defaultBindAllHostIP || o.IP == defaultBindAllHostIP)
}

// PodInfo is a pod with its derived scheduling data computed once: key,
// requests ([PodRequests]) and host ports. A PodInfo is immutable after
// [NewPodInfo]; share it freely between goroutines, snapshots and forks. The
// *v1.Pod it holds must not be modified while the PodInfo is in use.
type PodInfo struct {
	// keyHash comes first: internal/nodeview reads it at offset 0
	// (TestNodeviewLayout).
	keyHash uint64
	pod     *v1.Pod
	// affinity: nil without pod (anti-)affinity (affinity.go); next to
	// keyHash, which AddPod and RemovePod read anyway.
	affinity  *interpod.Terms
	key       PodKey
	req       PodRequests
	hostPorts []HostPort
	gpu       GPURequest
	devices   DeviceSet
	assigned  bool

	// spreadClass: namespace and labels, interned (spread.go).
	spreadClass spread.Class
}

// NewPodInfo parses pod, reading its device demand with [NvidiaDevices]:
// DecodePodInfo(pod, NvidiaDevices). Errors (wrapping [ErrInvalidObject]
// or [ErrNegativeQuantity]) name the pod and field; O(containers ×
// resources).
func NewPodInfo(pod *v1.Pod) (*PodInfo, error) { return DecodePodInfo(pod, NvidiaDevices) }

// DecodePodInfo parses pod, reading its device demand and recorded devices
// with dec (nil: [NvidiaDevices]); use the decoder of the state the pod
// joins ([Snapshot.DeviceDecoder]). Errors as NewPodInfo, and the
// decoder's; O(containers × resources) plus the decoder's cost.
func DecodePodInfo(pod *v1.Pod, dec DeviceDecoder) (*PodInfo, error) {
	if dec == nil {
		dec = NvidiaDevices
	}
	if pod == nil {
		return nil, fmt.Errorf("pod is nil: %w", ErrInvalidObject)
	}
	if pod.Name == "" {
		return nil, fmt.Errorf("pod in namespace %q: metadata.name is empty: %w", pod.Namespace, ErrInvalidObject)
	}
	if err := checkPodNames(pod); err != nil {
		return nil, err
	}
	req, err := ComputePodRequests(pod)
	if err != nil {
		return nil, err
	}
	gpu, devs, assigned, err := dec.PodDevices(pod, &req.Requested)
	if err != nil {
		return nil, err
	}
	return &PodInfo{pod: pod, key: KeyOf(pod), keyHash: hashKey(KeyOf(pod)), req: req, hostPorts: hostPorts(pod), gpu: gpu, devices: devs, assigned: assigned, affinity: interpod.Parse(pod), spreadClass: spread.ClassOf(pod)}, nil
}

// MustPodInfo is NewPodInfo that panics on error; for tests and examples.
func MustPodInfo(pod *v1.Pod) *PodInfo {
	pi, err := NewPodInfo(pod)
	if err != nil {
		panic(err)
	}
	return pi
}

// hostPorts lists the host ports of the regular containers and of the
// restartable init containers, as upstream schedutil.GetHostPorts.
func hostPorts(pod *v1.Pod) []HostPort {
	var out []HostPort
	add := func(c *v1.Container) {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := HostPort{IP: p.HostIP, Protocol: p.Protocol, Port: p.HostPort}
			if hp.IP == "" {
				hp.IP = defaultBindAllHostIP
			}
			if hp.Protocol == "" {
				hp.Protocol = v1.ProtocolTCP
			}
			out = append(out, hp)
		}
	}
	for i := range pod.Spec.InitContainers {
		if isRestartable(&pod.Spec.InitContainers[i]) {
			add(&pod.Spec.InitContainers[i])
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	return out
}

// Pod returns the pod object. Read-only.
func (p *PodInfo) Pod() *v1.Pod { return p.pod }

// Key returns the pod's namespace/name key.
func (p *PodInfo) Key() PodKey { return p.key }

// Requests returns the pod's derived requests. Read-only.
func (p *PodInfo) Requests() *PodRequests { return &p.req }

// Requested returns the pod's effective request vector (milli-CPU, bytes,
// counts). Read-only.
func (p *PodInfo) Requested() *Vector { return &p.req.Requested }

// HostPorts returns the host ports the pod uses. Read-only.
func (p *PodInfo) HostPorts() []HostPort { return p.hostPorts }

// hashKey hashes a pod key (PodInfo.keyHash, NodeInfo's pod scan):
// hashindex.Pair of namespace and name, as internal/nodeview.HashKey.
func hashKey(k PodKey) uint64 { return hashindex.Pair(k.Namespace, k.Name) }
