// Package nodeview is snapshot's private face: it gives the packages
// above snapshot (score, framework, reserve, gpushare, the adapters) the
// fast-path data of package layout that snapshot keeps unexported — a
// NodeInfo's [layout.Head], a PodInfo's key hash, the block [layout.View]
// of a Snapshot or Fork — without any exported snapshot method, so that
// changing that data never changes snapshot's API.
//
// Layer: snapshot's. nodeview imports snapshot, internal/layout and
// internal/objects (the placeholder parser) only;
// snapshot never imports it.
//
// Every function but Placeholder (a parse) is O(1), allocates nothing,
// and (but ViewOf) compiles to a pointer conversion or a load: the head is NodeInfo's first field and
// the key hash PodInfo's, which snapshot's TestNodeviewLayout pins.
package nodeview

import (
	"unsafe"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/hashindex"
	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/objects"
	"github.com/schedkit/schedkit/snapshot"
)

// Head returns n's [layout.Head], its first 128 bytes. Read-only; valid as
// long as n.
func Head(n *snapshot.NodeInfo) *layout.Head { return (*layout.Head)(unsafe.Pointer(n)) }

// CPUMemory returns n's [layout.CPUMemory] block (its first cache line).
func CPUMemory(n *snapshot.NodeInfo) *layout.CPUMemory {
	return &(*layout.Head)(unsafe.Pointer(n)).CPUMemory
}

// FilterBlock returns n's [layout.FilterBlock] (its second cache line).
func FilterBlock(n *snapshot.NodeInfo) *layout.FilterBlock {
	return &(*layout.Head)(unsafe.Pointer(n)).FilterBlock
}

// KeyHash returns HashKey(p.Key()), computed once when p was parsed.
func KeyHash(p *snapshot.PodInfo) uint64 { return *(*uint64)(unsafe.Pointer(p)) }

// HashKey returns the hash snapshot gives pod key k: for a PodInfo p,
// KeyHash(p) == HashKey(p.Key()). Process-local (internal/hashindex.Pair).
// O(len(key)), allocates nothing.
func HashKey(k snapshot.PodKey) uint64 { return hashindex.Pair(k.Namespace, k.Name) }

// View is the block view of a Snapshot or Fork.
type View = layout.View[snapshot.NodeInfo]

// ViewOf returns the block view of c when c is a non-nil
// *snapshot.Snapshot or *snapshot.Fork — exactly those types, not one
// embedding them, which may change what nodes it shows — and false
// otherwise. A Fork's view follows the fork's later changes. O(1),
// allocates nothing.
func ViewOf(c any) (View, bool) {
	v, ok := layout.ViewOf(c).(View)
	return v, ok
}

// Placeholder parses one of the reservation ledger's placeholder pods, as
// snapshot.DecodePodInfo does (with snapshot.NvidiaDevices) but without
// the name check: their namespace, reserve.ReservationNamespace, is not a
// DNS label on purpose, so that no pod the API server admits shares a key
// with one. Only the ledger calls it, for the pods it builds. Errors as
// DecodePodInfo's; cost as DecodePodInfo.
func Placeholder(pod *v1.Pod) (*snapshot.PodInfo, error) {
	pi, err := objects.DecodePlaceholder(pod)
	if err != nil {
		return nil, err
	}
	return pi.(*snapshot.PodInfo), nil
}

// CPUMemories returns nodes as the slice of their [layout.CPUMemory]
// blocks: element i is CPUMemory(nodes[i]) (the same pointer, as the
// head is NodeInfo's first field). It shares nodes' backing array: no
// copy, O(1), allocates nothing; read-only, valid as long as nodes.
func CPUMemories(nodes []*snapshot.NodeInfo) []*layout.CPUMemory {
	if len(nodes) == 0 {
		return nil
	}
	return unsafe.Slice((**layout.CPUMemory)(unsafe.Pointer(&nodes[0])), len(nodes))
}
