package score

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/spread"
	"github.com/schedkit/schedkit/internal/taints"
	"github.com/schedkit/schedkit/snapshot"
)

// PodTopologySpreadName is upstream's plugin name.
const PodTopologySpreadName = "PodTopologySpread"

// PodTopologySpreadArgs are upstream's PodTopologySpreadArgs
// (kube-scheduler v1.37 config/v1), shared by this scorer and framework's
// PodTopologySpread filter.
type PodTopologySpreadArgs struct {
	// DefaultConstraints apply to pods without
	// spec.topologySpreadConstraints; their labelSelector must be unset
	// (the selector is deduced per pod, see Workloads). Only with
	// DefaultingType "List".
	DefaultConstraints []v1.TopologySpreadConstraint
	// DefaultingType is "System" (the default when empty: hostname
	// maxSkew 3 and zone maxSkew 5, both ScheduleAnyway) or "List"
	// (DefaultConstraints).
	DefaultingType string
	// Workloads finds the Services, ReplicationControllers, ReplicaSets
	// and StatefulSets that make up a pod's default selector (upstream's
	// informer listers). nil (the usual setting): the cluster of each
	// cycle, when it has them — a snapshot.Snapshot or Fork carries the
	// objects fed to the Cache or reserve.Ledger it came from, so a
	// Deployment's pods are spread as upstream spreads them; a cluster
	// without the look-ups finds none, and default constraints then never
	// apply.
	Workloads snapshot.Workloads
}

// podTopologySpread is the scorer [NewPodTopologySpread] returns.
type podTopologySpread struct {
	cfg spread.Config
}

var _ Scorer = (*podTopologySpread)(nil)

// NewPodTopologySpread validates args as upstream's
// ValidatePodTopologySpreadArgs (maxSkew > 0, a valid topologyKey,
// whenUnsatisfiable DoNotSchedule or ScheduleAnyway, no labelSelector, no
// two constraints with the same key and action, defaultingType System
// (only with no constraints) or List). Errors wrap [ErrInvalidConfig] and
// name the field.
//
// PodTopologySpread scores nodes by how evenly placing the pod there
// spreads the pods its ScheduleAnyway topology spread constraints select:
// upstream PodTopologySpread scoring (kube-scheduler v1.37
// podtopologyspread/scoring.go and common.go), with upstream's default
// feature gates (node inclusion policies and matchLabelKeys on).
//
// Constraints: the pod's whenUnsatisfiable: ScheduleAnyway constraints if
// it has any topology spread constraint, else the args' default
// constraints with ScheduleAnyway, whose selector is upstream's default
// selector (the Services in the pod's namespace that select it, and its
// ReplicationController, ReplicaSet or StatefulSet, found through
// Args.Workloads or, if nil, the cluster's look-ups); no constraint, or
// an empty default selector, skips the pod (Prepare returns nil). matchLabelKeys adds the pod's values of those
// labels to the selector. A malformed labelSelector fails Prepare
// (wrapping [ErrInvalidPod], naming the field).
//
// Raw score (Prepare counts, over the whole cluster, the pods in the pod's
// namespace, not terminating, that each constraint selects, per value of
// its topology key, on the nodes its nodeAffinityPolicy and
// nodeTaintsPolicy include): for a node with every topology key (with
// system defaults a node without the zone key is scored on hostname
// alone; otherwise it is ignored: raw and final score 0),
//
//	round(Σ_constraints count(domain of node) × ln(domains + 2) + maxSkew − 1)
//
// where a hostname constraint counts the matching pods on the node itself
// and its domains are the candidate nodes, and domains are the distinct
// values of the key among the candidates otherwise. The candidates are
// the nodes of one Score call (upstream's filtered nodes); [Profile]
// passes all of them at once to a [Normalizer]. Normalize: 100 × (max +
// min − raw) / max over the nodes not ignored (100 each if max is 0),
// so the least crowded domain gets 100.
//
// Not node-local: a node's score depends on other nodes' pods, so a
// Scheduler's equivalence cache serves only the pods this scorer skips
// (it says so per pod with a method NodeLocalFor; the check allocates
// nothing for a pod no Service or controller selects). Cost: Prepare
// reads no pod but the snapshot's per-node groups (pods by namespace and
// labels, with counts, kept on pod add and remove):
// O(nodes × (constraints × node labels + groups per node)) pointer
// compares plus the selector once per distinct pod class, and no pass at
// all when every constraint is a hostname one; Score O(candidates ×
// constraints × node labels) plus, for hostname constraints, the
// candidate's groups; allocates per call, not per node. On a Snapshot
// or Fork, for a pod whose inclusion policies include every node, a memo
// of per-64-node-block counts (as framework's PodTopologySpread filter
// keeps; bounded, checked against the snapshot's block and node
// versions) makes Prepare re-read only the nodes changed since the
// previous pod with the same constraints — O(blocks × domains per block
// + changed nodes) — and Score read each unchanged candidate's domain
// and hostname count from the memo instead of the node: O(candidates ×
// constraints) when the candidates come in the cluster's order (rotated,
// with gaps, as a Scheduler passes them), and when they are every node,
// one score computation per distinct (domains, hostname count) and
// O(1) per node. The parsed constraints are cached per workload: a pod
// whose own constraints equal a recent pod's, or whose default selector
// comes from the same pod class, controller and (unchanged) objects,
// reuses them without compiling its selectors. Safe for concurrent use.
func NewPodTopologySpread(args PodTopologySpreadArgs) (Scorer, error) {
	var lister spread.Lister
	if args.Workloads != nil {
		lister = args.Workloads
	}
	cfg, err := spread.NewConfig(args.DefaultConstraints, args.DefaultingType, lister)
	if err != nil {
		return nil, fmt.Errorf("score: %s: %w: %w", PodTopologySpreadName, err, ErrInvalidConfig)
	}
	return &podTopologySpread{cfg: cfg}, nil
}

// Name returns [PodTopologySpreadName].
func (*podTopologySpread) Name() string { return PodTopologySpreadName }

// NodeLocalFor reports that Prepare skips pod over cluster (no
// ScheduleAnyway constraint applies), so that framework's equivalence
// cache may serve the pod (internal/scoring.PodNodeLocal).
func (s *podTopologySpread) NodeLocalFor(pod *snapshot.PodInfo, cluster any) bool {
	return s.cfg.Inert(pod.Pod(), v1.ScheduleAnyway, s.cfg.ListerOf(cluster))
}

// Prepare builds the pod's ScheduleAnyway constraints and counts matching
// pods per domain over cluster; nil (skip) without constraints or nodes.
func (s *podTopologySpread) Prepare(pod *snapshot.PodInfo, cluster Cluster) (PodScorer, error) {
	p := pod.Pod()
	cs, err := s.cfg.Constraints(p, v1.ScheduleAnyway, s.cfg.ListerOf(cluster))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrInvalidPod)
	}
	if len(cs) == 0 || cluster == nil {
		return nil, nil
	}
	requireAll := len(p.Spec.TopologySpreadConstraints) > 0 || !s.cfg.System
	var bv spread.Blocks[*snapshot.NodeInfo]
	if v, ok := nodeview.ViewOf(cluster); ok {
		bv = v
	}
	st := spread.NewScore(cs, requireAll, p, cluster.NumNodes(), cluster.Node, podInclusion(p), s.cfg.Memo, bv)
	if st == nil {
		return nil, nil
	}
	return &spreadPod{st: st}, nil
}

// podInclusion is the pod's required node affinity and taint toleration
// (upstream's ToleratesTaint on the node's NoSchedule and NoExecute
// taints), for nodeAffinityPolicy and nodeTaintsPolicy Honor.
func podInclusion(p *v1.Pod) spread.Inclusion[*snapshot.NodeInfo] {
	tols := p.Spec.Tolerations
	return spread.NewInclusion(p, func(n *snapshot.NodeInfo) bool {
		ts := n.Taints()
		for i := range ts {
			t := &ts[i]
			if (t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute) && !taints.Any(tols, t) {
				return false
			}
		}
		return true
	})
}

type spreadPod struct {
	st *spread.Score[*snapshot.NodeInfo, *snapshot.PodInfo]
}

// Score writes the raw scores, taking nodes as the candidate set.
func (p *spreadPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	p.st.Raw(nodes, out[:len(nodes)])
}

// Normalize maps the raw scores onto [0, 100], fewest matching pods best.
func (p *spreadPod) Normalize(nodes []*snapshot.NodeInfo, scores []int64) error {
	p.st.Normalize(nodes, scores[:len(nodes)])
	return nil
}

// Explain names the constraints and the node's domains.
func (p *spreadPod) Explain(n *snapshot.NodeInfo) string {
	if p.st.Ignored(n.Labels()) {
		return "ignored: missing a topology key"
	}
	var parts []string
	for _, c := range p.st.Constraints() {
		v, ok := n.Node().Labels[c.TopologyKey]
		if !ok {
			parts = append(parts, fmt.Sprintf("%s: missing", c.TopologyKey))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s (maxSkew %d)", c.TopologyKey, v, c.MaxSkew))
	}
	return strings.Join(parts, ", ")
}
