package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/schedkit/schedkit/internal/objects"
	"github.com/schedkit/schedkit/internal/quantity"
	"github.com/schedkit/schedkit/internal/resname"
	"github.com/schedkit/schedkit/snapshot"
)

// problem is one validation failure inside an object.
type problem struct {
	field string
	err   error
}

// nodeProblems lists what is wrong with n: a missing name, a name that
// is not a DNS-1123 subdomain (refused by snapshot.Cache.AddNode, as by
// the API server), negative capacity or allocatable quantities.
// O(resources).
func nodeProblems(n *v1.Node) []problem {
	var ps []problem
	if n.Name == "" {
		ps = append(ps, problem{"metadata.name", ErrMissingName})
	}
	ps = invalid(ps, objects.MetaNames(n.Name, "", apivalidation.NameIsDNSSubdomain))
	ps = negatives(ps, "status.capacity", n.Status.Capacity)
	ps = negatives(ps, "status.allocatable", n.Status.Allocatable)
	ps = integers(ps, "status.capacity", n.Status.Capacity)
	return integers(ps, "status.allocatable", n.Status.Allocatable)
}

// podProblems lists what is wrong with p: a missing name; what
// snapshot.ValidatePod finds, which is what snapshot.NewPodInfo and
// Cache.AddPod refuse a pod for before parsing it (names, node selector,
// node and pod affinity, topology spread constraints, as the API server
// validates them; [ErrInvalidObject]); negative quantities anywhere the
// scheduler may read them (component-helpers resource.PodRequests reads
// container requests and, with in-place resize, container and pod
// statuses; limits, overhead and pod-level resources feed the same sums),
// which covers every quantity the Cache refuses and more; and in the
// spec's requirements (containers, init and ephemeral containers,
// spec.resources, spec.overhead) the API server's rules on integer
// resources and on requests against limits (apiRules). O(containers ×
// resources + the scheduling terms).
func podProblems(p *v1.Pod) []problem {
	var ps []problem
	if p.Name == "" {
		ps = append(ps, problem{"metadata.name", ErrMissingName})
	}
	errs := snapshot.ValidatePod(p)
	if p.Name == "" && len(errs) > 0 && errs[0].Type == field.ErrorTypeRequired && errs[0].Field == "metadata.name" {
		errs = errs[1:] // ErrMissingName above
	}
	ps = invalid(ps, errs)
	for i := range p.Spec.InitContainers {
		ps = specRequirements(ps, "spec.initContainers["+strconv.Itoa(i)+"].resources", &p.Spec.InitContainers[i].Resources)
	}
	for i := range p.Spec.Containers {
		ps = specRequirements(ps, "spec.containers["+strconv.Itoa(i)+"].resources", &p.Spec.Containers[i].Resources)
	}
	for i := range p.Spec.EphemeralContainers {
		ps = specRequirements(ps, "spec.ephemeralContainers["+strconv.Itoa(i)+"].resources", &p.Spec.EphemeralContainers[i].Resources)
	}
	ps = negatives(ps, "spec.overhead", p.Spec.Overhead)
	ps = integers(ps, "spec.overhead", p.Spec.Overhead)
	ps = specRequirements(ps, "spec.resources", p.Spec.Resources)
	ps = statuses(ps, "status.initContainerStatuses", p.Status.InitContainerStatuses)
	ps = statuses(ps, "status.containerStatuses", p.Status.ContainerStatuses)
	ps = statuses(ps, "status.ephemeralContainerStatuses", p.Status.EphemeralContainerStatuses)
	ps = negatives(ps, "status.allocatedResources", p.Status.AllocatedResources)
	ps = requirements(ps, "status.resources", p.Status.Resources)
	return ps
}

// invalid appends a problem wrapping ErrInvalidObject for each field
// error.
func invalid(ps []problem, errs field.ErrorList) []problem {
	for _, fe := range errs {
		ps = append(ps, problem{fe.Field, fmt.Errorf("%w: %s", ErrInvalidObject, fe.ErrorBody())})
	}
	return ps
}

func statuses(ps []problem, path string, ss []v1.ContainerStatus) []problem {
	for i := range ss {
		at := path + "[" + strconv.Itoa(i) + "]"
		ps = negatives(ps, at+".allocatedResources", ss[i].AllocatedResources)
		ps = requirements(ps, at+".resources", ss[i].Resources)
	}
	return ps
}

func requirements(ps []problem, path string, r *v1.ResourceRequirements) []problem {
	if r == nil {
		return ps
	}
	ps = negatives(ps, path+".requests", r.Requests)
	return negatives(ps, path+".limits", r.Limits)
}

// specRequirements is requirements plus the API server's rules on them
// (apiRules).
func specRequirements(ps []problem, path string, r *v1.ResourceRequirements) []problem {
	if r == nil {
		return ps
	}
	return apiRules(requirements(ps, path, r), path, r)
}

// apiRules appends the problems the API server finds in r when it creates
// the object (k8s.io/kubernetes v1.37.2 pkg/apis/core/validation
// validateResourceRequirements, ValidateResourceQuantityValue), for the
// quantities that are not negative (those are reported already):
//
//   - a quantity of an integer resource (an extended resource such as
//     nvidia.com/gpu, or an object count such as pods) must be a whole
//     number (integers);
//   - per resource, a request may not exceed its limit;
//   - a resource that cannot be overcommitted (extended resources,
//     hugepages-*) must have a limit when it has a request, and the two
//     must be equal.
//
// Each problem wraps [ErrInvalidObject] and names the field, in resource
// name order (limits, then requests). The resource-name rules of the same
// upstream function (qualified names, standard names for containers) are
// not checked. O(resources · log resources).
func apiRules(ps []problem, path string, r *v1.ResourceRequirements) []problem {
	ps = integers(ps, path+".limits", r.Limits)
	ps = integers(ps, path+".requests", r.Requests)
	for _, name := range sortedNames(r.Requests) {
		req := r.Requests[name]
		if req.Sign() < 0 {
			continue
		}
		at := path + ".requests[" + string(name) + "]"
		lim, ok := r.Limits[name]
		switch {
		case !ok && !resname.IsOvercommitAllowed(name):
			ps = append(ps, problem{path + ".limits[" + string(name) + "]", fmt.Errorf("%w: required: %s cannot be overcommitted: the API server wants a limit equal to the request %s", ErrInvalidObject, name, req.String())})
		case !ok || lim.Sign() < 0:
		case !resname.IsOvercommitAllowed(name) && quantity.Cmp(req, lim) != 0:
			ps = append(ps, problem{at, fmt.Errorf("%w: %s: must be equal to %s limit of %s", ErrInvalidObject, req.String(), name, lim.String())})
		case quantity.Cmp(req, lim) > 0:
			ps = append(ps, problem{at, fmt.Errorf("%w: %s: must be less than or equal to %s limit of %s", ErrInvalidObject, req.String(), name, lim.String())})
		}
	}
	return ps
}

// integers appends a problem for each non-negative quantity of an integer
// resource in rl that is not a whole number, by the API server's test
// (ValidateResourceQuantityValue: the quantity in milli-units, rounded up,
// is a multiple of 1000 -- so "1.9999", 2000m rounded up, passes there and
// here). A quantity beyond int64 milli-units, where upstream's MilliValue
// wraps, passes when it is an exact integer (a deliberate difference,
// named in the parity test). In resource name order.
func integers(ps []problem, path string, rl v1.ResourceList) []problem {
	for _, name := range sortedNames(rl) {
		q := rl[name]
		if q.Sign() <= 0 || !resname.IsIntegerResourceName(name) {
			continue
		}
		whole := false
		if m := quantity.Milli(q); m != math.MaxInt64 {
			whole = m%1000 == 0
		} else {
			_, whole = quantity.Scaled(q, 0)
		}
		if !whole {
			ps = append(ps, problem{path + "[" + string(name) + "]", fmt.Errorf("%w: %s: must be an integer (%s is counted in whole units)", ErrInvalidObject, q.String(), name)})
		}
	}
	return ps
}

// sortedNames returns rl's names in order, so that messages are
// deterministic; nil for an empty list.
func sortedNames(rl v1.ResourceList) []v1.ResourceName {
	if len(rl) == 0 {
		return nil
	}
	names := make([]v1.ResourceName, 0, len(rl))
	for name := range rl {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// negatives appends a problem for each negative quantity in rl, in resource
// name order so that messages are deterministic.
func negatives(ps []problem, path string, rl v1.ResourceList) []problem {
	var bad []v1.ResourceName
	for name, q := range rl {
		if q.Sign() < 0 {
			bad = append(bad, name)
		}
	}
	slices.Sort(bad)
	for _, name := range bad {
		q := rl[name]
		ps = append(ps, problem{path + "[" + string(name) + "]", fmt.Errorf("%w %s", ErrNegativeQuantity, q.String())})
	}
	return ps
}

// describeDecodeError improves e when the decoder failed on a quantity,
// whose error ("quantities must match the regular expression ...") names no
// field: it finds the first quantity field of js (quantityFields) whose
// value does not parse and puts its path in e.Field. Failing that, it
// names the first value of the wrong JSON type (mistypedField) and
// replaces the decoder's text with its own; the decoder's own error may
// have been another one of the document's (a Time that does not parse),
// which the user then sees on the next run. Only runs on the error path.
func describeDecodeError(e *Error, js []byte) {
	identify(e, js)
	t := objectType(js)
	found := false
	quantityFields(js, t, func(path string, v json.Token) {
		if !found && !isQuantity(v) {
			found = true
			e.Field = path
			e.Err = fmt.Errorf("%w: invalid quantity: %s", ErrDecode, tokenText(v))
		}
	})
	if found {
		return
	}
	if path, v, want, ok := mistypedField(js, t); ok {
		e.Field = path
		what := "is not " + kindText(want)
		if n, isNum := v.(json.Number); isNum && (intKind(want) || uintKind(want)) && !strings.ContainsAny(string(n), ".eE") {
			what = "is out of range for " + want.String() // an integer, too large
		}
		if want == reflect.String {
			// What YAML made of an unquoted scalar the user meant as text.
			switch v.(type) {
			case bool:
				what += " (quote it: YAML reads unquoted y, n, yes, no, on, off, true and false as booleans)"
			case json.Number:
				what += " (quote it: YAML reads an unquoted number as a number)"
			}
		}
		e.Err = fmt.Errorf("%w: %s %s", ErrDecode, tokenText(v), what)
	}
}

// kindText names what a value of Go kind k is in JSON, for messages.
func kindText(k reflect.Kind) string {
	switch {
	case intKind(k):
		return "an integer (" + k.String() + ")"
	case uintKind(k):
		return "a non-negative integer (" + k.String() + ")"
	}
	switch k {
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return k.String()
}

// namespacedKinds are the namespaced kinds load reads, which it puts in
// "default" when they name no namespace.
var namespacedKinds = map[string]bool{
	"Pod": true, "Service": true, "ReplicationController": true, "ReplicaSet": true,
	"StatefulSet": true, "Deployment": true, "DaemonSet": true, "PodDisruptionBudget": true,
}

// identify sets e's Namespace and Name, and its Kind when unset, from the
// JSON object js: a string's text, a number's or a boolean's as the JSON
// spells it (as YAML converted it: name: 1.10 gives 1.1), a kind only when
// it is a string. Best effort, for messages: a name of the wrong type may
// be the very error reported.
func identify(e *Error, js []byte) {
	var meta struct {
		Kind     any `json:"kind"`
		Metadata struct {
			Name      any `json:"name"`
			Namespace any `json:"namespace"`
		} `json:"metadata"`
	}
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	_ = d.Decode(&meta)
	if e.Kind == "" {
		e.Kind, _ = meta.Kind.(string)
	}
	// A name or namespace of the wrong type (name: 123), which may be
	// what the error is about, still identifies the object as written.
	e.Name, e.Namespace = scalarText(meta.Metadata.Name), scalarText(meta.Metadata.Namespace)
	defaultNamespace(e)
}

// defaultNamespace puts a named object of a namespaced kind that names
// no namespace in "default", as load puts the object.
func defaultNamespace(e *Error) {
	if e.Namespace == "" && e.Name != "" && namespacedKinds[e.Kind] {
		e.Namespace = metav1.NamespaceDefault
	}
}

// scalarText is a JSON string's text, a number's or a boolean's as
// written, "" for null, an object or an array.
func scalarText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// tokenText is v as it appears in JSON, or "an object" or "an array".
func tokenText(v json.Token) string {
	switch v {
	case json.Delim('{'):
		return "an object"
	case json.Delim('['):
		return "an array"
	}
	text, _ := json.Marshal(v)
	return string(text)
}

// isQuantity reports whether resource.Quantity's JSON decoding accepts x
// (a token of quantityFields) in bounded time: quantity.Screen first.
func isQuantity(x json.Token) bool {
	if x == nil {
		return true
	}
	s, ok := quantityText(x)
	if !ok || quantity.Screen(s) != nil {
		return false
	}
	var q resource.Quantity
	return q.UnmarshalJSON([]byte(strconv.Quote(s))) == nil
}
