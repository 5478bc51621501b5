package kubescheduler

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// mirror keeps a schedkit snapshot equal to the scheduler's cycle snapshot
// (bound and assumed pods included), so that schedkit scorers and filters
// read exactly what upstream's plugins read.
//
// sync first compares the scheduler's node list with the previous one
// position by position (same NodeInfo, same Generation): in a cycle where
// nothing changed that is a pointer comparison per node. Otherwise it
// rebuilds only the nodes whose Generation changed (usually the one node a
// pod was assumed on since the previous cycle), reusing the parsed PodInfo
// of every pod object it has seen on that node. Each mirrored node has an
// entry keyed by its *v1.Node, so that finding schedkit's NodeInfo for an
// upstream NodeInfo is one pointer-keyed map look-up — no copy, no
// allocation.
type mirror struct {
	signed atomic.Pointer[signed] // the last pod signed, see sign
	// ledger is the reservation ledger of the profile's reserve plugin
	// (WrapLedger, NewSchedkitReserve), nil without one: the filter and
	// score adapters of the profile consult it.
	ledger atomic.Pointer[reserve.Ledger]
	mu     sync.Mutex // serialises sync and the slow path; readers use cur
	fork   *snapshot.Fork
	byName map[string]*entry
	epoch  uint64
	cur    atomic.Pointer[view]
	// the node list of the previous sync and its generations
	prev    []fwk.NodeInfo
	prevGen []int64
	// slots number the entries densely, for per-cycle arrays
	free   []int32
	nslots int32
}

// view is what one sync publishes, immutable: the snapshot, the entries by
// slot, and an index from node object to slot. Readers (Score, Filter, on
// the framework's parallel goroutines) load it atomically and take no lock.
// The index is rebuilt only when the set of node objects changes (a node
// added, removed or updated), not when only pods change.
type view struct {
	snap  *snapshot.Snapshot
	slots []*entry
	index map[*v1.Node]int32
}

// entry is one mirrored node. Once published in a view it is never changed
// (a changed node gets a new entry), except epoch, which only sync reads.
type entry struct {
	node  *v1.Node
	gen   int64
	epoch uint64
	slot  int32
	ours  *snapshot.NodeInfo
	pods  map[*v1.Pod]*snapshot.PodInfo
}

func newMirror() *mirror {
	m := &mirror{fork: snapshot.Empty().Fork(), byName: map[string]*entry{}}
	m.cur.Store(&view{snap: snapshot.Empty()})
	return m
}

// mirrors shares one mirror among the plugins of one framework handle
// (one scheduler profile), so a profile with several schedkit plugins
// mirrors each node change once. Keys are weak pointers to the handle's
// object: the map does not keep a handle alive, and a cleanup attached to
// the handle removes its entry once the handle is collected (a process
// that builds and drops frameworks — tests, a simulator — does not
// accumulate mirrors). The mirror must not reference the handle.
var mirrors sync.Map // weak.Pointer[byte] → *mirror

func mirrorFor(h fwk.Handle) *mirror {
	v := reflect.ValueOf(h)
	if h == nil || v.Kind() != reflect.Pointer || v.IsNil() {
		return newMirror() // nothing to share it by: one mirror per plugin
	}
	obj := (*byte)(v.UnsafePointer())
	key := weak.Make(obj)
	if m, ok := mirrors.Load(key); ok {
		return m.(*mirror)
	}
	m, loaded := mirrors.LoadOrStore(key, newMirror())
	if !loaded {
		runtime.AddCleanup(obj, func(k weak.Pointer[byte]) { mirrors.Delete(k) }, key)
	}
	return m.(*mirror)
}

// current returns the last synced snapshot (empty before the first sync).
func (m *mirror) current() *snapshot.Snapshot { return m.cur.Load().snap }

// view syncs list, or returns the current snapshot when there is no list
// (no scheduler snapshot to mirror: a plugin used without a handle).
func (m *mirror) view(list []fwk.NodeInfo) (*snapshot.Snapshot, error) {
	if list == nil {
		return m.current(), nil
	}
	return m.sync(list)
}

// signed is one SignPod result.
type signed struct {
	pod    *v1.Pod
	frags  []fwk.SignFragment
	status *fwk.Status
}

// sign returns signPod(pod), computed once for the several schedkit
// plugins of a profile that the framework asks in turn for the same pod
// object (pod objects are immutable in the scheduler: an update is a new
// object).
func (m *mirror) sign(pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	if s := m.signed.Load(); s != nil && s.pod == pod {
		return s.frags, s.status
	}
	frags, st := signPod(pod)
	m.signed.Store(&signed{pod: pod, frags: frags, status: st})
	return frags, st
}

// cycleKey is where the first schedkit plugin of a scheduling cycle leaves
// the mirrored snapshot, so the others (and the PreScore after the
// PreFilter) reuse it instead of checking every node again.
const cycleKey fwk.StateKey = "schedkit.io/mirror"

type cycleSnapshot struct {
	m    *mirror
	snap *snapshot.Snapshot
}

func (c *cycleSnapshot) Clone() fwk.StateData { return c }

// forCycle returns the snapshot of the cycle cs: the one an earlier schedkit
// plugin of the cycle synced, or list synced now (see view). cs may be nil.
func (m *mirror) forCycle(cs fwk.CycleState, list []fwk.NodeInfo) (*snapshot.Snapshot, error) {
	if cs != nil {
		if d, err := cs.Read(cycleKey); err == nil {
			if c, ok := d.(*cycleSnapshot); ok && c.m == m {
				return c.snap, nil
			}
		}
	}
	snap, err := m.view(list)
	if err != nil {
		return nil, err
	}
	if cs != nil && list != nil {
		cs.Write(cycleKey, &cycleSnapshot{m: m, snap: snap})
	}
	return snap, nil
}

// samePositions reports whether list holds the same NodeInfo objects, in
// the same order, as the previous sync's (upstream's snapshot updates a
// changed NodeInfo in place, so this holds until a node is added or
// removed); caller holds the lock.
func (m *mirror) samePositions(list []fwk.NodeInfo) bool {
	if m.prev == nil || len(list) != len(m.prev) {
		return false
	}
	for i, ni := range list {
		if ni != m.prev[i] {
			return false
		}
	}
	return true
}

// sync mirrors every node of list (the scheduler's snapshot: all nodes)
// and drops mirrored nodes list no longer has. It returns an immutable
// snapshot. Errors come from parsing a pod (snapshot.NewPodInfo) and name
// it. Cost: when list holds the same NodeInfos as last time (no node added
// or removed), O(len(list)) pointer and generation comparisons plus the
// rebuild of the nodes whose generation changed; otherwise O(len(list))
// look-ups as well.
func (m *mirror) sync(list []fwk.NodeInfo) (*snapshot.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.cur.Load()
	var (
		changed     []*entry
		removed     []int32
		keysChanged bool
	)
	if m.samePositions(list) {
		for i, ni := range list {
			if ni.GetGeneration() == m.prevGen[i] {
				continue
			}
			ne, kc, err := m.rebuild(ni)
			if err != nil {
				return nil, err
			}
			if ne != nil {
				changed = append(changed, ne)
				keysChanged = keysChanged || kc
			}
		}
		if changed == nil {
			return old.snap, nil
		}
	} else {
		m.epoch++
		for _, ni := range list {
			node := ni.Node()
			if node == nil {
				continue
			}
			if e := m.byName[node.Name]; e != nil && e.gen == ni.GetGeneration() && e.node == node {
				e.epoch = m.epoch
				continue
			}
			ne, kc, err := m.rebuild(ni)
			if err != nil {
				return nil, err
			}
			changed = append(changed, ne)
			keysChanged = keysChanged || kc
		}
		for name, e := range m.byName {
			if e.epoch != m.epoch {
				if err := m.fork.RemoveNode(name); err != nil {
					return nil, err
				}
				delete(m.byName, name)
				m.free = append(m.free, e.slot)
				removed = append(removed, e.slot)
			}
		}
	}
	slots := make([]*entry, m.nslots)
	copy(slots, old.slots)
	for _, sl := range removed {
		slots[sl] = nil
	}
	if len(removed) > 0 {
		// A removal moves another node in the fork: re-read every node.
		// Published entries are never changed: replace them all.
		keysChanged = true
		changed = changed[:0]
		for name, e := range m.byName {
			ne := *e
			m.byName[name] = &ne
			changed = append(changed, &ne)
		}
	}
	for _, e := range changed {
		e.ours = m.fork.Get(e.node.Name)
		slots[e.slot] = e
	}
	index := old.index
	if keysChanged || index == nil {
		index = make(map[*v1.Node]int32, len(m.byName))
		for _, e := range m.byName {
			index[e.node] = e.slot
		}
	}
	v := &view{snap: m.fork.Snapshot(), slots: slots, index: index}
	m.cur.Store(v)
	m.prev = append(m.prev[:0], list...)
	m.prevGen = m.prevGen[:0]
	for _, ni := range list {
		m.prevGen = append(m.prevGen, ni.GetGeneration())
	}
	return v.snap, nil
}

// rebuild brings the mirror of ni up to date (nil entry for a NodeInfo
// without a node) and reports whether the node object differs from the one
// mirrored before. A known node is patched in the fork — pods removed and
// added by object identity, the node object replaced if it changed — so its
// index and every other node stay where they are; O(pods on the node) plus
// parsing the new pods.
func (m *mirror) rebuild(ni fwk.NodeInfo) (*entry, bool, error) {
	node := ni.Node()
	if node == nil {
		return nil, false, nil
	}
	e := m.byName[node.Name]
	pis, cache, err := podInfos(ni, e)
	if err != nil {
		return nil, false, err
	}
	if e == nil {
		if err := m.fork.AddNodeInfo(node, pis...); err != nil {
			return nil, false, err
		}
		ne := &entry{node: node, gen: ni.GetGeneration(), epoch: m.epoch, slot: m.newSlot(), pods: cache}
		m.byName[node.Name] = ne
		return ne, true, nil
	}
	if e.node != node {
		if err := m.fork.UpdateNode(node); err != nil {
			return nil, false, err
		}
	}
	for pod, pi := range e.pods {
		if _, still := cache[pod]; !still {
			if err := m.fork.RemovePod(pi.Key(), node.Name); err != nil {
				return nil, false, err
			}
		}
	}
	for pod, pi := range cache {
		if _, had := e.pods[pod]; !had {
			if err := m.fork.AddPodInfo(pi, node.Name); err != nil {
				return nil, false, err
			}
		}
	}
	ne := &entry{node: node, gen: ni.GetGeneration(), epoch: m.epoch, slot: e.slot, pods: cache}
	m.byName[node.Name] = ne
	return ne, e.node != node, nil
}

func (m *mirror) newSlot() int32 {
	if n := len(m.free); n > 0 {
		s := m.free[n-1]
		m.free = m.free[:n-1]
		return s
	}
	m.nslots++
	return m.nslots - 1
}

// slots is one past the highest slot in use.
func (m *mirror) slots() int { return len(m.cur.Load().slots) }

// podInfos parses the pods of ni, reusing those of the previous mirror of
// the node.
func podInfos(ni fwk.NodeInfo, prev *entry) ([]*snapshot.PodInfo, map[*v1.Pod]*snapshot.PodInfo, error) {
	pods := ni.GetPods()
	pis := make([]*snapshot.PodInfo, 0, len(pods))
	cache := make(map[*v1.Pod]*snapshot.PodInfo, len(pods))
	for _, p := range pods {
		pod := p.GetPod()
		var pi *snapshot.PodInfo
		if prev != nil {
			pi = prev.pods[pod]
		}
		if pi == nil {
			var err error
			if pi, err = snapshot.NewPodInfo(pod); err != nil {
				return nil, nil, fmt.Errorf("kubescheduler: node %s: %w", ni.Node().Name, err)
			}
		}
		pis = append(pis, pi)
		cache[pod] = pi
	}
	return pis, cache, nil
}

// lookup returns the entry mirroring ni when ni is the cycle snapshot's
// (same node object, same generation): one pointer-keyed look-up, no
// allocation. nil otherwise.
func (m *mirror) lookup(ni fwk.NodeInfo) *entry {
	node := ni.Node()
	if node == nil {
		return nil
	}
	v := m.cur.Load()
	slot, ok := v.index[node]
	if !ok || int(slot) >= len(v.slots) {
		return nil
	}
	e := v.slots[slot]
	if e == nil || e.node != node || e.gen != ni.GetGeneration() {
		return nil
	}
	return e
}

// nodeFor returns schedkit's view of ni: the mirrored node when ni is the
// cycle snapshot's; otherwise — a NodeInfo the framework changed for this
// call, with nominated pods added or preemption victims removed — a one-off
// copy built from ni (allocates O(pods)).
func (m *mirror) nodeFor(ni fwk.NodeInfo) (*snapshot.NodeInfo, error) {
	if e := m.lookup(ni); e != nil {
		return e.ours, nil
	}
	node := ni.Node()
	if node == nil {
		return nil, fmt.Errorf("kubescheduler: %w: NodeInfo without a node", snapshot.ErrNodeNotFound)
	}
	m.mu.Lock()
	prev := m.byName[node.Name] // its pod map is never changed once published
	m.mu.Unlock()
	pis, _, err := podInfos(ni, prev)
	if err != nil {
		return nil, err
	}
	f := snapshot.Empty().Fork()
	if err := f.AddNodeInfo(node, pis...); err != nil {
		return nil, err
	}
	return f.Get(node.Name), nil
}
