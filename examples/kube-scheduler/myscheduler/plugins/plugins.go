// Package plugins holds the two plugins of the myscheduler example, the
// job of the classic "write your own scheduler plugins" tutorial done
// with schedkit:
//
//   - PreferLabel, a scorer: nodes carrying a label (by default
//     example.com/preferred=true) score 100, the others 0;
//   - LicenseBudget, a capacity rule, as a Filter: a node labelled
//     example.com/license-budget=N runs at most N pods labelled
//     example.com/licensed=true (nodes without the label: no limit).
//
// Both are plain schedkit types (a score.Scorer and a framework.Filter),
// unit-tested without a cluster (plugins_test.go, with
// snapshot/snapshottest) and simulated through the library on a real
// cluster's objects (simulate_test.go); NewPreferLabel and
// NewLicenseBudget wrap them as kube-scheduler plugins for
// app.WithPlugin (../main.go).
//
// Why the budget is a Filter and not a Reserve check: see ../README.md.
package plugins

import (
	"context"
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/framework/kubescheduler"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// Plugin names, as the KubeSchedulerConfiguration refers to them.
const (
	PreferLabelName   = "PreferLabel"
	LicenseBudgetName = "LicenseBudget"
)

// PreferLabel scores a node score.MaxScore (100) if its label Key has the
// value Value, else 0. It reads no pod field, so every pod scores alike
// and upstream may batch them (SignPod declares no field).
type PreferLabel struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Name implements score.Scorer.
func (*PreferLabel) Name() string { return PreferLabelName }

// Prepare implements score.Scorer: the same scorer for every pod.
func (s *PreferLabel) Prepare(*snapshot.PodInfo, score.Cluster) (score.PodScorer, error) {
	return preferLabel{s}, nil
}

// SignPod implements kubescheduler.PodSigner: the scorer reads no pod
// field, so it adds no fragment.
func (*PreferLabel) SignPod(*v1.Pod) ([]fwk.SignFragment, error) { return nil, nil }

type preferLabel struct{ *PreferLabel }

// Score implements score.PodScorer. O(labels of each node); allocates
// nothing.
func (s preferLabel) Score(nodes []*snapshot.NodeInfo, out []int64) {
	for i, n := range nodes {
		out[i] = score.MinScore
		if v, ok := n.Node().Labels[s.Key]; ok && v == s.Value {
			out[i] = score.MaxScore
		}
	}
}

// Labels of LicenseBudget.
const (
	BudgetLabel   = "example.com/license-budget" // on a node: how many licensed pods it may run
	LicensedLabel = "example.com/licensed"       // on a pod, "true": it needs a license
)

// LicenseBudget lets a node labelled BudgetLabel=N run at most N pods
// labelled LicensedLabel=true. It counts the licensed pods on the node as
// the scheduler sees it: bound pods and pods assumed there (kube-scheduler
// assumes a pod on its node before Reserve; schedkit's ledger snapshot
// holds it from Reserve on), so no bookkeeping of its own is needed.
// Unlicensed pods pass; a node without the label, or with a value that is
// not a non-negative integer, has no limit (validate the label where you
// set it).
type LicenseBudget struct{}

// Name implements framework.Filter.
func (LicenseBudget) Name() string { return LicenseBudgetName }

// PreFilter implements framework.Filter: only licensed pods are checked.
func (LicenseBudget) PreFilter(pod *snapshot.PodInfo) (framework.PreFilterResult, error) {
	if !licensed(pod.Pod()) {
		return framework.PreFilterResult{}, nil // passes everywhere, at no cost per node
	}
	return framework.PreFilterResult{Filter: budgetCheck{}}, nil
}

// SignPod implements kubescheduler.PodSigner: the verdict depends on the
// pod's licensed label only.
func (LicenseBudget) SignPod(pod *v1.Pod) ([]fwk.SignFragment, error) {
	return []fwk.SignFragment{{Key: LicensedLabel, Value: strconv.FormatBool(licensed(pod))}}, nil
}

func licensed(p *v1.Pod) bool { return p.Labels[LicensedLabel] == "true" }

// MsgBudget is the reason of a node whose budget is used up.
const MsgBudget = "node(s) had no license left"

type budgetCheck struct{}

// Filter implements framework.PodFilter. O(pods on the node); allocates
// nothing when reasons has room.
func (budgetCheck) Filter(n *snapshot.NodeInfo, reasons []framework.Reason) []framework.Reason {
	budget, ok := Budget(n.Node())
	if !ok {
		return reasons
	}
	used := 0
	for _, p := range n.Pods() {
		if licensed(p.Pod()) {
			used++
		}
	}
	if used >= budget {
		return append(reasons, framework.Reason{Code: framework.CodeCustom, Text: MsgBudget})
	}
	return reasons
}

// Budget returns the node's license budget and whether it has one.
func Budget(n *v1.Node) (int, bool) {
	s, ok := n.Labels[BudgetLabel]
	if !ok {
		return 0, false
	}
	b, err := strconv.Atoi(s)
	if err != nil || b < 0 {
		return 0, false
	}
	return b, true
}

// NewPreferLabel is the PreferLabel plugin's factory (upstream's
// PluginFactory signature). Args, decoded strictly: {key, value}; default
// example.com/preferred=true.
func NewPreferLabel(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args := PreferLabel{Key: "example.com/preferred", Value: "true"}
	if err := kubescheduler.DecodeArgs(PreferLabelName, obj, &args); err != nil {
		return nil, err
	}
	if args.Key == "" {
		return nil, fmt.Errorf("%w: %s args: key: empty", kubescheduler.ErrInvalidArgs, PreferLabelName)
	}
	return kubescheduler.WrapScorer(PreferLabelName, &args, h), nil
}

// NewLicenseBudget is the LicenseBudget plugin's factory (upstream's
// PluginFactory signature); it takes no args.
func NewLicenseBudget(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	var args struct{}
	if err := kubescheduler.DecodeArgs(LicenseBudgetName, obj, &args); err != nil {
		return nil, err
	}
	return kubescheduler.WrapFilter(LicenseBudgetName, LicenseBudget{}, h), nil
}
