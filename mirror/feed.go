package mirror

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// Feed reports one informer event of the host scheduler to l: obj (a
// *v1.Node or *v1.Pod) was added or updated, or deleted when deleted is
// true. Nodes go to [reserve.Ledger.AddNode] / RemoveNode, pods to
// AddPod / RemovePod, whose contract decides what a pending or terminal
// pod means. Deleting a node the ledger does not know is no error (its add
// was rejected, or never came). Errors: obj of another type, or what the
// ledger rejects (an invalid node or pod, named); l keeps its state. The
// caller unwraps its informer's tombstones. Cost: the ledger call's.
func Feed(l *reserve.Ledger, obj any, deleted bool) error {
	switch o := obj.(type) {
	case *v1.Node:
		if !deleted {
			return l.AddNode(o)
		}
		if err := l.RemoveNode(o.Name); !errors.Is(err, reserve.ErrNodeNotFound) {
			return err
		}
		return nil
	case *v1.Pod:
		if !deleted {
			return l.AddPod(o)
		}
		l.RemovePod(snapshot.KeyOf(o))
		return nil
	}
	return fmt.Errorf("mirror: Feed: %T is neither a *v1.Node nor a *v1.Pod: %w", obj, snapshot.ErrInvalidObject)
}
