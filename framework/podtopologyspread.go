package framework

import (
	"fmt"
	"unique"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/spread"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// podTopologySpreadName is upstream's plugin name.
const podTopologySpreadName = "PodTopologySpread"

// ClusterFilter is implemented by a [Filter] whose preparation reads the
// whole cluster, not the pod alone (upstream PreFilter's node list):
// [NewPodTopologySpread] counts pods per topology domain on every node. A
// [Scheduler] calls PreFilterCluster instead of PreFilter, with the
// cycle's cluster (a Snapshot, a Fork, or a ledger's view). Such a filter
// is not node-local (the equivalence cache cannot serve it).
type ClusterFilter interface {
	Filter
	// PreFilterCluster prepares the filter for pod over cluster; the
	// PodFilter it returns then checks nodes of that cluster.
	PreFilterCluster(pod *snapshot.PodInfo, cluster score.Cluster) (PreFilterResult, error)
}

// RunPreFilter prepares f for pod as a [Scheduler] does: f's
// PreFilterCluster over cluster if f is a [ClusterFilter], else
// PreFilter. For callers that run filters outside a Scheduler.
func RunPreFilter(f Filter, pod *snapshot.PodInfo, cluster score.Cluster) (PreFilterResult, error) {
	if cf, ok := f.(ClusterFilter); ok {
		return cf.PreFilterCluster(pod, cluster)
	}
	return f.PreFilter(pod)
}

var _ ClusterFilter = (*podTopologySpreadPlugin)(nil)

// podTopologySpreadPlugin is the filter [NewPodTopologySpread] returns.
type podTopologySpreadPlugin struct {
	cfg spread.Config
}

// NewPodTopologySpread validates args as score.NewPodTopologySpread does;
// errors wrap [ErrInvalidConfig] and name the field.
//
// PodTopologySpread is upstream's PodTopologySpread filter (kube-scheduler
// v1.37 podtopologyspread/filtering.go and common.go) with upstream's
// default feature gates (node inclusion policies and matchLabelKeys on).
//
// Constraints: the pod's whenUnsatisfiable: DoNotSchedule constraints if
// it has any topology spread constraint, else the args' DoNotSchedule
// default constraints (defaultingType List; the system defaults are all
// ScheduleAnyway) with upstream's default selector (score.PodTopologySpread
// says how it is found). A pod without any is not checked. matchLabelKeys
// adds the pod's values of those labels to the selector; a malformed
// labelSelector fails PreFilterCluster (wrapping [ErrInvalidPod], naming
// the field).
//
// PreFilterCluster counts, once per pod, for each constraint, the pods in
// the pod's namespace, not terminating, that its selector matches, per
// value (domain) of its topology key, over the cluster's nodes that have
// every constraint's key and that the constraint's nodeAffinityPolicy
// (Honor by default: the pod's nodeSelector and required node affinity)
// and nodeTaintsPolicy (Ignore by default; Honor: the pod tolerates the
// node's NoSchedule and NoExecute taints) include. A node then fails:
//
//   - [CodeTopologySpreadLabel] (unresolvable) if it lacks a constraint's
//     topology key: "node(s) didn't match pod topology spread constraints
//     (missing required label)";
//   - [CodeTopologySpreadSkew] if, for a constraint, matching pods in its
//     domain + 1 (if the pod matches the selector itself) − the global
//     minimum exceeds maxSkew, where the global minimum is the smallest
//     domain count, or 0 when there are fewer domains than minDomains
//     (default 1): "node(s) didn't match pod topology spread constraints".
//
// Constraints are checked in order and the first failure is the node's
// reason, as upstream.
//
// It is a [ClusterFilter] and not node-local: a Scheduler's equivalence
// cache serves only the pods it skips (no DoNotSchedule constraint
// applies; with the system defaults, every pod without constraints of
// its own), which it tells the Scheduler per pod with a method
// NodeLocalFor. It is in [DefaultFilters] with the default args; with
// Args.Workloads nil it finds the default selector's objects on the
// cluster it is given. Cost: PreFilterCluster reads no pod: the
// snapshot keeps, per node, its pods grouped by namespace and labels with
// a count per group (maintained on pod add and remove, copied with the
// node on write, so Fork/Commit/Revert keep their cost), and a pass over
// every node costs O(nodes × (constraints × node labels + groups per
// node)) pointer compares plus the selector once per distinct pod class,
// allocating the per-domain counts. On a Snapshot or Fork, for a pod
// whose inclusion policies include every node (no required node affinity
// to honour, taints not honoured), the filter keeps a memo (bounded: 8
// queries of constraints, selector and namespace, one value and count
// per node and constraint each) of per-64-node-block partial counts
// checked against the snapshot's block and node versions, so the pass
// re-reads only the nodes changed since the previous pod with the same
// constraints: O(blocks × domains per block + changed nodes × (labels +
// groups)) — for a zone constraint after one pod bound, about nodes/64 ×
// zones additions. The snapshot itself keeps no more than before:
// Fork/Commit/Revert are unchanged. Per node O(constraints × node labels)
// compares and a domain look-up, no allocation; O(1), reading nothing of
// the node, when PreFilterCluster found that every node of the cluster
// passes (each has every topology key and no domain is full). The
// parsed constraints are cached per workload as score.PodTopologySpread
// caches them. PreFilter (without the cluster) is an error for a pod
// with DoNotSchedule constraints.
// Safe for concurrent use.
func NewPodTopologySpread(args score.PodTopologySpreadArgs) (Filter, error) {
	var lister spread.Lister
	if args.Workloads != nil {
		lister = args.Workloads
	}
	cfg, err := spread.NewConfig(args.DefaultConstraints, args.DefaultingType, lister)
	if err != nil {
		return nil, fmt.Errorf("framework: %s: %w: %w", podTopologySpreadName, err, ErrInvalidConfig)
	}
	return &podTopologySpreadPlugin{cfg: cfg}, nil
}

// Name returns "PodTopologySpread".
func (*podTopologySpreadPlugin) Name() string { return podTopologySpreadName }

// NodeLocalFor reports that PreFilterCluster returns no filter for pod
// over cluster (no DoNotSchedule constraint applies: with the system
// defaults, every pod without constraints of its own), so that the
// equivalence cache may serve the pod (internal/scoring.PodNodeLocal).
func (f *podTopologySpreadPlugin) NodeLocalFor(pod *snapshot.PodInfo, cluster any) bool {
	return f.cfg.Inert(pod.Pod(), v1.DoNotSchedule, f.cfg.ListerOf(cluster))
}

// PreFilter, without the cluster, returns no filter for a pod to which
// no DoNotSchedule constraint can apply (none of its own, or, without
// any of its own, none among the defaults: the system defaults never
// filter), and fails for other pods: they need the cluster (see
// [ClusterFilter]).
func (f *podTopologySpreadPlugin) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	if !f.cfg.MayApply(pod.Pod(), v1.DoNotSchedule) {
		return PreFilterResult{}, nil
	}
	return PreFilterResult{}, fmt.Errorf("framework: %s: pod %s: PreFilter needs the cluster, call PreFilterCluster: %w", podTopologySpreadName, pod.Key(), ErrInvalidConfig)
}

// PreFilterCluster builds the pod's DoNotSchedule constraints and counts
// matching pods per domain over cluster; no constraint: no filter.
func (f *podTopologySpreadPlugin) PreFilterCluster(pod *snapshot.PodInfo, cluster score.Cluster) (PreFilterResult, error) {
	p := pod.Pod()
	cs, err := f.cfg.Constraints(p, v1.DoNotSchedule, f.cfg.ListerOf(cluster))
	if err != nil {
		return PreFilterResult{}, fmt.Errorf("framework: %s: pod %s: %w: %w", podTopologySpreadName, pod.Key(), err, ErrInvalidPod)
	}
	if len(cs) == 0 {
		return PreFilterResult{}, nil
	}
	n := 0
	if cluster != nil {
		n = cluster.NumNodes()
	}
	var bv spread.Blocks[*snapshot.NodeInfo]
	if v, ok := nodeview.ViewOf(cluster); ok {
		bv = v
	}
	st := spread.NewFilter(cs, p, n, func(i int) *snapshot.NodeInfo { return cluster.Node(i) }, podInclusion(p), f.cfg.Memo, bv)
	if st.PassesAll() {
		return PreFilterResult{Filter: spreadFilter{st}}, nil
	}
	var blocked [4]unique.Handle[string]
	if n, ok := st.ZoneBlocked(blocked[:]); ok {
		return PreFilterResult{Filter: &spreadZoneFilter{blocked: blocked, n: n, st: st}}, nil
	}
	return PreFilterResult{Filter: spreadFilter{st}}, nil
}

// podInclusion is the pod's required node affinity and taint toleration
// (TaintToleration's NoSchedule/NoExecute check), for nodeAffinityPolicy
// and nodeTaintsPolicy Honor.
func podInclusion(p *v1.Pod) spread.Inclusion[*snapshot.NodeInfo] {
	tols := taintFilter(p.Spec.Tolerations)
	return spread.NewInclusion(p, func(ni *snapshot.NodeInfo) bool { return tols.untolerated(ni) == nil })
}

type spreadFilter struct{ st *spread.Filter }

// spreadZoneFilter is spreadFilter for a pod whose only DoNotSchedule
// constraint is on the zone key (spread.Filter.ZoneBlocked): the same
// verdicts from the node's head, compared with the few blocked zones,
// without a call per node.
type spreadZoneFilter struct {
	blocked [4]unique.Handle[string]
	n       int
	st      *spread.Filter // the filter it was made from
}

// Filter checks one node; allocates nothing. O(blocked zones).
func (f *spreadZoneFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	z := nodeview.FilterBlock(ni).Zone
	if z == (unique.Handle[string]{}) {
		return append(reasons, Reason{Code: CodeTopologySpreadLabel, Unresolvable: true})
	}
	for _, b := range f.blocked[:f.n] {
		if z == b {
			return append(reasons, Reason{Code: CodeTopologySpreadSkew})
		}
	}
	return reasons
}

// Filter checks one node; allocates nothing. When every node of the
// cluster passes (spread.Filter.PassesAll: each has every key and no
// domain is full, the usual case), it reads nothing of the node; when
// every topology key is the hostname or the zone (spread.Filter.HeadKeys),
// it reads their values in the node's head, not its labels.
func (f spreadFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	if f.st.PassesAll() {
		return reasons
	}
	var v spread.Verdict
	if f.st.HeadKeys() {
		v = f.st.CheckHead(nodeview.Head(ni))
	} else {
		v = f.st.Check(ni.Labels())
	}
	switch v {
	case spread.MissingLabel:
		return append(reasons, Reason{Code: CodeTopologySpreadLabel, Unresolvable: true})
	case spread.Skew:
		return append(reasons, Reason{Code: CodeTopologySpreadSkew})
	}
	return reasons
}
