package kubescheduler

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/mirror"
	"github.com/schedkit/schedkit/snapshot"
)

// FitName is the name of the filter plugin [NewSchedkitFit] builds:
// schedkit's NodeResourcesFit filter.
const FitName = "SchedkitNodeResourcesFit"

var (
	_ fwk.PreFilterPlugin   = (*FilterPlugin)(nil)
	_ fwk.FilterPlugin      = (*FilterPlugin)(nil)
	_ fwk.EnqueueExtensions = (*FilterPlugin)(nil)
	_ fwk.SignPlugin        = (*FilterPlugin)(nil)
)

// FilterPlugin runs a [framework.Filter] as an upstream PreFilter + Filter
// plugin. PreFilter maps the PreFilterResult: Reject →
// UnschedulableAndUnresolvable, no PodFilter → Skip, NodeNames → upstream's
// NodeNames. Filter maps a node's reasons to one status:
// UnschedulableAndUnresolvable if any is Unresolvable, else Unschedulable,
// with upstream's reason strings. The built-in fit filter in a profile with
// a ledger also asks [reserve.Ledger.Fits] for each node it passes, so it
// never passes a node Reserve would refuse; a NodeInfo the framework
// altered for one call (preemption, nominated pods) is judged on its own
// pods. A passing node costs a look-up and the filter's check and
// allocates nothing. Safe for concurrent Filter calls.
type FilterPlugin struct {
	name    string
	key     fwk.StateKey
	filter  framework.Filter
	handle  fwk.Handle
	p       *profile
	builtin bool // schedkit's NodeResourcesFit: signPod; asks the ledger
}

// WrapFilter makes f an upstream PreFilter + Filter plugin called name, for
// the scheduler behind h, as [WrapScorer]. f reads the scheduler's nodes,
// not a ledger's reservations; it takes part in upstream's batching only
// if it is a [PodSigner].
func WrapFilter(name string, f framework.Filter, h fwk.Handle) *FilterPlugin {
	return &FilterPlugin{name: name, key: fwk.StateKey("PreFilter" + name), filter: f, handle: h, p: profileFor(h)}
}

// Name returns the plugin name.
func (p *FilterPlugin) Name() string { return p.name }

type filterState struct{ *mirror.Filtering[fwk.NodeInfo] }

func (s filterState) Clone() fwk.StateData { return s }

// PreFilter syncs the nodes and prepares the filter for pod.
func (p *FilterPlugin) PreFilter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	st, pre, err := p.prepare(cs, pod, nodes)
	if err != nil || pre.Reject != "" || pre.Filter == nil {
		return nil, preStatus(pre, err)
	}
	cs.Write(p.key, st)
	if pre.NodeNames != nil {
		return &fwk.PreFilterResult{NodeNames: sets.New(pre.NodeNames...)}, nil
	}
	return nil, nil
}

// preStatus maps an error, or a rejecting or skipping PreFilterResult.
func preStatus(pre framework.PreFilterResult, err error) *fwk.Status {
	if err != nil {
		return fwk.AsStatus(err)
	}
	if pre.Reject != "" {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, pre.Reject)
	}
	return fwk.NewStatus(fwk.Skip)
}

func (p *FilterPlugin) prepare(cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (filterState, framework.PreFilterResult, error) {
	if err := p.p.sync(p.handle, cs, nodes); err != nil {
		return filterState{}, framework.PreFilterResult{}, err
	}
	pi, err := snapshot.NewPodInfo(pod)
	if err != nil {
		return filterState{}, framework.PreFilterResult{}, err
	}
	f, pre, err := p.p.m.Filter(p.filter, pi, p.builtin)
	return filterState{f}, pre, err
}

// PreFilterExtensions returns nil: altered NodeInfos are converted on the fly.
func (p *FilterPlugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter checks one node: UnschedulableAndUnresolvable if any reason is
// Unresolvable, else Unschedulable, with upstream's reason strings.
func (p *FilterPlugin) Filter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	d, err := cs.Read(p.key)
	st, ok := d.(filterState)
	if err != nil { // PreFilter not enabled, or it skipped: prepare here (slow)
		var pre framework.PreFilterResult
		if st, pre, err = p.prepare(cs, pod, nil); err != nil || pre.Reject != "" {
			return preStatus(pre, err)
		}
	} else if !ok {
		return fwk.AsStatus(fmt.Errorf("kubescheduler: %s: unexpected state %T", p.name, d))
	}
	reasons, err := st.Check(ni)
	if err != nil || len(reasons) == 0 {
		return fwk.AsStatus(err)
	}
	code, msgs := fwk.Unschedulable, make([]string, len(reasons))
	for i := range reasons {
		if reasons[i].Unresolvable {
			code = fwk.UnschedulableAndUnresolvable
		}
		msgs[i] = reasons[i].Message()
	}
	return fwk.NewStatus(code, msgs...)
}

// EventsToRegister asks for a retry when a node is added or changes, or an
// assigned pod is deleted or scaled down (no queueing hints).
func (p *FilterPlugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete | fwk.UpdatePodScaleDown}},
	}, nil
}

// SignPod signs as [ScorePlugin.SignPod], for the filter.
func (p *FilterPlugin) SignPod(ctx context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return p.p.signAs(p.name, p.builtin, p.filter, pod)
}

// FitArgs are the pluginConfig args of the [FitName] plugin (upstream's
// NodeResourcesFitArgs filter fields).
type FitArgs struct {
	metav1.TypeMeta       `json:",inline"`
	IgnoredResources      []string `json:"ignoredResources,omitempty"`
	IgnoredResourceGroups []string `json:"ignoredResourceGroups,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (a *FitArgs) DeepCopyObject() runtime.Object {
	c := *a
	c.IgnoredResources = append([]string(nil), a.IgnoredResources...)
	c.IgnoredResourceGroups = append([]string(nil), a.IgnoredResourceGroups...)
	return &c
}

// NewSchedkitFit is the factory of the [FitName] plugin:
// app.WithPlugin(kubescheduler.FitName, kubescheduler.NewSchedkitFit).
func NewSchedkitFit(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	var args FitArgs
	if err := DecodeArgs(FitName, obj, &args); err != nil {
		return nil, err
	}
	f := &framework.NodeResourcesFit{IgnoredResources: args.IgnoredResources, IgnoredResourceGroups: args.IgnoredResourceGroups}
	if err := f.Validate(); err != nil {
		return nil, argsError(FitName, err)
	}
	p := WrapFilter(FitName, f, h)
	p.builtin = true
	return p, nil
}
