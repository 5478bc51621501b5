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
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// FitName is the name of the filter plugin [NewSchedkitFit] builds: schedkit's
// NodeResourcesFit filter (saturating arithmetic, reasons as values).
const FitName = "SchedkitNodeResourcesFit"

var (
	_ fwk.PreFilterPlugin   = (*FilterPlugin)(nil)
	_ fwk.FilterPlugin      = (*FilterPlugin)(nil)
	_ fwk.EnqueueExtensions = (*FilterPlugin)(nil)
	_ fwk.SignPlugin        = (*FilterPlugin)(nil)
)

// FilterPlugin runs a schedkit [framework.Filter] as an upstream
// PreFilter + Filter plugin. PreFilter maps the filter's PreFilterResult:
// Reject → UnschedulableAndUnresolvable for every node, no PodFilter → Skip,
// NodeNames → upstream's PreFilterResult. Filter maps the reasons a node
// gets to one status: UnschedulableAndUnresolvable if any reason is
// Unresolvable, else Unschedulable, with upstream's reason strings.
//
// The built-in fit filter ([NewSchedkitFit]) in a profile that keeps a
// reservation ledger ([NewSchedkitReserve], [WrapLedger]) also asks the
// ledger ([reserve.Ledger.Fits]: holds, and named reservations, on which
// their owners draw) for each node the filter passes, so it never passes a
// node that Reserve would then refuse: kube-scheduler treats a Reserve
// failure as a failure on that one node and retries the pod, which often
// picks the same node again. A NodeInfo the framework altered for one call
// (preemption's dry run, nominated pods) is judged on its own pods only.
//
// Cost: a node that passes costs a look-up and the filter's own check, and
// allocates nothing (with a ledger: plus Ledger.Fits, O(resources of the
// pod) under the ledger's mutex); a failing node allocates its status, as
// upstream's do. Safe for concurrent Filter calls.
type FilterPlugin struct {
	name   string
	key    fwk.StateKey
	filter framework.Filter
	handle fwk.Handle
	mirror *mirror
	// builtin: schedkit's NodeResourcesFit (NewSchedkitFit); it signs with
	// signPod and, with a ledger in the profile, asks the ledger too.
	builtin bool
}

// WrapFilter makes your own schedkit filter (any [framework.Filter]) an
// upstream PreFilter + Filter plugin called name, for the scheduler behind
// h; call it from your plugin's factory, as [WrapScorer]. The filter reads
// the scheduler's nodes (bound and assumed pods); it does not see a
// ledger's named reservations unless it consults the ledger itself.
//
// The plugin signs a pod for upstream's batching only if f implements
// [PodSigner]; otherwise batching is off for the profile's pods.
func WrapFilter(name string, f framework.Filter, h fwk.Handle) *FilterPlugin {
	return &FilterPlugin{name: name, key: fwk.StateKey("PreFilter" + name), filter: f, handle: h, mirror: mirrorFor(h)}
}

// NewFilterPlugin is [WrapFilter].
//
// Deprecated: use WrapFilter, named for what it does.
func NewFilterPlugin(name string, f framework.Filter, h fwk.Handle) *FilterPlugin {
	return WrapFilter(name, f, h)
}

// Name returns the plugin name.
func (p *FilterPlugin) Name() string { return p.name }

type filterState struct {
	snap   *snapshot.Snapshot
	pf     framework.PodFilter
	pod    *snapshot.PodInfo
	ledger *reserve.Ledger // nil: no ledger check
}

func (s *filterState) Clone() fwk.StateData { return s }

// PreFilter mirrors the nodes and prepares the filter for pod.
func (p *FilterPlugin) PreFilter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	st, pre, err := p.prepare(cs, pod, nodes)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	if pre.Reject != "" {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, pre.Reject)
	}
	if pre.Filter == nil {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	cs.Write(p.key, st)
	if pre.NodeNames != nil {
		return &fwk.PreFilterResult{NodeNames: sets.New(pre.NodeNames...)}, nil
	}
	return nil, nil
}

func (p *FilterPlugin) prepare(cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*filterState, framework.PreFilterResult, error) {
	all, err := allNodes(p.handle, nodes)
	if err != nil {
		return nil, framework.PreFilterResult{}, err
	}
	snap, err := p.mirror.forCycle(cs, all)
	if err != nil {
		return nil, framework.PreFilterResult{}, err
	}
	pi, err := snapshot.NewPodInfo(pod)
	if err != nil {
		return nil, framework.PreFilterResult{}, err
	}
	pre, err := p.filter.PreFilter(pi)
	if err != nil {
		return nil, framework.PreFilterResult{}, err
	}
	st := &filterState{snap: snap, pf: pre.Filter, pod: pi}
	if p.builtin {
		st.ledger = p.mirror.ledger.Load()
	}
	return st, pre, nil
}

// PreFilterExtensions returns nil: the filters keep no per-pod state that
// AddPod/RemovePod would have to update; preemption's changed NodeInfos are
// mirrored on the fly.
func (p *FilterPlugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter checks one node.
func (p *FilterPlugin) Filter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	var st *filterState
	if d, err := cs.Read(p.key); err == nil {
		var ok bool
		if st, ok = d.(*filterState); !ok {
			return fwk.AsStatus(fmt.Errorf("kubescheduler: %s: unexpected state %T", p.name, d))
		}
	} else {
		// PreFilter not enabled in the profile, or it returned Skip and the
		// framework calls Filter anyway: prepare here (slow path).
		var pre framework.PreFilterResult
		st, pre, err = p.prepare(cs, pod, nil)
		if err != nil {
			return fwk.AsStatus(err)
		}
		if pre.Reject != "" {
			return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, pre.Reject)
		}
		if pre.Filter == nil {
			return nil
		}
	}
	ours, err := p.mirror.nodeFor(ni)
	if err != nil {
		return fwk.AsStatus(err)
	}
	reasons := st.pf.Filter(ours, nil)
	if len(reasons) == 0 {
		if st.ledger == nil || p.mirror.lookup(ni) == nil {
			// No ledger; or a NodeInfo the framework altered for this call
			// (preemption's dry run without its victims, nominated pods
			// added), judged on its own pods: the ledger cannot take the
			// victims out.
			return nil
		}
		short, err := st.ledger.Fits(st.pod, ours.Name())
		if err != nil || len(short) == 0 {
			return nil // a node the ledger has not seen yet: Reserve takes it from the scheduler
		}
		return fwk.NewStatus(fwk.Unschedulable, insufficientMessages(short)...)
	}
	code := fwk.Unschedulable
	msgs := make([]string, len(reasons))
	for i := range reasons {
		if reasons[i].Unresolvable {
			code = fwk.UnschedulableAndUnresolvable
		}
		msgs[i] = reasons[i].Message()
	}
	return fwk.NewStatus(code, msgs...)
}

// EventsToRegister asks for a retry when a node is added or changes, or an
// assigned pod is deleted or scaled down: the events that can make a node
// pass a schedkit filter. No queueing hints: every such event retries.
func (p *FilterPlugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete | fwk.UpdatePodScaleDown}},
	}, nil
}

// SignPod signs the pod fields schedkit's filters read, plus, for a
// filter of your own, the fields its [PodSigner] declares; such a filter
// without a PodSigner refuses to sign (the pod is not batched).
func (p *FilterPlugin) SignPod(ctx context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return signAs(p.mirror, p.name, p.builtin, p.filter, pod)
}

// FitArgs are the pluginConfig args of the FitName plugin (upstream's
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

// NewSchedkitFit is the factory of the [FitName] plugin, schedkit's
// NodeResourcesFit filter, from its [FitArgs]; upstream's PluginFactory
// signature: app.WithPlugin(kubescheduler.FitName, kubescheduler.NewSchedkitFit).
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

// NewFit is [NewSchedkitFit].
//
// Deprecated: use NewSchedkitFit, named for what it builds.
func NewFit(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return NewSchedkitFit(ctx, obj, h)
}
