package informertest

import (
	"fmt"
	"iter"

	v1 "k8s.io/api/core/v1"
)

// Events is the informer side of a store whose pods are keyed by K, in
// the shape snapshot.Cache and reserve.Ledger share.
type Events[K any] interface {
	AddNode(node *v1.Node) error
	UpdateNode(node *v1.Node) error
	RemoveNode(name string) error
	AddPod(pod *v1.Pod) error
	UpdatePod(pod *v1.Pod) error
	RemovePod(k K) bool
}

// Adapt makes a [Store] of e: deletes are keyed with key (e.g.
// snapshot.KeyOf), and Counted is counted.
func Adapt[K any](e Events[K], key func(*v1.Pod) K, counted func() map[string]Node) Store {
	return adapted[K]{e, key, counted}
}

type adapted[K any] struct {
	e       Events[K]
	key     func(*v1.Pod) K
	counted func() map[string]Node
}

func (a adapted[K]) AddNode(n *v1.Node) error    { return a.e.AddNode(n) }
func (a adapted[K]) UpdateNode(n *v1.Node) error { return a.e.UpdateNode(n) }
func (a adapted[K]) RemoveNode(n *v1.Node) error { return a.e.RemoveNode(n.Name) }
func (a adapted[K]) AddPod(p *v1.Pod) error      { return a.e.AddPod(p) }
func (a adapted[K]) UpdatePod(p *v1.Pod) error   { return a.e.UpdatePod(p) }
func (a adapted[K]) RemovePod(p *v1.Pod) bool    { return a.e.RemovePod(a.key(p)) }
func (a adapted[K]) Counted() map[string]Node    { return a.counted() }

// Vector, PodInfo and NodeInfo are the shapes of snapshot's Vector,
// PodInfo and NodeInfo that [FromNodes] reads.
type (
	Vector interface {
		MilliCPU() int64
		Memory() int64
	}
	PodInfo[K fmt.Stringer]                          interface{ Key() K }
	NodeInfo[V Vector, K fmt.Stringer, P PodInfo[K]] interface {
		Name() string
		Allocatable() V
		Requested() V
		NumPods() int
		Pods() []P
	}
)

// FromNodes reads what a snapshot shows (its Nodes()) as Counted: for
// snapshot.Snapshot, FromNodes[*snapshot.Vector, snapshot.PodKey,
// *snapshot.PodInfo](snap.Nodes()).
func FromNodes[V Vector, K fmt.Stringer, P PodInfo[K], N NodeInfo[V, K, P]](nodes iter.Seq2[int, N]) map[string]Node {
	out := map[string]Node{}
	for _, ni := range nodes {
		alloc, req := ni.Allocatable(), ni.Requested()
		n := Node{
			Allocatable: Amounts{alloc.MilliCPU(), alloc.Memory()},
			Requested:   Amounts{req.MilliCPU(), req.Memory()},
			NumPods:     ni.NumPods(),
		}
		for _, p := range ni.Pods() {
			n.Pods = append(n.Pods, p.Key().String())
		}
		out[ni.Name()] = n
	}
	return out
}
