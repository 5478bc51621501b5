package score

import (
	"fmt"

	"github.com/schedkit/schedkit/snapshot"
)

// BinPackName is the name of [NewBinPack].
const BinPackName = "BinPack"

// binPack is the scorer [NewBinPack] returns.
type binPack struct {
	res []resource
}

var _ Scorer = (*binPack)(nil)

// NewBinPack returns the scorer for resources and their weights (none:
// cpu and memory, weight 1 — Volcano's defaults binpack.cpu and
// binpack.memory). A weight outside [1, 100] (0 means 1), an empty or a
// repeated name is an error wrapping [ErrInvalidConfig].
//
// BinPack is Volcano's binpack node-order function (volcano-sh/volcano
// pkg/scheduler/plugins/binpack/binpack.go BinPackingScore): a weighted
// best-fit that favours the fullest node the pod fits on, with
// per-resource weights.
//
//	for every configured resource r the pod requests (request_r > 0):
//	    part_r = (request_r + used_r) × weight_r / allocatable_r   if allocatable_r > 0 and it fits
//	           = 0                                                 otherwise (weight still counted)
//	score = int64( Σ part_r / Σ weight_r × 100 )
//
// in float64, in Volcano's order, truncated to an integer (Volcano keeps the
// float; its plugin weight binpack.weight is the Profile weight here).
// Requests are real requests on both sides ([snapshot.PodInfo.Requested],
// [snapshot.NodeInfo.Requested]). Resources the pod does not request are
// left out, so a pod that requests no GPU is scored the same on GPU and
// GPU-less nodes; a node lacking a resource the pod does request scores 0
// for it. A pod requesting none of the resources scores 0 everywhere.
//
// O(resources) per node, allocates nothing; safe for concurrent use.
func NewBinPack(resources ...ResourceSpec) (Scorer, error) {
	rs, err := compileResources(BinPackName, resources, true)
	if err != nil {
		return nil, err
	}
	return &binPack{res: rs}, nil
}

// Name returns [BinPackName].
func (*binPack) Name() string { return BinPackName }

// Prepare keeps the configured resources the pod requests; it never skips
// and never fails.
func (s *binPack) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	p := &binPackPod{res: requestedResources(s.res, pod)}
	for _, r := range p.res {
		p.weightSum += r.weight
	}
	return p, nil
}

type binPackPod struct {
	res       []podRes
	weightSum int64
}

// part is Volcano's ResourceBinPackingScore.
func binPackPart(request, used, capacity, weight int64) float64 {
	if capacity <= 0 {
		return 0
	}
	usedFinally := float64(request) + float64(used)
	if usedFinally > float64(capacity) {
		return 0
	}
	return usedFinally * float64(weight) / float64(capacity)
}

func (p *binPackPod) score(n *snapshot.NodeInfo) int64 {
	if p.weightSum == 0 {
		return 0
	}
	var score float64
	req := n.Requested()
	alloc := n.Allocatable()
	for j := range p.res {
		r := &p.res[j]
		score += binPackPart(r.podReq, req.Get(r.id), alloc.Get(r.id), r.weight)
	}
	score /= float64(p.weightSum)
	score *= float64(MaxScore)
	return int64(score)
}

func (p *binPackPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	for i, n := range nodes {
		out[i] = p.score(n)
	}
}

// Explain shows each resource's part.
func (p *binPackPod) Explain(n *snapshot.NodeInfo) string {
	d := explainResources(p.res, n, func(r *podRes, alloc, used int64) string {
		return fmt.Sprintf("(%d+%d)×%d/%d=%.4g", r.podReq, used, r.weight, alloc, binPackPart(r.podReq, used, alloc, r.weight))
	})
	return fmt.Sprintf("%s; /%d×100=%d", d, p.weightSum, p.score(n))
}
