package score

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
)

// InterPodAffinityName is upstream's plugin name.
const InterPodAffinityName = "InterPodAffinity"

// InterPodAffinityArgs are upstream's InterPodAffinityArgs (kube-scheduler
// v1.37 config/v1), shared by this scorer and framework's
// InterPodAffinity filter.
type InterPodAffinityArgs struct {
	// HardPodAffinityWeight is the score weight of an existing pod's
	// required affinity term that the incoming pod matches; nil is
	// upstream's default 1; valid range [0, 100] (0 ignores them).
	HardPodAffinityWeight *int32
	// IgnorePreferredTermsOfExistingPods: a pod without preferred terms
	// of its own is not scored (existing pods' terms are ignored).
	IgnorePreferredTermsOfExistingPods bool
	// Namespaces finds a namespace by name (nil if unknown), for
	// namespaceSelector terms and existing pods' terms against the
	// incoming pod's namespace labels (upstream's namespace lister). nil:
	// the cluster passed to Prepare (PreFilterCluster) if it has that
	// method, else none, and every namespace is unknown (no labels).
	Namespaces interface {
		Namespace(name string) *v1.Namespace
	}
}

// validate is upstream's ValidateInterPodAffinityArgs with v1 defaulting;
// it returns the hard weight.
func (a *InterPodAffinityArgs) validate() (int32, error) {
	w := int32(1)
	if a.HardPodAffinityWeight != nil {
		w = *a.HardPodAffinityWeight
	}
	if w < 0 || w > 100 {
		return 0, field.Invalid(field.NewPath("hardPodAffinityWeight"), w, "not in valid range [0, 100]")
	}
	return w, nil
}

// namespaceLister returns args' lister, else cluster's if it has one.
func (a *InterPodAffinityArgs) namespaceLister(cluster any) interpod.NamespaceLister {
	if a.Namespaces != nil {
		return a.Namespaces
	}
	if l, ok := cluster.(interpod.NamespaceLister); ok {
		return l
	}
	return nil
}

// NewInterPodAffinity returns upstream's InterPodAffinity scorer
// (kube-scheduler v1.37 interpodaffinity/scoring.go): raw score of a node
// = Σ over topology pairs (key, the node's value) of the weights that
// Prepare sums over the existing pods in that domain:
//
//   - + weight (− weight) for each preferred affinity (anti-affinity)
//     term of the incoming pod that the existing pod matches;
//   - + HardPodAffinityWeight for each required affinity term of the
//     existing pod that the incoming pod matches;
//   - + weight (− weight) for each preferred affinity (anti-affinity)
//     term of the existing pod that the incoming pod matches
//     (not with IgnorePreferredTermsOfExistingPods, which scores only pods
//     with preferred terms of their own).
//
// Terms match as upstream: a term's namespaces (the pod's own without
// namespaces or namespaceSelector), or a namespaceSelector over the
// namespaces' labels (from Args.Namespaces), and its labelSelector with
// matchLabelKeys and mismatchLabelKeys merged. Normalize: 100 × (raw −
// min) / (max − min) over the candidates, truncated (0 for all when equal).
// A pod whose terms match nothing is skipped (every node 0).
//
// Not node-local (a node's score depends on other nodes' pods): a
// Scheduler with it does not use its equivalence cache. Cost on a
// snapshot.Snapshot or Fork: Prepare O(groups of equal terms held by
// existing pods) term matches (the snapshot's index of existing pods'
// terms, with per-domain totals), plus, only for a pod with preferred
// terms of its own whose counts the index does not keep (it keeps them
// for terms that existing pods hold too), O(nodes + all pods × terms);
// Score O(topology keys) table look-ups per node (a hostname key reads
// the node's first cache line, other keys its labels), no allocation.
// On a snapshot.Snapshot (immutable), a released PodScorer's tables are
// kept (up to 4 recipes, process-wide) and the next Prepare of a pod
// with the same matched groups on another Snapshot updates them by the
// difference between the two Snapshots' indexes instead of rebuilding
// them: O(index entries the two do not share), a few per group when one
// pod was bound in between (as in a scheduling loop).
// On another Cluster the index is first built by walking
// every node. The PodScorer has a Release method (no return value)
// that hands its tables to the next Prepare; [Profile.Score] calls it
// when it returns, other callers may (see its doc) or may not. Errors: a pod whose selectors do not parse
// (wrapping [ErrInvalidPod]); args out of range (wrapping
// [ErrInvalidConfig], naming the field). Safe for concurrent use.
func NewInterPodAffinity(args InterPodAffinityArgs) (Scorer, error) {
	w, err := args.validate()
	if err != nil {
		return nil, fmt.Errorf("score: %s: %w: %w", InterPodAffinityName, err, ErrInvalidConfig)
	}
	return &interPodAffinity{args: args, hard: w}, nil
}

type interPodAffinity struct {
	args InterPodAffinityArgs
	hard int32
}

func (*interPodAffinity) Name() string { return InterPodAffinityName }

// NodeLocalFor reports that Prepare skips pod over cluster: the pod has
// no pod (anti-)affinity and no node holds a pod that has
// (interpod.Inert), so that framework's equivalence cache may serve the
// pod (internal/scoring.PodNodeLocal). O(1) on a snapshot.Snapshot or
// Fork (their count of pods with pod affinity), else O(nodes) until the
// first such pod; no allocation.
func (s *interPodAffinity) NodeLocalFor(pod *snapshot.PodInfo, cluster any) bool {
	c, _ := cluster.(Cluster)
	if c == nil {
		return interpod.TermsOf(pod) == nil
	}
	return interpod.Inert(interpod.TermsOf(pod), cluster, c.NumNodes(), c.Node)
}

func (s *interPodAffinity) Prepare(pod *snapshot.PodInfo, cluster Cluster) (PodScorer, error) {
	if cluster == nil {
		return nil, nil
	}
	t := interpod.TermsOf(pod)
	if t != nil && t.Err != nil {
		return nil, fmt.Errorf("%w: %w", t.Err, ErrInvalidPod)
	}
	n := cluster.NumNodes()
	st := interpod.NewScore(pod.Pod(), t, s.hard, s.args.IgnorePreferredTermsOfExistingPods,
		s.args.namespaceLister(cluster), interpod.IndexFor(cluster, n, cluster.Node), interpod.Immutable(cluster), n, cluster.Node)
	if st == nil {
		return nil, nil
	}
	return ipaPod{st}, nil
}

// ipaPod is one pointer, so that boxing it allocates nothing.
type ipaPod struct{ st *interpod.Score }

// Release lets the next Prepare (of any InterPodAffinity scorer, on any
// goroutine) reuse p's tables (interpod.Score.Release): only p's sole
// user may call it, once done with p; p must not be used afterwards.
// Profile.Score calls it for the PodScorers it prepared when it returns.
// O(p's table entries); no allocation.
func (p ipaPod) Release() { p.st.Release() }

// Score writes the raw sums of weights. Unless st needs labels, a node's
// score reads only its hostname or zone from its head (the first two
// cache lines), not its label array.
func (p ipaPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	if !p.st.NeedsLabels() {
		for i, n := range nodes {
			out[i] = p.st.Raw(nodeview.Head(n), nil)
		}
		return
	}
	for i, n := range nodes {
		out[i] = p.st.Raw(nodeview.Head(n), n.Labels())
	}
}

// Normalize maps the raw scores onto [0, 100].
func (p ipaPod) Normalize(nodes []*snapshot.NodeInfo, scores []int64) error {
	interpod.Normalize(scores[:len(nodes)])
	return nil
}

// Explain gives the raw sum.
func (p ipaPod) Explain(n *snapshot.NodeInfo) string {
	return fmt.Sprintf("sum of matching term weights over %d topology keys = %d", p.st.Keys(), p.st.Raw(nodeview.Head(n), n.Labels()))
}
