package framework

import (
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/taints"
	"github.com/schedkit/schedkit/snapshot"
)

var (
	_ Filter = taintTolerationPlugin{}
	_ Filter = nodeUnschedulablePlugin{}
)

// taintTolerationPlugin is the filter [NewTaintToleration] returns.
type taintTolerationPlugin struct{}

// NewTaintToleration returns the TaintToleration filter; it has no arguments and allocates
// nothing.
//
// TaintToleration is upstream's TaintToleration filter (kube-scheduler
// v1.37 tainttoleration/taint_toleration.go): a node fails when one of its
// NoSchedule or NoExecute taints is tolerated by none of the pod's
// tolerations. The reason ([CodeUntoleratedTaint], unresolvable) carries
// the first such taint. PreferNoSchedule taints are a scoring matter.
//
// Toleration matching is upstream's Toleration.ToleratesTaint with the
// alpha TaintTolerationComparisonOperators gate off (its default): the
// effect must be empty or equal, the key empty or equal, and operator
// Exists matches any value, Equal or "" an equal value; Lt, Gt and unknown
// operators match nothing.
//
// Per node: O(taints × tolerations), allocates nothing. A pod that
// tolerates everything (key "", operator Exists, effect "") is not checked
// at all.
func NewTaintToleration() Filter { return taintTolerationPlugin{} }

// Name returns "TaintToleration".
func (taintTolerationPlugin) Name() string { return taintTolerationName }

// PreFilter keeps the pod's tolerations; O(tolerations).
func (taintTolerationPlugin) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	tols := pod.Pod().Spec.Tolerations
	if toleratesAll(tols) {
		return PreFilterResult{}, nil
	}
	return PreFilterResult{Filter: taintFilter(tols)}, nil
}

type taintFilter []v1.Toleration

// Filter checks one node; allocates nothing.
func (tols taintFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	if t := tols.untolerated(ni); t != nil {
		return append(reasons, Reason{Code: CodeUntoleratedTaint, Taint: t, Unresolvable: true})
	}
	return reasons
}

// untolerated returns the node's first NoSchedule or NoExecute taint the
// pod does not tolerate, or nil.
func (tols taintFilter) untolerated(ni *snapshot.NodeInfo) *v1.Taint {
	if !nodeview.FilterBlock(ni).NoScheduleTaints {
		return nil // no NoSchedule or NoExecute taint: nothing to check
	}
	ts := ni.Taints()
	for i := range ts {
		t := &ts[i]
		if t.Effect != v1.TaintEffectNoSchedule && t.Effect != v1.TaintEffectNoExecute {
			continue
		}
		if !taints.Any(tols, t) {
			return t
		}
	}
	return nil
}

// toleratesAll reports whether one toleration matches every taint.
func toleratesAll(tols []v1.Toleration) bool {
	for i := range tols {
		t := &tols[i]
		if t.Key == "" && t.Effect == "" && t.Operator == v1.TolerationOpExists {
			return true
		}
	}
	return false
}

// nodeUnschedulablePlugin is the filter [NewNodeUnschedulable] returns.
type nodeUnschedulablePlugin struct{}

// NewNodeUnschedulable returns the NodeUnschedulable filter; it has no arguments and allocates
// nothing.
//
// NodeUnschedulable is upstream's NodeUnschedulable filter (kube-scheduler
// v1.37 nodeunschedulable/node_unschedulable.go): a node with
// spec.unschedulable fails ([CodeNodeUnschedulable], unresolvable) unless
// the pod tolerates the taint node.kubernetes.io/unschedulable:NoSchedule.
// Per node: O(1), allocates nothing; a tolerating pod is not checked.
func NewNodeUnschedulable() Filter { return nodeUnschedulablePlugin{} }

// Name returns "NodeUnschedulable".
func (nodeUnschedulablePlugin) Name() string { return nodeUnschedulableName }

var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// PreFilter decides once whether the pod tolerates unschedulable nodes.
func (nodeUnschedulablePlugin) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	if taints.Any(pod.Pod().Spec.Tolerations, &unschedulableTaint) {
		return PreFilterResult{}, nil
	}
	return PreFilterResult{Filter: unschedulableFilter{}}, nil
}

type unschedulableFilter struct{}

func (unschedulableFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	if nodeview.FilterBlock(ni).Unschedulable {
		reasons = append(reasons, Reason{Code: CodeNodeUnschedulable, Unresolvable: true})
	}
	return reasons
}
