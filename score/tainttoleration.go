package score

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/taints"
	"github.com/schedkit/schedkit/snapshot"
)

// TaintTolerationName is upstream's plugin name.
const TaintTolerationName = "TaintToleration"

// taintToleration is the scorer [NewTaintToleration] returns.
type taintToleration struct {
	// ComparisonOperators enables the Lt and Gt toleration operators.
	ComparisonOperators bool
}

var _ Scorer = (*taintToleration)(nil)

// NewTaintToleration returns the scorer with upstream's defaults.
//
// TaintToleration favours nodes with fewer PreferNoSchedule taints the pod
// does not tolerate: upstream TaintToleration scoring (kube-scheduler
// v1.37 tainttoleration/taint_toleration.go). The raw score is the count
// of the node's PreferNoSchedule taints that no toleration of the pod with
// effect PreferNoSchedule or empty tolerates; the PodScorer is a
// [Normalizer] that maps counts reverse-linearly onto [0, 100]
// ([DefaultNormalize] with reverse: the node with the most untolerated
// taints gets 0, untainted nodes 100; if no candidate has one, all get
// 100).
//
// Toleration matching is upstream's v1.Toleration.ToleratesTaint: the
// effect (if set) and key (if set) must match; operator Equal or empty
// compares values, Exists matches any value; Lt and Gt compare the values
// as decimal integers only when ComparisonOperators is set (upstream's
// alpha TaintTolerationComparisonOperators gate, off by default), and
// never match otherwise.
//
// O(taints × tolerations) per node, usually a length check; allocates
// nothing per node; safe for concurrent use.
func NewTaintToleration() Scorer { return &taintToleration{} }

// Name returns [TaintTolerationName].
func (*taintToleration) Name() string { return TaintTolerationName }

// Prepare keeps the pod's tolerations that can tolerate a PreferNoSchedule
// taint; it never skips and never fails.
func (s *taintToleration) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	p := &taintPod{cmp: s.ComparisonOperators}
	for _, t := range pod.Pod().Spec.Tolerations {
		if t.Effect == "" || t.Effect == v1.TaintEffectPreferNoSchedule {
			p.tolerations = append(p.tolerations, t)
		}
	}
	return p, nil
}

type taintPod struct {
	tolerations []v1.Toleration
	cmp         bool
}

// untolerated reports whether taint counts against the node: a
// PreferNoSchedule taint no kept toleration tolerates.
func (p *taintPod) untolerated(taint *v1.Taint) bool {
	if taint.Effect != v1.TaintEffectPreferNoSchedule {
		return false
	}
	for j := range p.tolerations {
		if taints.Tolerates(&p.tolerations[j], taint, p.cmp) {
			return false
		}
	}
	return true
}

// count is upstream's countIntolerableTaintsPreferNoSchedule.
func (p *taintPod) count(n *snapshot.NodeInfo) int64 {
	var c int64
	taints := n.Taints()
	for i := range taints {
		if p.untolerated(&taints[i]) {
			c++
		}
	}
	return c
}

func (p *taintPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	for i, n := range nodes {
		if len(n.Taints()) == 0 {
			out[i] = 0
			continue
		}
		out[i] = p.count(n)
	}
}

// Normalize maps counts onto [0, 100], fewest untolerated taints best.
func (p *taintPod) Normalize(_ []*snapshot.NodeInfo, scores []int64) error {
	DefaultNormalize(scores, true)
	return nil
}

// normalizesByMax: Normalize is DefaultNormalize, reversed.
func (p *taintPod) normalizesByMax() (reverse bool) { return true }

// Explain lists the untolerated PreferNoSchedule taints.
func (p *taintPod) Explain(n *snapshot.NodeInfo) string {
	var names []string
	taints := n.Taints()
	for i := range taints {
		if p.untolerated(&taints[i]) {
			names = append(names, taints[i].ToString())
		}
	}
	if len(names) == 0 {
		return "no untolerated PreferNoSchedule taints"
	}
	return fmt.Sprintf("untolerated PreferNoSchedule: %s", strings.Join(names, ", "))
}
