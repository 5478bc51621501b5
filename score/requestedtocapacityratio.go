package score

import (
	"fmt"
	"math"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/snapshot"
)

// maxCustomPriorityScore is the top of a [UtilizationShapePoint] score
// (upstream config.MaxCustomPriorityScore).
const maxCustomPriorityScore = 10

// UtilizationShapePoint is one point of a RequestedToCapacityRatio shape
// (upstream config.UtilizationShapePoint).
type UtilizationShapePoint struct {
	// Utilization in percent, [0, 100].
	Utilization int32 `json:"utilization"`
	// Score in [0, 10] (upstream MaxCustomPriorityScore); scaled by 10
	// to [MinScore, MaxScore].
	Score int32 `json:"score"`
}

// RequestedToCapacityRatioArgs configures [NewRequestedToCapacityRatio].
type RequestedToCapacityRatioArgs struct {
	// Resources and their weights; empty means [DefaultResources].
	Resources []ResourceSpec
	// Shape: at least one point, utilizations strictly increasing.
	Shape []UtilizationShapePoint
}

func (a *RequestedToCapacityRatioArgs) compile() (*requestedToCapacityRatio, error) {
	const who = "RequestedToCapacityRatio"
	rs, err := compileResources(who, a.Resources, false)
	if err != nil {
		return nil, err
	}
	if len(a.Shape) == 0 {
		return nil, fmt.Errorf("score: %s: shape: at least one point must be specified: %w", who, ErrInvalidConfig)
	}
	for i, p := range a.Shape {
		if i > 0 && a.Shape[i-1].Utilization >= p.Utilization {
			return nil, fmt.Errorf("score: %s: shape[%d].utilization: %d: values must be sorted in increasing order: %w", who, i, p.Utilization, ErrInvalidConfig)
		}
		if p.Utilization < 0 || p.Utilization > 100 {
			return nil, fmt.Errorf("score: %s: shape[%d].utilization: %d not in [0, 100]: %w", who, i, p.Utilization, ErrInvalidConfig)
		}
		if p.Score < 0 || p.Score > maxCustomPriorityScore {
			return nil, fmt.Errorf("score: %s: shape[%d].score: %d not in [0, %d]: %w", who, i, p.Score, maxCustomPriorityScore, ErrInvalidConfig)
		}
	}
	// Upstream scales the scores by MaxScore/maxCustomPriorityScore before
	// building the function (requestedToCapacityRatioScorer).
	shape := make([]shapePoint, len(a.Shape))
	for i, p := range a.Shape {
		shape[i] = shapePoint{int64(p.Utilization), int64(p.Score) * (MaxScore / maxCustomPriorityScore)}
	}
	s := &requestedToCapacityRatio{res: rs}
	for u := range s.table {
		s.table[u] = brokenLinear(shape, int64(u))
	}
	return s, nil
}

// requestedToCapacityRatio is the scorer [NewRequestedToCapacityRatio] returns.
type requestedToCapacityRatio struct {
	res   []resource
	table [101]int64 // f(u) for u in [0, 100]
}

var _ Scorer = (*requestedToCapacityRatio)(nil)

// NewRequestedToCapacityRatio validates args with upstream's rules
// (pkg/scheduler/apis/config/validation validateFunctionShape,
// validateResources; errors wrap [ErrInvalidConfig] and name the field)
// and returns the scorer.
//
// RequestedToCapacityRatio scores each resource's utilisation after
// placing the pod through a piecewise-linear shape: upstream
// NodeResourcesFit with scoring strategy RequestedToCapacityRatio
// (kube-scheduler v1.37 noderesources/requested_to_capacity_ratio.go,
// helper/shape_score.go):
//
//	u_r     = requested_r × 100 / allocatable_r      (integer; 100 if requested_r > allocatable_r)
//	f(u)    = the shape's score × 10 at u, linear between points with
//	          integer truncation, flat outside the first and last point
//	score   = round( Σ_r weight_r × f(u_r) / Σ_r weight_r )   over the r with f(u_r) > 0
//
// (math.Round of the float64 quotient, as upstream). Which resources
// count, the cpu/memory non-zero defaults and the pod side are as for
// [NewLeastAllocated].
// f is tabulated for u in [0, 100] at construction, so a resource costs a
// division and a table load. O(resources) per node, allocates nothing;
// safe for concurrent use.
func NewRequestedToCapacityRatio(args RequestedToCapacityRatioArgs) (Scorer, error) {
	return args.compile()
}

// shapePoint is a shape point with the score already scaled.
type shapePoint struct{ utilization, score int64 }

// brokenLinear is upstream's helper.BuildBrokenLinearFunction evaluated at
// p: shape[0].score below the first point, the last score above the last,
// linear in between with integer (truncating) division.
func brokenLinear(shape []shapePoint, p int64) int64 {
	for i := range shape {
		if p <= shape[i].utilization {
			if i == 0 {
				return shape[0].score
			}
			a, b := shape[i-1], shape[i]
			return a.score + (b.score-a.score)*(p-a.utilization)/(b.utilization-a.utilization)
		}
	}
	return shape[len(shape)-1].score
}

// Name returns [NodeResourcesFitName].
func (s *requestedToCapacityRatio) Name() string { return NodeResourcesFitName }

// Prepare reads the pod's requests once; it never skips and never fails.
func (s *requestedToCapacityRatio) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	rs, _ := prepareResources(s.res, pod, true)
	return &rtcrPod{res: rs, table: &s.table}, nil
}

type rtcrPod struct {
	res   []podRes
	table *[101]int64
}

// utilization is requested*100/capacity in [0, 100] (100 when over
// capacity); capacity > 0.
func utilization(requested, capacity int64) int64 {
	if uint64(requested) > uint64(capacity) {
		return 100
	}
	if capacity <= maxSafe {
		return requested * 100 / capacity
	}
	return mulDiv(requested, 100, capacity)
}

func (p *rtcrPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	for i, n := range nodes {
		var s, ws int64
		for j := range p.res {
			r := &p.res[j]
			alloc, used := nodeAmounts(n, r)
			if alloc <= 0 {
				continue
			}
			if v := p.table[utilization(arith.Add(used, r.podReq), alloc)]; v > 0 {
				s += v * r.weight
				ws += r.weight
			}
		}
		out[i] = roundedMean(s, ws)
	}
}

// roundedMean is upstream's int64(math.Round(float64(s) / float64(ws))), 0
// when ws is 0.
func roundedMean(s, ws int64) int64 {
	if ws == 0 {
		return 0
	}
	return int64(math.Round(float64(s) / float64(ws)))
}

// Explain shows each resource's utilisation and shape value.
func (p *rtcrPod) Explain(n *snapshot.NodeInfo) string {
	var s, ws int64
	d := explainResources(p.res, n, func(r *podRes, alloc, used int64) string {
		u := utilization(arith.Add(used, r.podReq), alloc)
		v := p.table[u]
		if v > 0 {
			s += v * r.weight
			ws += r.weight
		}
		return fmt.Sprintf("u=%d%% f=%d ×%d", u, v, r.weight)
	})
	return fmt.Sprintf("RequestedToCapacityRatio %s; round(%d/%d)=%d", d, s, ws, roundedMean(s, ws))
}
