package snapshot

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/hashindex"
	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/internal/objects"
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
// requests ([PodRequests]), host ports, devices, parsed (anti-)affinity
// terms and spread class. A PodInfo is immutable after [NewPodInfo]; share
// it freely between goroutines, snapshots and forks. The *v1.Pod it holds
// must not be modified while the PodInfo is in use.
//
// A PodInfo is a full record or a lean one. [NewPodInfo] makes a full
// record, which retains the pod object ([PodInfo.Pod] returns it). A lean
// record ([PodInfo.Lean]; what a Cache made with [LeanPods] and a ledger
// made with reserve.WithLeanPods store for bound pods) keeps only what
// scheduling reads: the derived data above, the per-pod fields ([PodInfo.Key],
// [PodInfo.NodeName], [PodInfo.StartTime], [PodInfo.Terminating], the
// phase, nominated node and DisruptionTarget condition) and a template
// ([PodInfo.Template]: namespace, labels, annotations, owner references and
// spec) shared by every lean record of the same shape — the replicas of a
// workload share one. Both kinds answer every accessor alike; they differ
// only in [PodInfo.Pod] (see there) and [PodInfo.Retained].
type PodInfo struct {
	// keyHash comes first: internal/nodeview reads it at offset 0
	// (TestNodeviewLayout).
	keyHash uint64
	// shape: what the pods of one template share (requests, ports,
	// devices asked for, terms, spread class, the template). A full
	// record has its own, a lean record an interned one (leanpod.go).
	shape *podShape
	key   PodKey
	// pod: the object, nil in a lean record.
	pod      *v1.Pod
	nodeName string
	// startNanos: status.startTime in Unix nanoseconds, noStart if unset.
	startNanos int64
	devices    DeviceSet
	// extra: a lean record's rare per-pod status (leanpod.go); nil
	// otherwise.
	extra    *podExtra
	phase    phaseCode
	assigned bool
	// terminating: metadata.deletionTimestamp is set.
	terminating bool
}

// podShape is the part of a PodInfo that depends only on the pod's
// template and derived requests: equal for every replica of a workload.
type podShape struct {
	req       PodRequests
	hostPorts []HostPort
	gpu       GPURequest
	// affinity: nil without pod (anti-)affinity (affinity.go).
	affinity *interpod.Terms
	// spreadClass: namespace and labels, interned (spread.go).
	spreadClass spread.Class
	// tmpl: the pod itself in a full record, the shared skeleton in a
	// lean one (PodInfo.Template).
	tmpl *v1.Pod
}

// fullPodInfo is a full record and its shape in one allocation.
type fullPodInfo struct {
	pi PodInfo
	sh podShape
}

// NewPodInfo parses pod, reading its device demand with [NvidiaDevices]:
// DecodePodInfo(pod, NvidiaDevices). Errors (wrapping [ErrInvalidObject]
// or [ErrNegativeQuantity]) name the pod and field: among them the names
// [ValidatePod] checks (an empty metadata.name or metadata.namespace is a
// Required value error; pods built in code must set a namespace), the
// topology spread constraints and pod (anti-)affinity terms the API
// server rejects (maxSkew ≤ 0, an empty topologyKey, an unknown
// whenUnsatisfiable or operator, ...; see validateScheduling in
// podvalidate.go). O(containers × resources + constraints² + terms ×
// requirements).
func NewPodInfo(pod *v1.Pod) (*PodInfo, error) { return DecodePodInfo(pod, NvidiaDevices) }

// DecodePodInfo parses pod into a full record (it retains pod), reading
// its device demand and recorded devices with dec (nil: [NvidiaDevices]);
// use the decoder of the state the pod joins ([Snapshot.DeviceDecoder]).
// Errors as NewPodInfo, and the decoder's; O(containers × resources) plus
// the decoder's cost.
func DecodePodInfo(pod *v1.Pod, dec DeviceDecoder) (*PodInfo, error) {
	return decodePodInfo(pod, dec, true)
}

// init gives the reservation ledger its placeholder parser
// (internal/objects.DecodePlaceholder).
func init() {
	objects.DecodePlaceholder = func(pod *v1.Pod) (any, error) { return decodePodInfo(pod, nil, false) }
}

// decodePodInfo is DecodePodInfo; checkNames false skips the name check
// (for the ledger's placeholders only).
func decodePodInfo(pod *v1.Pod, dec DeviceDecoder, checkNames bool) (*PodInfo, error) {
	if dec == nil {
		dec = NvidiaDevices
	}
	if pod == nil {
		return nil, fmt.Errorf("pod is nil: %w", ErrInvalidObject)
	}
	if pod.Name == "" {
		return nil, fmt.Errorf("pod in namespace %q: metadata.name is empty: %w", pod.Namespace, ErrInvalidObject)
	}
	if checkNames {
		if err := checkPodNames(pod); err != nil {
			return nil, err
		}
	}
	if err := validateScheduling(pod); err != nil {
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
	f := &fullPodInfo{sh: podShape{req: req, hostPorts: hostPorts(pod), gpu: gpu, affinity: interpod.Parse(pod), spreadClass: spread.ClassOf(pod), tmpl: pod}}
	k := KeyOf(pod)
	f.pi = PodInfo{keyHash: hashKey(k), shape: &f.sh, key: k, pod: pod, nodeName: pod.Spec.NodeName, startNanos: startNanosOf(pod),
		devices: devs, assigned: assigned, phase: phaseOf(pod.Status.Phase), terminating: pod.DeletionTimestamp != nil}
	return &f.pi, nil
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

// Pod returns the pod object. For a full record it is the object the
// record was parsed from, not a copy, shared by every snapshot, fork and
// ledger holding the record: read-only, owned by the cache (the record
// read its requests, labels, affinity and devices once; changing the
// object leaves the two disagreeing — change a DeepCopy and add that).
// For a lean record ([PodInfo.Lean]) it is a new pod rebuilt from the
// record on each call — the template ([PodInfo.Template]) with metadata.name, metadata.deletionTimestamp,
// spec.nodeName, status.phase, status.startTime,
// status.nominatedNodeName and a DisruptionTarget condition filled in —
// which holds everything scheduling reads but lacks what a lean record
// drops (uid, resourceVersion, managedFields, the rest of status). A lean
// record's pod is a deep copy (changing it changes neither the record nor
// the replicas sharing its template); a full record's is read-only.
// O(size of the pod) and allocates for a lean record (use Template and the
// per-pod accessors on hot paths); O(1), no allocation, for a full one.
func (p *PodInfo) Pod() *v1.Pod {
	if p.pod != nil {
		return p.pod
	}
	return p.rebuild()
}

// Retained reports whether p is a full record, whose [PodInfo.Pod] is the
// object it was parsed from; false for a lean record.
func (p *PodInfo) Retained() bool { return p.pod != nil }

// Template returns what the pod shares with the other replicas of its
// workload: namespace, labels, annotations, owner references and spec. For
// a full record it is the pod object itself; for a lean record a skeleton
// shared by every lean record of the same shape, whose metadata.name,
// uid, deletionTimestamp, spec.nodeName and status are empty. Read the
// per-pod fields from p ([PodInfo.Key], [PodInfo.NodeName],
// [PodInfo.StartTime], [PodInfo.Terminating]), never from the template.
// Read-only; O(1), allocates nothing.
func (p *PodInfo) Template() *v1.Pod { return p.shape.tmpl }

// Key returns the pod's namespace/name key.
func (p *PodInfo) Key() PodKey { return p.key }

// NodeName returns the pod's spec.nodeName ("" for a pod not bound).
func (p *PodInfo) NodeName() string { return p.nodeName }

// StartTime returns the pod's status.startTime and whether it is set.
// O(1), allocates nothing.
func (p *PodInfo) StartTime() (time.Time, bool) {
	if p.startNanos == noStart {
		return time.Time{}, false
	}
	return time.Unix(0, p.startNanos), true
}

// Terminating reports whether the pod's metadata.deletionTimestamp is
// set.
func (p *PodInfo) Terminating() bool { return p.terminating }

// Requests returns the pod's derived requests. Read-only.
func (p *PodInfo) Requests() *PodRequests { return &p.shape.req }

// Requested returns the pod's effective request vector (milli-CPU, bytes,
// counts). Read-only.
func (p *PodInfo) Requested() *Vector { return &p.shape.req.Requested }

// HostPorts returns the host ports the pod uses. Read-only.
func (p *PodInfo) HostPorts() []HostPort { return p.shape.hostPorts }

// hashKey hashes a pod key (PodInfo.keyHash, NodeInfo's pod scan):
// hashindex.Pair of namespace and name, as internal/nodeview.HashKey.
func hashKey(k PodKey) uint64 { return hashindex.Pair(k.Namespace, k.Name) }
