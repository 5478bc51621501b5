package reserve

import (
	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/fit"
	"github.com/schedkit/schedkit/snapshot"
)

// Insufficient is one resource a pod lacks on a node: the one "does not
// fit" reason of schedkit, shared with the fit filter
// (framework.Reason embeds it) — see [snapshot.Insufficient] for the
// fields and messages. In the ledger's reasons Requested is what the pod
// needs from the node's free capacity (its effective request, less what
// it draws from a named reservation) and Used what the node already has
// committed (bound and confirmed pods, holds, and the unallocated part of
// named reservations); for [snapshot.Pods] Used counts one pod per named
// reservation too. String formats it as upstream's message plus the
// numbers: "Insufficient cpu (requested 3000, used 3000, capacity 4000)".
type Insufficient = snapshot.Insufficient

// fit appends to out every resource for which the pod's need exceeds the
// node's free capacity (allocatable − bound − held) and returns out.
//
// Semantics are upstream's fitsRequest, decided by the one fit check
// (internal/fit, shared with the fit filter): the pod count is always checked
// (one more pod must fit under allocatable pods); every other resource is
// checked only where the pod requests more than 0. drawn, if non-nil, is
// the part of the request a named reservation supplies: the pod needs
// request − drawn of the free capacity. A resource the reservation covers
// whole (need 0) still fails on a node already over-committed on it — a
// reservation cannot hand out what the node does not have — which is
// also the verdict of a fit filter on [Ledger.SnapshotFor] (request
// against allocatable − (requested − drawn)). The order of reasons
// is upstream's: pods, cpu, memory, ephemeral-storage, then scalar resources
// by ResourceID. O(resources of the pod); allocates only when it appends.
func (n *nodeAgg) fit(req, drawn *snapshot.Vector, out []Insufficient) []Insufficient {
	out = n.check(snapshot.Pods, 1, out)
	for r := range req.Len() {
		id := snapshot.ResourceID(r)
		if id == snapshot.Pods {
			continue
		}
		need := req.Get(id)
		if need <= 0 {
			continue
		}
		if drawn != nil {
			need = arith.Sub(need, drawn.Get(id))
		}
		out = n.check(id, need, out)
	}
	return out
}

func (n *nodeAgg) check(id snapshot.ResourceID, need int64, out []Insufficient) []Insufficient {
	used := arith.Add(n.bound.Get(id), n.held.Get(id))
	capacity := n.alloc.Get(id)
	if fit.Exceeds(need, capacity, used) {
		out = append(out, Insufficient{Resource: id, Requested: need, Used: used, Capacity: capacity})
	}
	return out
}
