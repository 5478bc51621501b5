package score

import (
	"fmt"
	"math"

	"github.com/schedkit/schedkit/snapshot"
)

// DominantResourceName is the name of [NewDominantResource].
const DominantResourceName = "DominantResource"

// dominantResource is the scorer [NewDominantResource] returns.
type dominantResource struct {
	res []resource
}

var _ Scorer = (*dominantResource)(nil)

// NewDominantResource returns the scorer for resources and their weights
// (none: cpu and memory, weight 1); errors as [NewBinPack].
//
// DominantResource is a dominant-resource-share (DRF-style) packing score:
// it favours the node where the pod takes the same share of every
// remaining resource, so that filling the node with pods like this one
// strands the least capacity. Following Dominant Resource Fairness
// (Ghodsi et al., NSDI 2011), the pod's share of a node's resource r is
// its request over what is left, and its dominant share is the largest:
//
//	s_r   = min(1, request_r / (allocatable_r − used_r))      (1 when nothing is left)
//	D     = max_r s_r
//	waste = Σ_r weight_r × (1 − s_r / D) / Σ_r weight_r
//	score = int64( 100 × (1 − waste) ) = int64( 100 × Σ_r weight_r s_r / (D × Σ_r weight_r) )
//
// over the configured resources the pod requests (real requests on both
// sides, [snapshot.PodInfo.Requested], [snapshot.NodeInfo.Requested]) and
// the node has allocatable of. waste is the fraction of the other
// resources still free when copies of the pod have used up the dominant
// one. A pod requesting none of the resources is skipped (Prepare returns
// nil); a node with none of the requested resources scores 0. Resources
// the pod does not request are ignored, so a pod that requests no GPU is
// scored the same on GPU and GPU-less nodes. Computed in float64,
// truncated; deterministic.
//
// O(resources) per node, allocates nothing; safe for concurrent use.
func NewDominantResource(resources ...ResourceSpec) (Scorer, error) {
	rs, err := compileResources(DominantResourceName, resources, true)
	if err != nil {
		return nil, err
	}
	return &dominantResource{res: rs}, nil
}

// Name returns [DominantResourceName].
func (*dominantResource) Name() string { return DominantResourceName }

// Prepare keeps the configured resources the pod requests, or skips the pod
// when there are none. It never fails.
func (s *dominantResource) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	rs := requestedResources(s.res, pod)
	if len(rs) == 0 {
		return nil, nil
	}
	return &drfPod{res: rs}, nil
}

type drfPod struct {
	res []podRes
}

// share is min(1, request/free), 1 when nothing is free.
func share(request, alloc, used int64) float64 {
	free := alloc - used
	if used < 0 || free <= 0 || request >= free {
		return 1
	}
	return float64(request) / float64(free)
}

func (p *drfPod) score(n *snapshot.NodeInfo) int64 {
	alloc, req := n.Allocatable(), n.Requested()
	var dom, sum float64
	var ws int64
	for j := range p.res {
		r := &p.res[j]
		a := alloc.Get(r.id)
		if a <= 0 {
			continue
		}
		s := share(r.podReq, a, req.Get(r.id))
		dom = math.Max(dom, s)
		sum += float64(r.weight) * s
		ws += r.weight
	}
	if ws == 0 || dom == 0 {
		return 0
	}
	v := int64(float64(MaxScore) * sum / (dom * float64(ws)))
	return min(max(v, 0), MaxScore)
}

func (p *drfPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	for i, n := range nodes {
		out[i] = p.score(n)
	}
}

// Explain shows each resource's share of what is left.
func (p *drfPod) Explain(n *snapshot.NodeInfo) string {
	d := explainResources(p.res, n, func(r *podRes, alloc, used int64) string {
		return fmt.Sprintf("%d/(%d-%d)=%.4g ×%d", r.podReq, alloc, used, share(r.podReq, alloc, used), r.weight)
	})
	return fmt.Sprintf("%s; score %d", d, p.score(n))
}
