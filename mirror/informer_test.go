package mirror_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/informertest"
	"github.com/schedkit/schedkit/mirror"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// feedStore is mirror.Feed into a ledger — the kube-scheduler adapter's
// informer feed — as the informer suite drives it: each event goes
// through Feed as an informer handler passes it (deletes with deleted =
// true). RemovePod's report and Counted are read from the ledger.
type feedStore struct{ l *reserve.Ledger }

func (f feedStore) AddNode(n *v1.Node) error    { return mirror.Feed(f.l, n, false) }
func (f feedStore) UpdateNode(n *v1.Node) error { return mirror.Feed(f.l, n, false) }
func (f feedStore) RemoveNode(n *v1.Node) error { return mirror.Feed(f.l, n, true) }
func (f feedStore) AddPod(p *v1.Pod) error      { return mirror.Feed(f.l, p, false) }
func (f feedStore) UpdatePod(p *v1.Pod) error   { return mirror.Feed(f.l, p, false) }

func (f feedStore) RemovePod(p *v1.Pod) bool {
	_, _, had := f.l.PodPhase(snapshot.KeyOf(p))
	if err := mirror.Feed(f.l, p, true); err != nil {
		panic(err) // a pod delete is never an error
	}
	return had
}

func (f feedStore) Counted() map[string]informertest.Node {
	return informertest.FromNodes[*snapshot.Vector, snapshot.PodKey, *snapshot.PodInfo](f.l.Snapshot().Nodes())
}

// QuietNodeDeletes: Feed drops the ledger's not-found for a node delete.
func (feedStore) QuietNodeDeletes() {}

// TestFeedInformerContract runs the informer contract's conformance suite
// (internal/informertest) over the adapter's feed.
func TestFeedInformerContract(t *testing.T) {
	informertest.Run(t, func() informertest.Store { return feedStore{reserve.New()} })
}
