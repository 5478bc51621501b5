package score

import (
	"fmt"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
)

// mostAllocated is the scorer [NewMostAllocated] returns.
type mostAllocated struct {
	res []resource
}

var _ Scorer = (*mostAllocated)(nil)

// NewMostAllocated returns the scorer for resources (none:
// [DefaultResources]); errors as [NewLeastAllocated].
//
// MostAllocated favours nodes with more requested capacity (bin packing):
// upstream NodeResourcesFit with scoring strategy MostAllocated
// (kube-scheduler v1.37 noderesources/most_allocated.go,
// resource_allocation.go):
//
//	score = Σ_r weight_r × min(requested_r, allocatable_r) × 100 / allocatable_r  /  Σ_r weight_r
//
// with integer (truncating) division and requested_r = the node's requests
// plus the pod's. Which resources count, the cpu/memory non-zero
// defaults and the pod side (upstream's quirk included) are as for
// [NewLeastAllocated]. Exact, saturating where upstream
// would overflow; O(resources) per node, allocates nothing; safe for
// concurrent use.
func NewMostAllocated(resources ...ResourceSpec) (Scorer, error) {
	rs, err := compileResources("MostAllocated", resources, false)
	if err != nil {
		return nil, err
	}
	return &mostAllocated{res: rs}, nil
}

// Name returns [NodeResourcesFitName].
func (s *mostAllocated) Name() string { return NodeResourcesFitName }

// Prepare reads the pod's requests once; it never skips and never fails.
func (s *mostAllocated) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	rs, _ := prepareResources(s.res, pod, true)
	p := &mostPod{res: rs}
	if c, m, ok := isCPUMem(rs); ok {
		p.fast, p.cpu, p.mem, p.wc, p.wm = true, c.podReq, m.podReq, c.weight, m.weight
	}
	return p, nil
}

type mostPod struct {
	res              []podRes
	fast             bool
	cpu, mem, wc, wm int64
}

func (p *mostPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	if p.fast {
		for i, n := range nodes {
			cm := nodeview.CPUMemory(n) // one cache line per node
			var s, ws int64
			c, m := cm.Allocatable[0], cm.Allocatable[1]
			uc, um := cm.NonZeroRequested[0], cm.NonZeroRequested[1]
			if uint64(c-1) < maxSafe {
				s, ws = mostFast(uc, p.cpu, c)*p.wc, p.wc
			} else if c > 0 {
				s, ws = mostSlow(uc, p.cpu, c)*p.wc, p.wc
			}
			if uint64(m-1) < maxSafe {
				s += mostFast(um, p.mem, m) * p.wm
				ws += p.wm
			} else if m > 0 {
				s += mostSlow(um, p.mem, m) * p.wm
				ws += p.wm
			}
			out[i] = weightedMean(s, ws)
		}
		return
	}
	for i, n := range nodes {
		var s, ws int64
		for j := range p.res {
			r := &p.res[j]
			alloc, used := nodeAmounts(n, r)
			if alloc <= 0 {
				continue
			}
			s += mostRequestedScore(used, r.podReq, alloc) * r.weight
			ws += r.weight
		}
		out[i] = weightedMean(s, ws)
	}
}

// Explain shows each resource's part: "cpu min(3000,4000)*100/4000=75 ×1".
func (p *mostPod) Explain(n *snapshot.NodeInfo) string {
	var s, ws int64
	d := explainResources(p.res, n, func(r *podRes, alloc, used int64) string {
		req := arith.Add(used, r.podReq)
		v := mostRequestedScore(used, r.podReq, alloc)
		s += v * r.weight
		ws += r.weight
		return fmt.Sprintf("min(%d,%d)*100/%d=%d ×%d", req, alloc, alloc, v, r.weight)
	})
	return fmt.Sprintf("MostAllocated %s; %d/%d=%d", d, s, ws, weightedMean(s, ws))
}
