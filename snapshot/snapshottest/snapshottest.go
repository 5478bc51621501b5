// Package snapshottest builds Nodes, Pods, caches and snapshots for tests,
// in the spirit of net/http/httptest: a few fluent lines instead of a
// cluster. Every builder panics on input it cannot build (an unparsable
// quantity, an odd key/value list: a test bug), never returns an error;
// it builds what parses, so a test can make bad objects (a negative
// request) for the code under test to refuse.
//
//	node := snapshottest.MakeNode("n1").Capacity("cpu", "8", "memory", "16Gi", "pods", "110").Obj()
//	pod := snapshottest.MakePod("p1").Req("cpu", "500m", "memory", "1Gi").Node("n1").Obj()
//	snap := snapshottest.Snapshot(t, []*v1.Node{node}, pod)
//
// The pod-affinity, topology-spread, owner-reference and Labels builders
// have the names and argument order of upstream kube-scheduler's
// st.MakePod wrappers (pkg/scheduler/testing), so those calls in
// upstream tests port unchanged:
//
//	web := snapshottest.MakePod("web-1").Label("app", "web").
//		PodAntiAffinityIn("app", v1.LabelHostname, []string{"web"}, snapshottest.PodAntiAffinityWithRequiredReq).
//		SpreadConstraint(1, v1.LabelTopologyZone, v1.DoNotSchedule, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, nil, nil, nil, nil).
//		Obj()
//
// Layer: above snapshot and snapshot/load, which it may import (and
// internal packages); no production package imports it.
package snapshottest

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// MakePod starts a pod in namespace "default" with the given name, the
// UID "pod-<name>" and schedulerName "default-scheduler", and no
// containers. Two pods built with one name have one UID, so a Cache or
// Ledger takes them as the same pod (bound to another node, it is
// refused); set Obj().UID to model a pod created again under the name.
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

// Labels sets every {k,v} pair of labels as a label (upstream's Labels).
func (w *PodWrapper) Labels(labels map[string]string) *PodWrapper {
	for k, v := range labels {
		w.Label(k, v)
	}
	return w
}

// OwnerReference sets the owning controller of the pod (upstream's
// OwnerReference): one owner reference with gvk's apiVersion and kind,
// the name, controller: true, and no UID, replacing any other. A pod of
// a Deployment is owned by its ReplicaSet:
// OwnerReference("web-5d8f", appsv1.SchemeGroupVersion.WithKind("ReplicaSet")).
func (w *PodWrapper) OwnerReference(name string, gvk schema.GroupVersionKind) *PodWrapper {
	controller := true
	w.p.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Name:       name,
		Controller: &controller,
	}}
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

// Limits sets the limits of the last regular container. Requests stay as
// set: the API server's defaulting of missing requests from limits does
// not run here, and the scheduler reads requests only, so set Req too.
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

// RequiredNodeName adds, per name, a required node-affinity term
// matching metadata.name (matchFields metadata.name In [name]); terms
// are ORed, so the pod may go to any of names. One term per name
// because the API server accepts a single value in a metadata.name
// field requirement (as snapshot.NewPodInfo does), as the DaemonSet
// controller writes it.
func (w *PodWrapper) RequiredNodeName(names ...string) *PodWrapper {
	na := w.nodeAffinity()
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	ns := na.RequiredDuringSchedulingIgnoredDuringExecution
	for _, name := range names {
		ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, v1.NodeSelectorTerm{
			MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{name}}},
		})
	}
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

// PodAffinityKind says where the pod-affinity builders put a term:
// required or preferred, in podAffinity or podAntiAffinity (upstream's
// PodAffinityKind). PodAffinity and its In, NotIn and Exists forms take
// a PodAffinity kind, PodAntiAffinity and its forms a PodAntiAffinity
// kind; any other kind, the zero kind included, panics (upstream adds
// nothing then). Upstream's NilPodAffinity and
// Pod(Anti)AffinityWithRequiredPreferredReq have no counterpart: skip the
// call, or make it twice.
type PodAffinityKind int

const (
	// PodAffinityWithRequiredReq applies a HARD requirement to
	// pod.spec.affinity.PodAffinity: a required term.
	PodAffinityWithRequiredReq PodAffinityKind = iota + 1
	// PodAffinityWithPreferredReq applies a SOFT requirement to
	// pod.spec.affinity.PodAffinity: a preferred term of weight 1, as
	// upstream's.
	PodAffinityWithPreferredReq
	// PodAntiAffinityWithRequiredReq applies a HARD requirement to
	// pod.spec.affinity.PodAntiAffinity: a required term.
	PodAntiAffinityWithRequiredReq
	// PodAntiAffinityWithPreferredReq applies a SOFT requirement to
	// pod.spec.affinity.PodAntiAffinity: a preferred term of weight 1, as
	// upstream's.
	PodAntiAffinityWithPreferredReq
)

// PodAffinity creates a PodAffinity term with topology key and label
// selector and injects it into the pod (upstream's PodAffinity), as a
// required or preferred term by kind. The term selects pods in
// namespaces; none: the pod's own namespace. Repeated calls add terms.
func (w *PodWrapper) PodAffinity(topologyKey string, labelSelector *metav1.LabelSelector, kind PodAffinityKind, namespaces ...string) *PodWrapper {
	return w.podAffinityTerm("PodAffinity", false, kind, v1.PodAffinityTerm{LabelSelector: labelSelector, TopologyKey: topologyKey, Namespaces: namespaces})
}

// PodAntiAffinity creates a PodAntiAffinity term with topology key and
// label selector and injects it into the pod (upstream's
// PodAntiAffinity), as a required or preferred term by kind. The term
// selects pods in namespaces; none: the pod's own namespace. Repeated
// calls add terms.
func (w *PodWrapper) PodAntiAffinity(topologyKey string, labelSelector *metav1.LabelSelector, kind PodAffinityKind, namespaces ...string) *PodWrapper {
	return w.podAffinityTerm("PodAntiAffinity", true, kind, v1.PodAffinityTerm{LabelSelector: labelSelector, TopologyKey: topologyKey, Namespaces: namespaces})
}

// PodAffinityExists creates a PodAffinity term with the operator
// "Exists" on labelKey and injects it into the pod (upstream's
// PodAffinityExists).
func (w *PodWrapper) PodAffinityExists(labelKey, topologyKey string, kind PodAffinityKind) *PodWrapper {
	return w.PodAffinity(topologyKey, expression(labelKey, metav1.LabelSelectorOpExists, nil), kind)
}

// PodAntiAffinityExists creates a PodAntiAffinity term with the operator
// "Exists" on labelKey and injects it into the pod (upstream's
// PodAntiAffinityExists).
func (w *PodWrapper) PodAntiAffinityExists(labelKey, topologyKey string, kind PodAffinityKind) *PodWrapper {
	return w.PodAntiAffinity(topologyKey, expression(labelKey, metav1.LabelSelectorOpExists, nil), kind)
}

// PodAffinityIn creates a PodAffinity term with the operator "In"
// (labelKey in vals) and injects it into the pod (upstream's
// PodAffinityIn).
func (w *PodWrapper) PodAffinityIn(labelKey, topologyKey string, vals []string, kind PodAffinityKind) *PodWrapper {
	return w.PodAffinity(topologyKey, expression(labelKey, metav1.LabelSelectorOpIn, vals), kind)
}

// PodAntiAffinityIn creates a PodAntiAffinity term with the operator
// "In" (labelKey in vals) and injects it into the pod (upstream's
// PodAntiAffinityIn).
func (w *PodWrapper) PodAntiAffinityIn(labelKey, topologyKey string, vals []string, kind PodAffinityKind) *PodWrapper {
	return w.PodAntiAffinity(topologyKey, expression(labelKey, metav1.LabelSelectorOpIn, vals), kind)
}

// PodAffinityNotIn creates a PodAffinity term with the operator "NotIn"
// (labelKey not in vals) and injects it into the pod (upstream's
// PodAffinityNotIn).
func (w *PodWrapper) PodAffinityNotIn(labelKey, topologyKey string, vals []string, kind PodAffinityKind) *PodWrapper {
	return w.PodAffinity(topologyKey, expression(labelKey, metav1.LabelSelectorOpNotIn, vals), kind)
}

// PodAntiAffinityNotIn creates a PodAntiAffinity term with the operator
// "NotIn" (labelKey not in vals) and injects it into the pod (upstream's
// PodAntiAffinityNotIn).
func (w *PodWrapper) PodAntiAffinityNotIn(labelKey, topologyKey string, vals []string, kind PodAffinityKind) *PodWrapper {
	return w.PodAntiAffinity(topologyKey, expression(labelKey, metav1.LabelSelectorOpNotIn, vals), kind)
}

// expression is a label selector with the one match-expression (key op
// vals).
func expression(key string, op metav1.LabelSelectorOperator, vals []string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: vals}}}
}

// podAffinityTerm appends term to the required or preferred terms (weight
// 1) of podAntiAffinity (anti) or podAffinity, by kind; a kind of the
// other side, or none, panics naming the builder.
func (w *PodWrapper) podAffinityTerm(builder string, anti bool, kind PodAffinityKind, term v1.PodAffinityTerm) *PodWrapper {
	if kind < PodAffinityWithRequiredReq || kind > PodAntiAffinityWithPreferredReq || (kind >= PodAntiAffinityWithRequiredReq) != anti {
		panic(fmt.Sprintf("snapshottest: %s: kind %d is not a %s kind", builder, kind, builder))
	}
	if w.p.Spec.Affinity == nil {
		w.p.Spec.Affinity = &v1.Affinity{}
	}
	a := w.p.Spec.Affinity
	var required *[]v1.PodAffinityTerm
	var preferred *[]v1.WeightedPodAffinityTerm
	if anti {
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &v1.PodAntiAffinity{}
		}
		required, preferred = &a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, &a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	} else {
		if a.PodAffinity == nil {
			a.PodAffinity = &v1.PodAffinity{}
		}
		required, preferred = &a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, &a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	if kind == PodAffinityWithPreferredReq || kind == PodAntiAffinityWithPreferredReq {
		*preferred = append(*preferred, v1.WeightedPodAffinityTerm{Weight: 1, PodAffinityTerm: term})
	} else {
		*required = append(*required, term)
	}
	return w
}

// SpreadConstraint constructs a TopologySpreadConstraint and injects it
// into the pod (upstream's SpreadConstraint): maxSkew, topology key,
// whenUnsatisfiable mode, label selector, and minDomains,
// nodeAffinityPolicy, nodeTaintsPolicy and matchLabelKeys as given (nil:
// unset). Repeated calls add constraints. A maxSkew beyond int32 panics.
func (w *PodWrapper) SpreadConstraint(maxSkew int, tpKey string, mode v1.UnsatisfiableConstraintAction, selector *metav1.LabelSelector, minDomains *int32, nodeAffinityPolicy, nodeTaintsPolicy *v1.NodeInclusionPolicy, matchLabelKeys []string) *PodWrapper {
	if maxSkew != int(int32(maxSkew)) {
		panic(fmt.Sprintf("snapshottest: SpreadConstraint: maxSkew %d overflows int32", maxSkew))
	}
	w.p.Spec.TopologySpreadConstraints = append(w.p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
		MaxSkew:            int32(maxSkew),
		TopologyKey:        tpKey,
		WhenUnsatisfiable:  mode,
		LabelSelector:      selector,
		MinDomains:         minDomains,
		NodeAffinityPolicy: nodeAffinityPolicy,
		NodeTaintsPolicy:   nodeTaintsPolicy,
		MatchLabelKeys:     matchLabelKeys,
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

// PodInfo returns pod parsed with dec (snapshot.DecodePodInfo; nil: no
// GPU devices decoded, as snapshot.NewPodInfo); an error fails the test.
func PodInfo(t TB, dec snapshot.DeviceDecoder, pod *v1.Pod) *snapshot.PodInfo {
	t.Helper()
	pi, err := snapshot.DecodePodInfo(pod, dec)
	if err != nil {
		t.Fatalf("snapshottest: DecodePodInfo: %v", err)
	}
	return pi
}
