package snapshot_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/informertest"
	"github.com/schedkit/schedkit/snapshot"
)

// cacheStore is snapshot.Cache as the informer suite drives it; Counted
// reads a fresh snapshot.
type cacheStore struct{ c *snapshot.Cache }

func (s cacheStore) AddNode(n *v1.Node) error    { return s.c.AddNode(n) }
func (s cacheStore) UpdateNode(n *v1.Node) error { return s.c.UpdateNode(n) }
func (s cacheStore) RemoveNode(n *v1.Node) error { return s.c.RemoveNode(n.Name) }
func (s cacheStore) AddPod(p *v1.Pod) error      { return s.c.AddPod(p) }
func (s cacheStore) UpdatePod(p *v1.Pod) error   { return s.c.UpdatePod(p) }
func (s cacheStore) RemovePod(p *v1.Pod) bool    { return s.c.RemovePod(snapshot.KeyOf(p)) }

func (s cacheStore) Counted() map[string]informertest.Node {
	out := map[string]informertest.Node{}
	for _, ni := range s.c.Snapshot().Nodes() {
		n := informertest.Node{
			Allocatable: informertest.Amounts{MilliCPU: ni.Allocatable().MilliCPU(), Memory: ni.Allocatable().Memory()},
			Requested:   informertest.Amounts{MilliCPU: ni.Requested().MilliCPU(), Memory: ni.Requested().Memory()},
			NumPods:     ni.NumPods(),
		}
		for _, p := range ni.Pods() {
			n.Pods = append(n.Pods, p.Key().String())
		}
		out[ni.Name()] = n
	}
	return out
}

// TestInformerContract runs the informer contract's conformance suite
// (internal/informertest) over the Cache.
func TestInformerContract(t *testing.T) {
	informertest.Run(t, func() informertest.Store { return cacheStore{snapshot.NewCache()} })
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
