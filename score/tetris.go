package score

import (
	"fmt"

	"github.com/schedkit/schedkit/snapshot"
)

// TetrisName is the name of [NewTetris] in profiles, explanations and
// configurations: "DotProduct", the FGD simulator's name for the
// normalised dot product it computes (unchanged since the type was
// called DotProduct, so that configurations and outputs stay valid).
const TetrisName = "DotProduct"

// tetris is the scorer [NewTetris] returns.
type tetris struct {
	res []resource
	// spread selects the Tetris direction: higher alignment scores higher.
	spread bool
}

var _ Scorer = (*tetris)(nil)

// NewTetris returns the packing (FGD) variant for resources and their
// weights (none: cpu and memory, weight 1); [Config] with Spread builds
// the other direction. Errors as [NewBinPack].
//
// Tetris is the Tetris alignment score (Grandl et al., "Multi-Resource
// Packing for Cluster Schedulers", SIGCOMM 2014): the dot product of the
// pod's request and the node's free capacity, each dimension normalised by
// the node's allocatable, as in the FGD simulator's DotProduct baseline
// (hkust-adsl/kubernetes-scheduler-simulator
// pkg/simulator/plugin/dot_product_score.go, NormByNode):
//
//	a     = Σ_r weight_r × min(1, request_r/allocatable_r) × free_r/allocatable_r  /  Σ_r weight_r
//	score = int64(100 × (1 − a))     when Spread is false (default; FGD: "the larger the dot product, the lower the score", packs)
//	score = int64(100 × a)           when Spread is true (Tetris's preference for the best-aligned, emptier node)
//
// with free_r = max(0, allocatable_r − used_r), over the configured
// resources the pod requests and the node has allocatable of (real
// requests on both sides). Resources the pod does not request are left
// out, so a pod that requests no GPU is scored the same on GPU and GPU-less
// nodes (FGD's fixed cpu+gpu vector would dilute it). No such resource:
// a = 0. float64, truncated; deterministic.
//
// O(resources) per node, allocates nothing; safe for concurrent use.
func NewTetris(resources ...ResourceSpec) (Scorer, error) {
	return newTetris(false, resources)
}

func newTetris(spread bool, resources []ResourceSpec) (Scorer, error) {
	rs, err := compileResources(TetrisName, resources, true)
	if err != nil {
		return nil, err
	}
	return &tetris{res: rs, spread: spread}, nil
}

// Name returns [TetrisName].
func (*tetris) Name() string { return TetrisName }

// Prepare keeps the configured resources the pod requests; it never skips
// and never fails.
func (s *tetris) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	return &dotPod{res: requestedResources(s.res, pod), spread: s.spread}, nil
}

type dotPod struct {
	res    []podRes
	spread bool
}

// alignTerm is min(1, request/alloc) × free/alloc; alloc > 0.
func alignTerm(request, alloc, used int64) float64 {
	p := float64(request) / float64(alloc)
	if p > 1 {
		p = 1
	}
	free := alloc - used
	if used < 0 || free <= 0 {
		return 0
	}
	return p * (float64(free) / float64(alloc))
}

func (p *dotPod) alignment(n *snapshot.NodeInfo) float64 {
	alloc, req := n.Allocatable(), n.Requested()
	var sum float64
	var ws int64
	for j := range p.res {
		r := &p.res[j]
		a := alloc.Get(r.id)
		if a <= 0 {
			continue
		}
		sum += float64(r.weight) * alignTerm(r.podReq, a, req.Get(r.id))
		ws += r.weight
	}
	if ws == 0 {
		return 0
	}
	return sum / float64(ws)
}

func (p *dotPod) score(n *snapshot.NodeInfo) int64 {
	a := p.alignment(n)
	if !p.spread {
		a = 1 - a
	}
	return min(max(int64(float64(MaxScore)*a), 0), MaxScore)
}

func (p *dotPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	for i, n := range nodes {
		out[i] = p.score(n)
	}
}

// Explain shows each dimension's term and the alignment.
func (p *dotPod) Explain(n *snapshot.NodeInfo) string {
	d := explainResources(p.res, n, func(r *podRes, alloc, used int64) string {
		return fmt.Sprintf("%d/%d×free %d/%d=%.4g ×%d", r.podReq, alloc, max(0, alloc-used), alloc, alignTerm(r.podReq, alloc, used), r.weight)
	})
	return fmt.Sprintf("%s; alignment %.4g; score %d", d, p.alignment(n), p.score(n))
}
