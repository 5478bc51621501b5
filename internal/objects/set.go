package objects

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Set is a persistent collection of objects keyed by [Key]. The nil *Set
// is empty and ready to read. A writer holding token tok changes a Set
// (and a namespace's bucket) in place only if it carries tok; otherwise
// [Set.Put] and [Set.Delete] copy it first and return the copy, so every
// Set reachable from a frozen snapshot stays as it was. Returned objects
// and slices are shared and read-only.
type Set struct {
	owner uint64
	ns    map[string]*bucket
	pcs   map[string]*schedulingv1.PriorityClass
	n     int
}

// bucket is one namespace's objects (and the Namespace object itself).
type bucket struct {
	owner     uint64
	namespace *v1.Namespace
	services  []*v1.Service // by name
	pdbs      []*policyv1.PodDisruptionBudget
	rcs       map[string]*v1.ReplicationController
	rss       map[string]*appsv1.ReplicaSet
	sss       map[string]*appsv1.StatefulSet
}

func (b *bucket) empty() bool {
	return b.namespace == nil && len(b.services) == 0 && len(b.pdbs) == 0 && len(b.rcs) == 0 && len(b.rss) == 0 && len(b.sss) == 0
}

// Len is the number of objects in s.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

func (s *Set) bucket(ns string) *bucket {
	if s == nil {
		return nil
	}
	return s.ns[ns]
}

// Namespace returns the Namespace called name, or nil.
func (s *Set) Namespace(name string) *v1.Namespace {
	if b := s.bucket(name); b != nil {
		return b.namespace
	}
	return nil
}

// Services returns the Services of namespace in name order, or nil.
func (s *Set) Services(namespace string) []*v1.Service {
	if b := s.bucket(namespace); b != nil {
		return b.services
	}
	return nil
}

// PodDisruptionBudgets returns the PodDisruptionBudgets of namespace in
// name order, or nil.
func (s *Set) PodDisruptionBudgets(namespace string) []*policyv1.PodDisruptionBudget {
	if b := s.bucket(namespace); b != nil {
		return b.pdbs
	}
	return nil
}

// ReplicationController returns the named ReplicationController, or nil.
func (s *Set) ReplicationController(namespace, name string) *v1.ReplicationController {
	if b := s.bucket(namespace); b != nil {
		return b.rcs[name]
	}
	return nil
}

// ReplicaSet returns the named ReplicaSet, or nil.
func (s *Set) ReplicaSet(namespace, name string) *appsv1.ReplicaSet {
	if b := s.bucket(namespace); b != nil {
		return b.rss[name]
	}
	return nil
}

// StatefulSet returns the named StatefulSet, or nil.
func (s *Set) StatefulSet(namespace, name string) *appsv1.StatefulSet {
	if b := s.bucket(namespace); b != nil {
		return b.sss[name]
	}
	return nil
}

// PriorityClass returns the PriorityClass called name, or nil.
func (s *Set) PriorityClass(name string) *schedulingv1.PriorityClass {
	if s == nil {
		return nil
	}
	return s.pcs[name]
}

// Get returns the object with key k, or nil.
func (s *Set) Get(k Key) runtime.Object {
	switch k.Kind {
	case Namespace:
		if o := s.Namespace(k.Name); o != nil {
			return o
		}
	case Service:
		for _, o := range s.Services(k.Namespace) {
			if o.Name == k.Name {
				return o
			}
		}
	case ReplicationController:
		if o := s.ReplicationController(k.Namespace, k.Name); o != nil {
			return o
		}
	case ReplicaSet:
		if o := s.ReplicaSet(k.Namespace, k.Name); o != nil {
			return o
		}
	case StatefulSet:
		if o := s.StatefulSet(k.Namespace, k.Name); o != nil {
			return o
		}
	case PriorityClass:
		if o := s.PriorityClass(k.Name); o != nil {
			return o
		}
	case PodDisruptionBudget:
		for _, o := range s.PodDisruptionBudgets(k.Namespace) {
			if o.Name == k.Name {
				return o
			}
		}
	}
	return nil
}

// own returns s, or a copy of its top level owned by tok.
func (s *Set) own(tok uint64) *Set {
	if s == nil {
		return &Set{owner: tok, ns: map[string]*bucket{}, pcs: map[string]*schedulingv1.PriorityClass{}}
	}
	if s.owner == tok {
		return s
	}
	return &Set{owner: tok, ns: maps.Clone(s.ns), pcs: maps.Clone(s.pcs), n: s.n}
}

// ownBucket returns namespace ns's bucket of s (owned by tok), copying or
// making it.
func (s *Set) ownBucket(tok uint64, ns string) *bucket {
	b := s.ns[ns]
	switch {
	case b == nil:
		b = &bucket{owner: tok}
	case b.owner != tok:
		b = &bucket{owner: tok, namespace: b.namespace, services: b.services, pdbs: b.pdbs,
			rcs: maps.Clone(b.rcs), rss: maps.Clone(b.rss), sss: maps.Clone(b.sss)}
	default:
		return b
	}
	s.ns[ns] = b
	return b
}

// Put adds obj under k (its [Identify] key; obj is validated by the
// caller), replacing the object with that key, and returns the Set to use
// from now on: s itself if tok owns it, else a copy. Cost: see the
// package doc.
func (s *Set) Put(tok uint64, k Key, obj runtime.Object) *Set {
	had := s.Get(k) != nil
	s = s.own(tok)
	if !had {
		s.n++
	}
	if k.Kind == PriorityClass {
		s.pcs[k.Name] = obj.(*schedulingv1.PriorityClass)
		return s
	}
	ns := k.Namespace
	if k.Kind == Namespace {
		ns = k.Name
	}
	b := s.ownBucket(tok, ns)
	switch o := obj.(type) {
	case *v1.Namespace:
		b.namespace = o
	case *v1.Service:
		b.services = sortedInsert(b.services, o)
	case *policyv1.PodDisruptionBudget:
		b.pdbs = sortedInsert(b.pdbs, o)
	case *v1.ReplicationController:
		b.rcs = put(b.rcs, k.Name, o)
	case *appsv1.ReplicaSet:
		b.rss = put(b.rss, k.Name, o)
	case *appsv1.StatefulSet:
		b.sss = put(b.sss, k.Name, o)
	}
	return s
}

func put[T any](m map[string]T, k string, v T) map[string]T {
	if m == nil {
		m = map[string]T{}
	}
	m[k] = v
	return m
}

// Delete removes the object with key k, if any, and returns the Set to
// use from now on (s itself if there was nothing to remove or tok owns
// it, else a copy).
func (s *Set) Delete(tok uint64, k Key) *Set {
	if s.Get(k) == nil {
		return s
	}
	s = s.own(tok)
	s.n--
	if k.Kind == PriorityClass {
		delete(s.pcs, k.Name)
		return s
	}
	ns := k.Namespace
	if k.Kind == Namespace {
		ns = k.Name
	}
	b := s.ownBucket(tok, ns)
	switch k.Kind {
	case Namespace:
		b.namespace = nil
	case Service:
		b.services = sortedDelete(b.services, k.Name)
	case PodDisruptionBudget:
		b.pdbs = sortedDelete(b.pdbs, k.Name)
	case ReplicationController:
		delete(b.rcs, k.Name)
	case ReplicaSet:
		delete(b.rss, k.Name)
	case StatefulSet:
		delete(b.sss, k.Name)
	}
	if b.empty() {
		delete(s.ns, ns)
	}
	return s
}
