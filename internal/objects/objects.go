// Package objects holds the cluster objects other than nodes and pods
// that scheduling rules read — Namespaces (their labels, for
// namespaceSelector), Services, ReplicationControllers, ReplicaSets and
// StatefulSets (the selector of upstream's system default spreading),
// PriorityClasses (a pod's priority) and PodDisruptionBudgets
// (preemption, drain) — for snapshot's Cache, Snapshot and Fork and for
// snapshot.WorkloadIndex: the one validation of such objects ([Validate],
// also used by snapshot/load) and the one store of them ([Set]), a
// persistent map that copies on write by owner token like snapshot's node
// tree, so that a snapshot's objects never change and a Fork layer's
// first change costs O(namespaces + objects of one namespace).
//
// Layer: internal, bottom. Imports k8s.io/api, k8s.io/apimachinery and
// internal/selector (the one selector engine validates label selectors).
//
// # Concurrency
//
// A Set reached from a frozen snapshot is never changed (writers with
// another token copy first), so reads are safe for concurrent use; a
// writer must own its token alone.
//
// # Cost
//
// Look-ups are one or two map reads. [Set.Put] and [Set.Delete] by the
// owner of the set and of the namespace's bucket are O(1) for named
// kinds and O(objects of that kind in the namespace) for the listed
// kinds (Services, PodDisruptionBudgets, whose slices are copied so that
// slices handed out never change); by another owner they first copy the
// top level (O(namespaces + priority classes)) and the bucket (O(objects
// in the namespace)).
package objects

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/schedkit/schedkit/internal/selector"
)

// Kind is one of the object kinds a [Set] holds.
type Kind uint8

// The kinds, in the order [Set.Keys] lists them.
const (
	Namespace Kind = iota + 1
	Service
	ReplicationController
	ReplicaSet
	StatefulSet
	PriorityClass
	PodDisruptionBudget
)

var kindNames = [...]string{"", "Namespace", "Service", "ReplicationController", "ReplicaSet", "StatefulSet", "PriorityClass", "PodDisruptionBudget"}

// String is the kind's API name ("Service").
func (k Kind) String() string {
	if int(k) < len(kindNames) && k > 0 {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Namespaced reports whether objects of the kind live in a namespace.
func (k Kind) Namespaced() bool { return k != Namespace && k != PriorityClass }

// Key identifies an object: its kind, namespace ("" for cluster-scoped
// kinds) and name.
type Key struct {
	Kind      Kind
	Namespace string
	Name      string
}

// String is "Service default/web" or "Namespace team".
func (k Key) String() string {
	if k.Kind.Namespaced() {
		return k.Kind.String() + " " + k.Namespace + "/" + k.Name
	}
	return k.Kind.String() + " " + k.Name
}

// Identify returns obj's key. A nil object (or typed nil), a type other
// than the seven kinds (as pointers), or an empty metadata.name is an
// error naming the object and field. O(1).
func Identify(obj runtime.Object) (Key, error) {
	var k Key
	var m metav1.Object // each kind's metadata; read only when not nil
	var isNil bool
	switch o := obj.(type) {
	case *v1.Namespace:
		k.Kind, m, isNil = Namespace, o, o == nil
	case *v1.Service:
		k.Kind, m, isNil = Service, o, o == nil
	case *v1.ReplicationController:
		k.Kind, m, isNil = ReplicationController, o, o == nil
	case *appsv1.ReplicaSet:
		k.Kind, m, isNil = ReplicaSet, o, o == nil
	case *appsv1.StatefulSet:
		k.Kind, m, isNil = StatefulSet, o, o == nil
	case *schedulingv1.PriorityClass:
		k.Kind, m, isNil = PriorityClass, o, o == nil
	case *policyv1.PodDisruptionBudget:
		k.Kind, m, isNil = PodDisruptionBudget, o, o == nil
	case nil:
		return Key{}, errors.New("object is nil")
	default:
		return Key{}, fmt.Errorf("object of type %T: not a Namespace, Service, ReplicationController, ReplicaSet, StatefulSet, PriorityClass or PodDisruptionBudget", obj)
	}
	if isNil {
		return Key{}, fmt.Errorf("%s is nil", k.Kind)
	}
	k.Name = m.GetName()
	if k.Kind.Namespaced() {
		k.Namespace = m.GetNamespace()
	}
	if k.Name == "" {
		where := ""
		if k.Kind.Namespaced() {
			where = fmt.Sprintf(" in namespace %q", k.Namespace)
		}
		return Key{}, fmt.Errorf("%s%s: metadata.name is empty", k.Kind, where)
	}
	return k, nil
}

// Validate returns obj's key after checking what the scheduling rules
// read, as the API server's validation would: metadata.name (and a
// non-empty metadata.namespace) by the kind's naming rule; a cluster-scoped object
// without metadata.namespace; namespace labels valid label keys and
// values; Service and ReplicationController spec.selector valid labels;
// ReplicaSet, StatefulSet and PodDisruptionBudget spec.selector a valid
// label selector (operators, keys, values; nil selects nothing and is
// accepted); a PodDisruptionBudget without both minAvailable and
// maxUnavailable, each a non-negative integer or a percentage (at most
// 100%); a PriorityClass's preemptionPolicy PreemptLowerPriority or Never
// and its value at most 1,000,000,000 unless its name starts with
// "system-" (upstream HighestUserDefinablePriority). Errors read "Service default/web: spec.selector: ...".
// O(labels + selector size).
func Validate(obj runtime.Object) (Key, error) {
	k, err := Identify(obj)
	if err != nil {
		return Key{}, err
	}
	if errs := Check(obj); len(errs) > 0 {
		return Key{}, fmt.Errorf("%s: %w", k, errs.ToAggregate())
	}
	return k, nil
}

// Check returns what is wrong with the content of obj, an object
// [Identify] accepts (see [Validate]), one field error per problem.
func Check(obj runtime.Object) field.ErrorList {
	errs := checkNames(obj)
	switch o := obj.(type) {
	case *v1.Namespace:
		if o.Namespace != "" {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), o.Namespace, "not allowed on a cluster-scoped object"))
		}
		errs = append(errs, metav1validation.ValidateLabels(o.Labels, field.NewPath("metadata", "labels"))...)
	case *v1.Service:
		errs = append(errs, metav1validation.ValidateLabels(o.Spec.Selector, field.NewPath("spec", "selector"))...)
	case *v1.ReplicationController:
		errs = append(errs, metav1validation.ValidateLabels(o.Spec.Selector, field.NewPath("spec", "selector"))...)
	case *appsv1.ReplicaSet:
		errs = labelSelector(errs, o.Spec.Selector)
	case *appsv1.StatefulSet:
		errs = labelSelector(errs, o.Spec.Selector)
	case *policyv1.PodDisruptionBudget:
		errs = labelSelector(errs, o.Spec.Selector)
		spec := field.NewPath("spec")
		if o.Spec.MinAvailable != nil && o.Spec.MaxUnavailable != nil {
			errs = append(errs, field.Invalid(spec.Child("maxUnavailable"), o.Spec.MaxUnavailable.String(), "minAvailable and maxUnavailable cannot be both set"))
		}
		errs = intOrPercent(errs, o.Spec.MinAvailable, spec.Child("minAvailable"))
		errs = intOrPercent(errs, o.Spec.MaxUnavailable, spec.Child("maxUnavailable"))
	case *schedulingv1.PriorityClass:
		if o.Namespace != "" {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), o.Namespace, "not allowed on a cluster-scoped object"))
		}
		if p := o.PreemptionPolicy; p != nil && *p != v1.PreemptLowerPriority && *p != v1.PreemptNever {
			errs = append(errs, field.NotSupported(field.NewPath("preemptionPolicy"), *p, []string{string(v1.PreemptLowerPriority), string(v1.PreemptNever)}))
		}
		if o.Value > HighestUserDefinablePriority && !strings.HasPrefix(o.Name, "system-") {
			errs = append(errs, field.Invalid(field.NewPath("value"), o.Value, "must not exceed 1000000000 unless the name starts with system-"))
		}
	}
	return errs
}

// checkNames checks metadata.name with the rule the API server applies to
// the kind (k8s.io/apimachinery/pkg/api/validation): a DNS-1123 label for
// a Namespace and a StatefulSet, a DNS-1035 label for a Service, a
// DNS-1123 subdomain for the others; and metadata.namespace of a
// namespaced kind with [NamespacedNames] (required, a Namespace name). An
// empty name is [Identify]'s error, not repeated here.
func checkNames(obj runtime.Object) field.ErrorList {
	m, ok := obj.(metav1.Object)
	if !ok || m.GetName() == "" {
		return nil
	}
	nameRule := apivalidation.NameIsDNSSubdomain
	namespaced := true
	switch obj.(type) {
	case *v1.Namespace:
		nameRule, namespaced = apivalidation.ValidateNamespaceName, false
	case *v1.Service:
		nameRule = apivalidation.NameIsDNS1035Label
	case *appsv1.StatefulSet:
		nameRule = apivalidation.NameIsDNSLabel
	case *schedulingv1.PriorityClass:
		namespaced = false
	}
	if !namespaced {
		return MetaNames(m.GetName(), "", nameRule)
	}
	return NamespacedNames(m.GetName(), m.GetNamespace(), nameRule)
}

// MetaNames checks name (metadata.name) with nameRule and a non-empty
// namespace (metadata.namespace) as a Namespace name (a DNS-1123 label,
// apimachinery ValidateNamespaceName), one field error per problem; an
// empty name is not checked (the caller reports it). It is the one naming
// check of the module: the kinds above, and pods (nameRule
// NameIsDNSSubdomain, upstream pkg/apis/core/validation ValidatePodName)
// and nodes (NameIsDNSSubdomain, ValidateNodeName) for snapshot and
// reserve. O(len(name) + len(namespace)); a valid namespace costs a byte
// loop ([DNSSubdomain]'s fast path).
func MetaNames(name, namespace string, nameRule apivalidation.ValidateNameFunc) field.ErrorList {
	var errs field.ErrorList
	if name != "" {
		for _, msg := range nameRule(name, false) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, msg))
		}
	}
	if namespace != "" {
		for _, msg := range namespaceName(namespace) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), namespace, msg))
		}
	}
	return errs
}

// NamespacedNames is [MetaNames] for an object of a namespaced kind: an
// empty namespace is an error too ("metadata.namespace: Required value"),
// as the API server's ValidateObjectMetaAccessor gives for a namespaced
// object (k8s.io/apimachinery v0.37.2 pkg/api/validation/objectmeta.go).
// The API server never stores such an object: it fills an empty
// namespace from the request's URL before validating
// (k8s.io/apiserver pkg/registry/rest/create.go BeforeCreate), and
// schedkit has no request to take one from, so it refuses rather than
// guessing "default". O(len(name) + len(namespace)).
func NamespacedNames(name, namespace string, nameRule apivalidation.ValidateNameFunc) field.ErrorList {
	errs := MetaNames(name, namespace, nameRule)
	if namespace == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "namespace"), ""))
	}
	return errs
}

// PodNames checks the names in a pod as the API server does (k8s v1.37.2
// pkg/apis/core/validation): metadata.name as a DNS-1123 subdomain
// (ValidatePodName) and metadata.namespace as required and a DNS-1123
// label ([NamespacedNames]); spec.nodeName (ValidatePodSpec) and
// status.nominatedNodeName (ValidatePodStatusUpdate), when set, as node
// names (ValidateNodeName: DNS-1123 subdomains). One field error per
// problem; an empty name is not checked (the caller reports it).
// O(total length of the names); allocates only on error.
func PodNames(pod *v1.Pod) field.ErrorList {
	errs := NamespacedNames(pod.Name, pod.Namespace, DNSSubdomain)
	errs = nodeName(errs, field.NewPath("spec", "nodeName"), pod.Spec.NodeName)
	return nodeName(errs, field.NewPath("status", "nominatedNodeName"), pod.Status.NominatedNodeName)
}

// nodeName appends to errs the problems of a non-empty node name at path.
func nodeName(errs field.ErrorList, path *field.Path, n string) field.ErrorList {
	if n == "" {
		return errs
	}
	for _, msg := range DNSSubdomain(n, false) {
		errs = append(errs, field.Invalid(path, n, msg))
	}
	return errs
}

// HighestUserDefinablePriority is upstream's (k8s.io/api/scheduling/v1
// documents it; apis/scheduling HighestUserDefinablePriority).
const HighestUserDefinablePriority = 1_000_000_000

// labelSelector checks spec.selector with the one selector engine (which
// validates as apimachinery's LabelSelectorAsSelector).
func labelSelector(errs field.ErrorList, ls *metav1.LabelSelector) field.ErrorList {
	if _, err := selector.FromLabelSelector(ls); err != nil {
		errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: "spec.selector", BadValue: field.OmitValueType{}, Detail: err.Error()})
	}
	return errs
}

func intOrPercent(errs field.ErrorList, v *intstr.IntOrString, path *field.Path) field.ErrorList {
	if v == nil {
		return errs
	}
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			errs = append(errs, field.Invalid(path, v.IntVal, "must be greater than or equal to 0"))
		}
		return errs
	}
	s, ok := strings.CutSuffix(v.StrVal, "%")
	n, err := strconv.Atoi(s)
	switch {
	case !ok || err != nil:
		errs = append(errs, field.Invalid(path, v.StrVal, "must be an integer or a percentage (e.g. '5%')"))
	case n < 0 || n > 100:
		errs = append(errs, field.Invalid(path, v.StrVal, "must be a percentage between 0% and 100%"))
	}
	return errs
}

// sortedInsert returns a copy of list with obj in name order, replacing
// the object of the same name.
func sortedInsert[T interface{ GetName() string }](list []T, obj T) []T {
	name := obj.GetName()
	i, found := slices.BinarySearchFunc(list, name, func(o T, n string) int { return strings.Compare(o.GetName(), n) })
	out := make([]T, 0, len(list)+1)
	out = append(out, list[:i]...)
	out = append(out, obj)
	if found {
		i++
	}
	return append(out, list[i:]...)
}

// sortedDelete returns a copy of list without the object called name (list
// itself if it has none).
func sortedDelete[T interface{ GetName() string }](list []T, name string) []T {
	i, found := slices.BinarySearchFunc(list, name, func(o T, n string) int { return strings.Compare(o.GetName(), n) })
	if !found {
		return list
	}
	if len(list) == 1 {
		return nil
	}
	out := make([]T, 0, len(list)-1)
	out = append(out, list[:i]...)
	return append(out, list[i+1:]...)
}

// DecodePlaceholder parses one of the reservation ledger's placeholder
// pods (namespace reserve.ReservationNamespace, which is not a DNS label
// on purpose, so that no real pod shares a key with a placeholder): it is
// snapshot.DecodePodInfo without the name check, everything else checked
// alike. Package snapshot sets it in its init, which runs before that of
// any package importing snapshot, and nothing changes it afterwards; it
// holds no state. The result is a *snapshot.PodInfo as an any: call it
// through internal/nodeview.Placeholder, which gives it its type. Which
// pods are placeholders is the caller's knowledge (the ledger builds
// them), never a mark on the pod object.
var DecodePlaceholder func(pod *v1.Pod) (any, error)
