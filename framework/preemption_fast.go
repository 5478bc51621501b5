package framework

import (
	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/fit"
	"github.com/schedkit/schedkit/snapshot"
)

// fastFit is the dry run without a fork: when every filter the pod
// prepared either reads only the node (NodeName, NodeUnschedulable,
// TaintToleration, NodeAffinity: checked once per node) or is
// NodeResourcesFit, and every other filter gave the pod nothing to check
// in any state of the dry run ([preemptRun.inertInDryRun]), then whether
// the pod fits a node with some of its pods removed is NodeResourcesFit's
// arithmetic on the node's Requested less the removed pods' requests
// ([snapshot.PodRequests].Requested, subtracted and added back with the
// same saturating operations, in the same order, as a fork's RemovePod
// and AddPodInfo) and its pod count. It gives the same victims as the
// dry run on a fork, at O(victims × requested resources) per node,
// allocation-free. A node with nominated pods the pod must yield to takes
// the fork.
type fastFit struct {
	ok     bool
	static []PodFilter // the node-only filters
	fits   bool        // a NodeResourcesFit is among the filters
	checks []fitCheck  // every request > 0 of every NodeResourcesFit
	ids    []snapshot.ResourceID
	alloc  []int64 // per ids: the node's allocatable
	used   []int64 // per ids: the node's requested in the dry-run state
	pods   int     // the node's pod count in the dry-run state
	allow  int64   // the node's allocatable pods
	scr    []Reason
}

// fitCheck is one resource request: ids[idx] must have request free.
type fitCheck struct {
	idx     int
	request int64
}

// prepare decides whether the fast dry run applies to r's pod and
// filters, and collects what it checks.
func (f *fastFit) prepare(r *preemptRun) {
	f.ok = false
	if !r.nodeLoc || r.reject {
		return
	}
	for j, pf := range r.pfs {
		switch r.s.filters[r.pfOwners[j]].(type) {
		case nodeNamePlugin, *nodeNamePlugin, nodeUnschedulablePlugin, *nodeUnschedulablePlugin,
			taintTolerationPlugin, *taintTolerationPlugin, *nodeAffinityPlugin:
			f.static = append(f.static, pf)
			continue
		}
		c, ok := pf.(*fitFilter)
		if !ok {
			return
		}
		f.fits = true
		f.add(snapshot.CPU, c.cpu)
		f.add(snapshot.Memory, c.memory)
		f.add(snapshot.EphemeralStorage, c.ephemeral)
		for _, s := range c.scalars {
			f.add(s.id, s.amount)
		}
	}
	f.alloc, f.used = make([]int64, len(f.ids)), make([]int64, len(f.ids))
	f.ok = true
}

// add records a check of request on id; a request <= 0 never fails
// (fit.Short), so it is left out.
func (f *fastFit) add(id snapshot.ResourceID, request int64) {
	if request <= 0 {
		return
	}
	idx := -1
	for i, x := range f.ids {
		if x == id {
			idx = i
		}
	}
	if idx < 0 {
		idx = len(f.ids)
		f.ids = append(f.ids, id)
	}
	f.checks = append(f.checks, fitCheck{idx, request})
}

// load reads node ni's allocatable and requested.
func (f *fastFit) load(ni *snapshot.NodeInfo) {
	a, u := ni.Allocatable(), ni.Requested()
	for i, id := range f.ids {
		f.alloc[i], f.used[i] = a.Get(id), u.Get(id)
	}
	f.pods, f.allow = ni.NumPods(), a.Get(snapshot.Pods)
}

// remove and put are a fork's RemovePod and AddPodInfo of p, on the
// resources checked.
func (f *fastFit) remove(p *snapshot.PodInfo) {
	req := &p.Requests().Requested
	for i, id := range f.ids {
		f.used[i] = arith.Sub(f.used[i], req.Get(id))
	}
	f.pods--
}

func (f *fastFit) put(p *snapshot.PodInfo) {
	req := &p.Requests().Requested
	for i, id := range f.ids {
		f.used[i] = arith.Add(f.used[i], req.Get(id))
	}
	f.pods++
}

// fitsNow is NodeResourcesFit's verdict on the current state
// (fitFilter.Filter appending nothing).
func (f *fastFit) fitsNow() bool {
	if f.fits && fit.TooManyPods(int64(min(f.pods, 1<<31-1)), f.allow) {
		return false
	}
	for _, c := range f.checks {
		if fit.Short(c.request, f.alloc[c.idx], f.used[c.idx]) {
			return false
		}
	}
	return true
}

// staticOK runs the node-only filters on ni.
func (f *fastFit) staticOK(ni *snapshot.NodeInfo) bool {
	for _, pf := range f.static {
		if f.scr = pf.Filter(ni, f.scr[:0]); len(f.scr) > 0 {
			return false
		}
	}
	return true
}

// fastSelect is selectVictims by fit arithmetic (see [fastFit]); nil
// when the pod does not fit even with every potential victim removed.
func (r *preemptRun) fastSelect(ni *snapshot.NodeInfo, pot []victim) (*candidate, error) {
	f := &r.fast
	if !f.staticOK(ni) {
		return nil, nil
	}
	f.load(ni)
	for i := range pot {
		f.remove(pot[i].pi)
	}
	if !f.fitsNow() {
		return nil, nil
	}
	c, _, err := r.reprieve(ni.Name(), pot, func(v *victim) (bool, error) {
		f.put(v.pi)
		if f.fitsNow() {
			return true, nil
		}
		f.remove(v.pi)
		return false, nil
	})
	return c, err
}
