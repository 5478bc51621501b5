package kubescheduler

import (
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/mirror"
)

// profile is what the schedkit plugins built on one framework handle (one
// scheduler profile) share: one mirror of the scheduler's nodes, with the
// profile's ledger, and the last pod signed. The plugins own it — each
// holds a pointer — and it is collected with them.
type profile struct {
	m      *mirror.Mirror[fwk.NodeInfo]
	signed atomic.Pointer[signed]
}

// nodeInfos reads upstream's NodeInfo for the mirror.
var nodeInfos = mirror.Source[fwk.NodeInfo]{
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
		return &profile{m: mirror.New(nodeInfos)} // nothing to share it by
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
		p := &profile{m: mirror.New(nodeInfos)}
		w := weak.Make(p)
		if _, loaded := profiles.LoadOrStore(key, w); !loaded {
			runtime.AddCleanup(p, func(w weak.Pointer[profile]) { profiles.CompareAndDelete(key, w) }, w)
			return p
		}
	}
}

// cycleKey is where the first schedkit plugin of a scheduling cycle marks
// the sync done, so the others (and PreScore after PreFilter) do not check
// every node again.
const cycleKey fwk.StateKey = "schedkit.io/mirror"

// cycleDone marks the cycle in which the profile synced.
type cycleDone profile

func (c *cycleDone) Clone() fwk.StateData { return c }

// noCycle stands in for a nil CycleState: it remembers nothing.
type noCycle struct{ fwk.CycleState }

func (noCycle) Write(fwk.StateKey, fwk.StateData) {}

// sync syncs the mirror with the scheduler's whole node list (all nodes:
// ImageLocality counts every node) once per cycle cs. Without a lister (a
// plugin used without a handle) it syncs fallback, if any.
func (p *profile) sync(h fwk.Handle, cs fwk.CycleState, fallback []fwk.NodeInfo) error {
	if cs == nil {
		cs = noCycle{}
	} else if d, err := cs.Read(cycleKey); err == nil && d == (*cycleDone)(p) {
		return nil
	}
	list := fallback
	if h != nil && h.SnapshotSharedLister() != nil {
		var err error
		if list, err = h.SnapshotSharedLister().NodeInfos().List(); err != nil {
			return err
		}
	}
	if list == nil {
		return nil
	}
	if _, err := p.m.Sync(list); err != nil {
		return err
	}
	cs.Write(cycleKey, (*cycleDone)(p))
	return nil
}
