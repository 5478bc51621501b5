package score

import (
	"fmt"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
)

// NodeResourcesFitName is upstream's plugin name, shared by the three
// NodeResourcesFit scoring strategies ([NewLeastAllocated], [NewMostAllocated],
// [NewRequestedToCapacityRatio]).
const NodeResourcesFitName = "NodeResourcesFit"

// leastAllocated is the scorer [NewLeastAllocated] returns.
type leastAllocated struct {
	res []resource
}

var _ Scorer = (*leastAllocated)(nil)

// NewLeastAllocated returns the scorer for resources (none:
// [DefaultResources]). A weight outside [1, 100] (0 means 1) or an empty
// name is an error wrapping [ErrInvalidConfig]. Repeated names are allowed
// and counted twice, as upstream.
//
// LeastAllocated favours nodes with more unrequested capacity: upstream
// NodeResourcesFit with scoring strategy LeastAllocated (kube-scheduler
// v1.37 noderesources/least_allocated.go, resource_allocation.go):
//
//	score = Σ_r weight_r × (allocatable_r − requested_r) × 100 / allocatable_r  /  Σ_r weight_r
//
// with integer (truncating) division, a resource's part 0 when
// requested_r > allocatable_r, and requested_r = the node's requests plus
// the pod's. For cpu and memory both sides count a container without a
// request as 100m / 200 MiB (node: [snapshot.NodeInfo.NonZeroRequested]);
// other resources use the node's real requests.
//
// The pod side is upstream's exactly, quirk included: v1.37.2 builds the
// NodeResourcesFit strategy scorers without the feature flags, so they
// read the containers' spec requests (init containers and sidecars
// included, missing cpu/memory as 100m/200Mi) plus overhead and ignore
// pod-level spec.resources and in-place-resize status — unlike the fit
// filter, BalancedAllocation and the node side. For a pod with neither
// this is [snapshot.PodRequests].Scoring. A resource the node has no allocatable of, or a scalar
// resource (GPU, hugepages, ...) the pod does not request, is left out of
// both sums, so a pod that requests no GPU is not penalised on GPU-less
// nodes. No resource left: score 0.
//
// The result equals upstream's for every input upstream computes without
// overflow; where upstream's int64 arithmetic wraps (amounts near
// MaxInt64) this one saturates and stays in [0, 100].
//
// Score is O(resources) per node and allocates nothing; cpu+memory (the
// default) has a dedicated loop. Safe for concurrent use.
func NewLeastAllocated(resources ...ResourceSpec) (Scorer, error) {
	rs, err := compileResources("LeastAllocated", resources, false)
	if err != nil {
		return nil, err
	}
	return &leastAllocated{res: rs}, nil
}

// Name returns [NodeResourcesFitName].
func (s *leastAllocated) Name() string { return NodeResourcesFitName }

func (s *leastAllocated) resources() []resource { return s.res }

// Prepare reads the pod's requests once; it never skips and never fails.
func (s *leastAllocated) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	rs, _ := prepareResources(s.res, pod, true)
	p := &leastPod{res: rs}
	if c, m, ok := isCPUMem(rs); ok {
		p.fast, p.cpu, p.mem, p.wc, p.wm = true, c.podReq, m.podReq, c.weight, m.weight
	}
	return p, nil
}

type leastPod struct {
	res              []podRes
	fast             bool
	cpu, mem, wc, wm int64
}

func (p *leastPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	if p.fast {
		for i, n := range nodes {
			out[i] = p.node(nodeview.CPUMemory(n))
		}
		return
	}
	for i, n := range nodes {
		var s, ws int64
		for j := range p.res {
			r := &p.res[j]
			alloc, used := nodeAmounts(n, r)
			sr, wr := leastPart(used, r.podReq, alloc, r.weight)
			s, ws = s+sr, ws+wr
		}
		out[i] = weightedMean(s, ws)
	}
}

// leastPart is one resource's share of LeastAllocated's weighted mean:
// weight × leastRequestedScore(used, podReq, alloc) and weight, or (0, 0)
// for a resource with alloc <= 0, which is left out, as upstream. The one
// place the per-node loops (Score, node, Explain) do the arithmetic;
// cpuMemPod.weighted is its range-checked fast path.
func leastPart(used, podReq, alloc, weight int64) (s, w int64) {
	if alloc <= 0 {
		return 0, 0
	}
	return leastRequestedScore(used, podReq, alloc) * weight, weight
}

// weightedMean is s/ws truncated, 0 when ws is 0; s >= 0.
func weightedMean(s, ws int64) int64 {
	switch ws {
	case 0:
		return 0
	case 1:
		return s
	case 2:
		return s >> 1
	}
	return s / ws
}

// Explain shows each resource's part: "cpu (8000-4000)*100/8000=50 ×1".
func (p *leastPod) Explain(n *snapshot.NodeInfo) string {
	var s, ws int64
	d := explainResources(p.res, n, func(r *podRes, alloc, used int64) string {
		req := arith.Add(used, r.podReq)
		v := leastRequestedScore(used, r.podReq, alloc)
		s += v * r.weight
		ws += r.weight
		return fmt.Sprintf("(%d-%d)*100/%d=%d ×%d", alloc, req, alloc, v, r.weight)
	})
	return fmt.Sprintf("LeastAllocated %s; %d/%d=%d", d, s, ws, weightedMean(s, ws))
}
