package framework

import (
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// Nominated pods: upstream's PodNominator as the scheduler's own record.
// A pod nominated to a node (after preemption chose it) has the node held
// for it: every cycle of a pod of lower or equal priority (other than the
// nominee) filters that node as if the nominated pods of equal or higher
// priority ran there, and also without them (upstream's two passes of
// RunFilterPluginsWithNominatedPods), so a lower-priority pod cannot take
// the room preemption freed.

// nominee is a pod nominated to a node.
type nominee struct {
	pi   *snapshot.PodInfo
	prio int32
}

// nominations maps nodes to their nominees and pods to their node.
type nominations struct {
	byNode map[string][]nominee
	byPod  map[snapshot.PodKey]string
}

// Nominate records pod (of priority priority, as [PodPriority] or
// Preemption.Priority gives it) as nominated to node, replacing an earlier
// nomination of the same pod; node "" removes the pod's nomination (do so
// when it is bound or deleted). The [Loop] does this itself. O(nominees
// of the pod's previous node).
func (s *Scheduler) Nominate(pod *snapshot.PodInfo, priority int32, node string) {
	if pod == nil {
		return
	}
	s.unnominate(pod.Key())
	if node == "" {
		return
	}
	n := &s.nominated
	if n.byNode == nil {
		n.byNode, n.byPod = map[string][]nominee{}, map[snapshot.PodKey]string{}
	}
	n.byNode[node] = append(n.byNode[node], nominee{pi: pod, prio: priority})
	n.byPod[pod.Key()] = node
}

// unnominate removes the nomination of pod k, if any.
func (s *Scheduler) unnominate(k snapshot.PodKey) {
	n := &s.nominated
	if old, ok := n.byPod[k]; ok {
		l := n.byNode[old]
		for i := range l {
			if l[i].pi.Key() == k {
				l = append(l[:i], l[i+1:]...)
				break
			}
		}
		if len(l) == 0 {
			delete(n.byNode, old)
		} else {
			n.byNode[old] = l
		}
		delete(n.byPod, k)
	}
}

// nominatedNode returns the node pod k is nominated to.
func (s *Scheduler) nominatedNode(k snapshot.PodKey) (string, bool) {
	n, ok := s.nominated.byPod[k]
	return n, ok
}

// nominatedFor returns the pods nominated to node with priority >= prio,
// other than the pod with key self (nil if none; a new slice otherwise).
func (s *Scheduler) nominatedFor(node string, self snapshot.PodKey, prio int32) []*snapshot.PodInfo {
	var out []*snapshot.PodInfo
	for _, n := range s.nominated.byNode[node] {
		if n.prio >= prio && n.pi.Key() != self {
			out = append(out, n.pi)
		}
	}
	return out
}

// holdsNominated reports whether some node has a nominee that pod (of
// spec.priority prio) must yield to; the cycle then adds
// nominatedFilter and skips the equivalence cache.
func (s *Scheduler) holdsNominated(pod *snapshot.PodInfo, prio int32) bool {
	for _, l := range s.nominated.byNode {
		for _, n := range l {
			if n.prio >= prio && n.pi.Key() != pod.Key() {
				return true
			}
		}
	}
	return false
}

// nominatedFilter is the cycle's first pass of
// RunFilterPluginsWithNominatedPods for the nodes with nominees: the
// filters, prepared on a fork of the cluster with the node's nominees
// added, run on that node. It runs after the ordinary filters (the
// second pass). It allocates (a fork and the PreFilters) only on nodes
// with nominees; safe for concurrent calls (each builds its own fork of an
// immutable snapshot).
type nominatedFilter struct {
	s    *Scheduler
	pod  *snapshot.PodInfo
	prio int32
	base *snapshot.Snapshot
}

// newNominatedFilter returns the filter for pod on cluster, or nil when
// no nominee applies or the cluster is neither a Snapshot nor a Fork.
func (s *Scheduler) newNominatedFilter(cluster score.Cluster, pod *snapshot.PodInfo) PodFilter {
	var prio int32
	if p := pod.Pod().Spec.Priority; p != nil {
		prio = *p
	}
	if !s.holdsNominated(pod, prio) {
		return nil
	}
	f := &nominatedFilter{s: s, pod: pod, prio: prio}
	switch c := cluster.(type) {
	case *snapshot.Snapshot:
		f.base = c
	case *snapshot.Fork:
		f.base = c.Snapshot()
	default:
		return nil
	}
	return f
}

func (f *nominatedFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	noms := f.s.nominatedFor(ni.Name(), f.pod.Key(), f.prio)
	if len(noms) == 0 {
		return reasons
	}
	fk := f.base.Fork()
	for _, n := range noms {
		_ = fk.AddPodInfo(n, ni.Name())
	}
	node := fk.Get(ni.Name())
	for _, flt := range f.s.filters {
		res, err := RunPreFilter(flt, f.pod, fk)
		if err != nil || res.Filter == nil {
			continue // the ordinary pass reported errors already
		}
		n0 := len(reasons)
		if reasons = res.Filter.Filter(node, reasons); len(reasons) > n0 {
			return label(reasons, n0, flt.Name())
		}
	}
	return reasons
}
