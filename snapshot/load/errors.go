package load

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors. Every error returned by [Read] and [Files] is, or joins,
// one or more [*Error] values whose Err wraps exactly one of these; test them
// with errors.Is.
var (
	// ErrIO: a file or directory could not be read.
	ErrIO = errors.New("load: cannot read input")
	// ErrSyntax: the input is not well-formed YAML or JSON.
	ErrSyntax = errors.New("load: malformed YAML or JSON")
	// ErrDecode: a document is well-formed but is not a Kubernetes object of
	// the type it claims to be (a field has the wrong type, a quantity does
	// not parse, the document is not a mapping).
	ErrDecode = errors.New("load: cannot decode object")
	// ErrMissingKind: a document has no kind or no apiVersion.
	ErrMissingKind = errors.New("load: missing kind or apiVersion")
	// ErrUnknownField: with [Options.Strict], a field is unknown to
	// k8s.io/api v0.37 or appears twice.
	ErrUnknownField = errors.New("load: unknown or duplicate field")
	// ErrKind: with [Options.RejectOtherKinds], a document holds a kind
	// the loader does not read (see [Options.RejectOtherKinds]).
	ErrKind = errors.New("load: kind not accepted")
	// ErrMissingName: an object has an empty metadata.name.
	ErrMissingName = errors.New("load: missing metadata.name")
	// ErrNegativeQuantity: a resource quantity is below zero.
	ErrNegativeQuantity = errors.New("load: negative quantity")
	// ErrDuplicate: two Nodes share a name, or two Pods a namespace/name.
	ErrDuplicate = errors.New("load: duplicate object")
	// ErrInvalidObject: an object the Cache would reject, as the API
	// server would: a Pod whose names or scheduling fields are invalid
	// (snapshot.ValidatePod: a name that is not a DNS-1123 subdomain, an
	// unknown node affinity operator, a topology spread constraint with
	// maxSkew 0, ...), a Node whose name is not a DNS-1123 subdomain, or
	// a Namespace, Service, ReplicationController, ReplicaSet,
	// StatefulSet, PriorityClass or PodDisruptionBudget with an invalid
	// name or selector (with [Options.ExpandWorkloads], a Deployment too,
	// and a workload's replicas, selector and template as the API server
	// checks them); or resources the API server refuses: a
	// fractional quantity of an extended resource or other integer
	// resource (nvidia.com/gpu: "0.5", pods: 110.5), a request above its
	// limit, a request of an extended resource or hugepages without an
	// equal limit; the error names the field.
	ErrInvalidObject = errors.New("load: invalid object")
	// ErrNotExpanded: with [Options.ExpandWorkloads], a Deployment of
	// the input asks for a number of replicas its ReplicaSets in the
	// input do not have, and load leaves them as they are, because the
	// controller would do what load does not model: a rollout is under
	// way (an old ReplicaSet still has replicas), whose scaling the
	// controller spreads over the ReplicaSets, or no ReplicaSet has the
	// Deployment's template (a rollout would start). A warning, in
	// [Objects.Warnings], naming spec.replicas.
	ErrNotExpanded = errors.New("load: workload not expanded")
)

// maxErrors is how many [*Error] values one call reports before it stops
// listing them and only counts the rest.
const maxErrors = 10

// Error locates one problem in the input. It is returned (possibly joined
// with others through errors.Join) by [Read] and [Files]; get at it with
// errors.As. Fields that do not apply are zero.
type Error struct {
	// File is the path, or the name given to [Read].
	File string
	// Line is the 1-based line in File: where the syntax error is when the
	// parser says so; for an error naming a Field, the field's line when
	// the YAML document (or List item) spells it in block style, else the
	// line of the longest leading part of its path it spells (the
	// mapping holding a missing field, a flow collection's key); for
	// unknown or repeated fields ([ErrUnknownField]), the line so found
	// of the first of them in the document; otherwise where the document starts, or the List item for the items
	// of a YAML List read item by item (the List kubectl prints; other
	// Lists give the document's line). Errors of JSON input, and of the
	// items of a List not read item by item (a NodeList, a List in
	// JSON), give the document's line, except that a YAML NodeList's or
	// PodList's decode errors (a malformed quantity, a value of the
	// wrong type) are on their field's line. 0 when unknown.
	Line int
	// Document is the 1-based index of the document in File: YAML documents
	// are separated by "---" lines, JSON documents are concatenated values.
	Document int
	// Item is the position inside a List, for example "items[3]", or "".
	Item string
	// Kind, Namespace and Name identify the object, when they are known.
	// Errors found decoding or checking a namespaced object that names no
	// namespace say "default", as load puts it (the kinds load reads, and
	// Deployments and DaemonSets); other kinds, which only
	// RejectOtherKinds errors name, give the namespace as written. A
	// name or namespace that is a number or a boolean (name: 123) is
	// given as YAML converted it (name: 1.10 gives "1.1").
	Kind, Namespace, Name string
	// Field is the offending field in the Kubernetes JSON path style, for
	// example "spec.containers[0].resources.requests[cpu]", or "". A value
	// of the wrong JSON type ("replicas: five", a number beyond an int32)
	// names its field, with the value as YAML converted it (and, for a
	// string field given an unquoted yes or 1.10, a hint to quote it); when a
	// document has several, the first in the decoder's order (YAML
	// mappings reach it with their keys sorted). Fields with their own
	// decoding (IntOrString, Time) keep the decoder's error and name no
	// field.
	Field string
	// Err wraps one of the package's sentinel errors and, where there is
	// one, the underlying decoder error.
	Err error
}

// Error formats as
//
//	file:line: document N, items[i]: Kind "namespace/name": field: cause
//
// leaving out the parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Document > 0 {
		b.WriteString(": document ")
		b.WriteString(strconv.Itoa(e.Document))
	}
	if e.Item != "" {
		b.WriteString(", ")
		b.WriteString(e.Item)
	}
	if e.Kind != "" || e.Name != "" {
		b.WriteString(": ")
		if e.Kind != "" {
			b.WriteString(e.Kind)
			b.WriteByte(' ')
		}
		name := e.Name
		if e.Namespace != "" {
			name = e.Namespace + "/" + e.Name
		}
		b.WriteString(strconv.Quote(name))
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Err, so errors.Is(err, ErrNegativeQuantity) works.
func (e *Error) Unwrap() error { return e.Err }

// errorList gathers the problems found in one call and turns them into the
// returned error: nil, one *Error, or an errors.Join of at most maxErrors of
// them plus a count of the rest.
type errorList struct {
	errs  []error
	total int
}

func (l *errorList) add(e *Error) {
	l.total++
	if len(l.errs) < maxErrors {
		l.errs = append(l.errs, e)
	}
}

// merge adds o's errors after l's, as if each had been added to l.
func (l *errorList) merge(o *errorList) {
	for _, e := range o.errs {
		if len(l.errs) < maxErrors {
			l.errs = append(l.errs, e)
		}
	}
	l.total += o.total
}

func (l *errorList) err() error {
	switch {
	case l.total == 0:
		return nil
	case l.total == 1:
		return l.errs[0]
	case l.total > len(l.errs):
		more := fmt.Errorf("load: %d more errors not shown", l.total-len(l.errs))
		return errors.Join(append(l.errs[:len(l.errs):len(l.errs)], more)...)
	default:
		return errors.Join(l.errs...)
	}
}
