package kubescheduler

import (
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/internal/nodemirror"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// profile is what the schedkit plugins built on one framework handle (one
// scheduler profile) share: one mirror of the scheduler's nodes, the
// profile's ledger (nil without a reserve plugin) and the last pod signed.
// The plugins own it — each holds a pointer — and it is collected with them.
type profile struct {
	mirror *nodemirror.Mirror[fwk.NodeInfo]
	ledger atomic.Pointer[reserve.Ledger]
	signed atomic.Pointer[signed]
}

// nodeInfos reads upstream's NodeInfo for the mirror.
var nodeInfos = nodemirror.Source[fwk.NodeInfo]{
	Node:       fwk.NodeInfo.Node,
	Generation: fwk.NodeInfo.GetGeneration,
	NumPods:    func(n fwk.NodeInfo) int { return len(n.GetPods()) },
	Pod:        func(n fwk.NodeInfo, i int) *v1.Pod { return n.GetPods()[i].GetPod() },
}

// profiles lets a plugin find the profile of its handle, built by an
// earlier plugin on the same handle. It holds weak pointers only, to the
// handle and to the profile, so it keeps neither alive; an entry is removed
// when its profile is collected. It couples nothing: an entry is reached
// only through its own handle.
var profiles sync.Map // weak.Pointer[byte] (the handle) → weak.Pointer[profile]

func profileFor(h fwk.Handle) *profile {
	v := reflect.ValueOf(h)
	if h == nil || v.Kind() != reflect.Pointer || v.IsNil() {
		return &profile{mirror: nodemirror.New(nodeInfos)} // nothing to share it by
	}
	key := weak.Make((*byte)(v.UnsafePointer()))
	for {
		if w, ok := profiles.Load(key); ok {
			if p := w.(weak.Pointer[profile]).Value(); p != nil {
				return p
			}
			profiles.CompareAndDelete(key, w) // its plugins are gone
			continue
		}
		p := &profile{mirror: nodemirror.New(nodeInfos)}
		w := weak.Make(p)
		if _, loaded := profiles.LoadOrStore(key, w); !loaded {
			runtime.AddCleanup(p, func(w weak.Pointer[profile]) { profiles.CompareAndDelete(key, w) }, w)
			return p
		}
	}
}

// cycleKey is where the first schedkit plugin of a scheduling cycle leaves
// the synced snapshot, so the others (and PreScore after PreFilter) do not
// check every node again.
const cycleKey fwk.StateKey = "schedkit.io/mirror"

type cycleSnapshot struct {
	p    *profile
	snap *snapshot.Snapshot
}

func (c *cycleSnapshot) Clone() fwk.StateData { return c }

// nodes syncs the mirror with the scheduler's whole node list (all nodes:
// ImageLocality counts every node) once per cycle cs, and returns the
// snapshot and the ledger the plugins read. Without a lister (a plugin used
// without a handle) it syncs fallback, or returns the last snapshot.
func (p *profile) nodes(h fwk.Handle, cs fwk.CycleState, fallback []fwk.NodeInfo) (*snapshot.Snapshot, *reserve.Ledger, error) {
	l := p.ledger.Load()
	if cs != nil {
		if d, err := cs.Read(cycleKey); err == nil {
			if c, ok := d.(*cycleSnapshot); ok && c.p == p {
				return c.snap, l, nil
			}
		}
	}
	list := fallback
	if h != nil && h.SnapshotSharedLister() != nil {
		var err error
		if list, err = h.SnapshotSharedLister().NodeInfos().List(); err != nil {
			return nil, nil, err
		}
	}
	if list == nil {
		return p.mirror.Current(), l, nil
	}
	snap, err := p.mirror.Sync(list)
	if err != nil {
		return nil, nil, err
	}
	if cs != nil {
		cs.Write(cycleKey, &cycleSnapshot{p: p, snap: snap})
	}
	return snap, l, nil
}
