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
// sync compares each upstream NodeInfo's Generation with the one it last
// mirrored and rebuilds only the nodes that changed (usually the one node a
// pod was assumed on since the previous cycle), reusing the parsed PodInfo
// of every pod object it has seen on that node. So the steady-state cost per
// cycle is one map look-up per node, and reading a node afterwards is a
// look-up by name that neither copies the node nor allocates.
type mirror struct {
	mu    sync.RWMutex
	fork  *snapshot.Fork
	nodes map[string]*mirrored
	epoch uint64
	last  *snapshot.Snapshot
}

type mirrored struct {
	gen   int64
	epoch uint64
	pods  map[*v1.Pod]*snapshot.PodInfo
}

func newMirror() *mirror {
	return &mirror{fork: snapshot.Empty().Fork(), nodes: map[string]*mirrored{}}
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

// sync mirrors every node of list (the scheduler's snapshot: all nodes)
// and drops mirrored nodes list no longer has. It returns an immutable
// snapshot. Errors come from parsing a pod (snapshot.NewPodInfo) and name
// it. O(len(list)) look-ups plus O(pods) per changed node.
func (m *mirror) sync(list []fwk.NodeInfo) (*snapshot.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.epoch++
	changed := false
	for _, ni := range list {
		node := ni.Node()
		if node == nil {
			continue
		}
		e := m.nodes[node.Name]
		if e != nil && e.gen == ni.GetGeneration() {
			e.epoch = m.epoch
			continue
		}
		pis, cache, err := podInfos(ni, e)
		if err != nil {
			return nil, err
		}
		if e != nil {
			if err := m.fork.RemoveNode(node.Name); err != nil {
				return nil, err
			}
		}
		if err := m.fork.AddNodeInfo(node, pis...); err != nil {
			return nil, err
		}
		m.nodes[node.Name] = &mirrored{gen: ni.GetGeneration(), epoch: m.epoch, pods: cache}
		changed = true
	}
	for name, e := range m.nodes {
		if e.epoch != m.epoch {
			if err := m.fork.RemoveNode(name); err != nil {
				return nil, err
			}
			delete(m.nodes, name)
			changed = true
		}
	}
	if changed || m.last == nil {
		m.last = m.fork.Snapshot()
	}
	return m.last, nil
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

// podInfos parses the pods of ni, reusing those of the previous mirror of
// the node.
func podInfos(ni fwk.NodeInfo, prev *mirrored) ([]*snapshot.PodInfo, map[*v1.Pod]*snapshot.PodInfo, error) {
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

// nodeFor returns schedkit's view of ni: the mirrored node when ni is the
// cycle snapshot's (same generation), which costs a look-up and allocates
// nothing; otherwise — a NodeInfo the framework changed for this call, with
// nominated pods added or preemption victims removed — a one-off copy built
// from ni (allocates O(pods)).
func (m *mirror) nodeFor(snap *snapshot.Snapshot, ni fwk.NodeInfo) (*snapshot.NodeInfo, error) {
	node := ni.Node()
	if node == nil {
		return nil, fmt.Errorf("kubescheduler: %w: NodeInfo without a node", snapshot.ErrNodeNotFound)
	}
	if ours := snap.Get(node.Name); ours != nil {
		m.mu.RLock()
		e := m.nodes[node.Name]
		same := e != nil && e.gen == ni.GetGeneration() && ours.Node() == node
		var prev *mirrored
		if !same {
			prev = e
		}
		m.mu.RUnlock()
		if same {
			return ours, nil
		}
		return oneOff(ni, prev)
	}
	return oneOff(ni, nil)
}

func oneOff(ni fwk.NodeInfo, prev *mirrored) (*snapshot.NodeInfo, error) {
	// prev's pod map is never changed once published (sync replaces the
	// entry), so reading it without the lock is safe.
	pis, _, err := podInfos(ni, prev)
	if err != nil {
		return nil, err
	}
	f := snapshot.Empty().Fork()
	if err := f.AddNodeInfo(ni.Node(), pis...); err != nil {
		return nil, err
	}
	return f.Get(ni.Node().Name), nil
}
