package reserve_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/informertest"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// ledgerStore is l as the informer suite drives it. Counted reads the
// ledger's accounting (Usage) for the totals and its BoundSnapshot for the
// pod lists; ledgerSnapshotStore reads everything from Snapshot, so the
// suite pins both read paths.
func ledgerStore(l *reserve.Ledger) informertest.Store {
	return informertest.Adapt(l, snapshot.KeyOf, func() map[string]informertest.Node {
		out := map[string]informertest.Node{}
		snap := l.BoundSnapshot()
		for _, name := range l.Nodes() {
			u, _ := l.Usage(name)
			if !u.Present {
				continue
			}
			n := informertest.Node{
				Allocatable: informertest.Amounts{MilliCPU: u.Allocatable.MilliCPU(), Memory: u.Allocatable.Memory()},
				Requested:   informertest.Amounts{MilliCPU: u.Bound.MilliCPU(), Memory: u.Bound.Memory()},
				NumPods:     int(u.Bound.Get(snapshot.Pods)),
			}
			if ni := snap.Get(name); ni != nil {
				for _, p := range ni.Pods() {
					n.Pods = append(n.Pods, p.Key().String())
				}
			}
			out[name] = n
		}
		return out
	})
}

func ledgerSnapshotStore(l *reserve.Ledger) informertest.Store {
	return informertest.Adapt(l, snapshot.KeyOf, func() map[string]informertest.Node { return fromSnapshot(l.Snapshot()) })
}

// cacheStore is c, for the side-by-side random test.
func cacheStore(c *snapshot.Cache) informertest.Store {
	return informertest.Adapt(c, snapshot.KeyOf, func() map[string]informertest.Node { return fromSnapshot(c.Snapshot()) })
}

func fromSnapshot(s *snapshot.Snapshot) map[string]informertest.Node {
	return informertest.FromNodes[*snapshot.Vector, snapshot.PodKey, *snapshot.PodInfo](s.Nodes())
}

// TestInformerContract runs the informer contract's conformance suite
// (internal/informertest) over the Ledger, reading it back both ways.
func TestInformerContract(t *testing.T) {
	t.Run("usage", func(t *testing.T) {
		informertest.Run(t, func() informertest.Store { return ledgerStore(reserve.New()) })
	})
	t.Run("snapshot", func(t *testing.T) {
		informertest.Run(t, func() informertest.Store { return ledgerSnapshotStore(reserve.New()) })
	})
}

// TestInformerCacheAndLedgerAgree applies the same random informer events
// to a Cache, a Ledger and the suite's reference model, and checks after
// every event that all three count the same pods and totals on every node.
func TestInformerCacheAndLedgerAgree(t *testing.T) {
	for seed := range uint64(100) {
		informertest.Random(t, seed, 400, map[string]informertest.Store{
			"cache":           cacheStore(snapshot.NewCache()),
			"ledger":          ledgerStore(reserve.New()),
			"ledger snapshot": ledgerSnapshotStore(reserve.New()),
		})
		if t.Failed() {
			return
		}
	}
}

// FuzzInformerEvents runs the random informer-event comparison (Cache,
// Ledger, reference model) from a fuzzed seed and length.
func FuzzInformerEvents(f *testing.F) {
	f.Add(uint64(0), uint16(50))
	f.Add(uint64(7), uint16(400))
	f.Add(uint64(1<<40+3), uint16(1000))
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16) {
		informertest.Random(t, seed, int(steps%2000), map[string]informertest.Store{
			"cache":  cacheStore(snapshot.NewCache()),
			"ledger": ledgerStore(reserve.New()),
		})
	})
}

// BenchmarkLedgerUpdatePod: one informer pod update per iteration on a
// ledger of 5,000 nodes with 30 bound pods each: a bound pod (parsed and
// counted again on its node), an unbound pod and a terminal one
// (classified; the terminal one removes nothing after the first).
func BenchmarkLedgerUpdatePod(b *testing.B) {
	l, names := benchLedger(b, 5000)
	bound := st.MakePod("informer-bound").Req("cpu", "500m", "memory", "1Gi").Node(names[0]).Obj()
	unbound := st.MakePod("informer-pending").Req("cpu", "500m", "memory", "1Gi").Obj()
	done := st.MakePod("informer-done").Req("cpu", "500m", "memory", "1Gi").Node(names[1]).Obj()
	done.Status.Phase = v1.PodSucceeded
	for _, r := range []struct {
		name string
		pod  *v1.Pod
	}{{"bound", bound}, {"unbound", unbound}, {"terminal", done}} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = l.UpdatePod(r.pod)
			}
		})
	}
}

// ledgerObjects is l as the objects suite drives it; Lookup is its
// Snapshot (the one a scheduling cycle gets).
type ledgerObjects struct{ *reserve.Ledger }

func (l ledgerObjects) Lookup() informertest.Lookup { return l.Snapshot() }

// cacheObjects is a Cache, for the side-by-side random test.
type cacheObjects struct{ *snapshot.Cache }

func (c cacheObjects) Lookup() informertest.Lookup { return c.Snapshot() }

// TestInformerContractObjects runs the objects part of the informer
// contract's conformance suite over the Ledger, and the random sequence
// over a Ledger and a Cache side by side.
func TestInformerContractObjects(t *testing.T) {
	informertest.RunObjects(t, func() informertest.ObjectStore { return ledgerObjects{reserve.New()} })
	for seed := range uint64(50) {
		informertest.RandomObjects(t, seed, 300, map[string]informertest.ObjectStore{
			"cache":  cacheObjects{snapshot.NewCache()},
			"ledger": ledgerObjects{reserve.New()},
		})
	}
}

// TestLedgerObjectsInSnapshotFor: the objects reach the snapshot a cycle
// for a reservation owner gets (SnapshotFor forks the shared snapshot).
func TestLedgerObjectsInSnapshotFor(t *testing.T) {
	l := reserve.New()
	require.NoError(t, l.AddNode(st.MakeNode("n1").Capacity("cpu", "4", "memory", "8Gi").Obj()))
	svc := informertest.MakeObject("Service", "default", "web", 0)
	require.NoError(t, l.AddObject(svc))
	snap, _ := l.SnapshotFor(snapshot.MustPodInfo(st.MakePod("p").Obj()))
	require.Len(t, snap.Services("default"), 1)
	assert.Same(t, svc, snap.Services("default")[0])
	require.NoError(t, l.RemoveObject(svc))
	assert.Nil(t, l.Snapshot().Services("default"))
	assert.Len(t, snap.Services("default"), 1, "an earlier snapshot keeps its objects")
	err := l.AddObject(&v1.Service{})
	require.ErrorIs(t, err, reserve.ErrInvalid)
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
}

// FuzzInformerObjects runs the random object-event comparison (Cache,
// Ledger, reference model) from a fuzzed seed and length.
func FuzzInformerObjects(f *testing.F) {
	f.Add(uint64(0), uint16(50))
	f.Add(uint64(9), uint16(600))
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16) {
		informertest.RandomObjects(t, seed, int(steps%1500), map[string]informertest.ObjectStore{
			"cache":  cacheObjects{snapshot.NewCache()},
			"ledger": ledgerObjects{reserve.New()},
		})
	})
}
