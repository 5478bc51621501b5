// Package fit is schedkit's one fit check: upstream kube-scheduler's
// fitsRequest rule (v1.37 pkg/scheduler/framework/plugins/noderesources/
// fit.go) on plain amounts, so that the fit filter (framework's
// NodeResourcesFit, its fused fast path included), the reservation ledger
// (reserve's Fits, Reserve, ReserveGang, AddReservation) and GPU sharing
// decide "fits" with the same arithmetic and report the same reason,
// snapshot.Insufficient{Resource, Requested, Used, Capacity}.
//
// The rule:
//
//   - one more pod must fit under the node's allowed pods
//     ([TooManyPods]);
//   - every other resource is checked only where the pod requests more
//     than 0, and fails when the request exceeds capacity − used
//     ([Short]); the difference saturates, so a node over-committed past
//     int64 never wraps into "fits";
//   - a failed resource is unresolvable — no preemption helps — when the
//     request exceeds the node's whole capacity ([Unresolvable]).
//
// Callers walk the resources in upstream's reason order (pods, cpu,
// memory, ephemeral-storage, then scalar resources by snapshot.ResourceID)
// and build the reasons; this package holds the decisions, not the
// iteration, because each caller reads its amounts from its own layout
// (the node's hot blocks, the ledger's aggregates).
//
// Layer: internal; imports internal/arith only. Every function is O(1),
// allocates nothing, and is safe for concurrent use.
package fit

import "github.com/schedkit/schedkit/internal/arith"

// Exceeds reports whether need does not fit in capacity − used (the
// difference saturating, [arith.Sub]). It is
// [Short] without the "requested at all" test, for a need that is already
// known to count (the ledger's request less what a reservation supplies:
// a need of 0 still fails on an over-committed node).
func Exceeds(need, capacity, used int64) bool {
	return need > arith.Sub(capacity, used)
}

// Short reports whether a pod's request of one resource fails on a node:
// request > 0 and request > capacity − used. Amounts are in the resource's
// unit (milli-CPU, bytes, counts).
func Short(request, capacity, used int64) bool {
	return request > 0 && request > arith.Sub(capacity, used)
}

// TooManyPods reports whether one more pod exceeds the node's allowed
// pods: pods + 1 > allowed ("Too many pods"; the reason has Requested 1,
// Used pods, Capacity allowed).
func TooManyPods(pods, allowed int64) bool {
	return 1 > arith.Sub(allowed, pods)
}

// Unresolvable reports whether a failed request exceeds the node's whole
// capacity, so that removing pods cannot make it fit (upstream's
// UnschedulableAndUnresolvable for NodeResourcesFit).
func Unresolvable(request, capacity int64) bool {
	return request > capacity
}
