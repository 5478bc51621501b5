// Package informer holds the one classification of informer pod events
// that every informer-fed store of schedkit applies: which pods count on
// a node, which are not the store's business, and which are gone. The
// contract itself — what each event does to a store — is written once, in
// package internal/informertest, whose suite pins it; snapshot.Cache and
// reserve.Ledger call [Classify] so that the rule "which pods count" has a
// single implementation.
//
// Layer: internal, below snapshot. Imports k8s.io/api and
// internal/objects (the API server's name rules).
//
// # Usage
//
//	switch k, err := informer.Classify(pod); {
//	case err != nil: // wrap it with the store's sentinel; change nothing
//	case k == informer.Terminal: // remove the pod, as a delete
//	case k == informer.Unbound: // not counted: the scheduling queue's pod
//	default: // informer.Assigned: parse and count on spec.nodeName
//	}
//
// # Concurrency
//
// Classify reads the pod and keeps nothing; safe for concurrent use.
//
// # Cost
//
// O(1) for an Assigned pod: it reads metadata.name, metadata.namespace,
// status.phase and spec.nodeName. For an Unbound or Terminal pod it also
// checks the key's names, O(len(name) + len(namespace)). It allocates
// only its error.
package informer

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/objects"
)

// Kind is what an informer's report of a pod means to a store.
type Kind uint8

const (
	// Assigned: spec.nodeName is set and the pod is not terminal. It
	// counts on that node (upstream's assignedPod handlers add it to the
	// scheduler cache).
	Assigned Kind = iota + 1
	// Unbound: spec.nodeName is empty and the pod is not terminal. It is
	// the scheduling queue's pod, not the cache's: upstream's event
	// handlers send it to the queue and never to the cache.
	Unbound
	// Terminal: status.phase is Succeeded or Failed. The pod is gone:
	// upstream's pod informer lists and watches with the field selector
	// status.phase!=Succeeded,status.phase!=Failed (pkg/scheduler/
	// scheduler.go, newPodInformer), so a pod that terminates reaches the
	// cache as a delete; an informer without that selector reports it as
	// an update, which a store treats as the delete.
	Terminal
)

// String returns "Assigned", "Unbound" or "Terminal".
func (k Kind) String() string {
	switch k {
	case Assigned:
		return "Assigned"
	case Unbound:
		return "Unbound"
	case Terminal:
		return "Terminal"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ErrBadPod is wrapped by Classify's errors; stores wrap their own
// sentinel around it too.
var ErrBadPod = errors.New("pod cannot be keyed")

// Classify returns what pod means to an informer-fed store: [Assigned],
// [Unbound] or [Terminal]. It checks only what every kind needs — that the
// pod has a key the API server would store: a nil pod, an empty
// metadata.name or an empty metadata.namespace is an error wrapping
// [ErrBadPod] that names the field (and the namespace); so is, for an
// Unbound or Terminal pod, a metadata.name that is not a DNS-1123
// subdomain or a metadata.namespace that is not a DNS-1123 label
// (internal/objects.NamespacedNames, the API server's ValidatePodName and
// ValidateNamespaceName), the error naming the pod "namespace/name" and
// the field. An Assigned pod's names are checked by the store's parser
// (snapshot.NewPodInfo) with the rest of it (its requests, spec.nodeName);
// nothing else of an Unbound or Terminal pod is read: an informer never
// delivers a pod the API server refused, so a bad key is a forged report,
// while the rest of a pending pod is the scheduling queue's to check.
func Classify(pod *v1.Pod) (Kind, error) {
	if pod == nil {
		return 0, fmt.Errorf("pod is nil: %w", ErrBadPod)
	}
	if pod.Name == "" {
		return 0, fmt.Errorf("pod in namespace %q: metadata.name is empty: %w", pod.Namespace, ErrBadPod)
	}
	if pod.Namespace == "" {
		// The API server stores no pod without a namespace (it fills it
		// from the request before validating; internal/objects.NamespacedNames).
		return 0, fmt.Errorf("pod %q: metadata.namespace: Required value: %w", pod.Name, ErrBadPod)
	}
	kind := Assigned
	switch {
	case pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed:
		kind = Terminal
	case pod.Spec.NodeName == "":
		kind = Unbound
	}
	if kind != Assigned {
		// An Assigned pod's names are checked by the store's parser
		// (snapshot.NewPodInfo), with the rest of the pod; checking them
		// here too would double the cost of every bound report.
		if errs := objects.NamespacedNames(pod.Name, pod.Namespace, objects.DNSSubdomain); len(errs) > 0 {
			return 0, fmt.Errorf("pod %s/%s: %w: %w", pod.Namespace, pod.Name, errs.ToAggregate(), ErrBadPod)
		}
	}
	return kind, nil
}

// ErrUnbind is wrapped by [UnbindError].
var ErrUnbind = errors.New("spec.nodeName cannot be cleared")

// UnbindError is the error for an Unbound report of a pod the store
// counts on node (or keeps for it, the node being absent): spec.nodeName
// cannot be cleared once set (the API server rejects the update), so the
// report is stale or forged. Upstream's cache takes the same report as
// corruption and exits (cacheImpl.UpdatePod); a library returns this
// error and keeps its state. It names the pod as "namespace/name".
func UnbindError(pod *v1.Pod, node string) error {
	return fmt.Errorf("pod %s/%s: spec.nodeName is empty, but the pod is bound to node %s: %w", pod.Namespace, pod.Name, node, ErrUnbind)
}

// ErrMove is wrapped by [MoveError].
var ErrMove = errors.New("spec.nodeName cannot change")

// MoveError is the error for an Assigned report of pod namespace/name
// (metadata.uid uid, "" if unknown) on node to, when the store has the
// same pod — the same uid — bound to node from: spec.nodeName cannot
// change once set, so the report is stale or forged. A pod deleted and
// created again under the same name has a new uid, and moves. Upstream's
// cache takes the report as corruption and exits (cacheImpl.UpdatePod:
// "pod updated on a different node than previously added to"); a library
// returns this error and keeps its state.
func MoveError(namespace, name, uid, from, to string) error {
	id := ""
	if uid != "" {
		id = " (uid " + uid + ")"
	}
	return fmt.Errorf("pod %s/%s%s: spec.nodeName: reported on node %s, but the pod is bound to node %s (upstream's scheduler cache takes this as corruption and exits); remove the pod first, or give a pod created again its new metadata.uid: %w",
		namespace, name, id, to, from, ErrMove)
}
