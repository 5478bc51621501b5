package parity

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// Upstream runs kube-scheduler v1.37.2's own in-tree plugins, built by the
// in-tree registry's factories (so with the default feature gates, exactly as
// the real scheduler builds them) on top of upstream's own Snapshot and
// NodeInfo (backend/cache.NewSnapshot → framework.NewNodeInfo, AddPod,
// SetNode, image states).
//
// An Upstream holds one framework handle; Load swaps the cluster under it, so
// plugins built once see every later Load. Not safe for concurrent use.
type Upstream struct {
	handle   framework.Framework
	lister   *swapLister
	registry frameworkruntime.Registry
	nodes    []*v1.Node
	Features plfeature.Features
}

// swapLister is the handle's SnapshotSharedLister; Load replaces the
// snapshot it delegates to.
type swapLister struct{ *cache.Snapshot }

// noDRA is the handle's SharedDRAManager: a cluster with no DeviceClass, so
// every extended resource is a device-plugin resource read from node
// allocatable (the common case, and the one schedkit models). Only
// DeviceClassResolver is reached by the plugins under test; the embedded nil
// interface makes any other use fail loudly.
type noDRA struct{ fwk.SharedDRAManager }

func (noDRA) DeviceClassResolver() fwk.DeviceClassResolver { return noDRA{} }

func (noDRA) GetDeviceClass(v1.ResourceName) *resourceapi.DeviceClass { return nil }

// NewUpstream builds the framework handle, registering the scheduler's
// metrics (its Parallelizer, which schedkit's score plugin runs long
// candidate lists on, writes them; without them Until dereferences a
// nil gauge). It starts no goroutine that outlives ctx.
func NewUpstream(ctx context.Context) (*Upstream, error) {
	metrics.Register() // once per process
	lister := &swapLister{Snapshot: cache.NewEmptySnapshot()}
	h, err := frameworkruntime.NewFramework(ctx, nil, nil,
		frameworkruntime.WithSnapshotSharedLister(lister),
		frameworkruntime.WithSharedDRAManager(noDRA{}))
	if err != nil {
		return nil, fmt.Errorf("parity: upstream framework: %w", err)
	}
	return &Upstream{
		handle:   h,
		lister:   lister,
		registry: plugins.NewInTreeRegistry(),
		Features: plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate),
	}, nil
}

// Load makes nodes and the pods bound to them (spec.nodeName) the cluster
// that plugins see. Cost: upstream's own NewSnapshot, O(nodes + pods).
func (u *Upstream) Load(nodes []*v1.Node, bound []*v1.Pod) {
	u.lister.Snapshot = cache.NewSnapshot(bound, nodes)
	u.nodes = nodes
}

// NodeInfo returns upstream's NodeInfo for a loaded node.
func (u *Upstream) NodeInfo(name string) (fwk.NodeInfo, error) {
	return u.lister.Get(name)
}

// Args turns user-facing v1 plugin args (as they appear in a
// KubeSchedulerConfiguration pluginConfig) into the internal args a plugin
// factory takes: upstream's scheme defaulting, then conversion. in is
// defaulted in place. nil in gives nil.
func Args(in runtime.Object) (runtime.Object, error) {
	var out runtime.Object
	switch in.(type) {
	case nil:
		return nil, nil
	case *configv1.NodeResourcesFitArgs:
		out = &config.NodeResourcesFitArgs{}
	case *configv1.NodeResourcesBalancedAllocationArgs:
		out = &config.NodeResourcesBalancedAllocationArgs{}
	case *configv1.NodeAffinityArgs:
		out = &config.NodeAffinityArgs{}
	default:
		return nil, fmt.Errorf("parity: no conversion for args %T", in)
	}
	scheme.Scheme.Default(in)
	if err := scheme.Scheme.Convert(in, out, nil); err != nil {
		return nil, fmt.Errorf("parity: converting %T: %w", in, err)
	}
	return out, nil
}

// defaultArgs gives the v1 args a plugin gets when a profile has no
// pluginConfig for it.
func defaultArgs(name string) runtime.Object {
	switch name {
	case names.NodeResourcesFit:
		return &configv1.NodeResourcesFitArgs{}
	case names.NodeResourcesBalancedAllocation:
		return &configv1.NodeResourcesBalancedAllocationArgs{}
	case names.NodeAffinity:
		return &configv1.NodeAffinityArgs{}
	}
	return nil
}

// Plugin builds the in-tree plugin name with v1 args (nil: the defaults)
// through the in-tree registry's factory.
func (u *Upstream) Plugin(ctx context.Context, name string, v1args runtime.Object) (fwk.Plugin, error) {
	factory, ok := u.registry[name]
	if !ok {
		return nil, fmt.Errorf("parity: no in-tree plugin %q", name)
	}
	if v1args == nil {
		v1args = defaultArgs(name)
	}
	args, err := Args(v1args)
	if err != nil {
		return nil, err
	}
	return factory(ctx, args, u.handle)
}

// MustPlugin is Plugin that panics on error, for tests.
func (u *Upstream) MustPlugin(ctx context.Context, name string, v1args runtime.Object) fwk.Plugin {
	p, err := u.Plugin(ctx, name, v1args)
	if err != nil {
		panic(err)
	}
	return p
}

// Scores is the outcome of one score plugin on every loaded node, in the
// order the nodes were given to Load.
type Scores struct {
	// Skipped: PreScore returned Skip, so the framework does not call Score
	// and the plugin contributes nothing (every entry below is 0).
	Skipped bool
	// Raw are the Score results; Normalized are the same after the
	// plugin's NormalizeScore (equal to Raw when it has none).
	Raw, Normalized []int64
}

func (u *Upstream) nodeInfos() ([]fwk.NodeInfo, error) {
	out := make([]fwk.NodeInfo, len(u.nodes))
	for i, n := range u.nodes {
		ni, err := u.lister.Get(n.Name)
		if err != nil {
			return nil, err
		}
		out[i] = ni
	}
	return out, nil
}

// Score runs pl as the framework's RunPreScorePlugins / RunScorePlugins do
// for one plugin: PreScore (Skip means no score), Score per node, then
// NormalizeScore. A non-success status is an error.
func (u *Upstream) Score(ctx context.Context, pl fwk.Plugin, pod *v1.Pod) (Scores, error) {
	infos, err := u.nodeInfos()
	if err != nil {
		return Scores{}, err
	}
	return scoreInfos(ctx, pl, pod, infos)
}

// scoreInfos is Score with infos as the nodes that passed filtering.
func scoreInfos(ctx context.Context, pl fwk.Plugin, pod *v1.Pod, infos []fwk.NodeInfo) (Scores, error) {
	sp, ok := pl.(fwk.ScorePlugin)
	if !ok {
		return Scores{}, fmt.Errorf("parity: %s is not a score plugin", pl.Name())
	}
	res := Scores{Raw: make([]int64, len(infos)), Normalized: make([]int64, len(infos))}
	state := framework.NewCycleState()
	if pre, ok := pl.(fwk.PreScorePlugin); ok {
		st := pre.PreScore(ctx, state, pod, infos)
		if st.IsSkip() {
			res.Skipped = true
			return res, nil
		}
		if !st.IsSuccess() {
			return res, fmt.Errorf("parity: %s PreScore: %w", pl.Name(), st.AsError())
		}
	}
	list := make(fwk.NodeScoreList, len(infos))
	for i, ni := range infos {
		s, st := sp.Score(ctx, state, pod, ni)
		if !st.IsSuccess() {
			return res, fmt.Errorf("parity: %s Score(%s): %w", pl.Name(), ni.Node().Name, st.AsError())
		}
		res.Raw[i] = s
		list[i] = fwk.NodeScore{Name: ni.Node().Name, Score: s}
	}
	if ext := sp.ScoreExtensions(); ext != nil {
		if st := ext.NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
			return res, fmt.Errorf("parity: %s NormalizeScore: %w", pl.Name(), st.AsError())
		}
	}
	for i := range list {
		res.Normalized[i] = list[i].Score
	}
	return res, nil
}

// Verdict is a filter outcome on one node: the status code and its reasons
// (nil for Success).
type Verdict struct {
	Code    fwk.Code
	Reasons []string
}

func (v Verdict) String() string { return fmt.Sprintf("%s%q", v.Code, v.Reasons) }

// FilterResult is the outcome of one filter plugin on every loaded node.
type FilterResult struct {
	// Verdicts are in the order the nodes were given to Load.
	Verdicts []Verdict
	// NodeNames is the PreFilterResult's node set, sorted; nil when the
	// PreFilter did not narrow the candidates.
	NodeNames []string
}

// Filter runs pl as the framework does for one plugin: PreFilter (Skip means
// the plugin's Filter is not run, so every node passes; an Unschedulable*
// status rejects every node), then Filter on each loaded node. A
// PreFilterResult narrowing the node set is reported in NodeNames but not
// applied: the plugin's own Filter verdict is given for every node. An Error
// status is an error.
func (u *Upstream) Filter(ctx context.Context, pl fwk.Plugin, pod *v1.Pod) (FilterResult, error) {
	fp, ok := pl.(fwk.FilterPlugin)
	if !ok {
		return FilterResult{}, fmt.Errorf("parity: %s is not a filter plugin", pl.Name())
	}
	infos, err := u.nodeInfos()
	if err != nil {
		return FilterResult{}, err
	}
	res := FilterResult{Verdicts: make([]Verdict, len(infos))}
	state := framework.NewCycleState()
	if pre, ok := pl.(fwk.PreFilterPlugin); ok {
		r, st := pre.PreFilter(ctx, state, pod, infos)
		switch {
		case st.IsSkip():
			return res, nil
		case st.Code() == fwk.Error:
			return FilterResult{}, fmt.Errorf("parity: %s PreFilter: %w", pl.Name(), st.AsError())
		case !st.IsSuccess():
			for i := range res.Verdicts {
				res.Verdicts[i] = verdict(st)
			}
			return res, nil
		}
		if r != nil && !r.AllNodes() {
			res.NodeNames = sets.List(r.NodeNames)
		}
	}
	for i, ni := range infos {
		st := fp.Filter(ctx, state, pod, ni)
		if st.Code() == fwk.Error {
			return FilterResult{}, fmt.Errorf("parity: %s Filter(%s): %w", pl.Name(), ni.Node().Name, st.AsError())
		}
		res.Verdicts[i] = verdict(st)
	}
	return res, nil
}

func verdict(st *fwk.Status) Verdict {
	if st.IsSuccess() {
		return Verdict{Code: fwk.Success}
	}
	return Verdict{Code: st.Code(), Reasons: st.Reasons()}
}

// PodResource is what upstream's NodeInfo.AddPod adds to a node for pod:
// PodInfo.CalculateResource (Requested vector, plus the CPU and memory with
// the non-zero defaults of 100m and 200 MiB per container that
// NonZeroRequested accumulates).
func PodResource(pod *v1.Pod) (fwk.PodResource, error) {
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		return fwk.PodResource{}, err
	}
	return pi.CalculateResource(), nil
}

// Handle returns the framework handle the plugins were built with (its
// SnapshotSharedLister serves the loaded cluster), for running other
// plugins — schedkit's adapters — against the same upstream NodeInfos.
func (u *Upstream) Handle() fwk.Handle { return u.handle }

// NodeInfos returns upstream's NodeInfos of the loaded nodes, in Load order.
func (u *Upstream) NodeInfos() ([]fwk.NodeInfo, error) { return u.nodeInfos() }
