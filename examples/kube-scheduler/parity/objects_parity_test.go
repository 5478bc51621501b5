package parity

import (
	"errors"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/schedkit/schedkit/snapshot"
)

// cacheSnapshot feeds cs to a snapshot.Cache as informers would — nodes,
// bound pods, then the Services, ReplicationControllers, ReplicaSets and
// StatefulSets — and returns its snapshot, on which PodTopologySpread
// (with Workloads nil) finds the objects of its system defaults. It also
// returns how many objects the Cache refused: the generator draws
// ReplicaSets and StatefulSets with invalid selectors, which the API
// server would reject and the Cache rejects (snapshot.ErrInvalidObject).
// Upstream's DefaultSelector adds nothing for such a controller, and our
// side, not finding it, adds nothing either, so the verdicts and scores
// stay equal: this is checked, not assumed, by the "System (Cache)" pair
// of TestParityPodTopologySpread and FuzzParityPodTopologySpread.
func cacheSnapshot(cs SpreadCase) (*snapshot.Snapshot, int, error) {
	cache := snapshot.NewCache()
	for _, n := range cs.Nodes {
		if err := cache.AddNode(n); err != nil {
			return nil, 0, err
		}
	}
	for _, p := range cs.Bound {
		if err := cache.AddPod(p); err != nil {
			return nil, 0, err
		}
	}
	var objs []runtime.Object
	for _, o := range cs.Services {
		objs = append(objs, o)
	}
	for _, o := range cs.ReplicationControllers {
		objs = append(objs, o)
	}
	for _, o := range cs.ReplicaSets {
		objs = append(objs, o)
	}
	for _, o := range cs.StatefulSets {
		objs = append(objs, o)
	}
	rejected := 0
	for _, o := range objs {
		if err := cache.AddObject(o); err != nil {
			if !errors.Is(err, snapshot.ErrInvalidObject) {
				return nil, 0, err
			}
			rejected++
		}
	}
	return cache.Snapshot(), rejected, nil
}
