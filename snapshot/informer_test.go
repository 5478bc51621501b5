package snapshot_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/informertest"
	"github.com/schedkit/schedkit/snapshot"
)

// cacheStore is c as the informer suite drives it; Counted reads a fresh
// snapshot.
func cacheStore(c *snapshot.Cache) informertest.Store {
	return informertest.Adapt(c, snapshot.KeyOf, func() map[string]informertest.Node {
		return informertest.FromNodes[*snapshot.Vector, snapshot.PodKey, *snapshot.PodInfo](c.Snapshot().Nodes())
	})
}

// TestInformerContract runs the informer contract's conformance suite
// (internal/informertest) over the Cache.
func TestInformerContract(t *testing.T) {
	informertest.Run(t, func() informertest.Store { return cacheStore(snapshot.NewCache()) })
}

// informerReports returns three reports of one pod of a 5,000-node
// benchmark cluster: bound to its node, unbound (pending) and Succeeded.
func informerReports(bound *v1.Pod) []struct {
	name string
	pod  *v1.Pod
} {
	unbound := bound.DeepCopy()
	unbound.Name += "-pending"
	unbound.Spec.NodeName = ""
	done := bound.DeepCopy()
	done.Name += "-done"
	done.Status.Phase = v1.PodSucceeded
	return []struct {
		name string
		pod  *v1.Pod
	}{{"bound", bound}, {"unbound", unbound}, {"terminal", done}}
}

// BenchmarkCacheUpdatePod: one informer pod update per iteration on a
// cache of 5,000 nodes with 30 pods each: a bound pod (parsed, removed and
// added again on its node), an unbound pod and a terminal one (classified
// and dropped).
func BenchmarkCacheUpdatePod(b *testing.B) {
	c, extra := benchCache(b, 5000)
	for _, r := range informerReports(extra[0]) {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.UpdatePod(r.pod)
			}
		})
	}
}

// objectStore is a Cache as the objects suite drives it; Lookup is a new
// Snapshot (lookupCache reads the Cache's own look-ups instead).
type objectStore struct{ *snapshot.Cache }

func (s objectStore) Lookup() informertest.Lookup { return s.Snapshot() }

type lookupCache struct{ *snapshot.Cache }

func (s lookupCache) Lookup() informertest.Lookup { return s.Cache }
func (lookupCache) LiveLookup()                   {}

// TestInformerContractObjects runs the objects part of the informer
// contract's conformance suite over the Cache, read through its snapshots
// and through its own look-ups.
func TestInformerContractObjects(t *testing.T) {
	t.Run("snapshot", func(t *testing.T) {
		informertest.RunObjects(t, func() informertest.ObjectStore { return objectStore{snapshot.NewCache()} })
	})
	t.Run("cache", func(t *testing.T) {
		// The Cache's own look-ups are the current state, not a snapshot:
		// run the rules that do not keep an earlier read.
		for seed := range uint64(informertest.RandomSeeds) {
			informertest.RandomObjects(t, seed, informertest.RandomSteps, map[string]informertest.ObjectStore{"cache": lookupCache{snapshot.NewCache()}})
		}
	})
}
