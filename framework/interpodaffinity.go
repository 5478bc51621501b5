package framework

import (
	"fmt"

	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// interPodAffinityName is upstream's plugin name (score.InterPodAffinityName).
const interPodAffinityName = "InterPodAffinity"

// NewInterPodAffinity returns upstream's InterPodAffinity filter
// (kube-scheduler v1.37 interpodaffinity/filtering.go, feature gate
// InterPodAffinityHostnameFastPath off as by default); the Filter is a
// [ClusterFilter] (call PreFilterCluster through that interface).
// args are validated as score.NewInterPodAffinity does (only Namespaces
// matters here; errors wrap [ErrInvalidConfig] and name the field).
//
// PreFilterCluster finds, per topology pair (key, value), the existing
// pods whose required anti-affinity terms match the pod (from the
// snapshot's index of existing pods' terms, grouped by equal terms: one
// match per group) and, for a pod with required terms, the existing pods
// that match all its affinity terms and those matching each
// anti-affinity term (the index's counts when it keeps them: terms that
// existing pods hold too, as replicas of a workload with (anti-)affinity
// to itself; else counted over every pod). Terms match as in
// score.NewInterPodAffinity (namespaces, namespaceSelector over
// Args.Namespaces or the cluster's namespaces, matchLabelKeys and
// mismatchLabelKeys). A node then fails, first failure only:
//
//   - [CodePodAffinity] (unresolvable) if it lacks a topology key of one
//     of the pod's affinity terms, or some term's domain has no pod
//     matching all terms — unless no pod in the cluster matches them all
//     and the pod matches its own terms (the first pod of a self-affine
//     group);
//   - [CodePodAntiAffinity] if a pod matching one of the pod's
//     anti-affinity terms is in the node's domain of that term's key;
//   - [CodeExistingPodAntiAffinity] if an existing pod's anti-affinity
//     term matching the pod has a domain the node is in.
//
// A pod with no terms, in a cluster where no existing pod's required
// anti-affinity matches it, is not filtered (upstream's Skip). A pod
// whose terms do not parse is rejected with upstream's "parsing pod: "
// message.
//
// Not node-local: a Scheduler with it does not use its equivalence cache.
// Cost on a snapshot.Snapshot or Fork: PreFilterCluster O(groups of equal
// required anti-affinity terms held by existing pods) term matches, plus
// O(nodes + all pods × terms) only for a pod with required terms whose
// counts the index does not keep, allocating the counts; per node
// O(affinity terms + topology keys) table look-ups (a hostname key reads
// the node's first cache line, other keys its labels), no allocation.
// Building the filter's tables inserts the index's totals (O(values
// with a total)); on a snapshot.Snapshot, for a pod without required
// affinity terms, a released filter's tables are kept (up to 4
// recipes, process-wide) and the next filter of the same recipe on
// another Snapshot updates them by the difference of the two Snapshots'
// indexes instead (as score.NewInterPodAffinity's scorer does).
// On another score.Cluster the index is first built by walking every
// node. The PodFilter has a Release method (no return value) that hands
// its tables to the next PreFilterCluster: the [Scheduler] calls it when
// its cycle ends; other callers may, once done with the filter, or may
// not (it is then garbage collected).
// PreFilter (without the cluster) is an error. Safe for concurrent use.
func NewInterPodAffinity(args score.InterPodAffinityArgs) (Filter, error) {
	if _, err := score.NewInterPodAffinity(args); err != nil {
		return nil, fmt.Errorf("framework: %s: %w: %w", interPodAffinityName, err, ErrInvalidConfig)
	}
	return &interPodAffinity{ns: args.Namespaces}, nil
}

var _ ClusterFilter = (*interPodAffinity)(nil)

type interPodAffinity struct {
	ns interpod.NamespaceLister
}

func (*interPodAffinity) Name() string { return interPodAffinityName }

func (*interPodAffinity) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	return PreFilterResult{}, fmt.Errorf("framework: %s: pod %s: PreFilter needs the cluster, call PreFilterCluster: %w", interPodAffinityName, pod.Key(), ErrInvalidConfig)
}

// NodeLocalFor reports that PreFilterCluster returns no filter for pod
// over cluster: the pod has no pod (anti-)affinity and no node holds a
// pod that has (interpod.Inert), so that the equivalence cache may serve
// the pod (internal/scoring.PodNodeLocal). O(1) on a snapshot.Snapshot or
// Fork (their count of pods with pod affinity), else O(nodes) until the
// first such pod; no allocation.
func (f *interPodAffinity) NodeLocalFor(pod *snapshot.PodInfo, cluster any) bool {
	c, _ := cluster.(score.Cluster)
	if isNilCluster(c) {
		return interpod.TermsOf(pod) == nil
	}
	return interpod.Inert(interpod.TermsOf(pod), cluster, c.NumNodes(), c.Node)
}

func (f *interPodAffinity) PreFilterCluster(pod *snapshot.PodInfo, cluster score.Cluster) (PreFilterResult, error) {
	t := interpod.TermsOf(pod)
	if t != nil && t.Err != nil {
		return PreFilterResult{Reject: "parsing pod: " + t.Err.Error()}, nil
	}
	if isNilCluster(cluster) {
		return PreFilterResult{}, nil
	}
	ns := f.ns
	if ns == nil {
		ns, _ = cluster.(interpod.NamespaceLister)
	}
	n := cluster.NumNodes()
	st := interpod.NewFilter(pod.Pod(), t, ns, interpod.IndexFor(cluster, n, cluster.Node), interpod.Immutable(cluster), n, cluster.Node)
	if st == nil {
		return PreFilterResult{}, nil
	}
	if st.HostOnly() {
		return PreFilterResult{Filter: ipaHostFilter{st}}, nil
	}
	return PreFilterResult{Filter: ipaFilter{st}}, nil
}

// ipaFilter is one pointer, so that boxing it allocates nothing.
type ipaFilter struct{ st *interpod.Filter }

// Release lets the next PreFilterCluster (of any InterPodAffinity
// filter, on any goroutine) reuse f's tables (interpod.Filter.Release):
// only f's sole user may call it, once done with f; f must not be used
// afterwards. The Scheduler calls it when its cycle ends.
// O(f's table entries); no allocation.
func (f ipaFilter) Release() { f.st.Release() }

// ipaHostFilter is ipaFilter for a filter that reads only the node's
// hostname (interpod.Filter.HostOnly: the replicas of a workload with
// hostname anti-affinity to itself): one table look-up per node, with no
// call through the general check.
type ipaHostFilter struct{ st *interpod.Filter }

// Release is ipaFilter's.
func (f ipaHostFilter) Release() { f.st.Release() }

// Filter checks one node: its hostname, in its first cache line, looked
// up in the filter's table. Allocates nothing.
func (f ipaHostFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	switch f.st.CheckHost(nodeview.CPUMemory(ni).Hostname) {
	case interpod.AntiAffinityNotMatch:
		return append(reasons, Reason{Code: CodePodAntiAffinity})
	case interpod.ExistingAntiAffinityNotMatch:
		return append(reasons, Reason{Code: CodeExistingPodAntiAffinity})
	}
	return reasons
}

// Filter checks one node; allocates nothing. Unless the filter needs
// labels, it reads only the node's hostname from its first cache line
// (which the fit filter and the resource scorers read too) or its zone
// from the second (which the built-in filters read), not its label
// array.
func (f ipaFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	var ls []snapshot.Label
	if f.st.NeedsLabels() {
		ls = ni.Labels()
	}
	switch f.st.Check(nodeview.Head(ni), ls) {
	case interpod.AffinityNotMatch:
		return append(reasons, Reason{Code: CodePodAffinity, Unresolvable: true})
	case interpod.AntiAffinityNotMatch:
		return append(reasons, Reason{Code: CodePodAntiAffinity})
	case interpod.ExistingAntiAffinityNotMatch:
		return append(reasons, Reason{Code: CodeExistingPodAntiAffinity})
	}
	return reasons
}
