// Package snapshottest builds Nodes, Pods, caches and snapshots for tests,
// in the spirit of net/http/httptest: a few fluent lines instead of a
// cluster. Every builder panics on malformed input (a test bug), never
// returns an error.
//
//	node := snapshottest.MakeNode("n1").Capacity("cpu", "8", "memory", "16Gi", "pods", "110").Obj()
//	pod := snapshottest.MakePod("p1").Req("cpu", "500m", "memory", "1Gi").Node("n1").Obj()
//	snap := snapshottest.Snapshot(t, []*v1.Node{node}, pod)
//
// Layer: above snapshot and snapshot/load, which it may import (and
// internal packages); no production package imports it.
package snapshottest

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/snapshot"
)

// List builds a ResourceList from name/quantity pairs:
// List("cpu", "500m", "memory", "1Gi"). It panics on an odd count or a
// malformed quantity.
func List(kv ...string) v1.ResourceList {
	if len(kv)%2 != 0 {
		panic(fmt.Sprintf("snapshottest: odd number of arguments %q", kv))
	}
	rl := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		rl[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return rl
}

// NodeWrapper builds a *v1.Node.
type NodeWrapper struct{ n v1.Node }

// MakeNode starts a node with the given name, label
// kubernetes.io/hostname=name, and no capacity.
func MakeNode(name string) *NodeWrapper {
	w := &NodeWrapper{}
	w.n.Name = name
	w.n.UID = types.UID("node-" + name)
	w.n.Labels = map[string]string{v1.LabelHostname: name}
	return w
}

// Capacity sets status.capacity and status.allocatable to the pairs.
func (w *NodeWrapper) Capacity(kv ...string) *NodeWrapper {
	w.n.Status.Capacity = List(kv...)
	w.n.Status.Allocatable = List(kv...)
	return w
}

// Allocatable sets status.allocatable only.
func (w *NodeWrapper) Allocatable(kv ...string) *NodeWrapper {
	w.n.Status.Allocatable = List(kv...)
	return w
}

// Label sets a label.
func (w *NodeWrapper) Label(k, v string) *NodeWrapper {
	w.n.Labels[k] = v
	return w
}

// Taint adds a taint.
func (w *NodeWrapper) Taint(key, value string, effect v1.TaintEffect) *NodeWrapper {
	w.n.Spec.Taints = append(w.n.Spec.Taints, v1.Taint{Key: key, Value: value, Effect: effect})
	return w
}

// Unschedulable sets spec.unschedulable.
func (w *NodeWrapper) Unschedulable() *NodeWrapper {
	w.n.Spec.Unschedulable = true
	return w
}

// Image adds an entry to status.images.
func (w *NodeWrapper) Image(sizeBytes int64, names ...string) *NodeWrapper {
	w.n.Status.Images = append(w.n.Status.Images, v1.ContainerImage{Names: names, SizeBytes: sizeBytes})
	return w
}

// Obj returns the node.
func (w *NodeWrapper) Obj() *v1.Node { n := w.n.DeepCopy(); return n }

// PodWrapper builds a *v1.Pod.
type PodWrapper struct{ p v1.Pod }

// MakePod starts a pod in namespace "default" with the given name, a UID
// and schedulerName "default-scheduler", and no containers.
func MakePod(name string) *PodWrapper {
	w := &PodWrapper{}
	w.p.Name = name
	w.p.Namespace = metav1.NamespaceDefault
	w.p.UID = types.UID("pod-" + name)
	w.p.Spec.SchedulerName = v1.DefaultSchedulerName
	return w
}

// Namespace sets the namespace.
func (w *PodWrapper) Namespace(ns string) *PodWrapper { w.p.Namespace = ns; return w }

// Label sets a label.
func (w *PodWrapper) Label(k, v string) *PodWrapper {
	if w.p.Labels == nil {
		w.p.Labels = map[string]string{}
	}
	w.p.Labels[k] = v
	return w
}

// Annotation sets an annotation.
func (w *PodWrapper) Annotation(k, v string) *PodWrapper {
	if w.p.Annotations == nil {
		w.p.Annotations = map[string]string{}
	}
	w.p.Annotations[k] = v
	return w
}

func (w *PodWrapper) container(prefix string, n int, kv []string) v1.Container {
	c := v1.Container{Name: fmt.Sprintf("%s-%d", prefix, n), Image: "registry.k8s.io/pause:3.10"}
	if len(kv) > 0 {
		c.Resources.Requests = List(kv...)
	}
	return c
}

// Req adds a regular container requesting the pairs (none: no requests).
func (w *PodWrapper) Req(kv ...string) *PodWrapper {
	w.p.Spec.Containers = append(w.p.Spec.Containers, w.container("c", len(w.p.Spec.Containers), kv))
	return w
}

// Limits sets the limits of the last regular container.
func (w *PodWrapper) Limits(kv ...string) *PodWrapper {
	w.last().Resources.Limits = List(kv...)
	return w
}

// Image sets the image of the last regular container.
func (w *PodWrapper) Image(image string) *PodWrapper {
	w.last().Image = image
	return w
}

// HostPort adds a host port (protocol TCP, host IP ip, "" for all) to the
// last regular container.
func (w *PodWrapper) HostPort(ip string, port int32) *PodWrapper {
	c := w.last()
	c.Ports = append(c.Ports, v1.ContainerPort{HostIP: ip, HostPort: port, ContainerPort: port, Protocol: v1.ProtocolTCP})
	return w
}

func (w *PodWrapper) last() *v1.Container {
	if len(w.p.Spec.Containers) == 0 {
		w.Req()
	}
	return &w.p.Spec.Containers[len(w.p.Spec.Containers)-1]
}

// Init adds a plain init container requesting the pairs.
func (w *PodWrapper) Init(kv ...string) *PodWrapper {
	w.p.Spec.InitContainers = append(w.p.Spec.InitContainers, w.container("init", len(w.p.Spec.InitContainers), kv))
	return w
}

// Sidecar adds a restartable init container (restartPolicy: Always)
// requesting the pairs.
func (w *PodWrapper) Sidecar(kv ...string) *PodWrapper {
	c := w.container("sidecar", len(w.p.Spec.InitContainers), kv)
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	w.p.Spec.InitContainers = append(w.p.Spec.InitContainers, c)
	return w
}

// PodRequests sets pod-level spec.resources.requests.
func (w *PodWrapper) PodRequests(kv ...string) *PodWrapper {
	if w.p.Spec.Resources == nil {
		w.p.Spec.Resources = &v1.ResourceRequirements{}
	}
	w.p.Spec.Resources.Requests = List(kv...)
	return w
}

// Overhead sets spec.overhead.
func (w *PodWrapper) Overhead(kv ...string) *PodWrapper {
	w.p.Spec.Overhead = List(kv...)
	return w
}

// Node sets spec.nodeName (the pod is bound).
func (w *PodWrapper) Node(name string) *PodWrapper { w.p.Spec.NodeName = name; return w }

// Priority sets spec.priority.
func (w *PodWrapper) Priority(p int32) *PodWrapper { w.p.Spec.Priority = &p; return w }

// SchedulerName sets spec.schedulerName.
func (w *PodWrapper) SchedulerName(s string) *PodWrapper { w.p.Spec.SchedulerName = s; return w }

// Toleration adds a toleration.
func (w *PodWrapper) Toleration(key string, op v1.TolerationOperator, value string, effect v1.TaintEffect) *PodWrapper {
	w.p.Spec.Tolerations = append(w.p.Spec.Tolerations, v1.Toleration{Key: key, Operator: op, Value: value, Effect: effect})
	return w
}

// NodeSelector sets a spec.nodeSelector entry.
func (w *PodWrapper) NodeSelector(k, v string) *PodWrapper {
	if w.p.Spec.NodeSelector == nil {
		w.p.Spec.NodeSelector = map[string]string{}
	}
	w.p.Spec.NodeSelector[k] = v
	return w
}

func (w *PodWrapper) nodeAffinity() *v1.NodeAffinity {
	if w.p.Spec.Affinity == nil {
		w.p.Spec.Affinity = &v1.Affinity{}
	}
	if w.p.Spec.Affinity.NodeAffinity == nil {
		w.p.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{}
	}
	return w.p.Spec.Affinity.NodeAffinity
}

// RequiredNodeAffinity adds a required node-selector term with one
// match-expression (key op values); terms are ORed.
func (w *PodWrapper) RequiredNodeAffinity(key string, op v1.NodeSelectorOperator, values ...string) *PodWrapper {
	na := w.nodeAffinity()
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	ns := na.RequiredDuringSchedulingIgnoredDuringExecution
	ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, v1.NodeSelectorTerm{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}},
	})
	return w
}

// RequiredNodeName adds a required term matching metadata.name in names
// (matchFields).
func (w *PodWrapper) RequiredNodeName(names ...string) *PodWrapper {
	na := w.nodeAffinity()
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	ns := na.RequiredDuringSchedulingIgnoredDuringExecution
	ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, v1.NodeSelectorTerm{
		MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: names}},
	})
	return w
}

// PreferredNodeAffinity adds a preferred term with the weight and one
// match-expression.
func (w *PodWrapper) PreferredNodeAffinity(weight int32, key string, op v1.NodeSelectorOperator, values ...string) *PodWrapper {
	na := w.nodeAffinity()
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, v1.PreferredSchedulingTerm{
		Weight:     weight,
		Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}},
	})
	return w
}

// Obj returns the pod.
func (w *PodWrapper) Obj() *v1.Pod { return w.p.DeepCopy() }

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Cache returns a cache holding nodes and the bound pods; a pod without
// spec.nodeName fails the test. CacheWithDevices(t, nil, nodes, pods...).
func Cache(t TB, nodes []*v1.Node, pods ...*v1.Pod) *snapshot.Cache {
	t.Helper()
	return CacheWithDevices(t, nil, nodes, pods...)
}

// CacheWithDevices is Cache with devices read by dec
// (snapshot.NewCacheWithDevices; nil: snapshot.NvidiaDevices).
func CacheWithDevices(t TB, dec snapshot.DeviceDecoder, nodes []*v1.Node, pods ...*v1.Pod) *snapshot.Cache {
	t.Helper()
	c := snapshot.NewCacheWithDevices(dec)
	for _, n := range nodes {
		if err := c.AddNode(n); err != nil {
			t.Fatalf("snapshottest: AddNode: %v", err)
		}
	}
	for _, p := range pods {
		if p != nil && p.Spec.NodeName == "" {
			t.Fatalf("snapshottest: pod %s/%s: spec.nodeName is empty (the cache would ignore it)", p.Namespace, p.Name)
		}
		if err := c.AddPod(p); err != nil {
			t.Fatalf("snapshottest: AddPod: %v", err)
		}
	}
	return c
}

// Snapshot returns Cache(t, nodes, pods...).Snapshot().
func Snapshot(t TB, nodes []*v1.Node, pods ...*v1.Pod) *snapshot.Snapshot {
	t.Helper()
	return Cache(t, nodes, pods...).Snapshot()
}

// SnapshotWithDevices returns CacheWithDevices(t, dec, nodes,
// pods...).Snapshot().
func SnapshotWithDevices(t TB, dec snapshot.DeviceDecoder, nodes []*v1.Node, pods ...*v1.Pod) *snapshot.Snapshot {
	t.Helper()
	return CacheWithDevices(t, dec, nodes, pods...).Snapshot()
}

// PodInfo returns pod parsed with dec (snapshot.DecodePodInfo); an error
// fails the test.
func PodInfo(t TB, dec snapshot.DeviceDecoder, pod *v1.Pod) *snapshot.PodInfo {
	t.Helper()
	pi, err := snapshot.DecodePodInfo(pod, dec)
	if err != nil {
		t.Fatalf("snapshottest: DecodePodInfo: %v", err)
	}
	return pi
}
