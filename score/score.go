package score

import (
	"errors"
	"math"
	"math/bits"

	"github.com/schedkit/schedkit/snapshot"
)

// The score range every scorer's final (normalised) score must lie in, as
// upstream's framework.MinScore / MaxScore (kube-scheduler v1.37
// k8s.io/kube-scheduler/framework/interface.go).
const (
	// MinScore is the lowest score a node can get from one scorer.
	MinScore int64 = 0
	// MaxScore is the highest score a node can get from one scorer.
	MaxScore int64 = 100
	// MaxTotalScore bounds the sum over a [Profile] of weight × MaxScore
	// (upstream MaxTotalScore), so totals never overflow.
	MaxTotalScore int64 = math.MaxInt64
)

// Sentinel errors. Every error returned by this package wraps one of these
// (check with errors.Is) and names the scorer, and the node or field, it is
// about.
var (
	// ErrInvalidConfig: a scorer or profile built from bad arguments
	// (resource weight out of range, malformed shape, duplicate scorer
	// name, weight × MaxScore overflowing the total).
	ErrInvalidConfig = errors.New("score: invalid configuration")
	// ErrInvalidPod: a pod whose scoring inputs cannot be parsed (for
	// example a preferred node-affinity term with an unknown operator).
	ErrInvalidPod = errors.New("score: invalid pod")
	// ErrScoreOutOfRange: after normalising, a scorer gave a node a score
	// outside [MinScore, MaxScore]; the scoring cycle fails, as upstream's.
	ErrScoreOutOfRange = errors.New("score: score out of range")
)

// Cluster is the read-only cluster view a scorer may consult while it
// prepares for a pod (for example ImageLocality's image spread).
// *snapshot.Snapshot and *snapshot.Fork implement it. Scorers call it once
// per pod, never per node.
type Cluster interface {
	// NumNodes is the number of nodes in the cluster (all of them, not
	// only the candidates being scored).
	NumNodes() int
	// Node returns node i, 0 <= i < NumNodes().
	Node(i int) *snapshot.NodeInfo
	// Get returns the node called name, or nil.
	Get(name string) *snapshot.NodeInfo
	// ImageNumNodes returns how many nodes list the image name.
	ImageNumNodes(name string) int
}

// Scorer ranks nodes for pods. It is the thing a user implements: a name
// and a per-pod preparation step. Prepare does the per-pod work once (parse
// the pod's requests, affinity, tolerations, image names) and returns a
// [PodScorer] that scores any number of candidate nodes for that pod
// without repeating it.
//
// Prepare returns (nil, nil) to skip the pod: the scorer then contributes
// nothing to any node (upstream's PreScore returning Skip, as
// BalancedAllocation does for best-effort pods). An error names the pod and
// field and fails the scoring cycle.
//
// Implementations must be safe for concurrent calls of Prepare. The
// built-in scorers are immutable after construction.
//
// Optional abilities are separate interfaces the returned PodScorer may
// implement, found by type assertion: [Normalizer] (upstream's
// NormalizeScore) and [Explainer].
type Scorer interface {
	// Name identifies the scorer in a Profile, in errors and in Explain
	// tables. Built-ins use upstream's plugin names.
	Name() string
	// Prepare returns the scorer for pod over cluster, or nil to skip pod.
	Prepare(pod *snapshot.PodInfo, cluster Cluster) (PodScorer, error)
}

// PodScorer scores nodes for the one pod it was prepared for.
type PodScorer interface {
	// Score writes the raw score of nodes[i] to out[i] for every i;
	// len(out) >= len(nodes) (the caller owns both slices; Score keeps
	// neither). Without a Normalizer the raw score is the final score and
	// must lie in [MinScore, MaxScore]; with one it may be any int64 the
	// Normalizer maps into range. The hot path: it should do no map
	// look-up, interface call or allocation per node. Calls on disjoint
	// node batches may run concurrently.
	Score(nodes []*snapshot.NodeInfo, out []int64)
}

// PodScorerFunc adapts a function to [PodScorer]; a Prepare can return a
// closure over its per-pod state.
type PodScorerFunc func(nodes []*snapshot.NodeInfo, out []int64)

// Score calls f(nodes, out).
func (f PodScorerFunc) Score(nodes []*snapshot.NodeInfo, out []int64) { f(nodes, out) }

// Normalizer is implemented by a [PodScorer] whose raw scores are only
// meaningful relative to the other candidates (upstream's ScoreExtensions
// NormalizeScore). A Profile calls it once per pod with the raw scores of
// all candidate nodes (scores[i] belongs to nodes[i]) and expects every
// score rewritten into [MinScore, MaxScore]. An error fails the cycle.
type Normalizer interface {
	Normalize(nodes []*snapshot.NodeInfo, scores []int64) error
}

// Explainer is implemented by a [PodScorer] that can say how it arrived at
// a node's raw score, for example "cpu (8000-4000)*100/8000=50 ...". It is
// called only by [Profile.Explain], never on the hot path, and may
// allocate.
type Explainer interface {
	Explain(node *snapshot.NodeInfo) string
}

// PerNode turns a per-node function into a [Scorer]: f(pod, node) must
// return a score in [MinScore, MaxScore]. It is the convenient path for a
// quick custom scorer; it pays an indirect call per node and does no
// per-pod preparation, so a scorer on a hot path should implement
// [Scorer] and [PodScorer] directly and hoist per-pod work into Prepare.
// f must be safe for concurrent use. An empty name or a nil f is refused by
// [NewProfile] (ErrInvalidConfig).
func PerNode(name string, f func(pod *snapshot.PodInfo, node *snapshot.NodeInfo) int64) Scorer {
	return &perNode{name: name, f: f}
}

type perNode struct {
	name string
	f    func(*snapshot.PodInfo, *snapshot.NodeInfo) int64
}

func (p *perNode) Name() string { return p.name }

// check is NewProfile's test of what PerNode could not refuse: a nil f
// (which would panic at the first Score).
func (p *perNode) check() error {
	if p.f == nil {
		return errors.New("PerNode function is nil")
	}
	return nil
}

func (p *perNode) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	return &perNodePod{f: p.f, pod: pod}, nil
}

type perNodePod struct {
	f   func(*snapshot.PodInfo, *snapshot.NodeInfo) int64
	pod *snapshot.PodInfo
}

func (p *perNodePod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	for i, n := range nodes {
		out[i] = p.f(p.pod, n)
	}
}

// DefaultNormalize rescales scores from [0, max(scores)] to [0, MaxScore]
// in place: s = MaxScore*s/max, then MaxScore-s if reverse. If every score
// is 0 it leaves them at 0, or sets them all to MaxScore if reverse. It is
// upstream's helper.DefaultNormalizeScore (kube-scheduler v1.37
// framework/plugins/helper/normalize_score.go), except that MaxScore*s is
// computed without overflow for raw scores above MaxInt64/100 (upstream
// wraps). Inputs are assumed non-negative, as upstream assumes; a negative
// score stays negative and fails the Profile's range check. O(n), allocates
// nothing.
func DefaultNormalize(scores []int64, reverse bool) {
	var maxCount int64
	for _, s := range scores {
		if s > maxCount {
			maxCount = s
		}
	}
	normalizeByMax(scores, maxCount, reverse)
}

// normalizeByMax is DefaultNormalize with max(0, the largest score) given
// as maxCount: each score's result depends on it and maxCount alone.
func normalizeByMax(scores []int64, maxCount int64, reverse bool) {
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i] = MaxScore
			}
		}
		return
	}
	for i, s := range scores {
		s = mulDiv(MaxScore, s, maxCount)
		if reverse {
			s = MaxScore - s
		}
		scores[i] = s
	}
}

// mulDiv returns a*b/c truncated, for a >= 0 and c > 0, without
// intermediate overflow when b >= 0 (the 128-bit product is divided; the
// quotient fits whenever a*b/c <= MaxInt64, which holds for a <= c). A
// negative b uses plain arithmetic, saturating at MinInt64.
func mulDiv(a, b, c int64) int64 {
	if b < 0 {
		if a != 0 && b < math.MinInt64/a {
			return math.MinInt64
		}
		return a * b / c
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi == 0 && lo <= math.MaxInt64 {
		return int64(lo) / c
	}
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}
