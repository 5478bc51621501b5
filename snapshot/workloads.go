package snapshot

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/schedkit/schedkit/internal/objects"
)

// Workloads finds the objects that select pods — Services,
// ReplicationControllers, ReplicaSets, StatefulSets — for upstream's
// system default topology spreading, which spreads a pod by the union of
// the selectors of the Services selecting it and of its controller
// (score.PodTopologySpread, framework.PodTopologySpread). Methods return
// nil for "none"; results are read-only. Implementations must be safe for
// concurrent reads.
//
// A [Snapshot] and a [Fork] implement it with the objects fed to the
// [Cache] (or reserve.Ledger) they come from, and scorers and filters
// that need it find it on the cluster they are given; a [WorkloadIndex]
// holds fixed lists of objects.
type Workloads interface {
	// Services returns the Services in namespace.
	Services(namespace string) []*v1.Service
	// ReplicationController returns the named ReplicationController, or nil.
	ReplicationController(namespace, name string) *v1.ReplicationController
	// ReplicaSet returns the named ReplicaSet, or nil.
	ReplicaSet(namespace, name string) *appsv1.ReplicaSet
	// StatefulSet returns the named StatefulSet, or nil.
	StatefulSet(namespace, name string) *appsv1.StatefulSet
}

// WorkloadObjects lists the objects a [WorkloadIndex] is built from.
type WorkloadObjects struct {
	Services               []*v1.Service
	ReplicationControllers []*v1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
	Namespaces             []*v1.Namespace
	PriorityClasses        []*schedulingv1.PriorityClass
	PodDisruptionBudgets   []*policyv1.PodDisruptionBudget
}

// WorkloadIndex holds fixed lists of cluster objects with the look-ups of
// a [Snapshot] (Namespace, Services, ReplicationController, ReplicaSet,
// StatefulSet, PriorityClass, PodDisruptionBudgets): one or two map reads
// each. Immutable after [NewWorkloadIndex]; safe for concurrent use. The
// objects are shared, not copied, and must not be modified. A Cache,
// Snapshot or Fork holds the same objects under the informer contract;
// a WorkloadIndex is for a scorer or filter given its objects apart from
// the snapshot it scores.
type WorkloadIndex struct {
	objs *objects.Set
}

var _ Workloads = (*WorkloadIndex)(nil)

// NewWorkloadIndex indexes objs. A nil object, an empty metadata.name or
// two objects of one kind with the same namespace and name is an error
// wrapping [ErrInvalidObject] naming the object (kind, index, namespace
// and name) and field; nothing is returned then. Unlike
// [Cache.AddObject], it does not check the objects' content: a
// controller with an invalid selector is held, and selects nothing (as
// upstream's DefaultSelector treats one).
// O(objects × (namespaces + objects per namespace)).
func NewWorkloadIndex(objs WorkloadObjects) (*WorkloadIndex, error) {
	tok := newToken()
	var set *objects.Set
	var err error
	add := func(field string, list []runtime.Object) {
		for i, o := range list {
			if err != nil {
				return
			}
			k, verr := objects.Identify(o)
			switch {
			case verr != nil:
				err = fmt.Errorf("WorkloadObjects.%s[%d]: %w: %w", field, i, verr, ErrInvalidObject)
			case set.Get(k) != nil:
				err = fmt.Errorf("WorkloadObjects.%s[%d]: %s: metadata.name: listed twice: %w", field, i, k, ErrInvalidObject)
			default:
				set = set.Put(tok, k, o)
			}
		}
	}
	add("Services", asObjects(objs.Services))
	add("ReplicationControllers", asObjects(objs.ReplicationControllers))
	add("ReplicaSets", asObjects(objs.ReplicaSets))
	add("StatefulSets", asObjects(objs.StatefulSets))
	add("Namespaces", asObjects(objs.Namespaces))
	add("PriorityClasses", asObjects(objs.PriorityClasses))
	add("PodDisruptionBudgets", asObjects(objs.PodDisruptionBudgets))
	if err != nil {
		return nil, err
	}
	return &WorkloadIndex{objs: set}, nil
}

func asObjects[T runtime.Object](list []T) []runtime.Object {
	out := make([]runtime.Object, len(list))
	for i, o := range list {
		out[i] = o
	}
	return out
}

// Namespace returns the Namespace called name, or nil. This and the
// look-ups below return the objects as they were added, not copies, and
// the index's own slices: read-only, owned by the index.
func (w *WorkloadIndex) Namespace(name string) *v1.Namespace { return w.objs.Namespace(name) }

// Services returns the Services in namespace, by name.
func (w *WorkloadIndex) Services(namespace string) []*v1.Service { return w.objs.Services(namespace) }

// ReplicationController returns the named ReplicationController, or nil.
func (w *WorkloadIndex) ReplicationController(namespace, name string) *v1.ReplicationController {
	return w.objs.ReplicationController(namespace, name)
}

// ReplicaSet returns the named ReplicaSet, or nil.
func (w *WorkloadIndex) ReplicaSet(namespace, name string) *appsv1.ReplicaSet {
	return w.objs.ReplicaSet(namespace, name)
}

// StatefulSet returns the named StatefulSet, or nil.
func (w *WorkloadIndex) StatefulSet(namespace, name string) *appsv1.StatefulSet {
	return w.objs.StatefulSet(namespace, name)
}

// PriorityClass returns the PriorityClass called name, or nil.
func (w *WorkloadIndex) PriorityClass(name string) *schedulingv1.PriorityClass {
	return w.objs.PriorityClass(name)
}

// PodDisruptionBudgets returns the PodDisruptionBudgets in namespace, by
// name.
func (w *WorkloadIndex) PodDisruptionBudgets(namespace string) []*policyv1.PodDisruptionBudget {
	return w.objs.PodDisruptionBudgets(namespace)
}

var (
	_ Workloads = (*Snapshot)(nil)
	_ Workloads = (*Fork)(nil)
	_ Workloads = (*Cache)(nil)
)
