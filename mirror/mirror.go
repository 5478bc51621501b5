package mirror

import (
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// Source reads one entry of the mirrored list. Node may return nil (the
// entry is skipped); a pod listed under a node must be bound to it
// (spec.nodeName), as every pod of upstream's NodeInfo is.
type Source[N comparable] struct {
	Node       func(N) *v1.Node
	Generation func(N) int64
	NumPods    func(N) int
	Pod        func(N, int) *v1.Pod
}

// Methods is the Source of an entry type with upstream's NodeInfo methods
// (k8s.io/kube-scheduler/framework.NodeInfo and PodInfo: Node,
// GetGeneration, GetPods, GetPod), so an adapter needs no accessors.
func Methods[N interface {
	comparable
	Node() *v1.Node
	GetGeneration() int64
	GetPods() []P
}, P interface{ GetPod() *v1.Pod }]() Source[N] {
	return Source[N]{Node: N.Node, Generation: N.GetGeneration,
		NumPods: func(n N) int { return len(n.GetPods()) },
		Pod:     func(n N, i int) *v1.Pod { return n.GetPods()[i].GetPod() }}
}

// Mirror mirrors a list of N into a snapshot.Cache. The zero value is not
// usable; call [New]. A Mirror references no entry of the list after Sync
// returns except through node and pod objects and the previous list (for
// the next comparison).
type Mirror[N comparable] struct {
	src     Source[N]
	mu      sync.Mutex // serialises Sync
	cache   *snapshot.Cache
	byName  map[string]*entry
	pending []*entry // rebuilt since the last publish
	freed   []int32  // slots of nodes removed since the last publish
	epoch   uint64
	prev    []N // the list of the last successful Sync
	prevGen []int64
	free    []int32 // slots number entries densely, for per-cycle arrays
	nslots  int32
	cur     atomic.Pointer[view]
	ledger  atomic.Pointer[reserve.Ledger]
}

// view is what a Sync publishes, immutable: the snapshot, the entries by
// slot, and an index from node object to slot, rebuilt only when the set
// of node objects changes.
type view struct {
	snap  *snapshot.Snapshot
	slots []*entry
	index map[*v1.Node]int32
}

// entry is one mirrored node; never changed once published, except epoch,
// which only Sync reads.
type entry struct {
	node  *v1.Node
	gen   int64
	epoch uint64
	slot  int32
	ours  *snapshot.NodeInfo
	pods  map[*v1.Pod]*snapshot.PodInfo
}

// New returns an empty Mirror reading entries through src.
func New[N comparable](src Source[N]) *Mirror[N] {
	m := &Mirror[N]{src: src, cache: snapshot.NewCache(), byName: map[string]*entry{}}
	m.cur.Store(&view{snap: m.cache.Snapshot()})
	return m
}

// SetLedger makes l (nil: none) the ledger [Mirror.Score] and
// [Mirror.Filter] consult: the ledger of the scheduler profile the mirror
// serves. Safe for concurrent use.
func (m *Mirror[N]) SetLedger(l *reserve.Ledger) { m.ledger.Store(l) }

// Ledger returns the ledger set by [Mirror.SetLedger], or nil.
func (m *Mirror[N]) Ledger() *reserve.Ledger { return m.ledger.Load() }

// Current returns the snapshot of the last successful Sync (empty before).
func (m *Mirror[N]) Current() *snapshot.Snapshot { return m.cur.Load().snap }

// Sync makes the mirror hold exactly the nodes of list (entries without a
// node are skipped) with their pods, and returns the new snapshot (the
// previous one when nothing changed). Errors — a pod or node that does not
// parse, a pod listed under a node it is not bound to — name the node and
// the pod; after an error the published snapshot and look-ups are as
// before the call, and the next Sync completes the work.
func (m *Mirror[N]) Sync(list []N) (*snapshot.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.samePositions(list) {
		for i, n := range list {
			if m.src.Generation(n) != m.prevGen[i] {
				if err := m.rebuild(n); err != nil {
					return nil, err
				}
			}
		}
	} else {
		m.epoch++
		for _, n := range list {
			node := m.src.Node(n)
			if node == nil {
				continue
			}
			if e := m.byName[node.Name]; e != nil && e.gen == m.src.Generation(n) && e.node == node {
				e.epoch = m.epoch
				continue
			}
			if err := m.rebuild(n); err != nil {
				return nil, err
			}
		}
		for name, e := range m.byName {
			if e.epoch != m.epoch {
				if err := m.removeNode(name, e); err != nil {
					return nil, err
				}
			}
		}
	}
	m.prev = append(m.prev[:0], list...)
	m.prevGen = m.prevGen[:0]
	for _, n := range list {
		m.prevGen = append(m.prevGen, m.src.Generation(n))
	}
	return m.publish(), nil
}

// samePositions reports whether list holds the entries of the previous
// Sync in the same order (upstream's snapshot updates a changed NodeInfo
// in place, so this holds until a node is added or removed).
func (m *Mirror[N]) samePositions(list []N) bool {
	if m.prev == nil || len(list) != len(m.prev) {
		return false
	}
	for i, n := range list {
		if n != m.prev[i] {
			return false
		}
	}
	return true
}

// publish stores a new view when something changed since the last one.
func (m *Mirror[N]) publish() *snapshot.Snapshot {
	old := m.cur.Load()
	if len(m.pending) == 0 && len(m.freed) == 0 {
		return old.snap
	}
	snap := m.cache.Snapshot()
	slots := make([]*entry, m.nslots)
	copy(slots, old.slots)
	for _, s := range m.freed {
		slots[s] = nil
	}
	keysChanged := len(m.freed) > 0 || old.index == nil
	for _, e := range m.pending {
		if m.byName[e.node.Name] != e {
			continue // replaced again, or removed, before this publish
		}
		e.ours = snap.Get(e.node.Name)
		if old := slots[e.slot]; old == nil || old.node != e.node {
			keysChanged = true
		}
		slots[e.slot] = e
	}
	index := old.index
	if keysChanged {
		index = make(map[*v1.Node]int32, len(m.byName))
		for _, e := range m.byName {
			index[e.node] = e.slot
		}
	}
	m.pending, m.freed = m.pending[:0], m.freed[:0]
	m.cur.Store(&view{snap: snap, slots: slots, index: index})
	return snap
}

// removeNode takes the node and its pods out of the cache.
func (m *Mirror[N]) removeNode(name string, e *entry) error {
	for _, pi := range e.pods {
		m.cache.RemovePod(pi.Key())
	}
	if err := m.cache.RemoveNode(name); err != nil {
		return err
	}
	delete(m.byName, name)
	m.free = append(m.free, e.slot)
	m.freed = append(m.freed, e.slot)
	return nil
}

// rebuild brings the node of n up to date in the cache: the node object
// replaced if it changed, pods removed and added by object identity (only
// new pods are parsed). It changes nothing when n's pods do not parse.
// O(pods on the node).
func (m *Mirror[N]) rebuild(n N) error {
	node := m.src.Node(n)
	if node == nil {
		return nil
	}
	e := m.byName[node.Name]
	var prev map[*v1.Pod]*snapshot.PodInfo
	if e != nil {
		prev = e.pods
	}
	pods, err := m.podInfos(n, node, prev)
	if err != nil {
		return err
	}
	for pod, pi := range pods {
		if pod.Spec.NodeName != node.Name {
			return fmt.Errorf("mirror: node %s lists pod %s, which is bound to %q: %w", node.Name, pi.Key(), pod.Spec.NodeName, snapshot.ErrInvalidObject)
		}
	}
	if e == nil || e.node != node {
		if err := m.cache.AddNode(node); err != nil {
			return fmt.Errorf("mirror: %w", err)
		}
	}
	for pod, pi := range prev {
		if _, still := pods[pod]; !still {
			if on, _ := m.cache.PodNode(pi.Key()); on == node.Name {
				m.cache.RemovePod(pi.Key())
			}
		}
	}
	for pod, pi := range pods {
		if _, had := prev[pod]; !had {
			if err := m.cache.AddPodInfo(pi); err != nil {
				return fmt.Errorf("mirror: node %s: %w", node.Name, err) // not reached: bound and parsed above
			}
		}
	}
	ne := &entry{node: node, gen: m.src.Generation(n), epoch: m.epoch, pods: pods}
	if e != nil {
		ne.slot = e.slot
	} else {
		ne.slot = m.newSlot()
	}
	m.byName[node.Name] = ne
	m.pending = append(m.pending, ne)
	return nil
}

func (m *Mirror[N]) newSlot() int32 {
	if k := len(m.free); k > 0 {
		s := m.free[k-1]
		m.free = m.free[:k-1]
		return s
	}
	m.nslots++
	return m.nslots - 1
}

// podInfos parses the pods of n, reusing those in prev.
func (m *Mirror[N]) podInfos(n N, node *v1.Node, prev map[*v1.Pod]*snapshot.PodInfo) (map[*v1.Pod]*snapshot.PodInfo, error) {
	k := m.src.NumPods(n)
	out := make(map[*v1.Pod]*snapshot.PodInfo, k)
	for i := range k {
		pod := m.src.Pod(n, i)
		pi := prev[pod]
		if pi == nil {
			var err error
			if pi, err = snapshot.NewPodInfo(pod); err != nil {
				return nil, fmt.Errorf("mirror: node %s: %w", node.Name, err)
			}
		}
		out[pod] = pi
	}
	return out, nil
}

// Lookup returns the mirrored NodeInfo of n when n is an entry of the last
// synced list unchanged since (same node object, same generation), else
// nil. One map look-up, no lock, no allocation.
func (m *Mirror[N]) Lookup(n N) *snapshot.NodeInfo {
	ours, _ := m.lookup(n)
	return ours
}

// lookup is Lookup with the entry's slot (-1 with nil), dense in [0,
// len(view.slots)).
func (m *Mirror[N]) lookup(n N) (*snapshot.NodeInfo, int) {
	node := m.src.Node(n)
	if node == nil {
		return nil, -1
	}
	v := m.cur.Load()
	slot, ok := v.index[node]
	if !ok || int(slot) >= len(v.slots) {
		return nil, -1
	}
	e := v.slots[slot]
	if e == nil || e.node != node || e.gen != m.src.Generation(n) {
		return nil, -1
	}
	return e.ours, int(slot)
}

// Convert returns schedkit's NodeInfo for n: the mirrored one when
// [Mirror.Lookup] finds it; otherwise — an entry altered for one call, with
// pods added (nominated, not yet bound) or removed (preemption victims) —
// a NodeInfo built from n alone, reusing the pods the mirror already
// parsed. It changes nothing in the mirror. Allocates O(pods) off the
// look-up path; errors name the node and pod.
func (m *Mirror[N]) Convert(n N) (*snapshot.NodeInfo, error) {
	if ours := m.Lookup(n); ours != nil {
		return ours, nil
	}
	node := m.src.Node(n)
	if node == nil {
		return nil, fmt.Errorf("mirror: %w: entry without a node", snapshot.ErrNodeNotFound)
	}
	var prev map[*v1.Pod]*snapshot.PodInfo
	if e := m.lastPublished(node.Name); e != nil {
		prev = e.pods
	}
	pods, err := m.podInfos(n, node, prev)
	if err != nil {
		return nil, err
	}
	pis := make([]*snapshot.PodInfo, 0, len(pods))
	for i := range m.src.NumPods(n) {
		pis = append(pis, pods[m.src.Pod(n, i)])
	}
	f := snapshot.Empty().Fork()
	if err := f.AddNodeInfo(node, pis...); err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	return f.Get(node.Name), nil
}

// lastPublished returns the published entry of the node called name, or
// nil; its pod map is never changed once published.
func (m *Mirror[N]) lastPublished(name string) *entry {
	v := m.cur.Load()
	if ni := v.snap.Get(name); ni != nil {
		if slot, ok := v.index[ni.Node()]; ok && int(slot) < len(v.slots) {
			return v.slots[slot]
		}
	}
	return nil
}
