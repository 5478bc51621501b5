package snapshot

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
)

// Workloads finds the objects that select pods — Services,
// ReplicationControllers, ReplicaSets, StatefulSets — for upstream's
// system default topology spreading, which spreads a pod by the union of
// the selectors of the Services selecting it and of its controller
// (score.PodTopologySpread, framework.PodTopologySpread). Methods return
// nil for "none"; results are read-only. Implementations must be safe for
// concurrent reads.
//
// The Cache does not feed it yet: build one with [NewWorkloadIndex] from
// the objects the caller lists.
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
}

// WorkloadIndex is a [Workloads] over fixed lists of objects, indexed by
// namespace and name: look-ups are O(1) map reads (Services: the slice of
// the namespace). Immutable after [NewWorkloadIndex]; safe for concurrent
// use. The objects are shared, not copied, and must not be modified.
type WorkloadIndex struct {
	services map[string][]*v1.Service
	rcs      map[PodKey]*v1.ReplicationController
	rss      map[PodKey]*appsv1.ReplicaSet
	sss      map[PodKey]*appsv1.StatefulSet
}

var _ Workloads = (*WorkloadIndex)(nil)

// NewWorkloadIndex indexes objs. A nil object, an empty metadata.name, or
// two objects of one kind with the same namespace and name is an error
// wrapping [ErrInvalidObject] naming the object (kind, index, namespace and
// name) and field; nothing is returned then. O(objects).
func NewWorkloadIndex(objs WorkloadObjects) (*WorkloadIndex, error) {
	w := &WorkloadIndex{
		services: map[string][]*v1.Service{},
		rcs:      map[PodKey]*v1.ReplicationController{},
		rss:      map[PodKey]*appsv1.ReplicaSet{},
		sss:      map[PodKey]*appsv1.StatefulSet{},
	}
	seen := map[PodKey]bool{}
	for i, s := range objs.Services {
		if s == nil || s.Name == "" {
			return nil, workloadErr("Service", i, s == nil)
		}
		k := PodKey{s.Namespace, s.Name}
		if seen[k] {
			return nil, fmt.Errorf("Service %s (index %d): metadata.name: listed twice: %w", k, i, ErrInvalidObject)
		}
		seen[k] = true
		w.services[s.Namespace] = append(w.services[s.Namespace], s)
	}
	if err := indexWorkloads("ReplicationController", objs.ReplicationControllers, w.rcs); err != nil {
		return nil, err
	}
	if err := indexWorkloads("ReplicaSet", objs.ReplicaSets, w.rss); err != nil {
		return nil, err
	}
	if err := indexWorkloads("StatefulSet", objs.StatefulSets, w.sss); err != nil {
		return nil, err
	}
	return w, nil
}

type namedObject interface {
	comparable
	GetNamespace() string
	GetName() string
}

func indexWorkloads[T namedObject](kind string, objs []T, into map[PodKey]T) error {
	var zero T
	for i, o := range objs {
		if o == zero || o.GetName() == "" {
			return workloadErr(kind, i, o == zero)
		}
		k := PodKey{o.GetNamespace(), o.GetName()}
		if _, dup := into[k]; dup {
			return fmt.Errorf("%s %s (index %d): metadata.name: listed twice: %w", kind, k, i, ErrInvalidObject)
		}
		into[k] = o
	}
	return nil
}

func workloadErr(kind string, i int, isNil bool) error {
	if isNil {
		return fmt.Errorf("%s (index %d) is nil: %w", kind, i, ErrInvalidObject)
	}
	return fmt.Errorf("%s (index %d): metadata.name is empty: %w", kind, i, ErrInvalidObject)
}

// Services returns the Services in namespace, in the order given.
func (w *WorkloadIndex) Services(namespace string) []*v1.Service { return w.services[namespace] }

// ReplicationController returns the named ReplicationController, or nil.
func (w *WorkloadIndex) ReplicationController(namespace, name string) *v1.ReplicationController {
	return w.rcs[PodKey{namespace, name}]
}

// ReplicaSet returns the named ReplicaSet, or nil.
func (w *WorkloadIndex) ReplicaSet(namespace, name string) *appsv1.ReplicaSet {
	return w.rss[PodKey{namespace, name}]
}

// StatefulSet returns the named StatefulSet, or nil.
func (w *WorkloadIndex) StatefulSet(namespace, name string) *appsv1.StatefulSet {
	return w.sss[PodKey{namespace, name}]
}
