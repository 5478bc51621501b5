package reserve_test

import (
	"testing"

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
