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

// Cluster objects other than nodes and pods. A Cache, a Snapshot and a
// Fork hold, beside nodes and pods, the objects scheduling rules read:
// Namespaces (labels, for namespaceSelector), Services,
// ReplicationControllers, ReplicaSets and StatefulSets (the selector of
// upstream's system default topology spreading), PriorityClasses and
// PodDisruptionBudgets. They are taken under the informer contract
// (internal/informertest's objects suite): AddObject of a known object
// (same kind, namespace and name) replaces it, UpdateObject of an unknown
// one adds it, RemoveObject of an unknown one is a no-op; the key decides,
// so a stale delete object removes the current one. A bad object is an
// error wrapping [ErrInvalidObject] that names the object and field
// ("Service default/web: spec.selector: ..."), and changes nothing: nil,
// a type other than those seven (pointers), an empty metadata.name, an
// invalid label selector or selector labels, a namespace set on a
// Namespace or PriorityClass, a PodDisruptionBudget with both
// minAvailable and maxUnavailable or a bad integer-or-percentage, a
// PriorityClass with an unknown preemptionPolicy or a value above
// 1,000,000,000 without the system- prefix.
//
// Objects are shared, not copied: the caller must not modify an object
// after handing it over, and objects and slices returned by the look-ups
// are read-only. A Snapshot's objects never change; a Fork's change with
// its layer (Fork O(1), Revert O(1), Commit O(1), as for nodes). Cost of a
// change: O(1) map writes for named kinds and O(Services or
// PodDisruptionBudgets in the namespace) for those two, whose slices are
// copied; the first change after a snapshot (or in a Fork layer) also
// copies the namespace index (O(namespaces + PriorityClasses)) and the
// namespace's objects. Look-ups are one or two map reads and allocate
// nothing.

func (s *state) addObject(obj runtime.Object) error {
	k, err := objects.Validate(obj)
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalidObject)
	}
	s.objs = s.objs.Put(s.tok, k, obj)
	return nil
}

func (s *state) removeObject(obj runtime.Object) error {
	k, err := objects.Identify(obj)
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalidObject)
	}
	s.objs = s.objs.Delete(s.tok, k)
	return nil
}

// AddObject adds obj (a *v1.Namespace, *v1.Service,
// *v1.ReplicationController, *appsv1.ReplicaSet, *appsv1.StatefulSet,
// *schedulingv1.PriorityClass or *policyv1.PodDisruptionBudget), or
// replaces the object with its kind, namespace and name. Errors (see
// "Cluster objects" in the package source, objects.go, and [Cache]) name
// the object and field and change nothing.
func (c *Cache) AddObject(obj runtime.Object) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st.addObject(obj)
}

// UpdateObject is [Cache.AddObject]: an update of an unknown object adds
// it.
func (c *Cache) UpdateObject(obj runtime.Object) error { return c.AddObject(obj) }

// RemoveObject removes the object with obj's kind, namespace and name; an
// unknown one is a no-op. Only the key is read, so a stale object (a
// tombstone's) removes the current one. Errors (nil, an unsupported type,
// an empty metadata.name) wrap [ErrInvalidObject].
func (c *Cache) RemoveObject(obj runtime.Object) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st.removeObject(obj)
}

// AddObject adds or replaces a cluster object in the current layer, as
// [Cache.AddObject].
func (f *Fork) AddObject(obj runtime.Object) error { return f.st.addObject(obj) }

// RemoveObject removes a cluster object from the current layer, as
// [Cache.RemoveObject].
func (f *Fork) RemoveObject(obj runtime.Object) error { return f.st.removeObject(obj) }

// The look-ups below are one implementation on view, promoted to
// Snapshot and Fork (for a Fork they read the current layer). Each
// returns the objects as they were added (AddObject), not copies, and
// the slices the cache keeps: read-only, owned by the cache (changing an
// object or a slice changes what every snapshot and fork sharing it sees,
// without the indexes built from it following). O(1) map look-ups, no
// allocation.

// Namespace returns the Namespace called name, or nil. Read-only.
func (s *view) Namespace(name string) *v1.Namespace { return s.st.objs.Namespace(name) }

// Services returns the Services in namespace, by name, or nil.
// Read-only (the slice too).
func (s *view) Services(namespace string) []*v1.Service { return s.st.objs.Services(namespace) }

// ReplicationController returns the named ReplicationController, or nil.
// Read-only.
func (s *view) ReplicationController(namespace, name string) *v1.ReplicationController {
	return s.st.objs.ReplicationController(namespace, name)
}

// ReplicaSet returns the named ReplicaSet, or nil. Read-only.
func (s *view) ReplicaSet(namespace, name string) *appsv1.ReplicaSet {
	return s.st.objs.ReplicaSet(namespace, name)
}

// StatefulSet returns the named StatefulSet, or nil. Read-only.
func (s *view) StatefulSet(namespace, name string) *appsv1.StatefulSet {
	return s.st.objs.StatefulSet(namespace, name)
}

// PriorityClass returns the PriorityClass called name, or nil.
// Read-only.
func (s *view) PriorityClass(name string) *schedulingv1.PriorityClass {
	return s.st.objs.PriorityClass(name)
}

// PodDisruptionBudgets returns the PodDisruptionBudgets in namespace, by
// name, or nil. Read-only (the slice too).
func (s *view) PodDisruptionBudgets(namespace string) []*policyv1.PodDisruptionBudget {
	return s.st.objs.PodDisruptionBudgets(namespace)
}

// read runs f on c's current objects under c's lock (an owner's writes
// change maps in place).
func read[T any](c *Cache, f func(*objects.Set) T) T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return f(c.st.objs)
}

// Namespace, Services, ReplicationController, ReplicaSet, StatefulSet,
// PriorityClass and PodDisruptionBudgets read the cache's current
// objects, as the [Snapshot] methods of the same names; the results stay
// valid (and unchanged) after later events. Read-only, owned by the cache
// (objects and slices are not copied).
func (c *Cache) Namespace(name string) *v1.Namespace {
	return read(c, func(o *objects.Set) *v1.Namespace { return o.Namespace(name) })
}

// Services: see Snapshot's.
func (c *Cache) Services(namespace string) []*v1.Service {
	return read(c, func(o *objects.Set) []*v1.Service { return o.Services(namespace) })
}

// ReplicationController: see Snapshot's.
func (c *Cache) ReplicationController(namespace, name string) *v1.ReplicationController {
	return read(c, func(o *objects.Set) *v1.ReplicationController { return o.ReplicationController(namespace, name) })
}

// ReplicaSet: see Snapshot's.
func (c *Cache) ReplicaSet(namespace, name string) *appsv1.ReplicaSet {
	return read(c, func(o *objects.Set) *appsv1.ReplicaSet { return o.ReplicaSet(namespace, name) })
}

// StatefulSet: see Snapshot's.
func (c *Cache) StatefulSet(namespace, name string) *appsv1.StatefulSet {
	return read(c, func(o *objects.Set) *appsv1.StatefulSet { return o.StatefulSet(namespace, name) })
}

// PriorityClass: see Snapshot's.
func (c *Cache) PriorityClass(name string) *schedulingv1.PriorityClass {
	return read(c, func(o *objects.Set) *schedulingv1.PriorityClass { return o.PriorityClass(name) })
}

// PodDisruptionBudgets: see Snapshot's.
func (c *Cache) PodDisruptionBudgets(namespace string) []*policyv1.PodDisruptionBudget {
	return read(c, func(o *objects.Set) []*policyv1.PodDisruptionBudget { return o.PodDisruptionBudgets(namespace) })
}
