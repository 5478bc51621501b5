package kubescheduler

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

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
	mu     sync.RWMutex
	fork   *snapshot.Fork
	byName map[string]*entry
	byNode map[*v1.Node]*entry
	epoch  uint64
	last   *snapshot.Snapshot
	// the node list of the previous sync and its generations
	prev    []fwk.NodeInfo
	prevGen []int64
	// slots number the entries densely, for per-cycle arrays
	free   []int32
	nslots int32
}

// entry is one mirrored node. Replaced, never changed, when the node
// changes (except epoch, under the write lock).
type entry struct {
	node  *v1.Node
	gen   int64
	epoch uint64
	slot  int32
	ours  *snapshot.NodeInfo
	pods  map[*v1.Pod]*snapshot.PodInfo
}

func newMirror() *mirror {
	return &mirror{fork: snapshot.Empty().Fork(), byName: map[string]*entry{}, byNode: map[*v1.Node]*entry{}}
}

// mirrors shares one mirror among the plugins of one framework handle
// (one scheduler profile), so a profile with several schedkit plugins
// mirrors each node change once.
var mirrors sync.Map // fwk.Handle → *mirror

func mirrorFor(h fwk.Handle) *mirror {
	if h == nil {
		return newMirror()
	}
	m, _ := mirrors.LoadOrStore(h, newMirror())
	return m.(*mirror)
}

// current returns the last synced snapshot (empty before the first sync).
func (m *mirror) current() *snapshot.Snapshot {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.last == nil {
		return snapshot.Empty()
	}
	return m.last
}

// view syncs list, or returns the current snapshot when there is no list
// (no scheduler snapshot to mirror: a plugin used without a handle).
func (m *mirror) view(list []fwk.NodeInfo) (*snapshot.Snapshot, error) {
	if list == nil {
		return m.current(), nil
	}
	return m.sync(list)
}

// unchanged reports whether list is the previous sync's list with the same
// generations; caller holds the lock.
func (m *mirror) unchanged(list []fwk.NodeInfo) bool {
	if m.last == nil || len(list) != len(m.prev) {
		return false
	}
	for i, ni := range list {
		if ni != m.prev[i] || ni.GetGeneration() != m.prevGen[i] {
			return false
		}
	}
	return true
}

// sync mirrors every node of list (the scheduler's snapshot: all nodes)
// and drops mirrored nodes list no longer has. It returns an immutable
// snapshot. Errors come from parsing a pod (snapshot.NewPodInfo) and name
// it. Cost: O(len(list)) pointer comparisons when nothing changed; else
// O(len(list)) look-ups plus O(pods) per changed node.
func (m *mirror) sync(list []fwk.NodeInfo) (*snapshot.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.unchanged(list) {
		return m.last, nil
	}
	m.epoch++
	var changed []*entry
	for _, ni := range list {
		node := ni.Node()
		if node == nil {
			continue
		}
		e := m.byName[node.Name]
		if e != nil && e.gen == ni.GetGeneration() && e.node == node {
			e.epoch = m.epoch
			continue
		}
		pis, cache, err := podInfos(ni, e)
		if err != nil {
			return nil, err
		}
		var slot int32
		if e != nil {
			if err := m.fork.RemoveNode(node.Name); err != nil {
				return nil, err
			}
			delete(m.byNode, e.node)
			slot = e.slot
		} else {
			slot = m.newSlot()
		}
		if err := m.fork.AddNodeInfo(node, pis...); err != nil {
			return nil, err
		}
		ne := &entry{node: node, gen: ni.GetGeneration(), epoch: m.epoch, slot: slot, pods: cache}
		m.byName[node.Name] = ne
		m.byNode[node] = ne
		changed = append(changed, ne)
	}
	removed := false
	for name, e := range m.byName {
		if e.epoch != m.epoch {
			if err := m.fork.RemoveNode(name); err != nil {
				return nil, err
			}
			delete(m.byName, name)
			delete(m.byNode, e.node)
			m.free = append(m.free, e.slot)
			removed = true
		}
	}
	if removed { // a removal moves another node: refresh every pointer
		changed = changed[:0]
		for _, e := range m.byName {
			changed = append(changed, e)
		}
	}
	for _, e := range changed {
		e.ours = m.fork.Get(e.node.Name)
	}
	m.last = m.fork.Snapshot()
	m.prev = append(m.prev[:0], list...)
	m.prevGen = m.prevGen[:0]
	for _, ni := range list {
		m.prevGen = append(m.prevGen, ni.GetGeneration())
	}
	return m.last, nil
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
func (m *mirror) slots() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return int(m.nslots)
}

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
	m.mu.RLock()
	e := m.byNode[node]
	m.mu.RUnlock()
	if e == nil || e.gen != ni.GetGeneration() {
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
	m.mu.RLock()
	prev := m.byName[node.Name] // its pod map is never changed once published
	m.mu.RUnlock()
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
