package kubescheduler

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"weak"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/mirror"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// The names of schedkit's plugins, for app.WithPlugin(Name, factory).
const (
	ScoreName   = "SchedkitScore"            // [NewSchedkitScore]: a built-in scorer
	FitName     = "SchedkitNodeResourcesFit" // [NewSchedkitFit]: schedkit's NodeResourcesFit
	ReserveName = "SchedkitReserve"          // [NewSchedkitReserve]: the reservation ledger
)

var (
	_ fwk.PreScorePlugin    = (*ScorePlugin)(nil)
	_ fwk.ScorePlugin       = (*ScorePlugin)(nil)
	_ fwk.ScoreExtensions   = (*ScorePlugin)(nil)
	_ fwk.SignPlugin        = (*ScorePlugin)(nil)
	_ fwk.PreFilterPlugin   = (*FilterPlugin)(nil)
	_ fwk.FilterPlugin      = (*FilterPlugin)(nil)
	_ fwk.EnqueueExtensions = (*FilterPlugin)(nil)
	_ fwk.SignPlugin        = (*FilterPlugin)(nil)
)

type nodeMirror = mirror.Mirror[fwk.NodeInfo]

// mirrors lets a plugin find the mirror an earlier plugin made on its
// handle (a framework builds its plugins one after the other). It holds
// weak pointers only, to the handle and the mirror, keeping neither alive
// (the plugins own the mirror), and a cleanup removes an entry when its
// mirror is collected. An entry is reached only through its own handle.
var mirrors sync.Map // weak.Pointer[byte] (the handle) → weak.Pointer[nodeMirror]

func mirrorFor(h fwk.Handle) *nodeMirror {
	m := mirror.New(mirror.Source[fwk.NodeInfo]{Node: fwk.NodeInfo.Node, Generation: fwk.NodeInfo.GetGeneration,
		NumPods: func(n fwk.NodeInfo) int { return len(n.GetPods()) },
		Pod:     func(n fwk.NodeInfo, i int) *v1.Pod { return n.GetPods()[i].GetPod() }})
	if v := reflect.ValueOf(h); h != nil && v.Kind() == reflect.Pointer && !v.IsNil() {
		key := weak.Make((*byte)(v.UnsafePointer()))
		if w, ok := mirrors.Load(key); ok {
			if old := w.(weak.Pointer[nodeMirror]).Value(); old != nil {
				return old
			}
		}
		w := weak.Make(m)
		mirrors.Store(key, w)
		runtime.AddCleanup(m, func(w weak.Pointer[nodeMirror]) { mirrors.CompareAndDelete(key, w) }, w)
	}
	return m
}

// plugin is what ScorePlugin and FilterPlugin share.
type plugin struct {
	name    string
	key     fwk.StateKey // where PreScore or PreFilter leaves the pod's state
	handle  fwk.Handle
	m       *nodeMirror
	x       any  // the scorer or filter
	builtin bool // schedkit's own: signPod covers what it reads
}

// Name returns the plugin name.
func (p *plugin) Name() string { return p.name }

const syncedKey fwk.StateKey = "schedkit.io/mirror" // the mirror synced in this cycle

type synced nodeMirror

func (s *synced) Clone() fwk.StateData { return s }

// pod syncs the mirror with the scheduler's whole node list (ImageLocality
// counts every node; without a lister, nodes) once per cycle and parses pod.
func (p *plugin) pod(cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*snapshot.PodInfo, error) {
	if d, err := cs.Read(syncedKey); err != nil || d != (*synced)(p.m) {
		if h := p.handle; h != nil && h.SnapshotSharedLister() != nil {
			if nodes, err = h.SnapshotSharedLister().NodeInfos().List(); err != nil {
				return nil, err
			}
		}
		if nodes != nil {
			if _, err := p.m.Sync(nodes); err != nil {
				return nil, err
			}
			cs.Write(syncedKey, (*synced)(p.m))
		}
	}
	return snapshot.NewPodInfo(pod)
}

// ScorePlugin runs a [score.Scorer] as an upstream PreScore + Score plugin
// ([mirror.Mirror.Score]): PreScore scores every candidate in one pass
// (Skip when the scorer skips the pod), Score looks the node's score up.
type ScorePlugin struct{ plugin }

// WrapScorer makes scorer a score plugin called name for the scheduler
// behind h; call it from your plugin's factory.
func WrapScorer(name string, scorer score.Scorer, h fwk.Handle) *ScorePlugin {
	return &ScorePlugin{plugin{name: name, key: fwk.StateKey("PreScore" + name), handle: h, m: mirrorFor(h), x: scorer}}
}

// Scorer returns the schedkit scorer the plugin runs.
func (p *ScorePlugin) Scorer() score.Scorer { return p.x.(score.Scorer) }

type scores struct{ *mirror.Scores[fwk.NodeInfo] } // nil: pod skipped

func (s scores) Clone() fwk.StateData { return s }

// PreScore prepares the scorer for pod and scores every candidate.
func (p *ScorePlugin) PreScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	st, err := p.prepare(cs, pod, nodes)
	if err != nil || st.Scores == nil {
		return orSkip(err)
	}
	cs.Write(p.key, st)
	return nil
}

func (p *ScorePlugin) prepare(cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (scores, error) {
	pi, err := p.pod(cs, pod, nodes)
	if err != nil {
		return scores{}, err
	}
	sc, err := p.m.Score(p.Scorer(), pi, nodes)
	return scores{sc}, err
}

// state returns PreScore's state, or prepares it (no PreScore: slow).
func (p *ScorePlugin) state(cs fwk.CycleState, pod *v1.Pod) (scores, error) {
	d, err := cs.Read(p.key)
	if err != nil {
		return p.prepare(cs, pod, nil)
	}
	st, ok := d.(scores)
	if !ok {
		err = fmt.Errorf("kubescheduler: %s: unexpected state %T", p.name, d)
	}
	return st, err
}

// Score returns the node's score; 0 for a skipped pod.
func (p *ScorePlugin) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	st, err := p.state(cs, pod)
	if err != nil || st.Scores == nil {
		return 0, fwk.AsStatus(err)
	}
	v, err := st.Of(ni)
	return v, fwk.AsStatus(err)
}

// ScoreExtensions returns the plugin itself (see NormalizeScore).
func (p *ScorePlugin) ScoreExtensions() fwk.ScoreExtensions { return p }

// NormalizeScore applies the scorer's [score.Normalizer]; a no-op without.
func (p *ScorePlugin) NormalizeScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, list fwk.NodeScoreList) *fwk.Status {
	st, err := p.state(cs, pod)
	if err != nil || st.Scores == nil {
		return fwk.AsStatus(err)
	}
	names, vals := make([]string, len(list)), make([]int64, len(list))
	for i, s := range list {
		names[i], vals[i] = s.Name, s.Score
	}
	err = st.Normalize(names, vals)
	for i := range list {
		list[i].Score = vals[i]
	}
	return fwk.AsStatus(err)
}

// SchedkitScoreFactory returns the factory of a score plugin called name
// running the built-in scorer its [ScoreArgs] name, to register several.
func SchedkitScoreFactory(name string) func(context.Context, k8sruntime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(_ context.Context, obj k8sruntime.Object, h fwk.Handle) (fwk.Plugin, error) {
		var args ScoreArgs
		if err := DecodeArgs(name, obj, &args); err != nil {
			return nil, err
		}
		s, err := args.ScorerFor(name)
		if err != nil {
			return nil, err
		}
		p := WrapScorer(name, s, h)
		p.builtin = true
		return p, nil
	}
}

// NewSchedkitScore is the factory of the [ScoreName] plugin.
func NewSchedkitScore(ctx context.Context, obj k8sruntime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return SchedkitScoreFactory(ScoreName)(ctx, obj, h)
}

// FilterPlugin runs a [framework.Filter] as an upstream PreFilter + Filter
// plugin ([mirror.Mirror.Filter]). PreFilter maps Reject to
// UnschedulableAndUnresolvable, no PodFilter to Skip, NodeNames to
// upstream's; Filter maps a node's reasons to UnschedulableAndUnresolvable
// if any is Unresolvable, else Unschedulable, with upstream's messages.
type FilterPlugin struct{ plugin }

// WrapFilter makes f a filter plugin called name for the scheduler behind
// h, as [WrapScorer]. f reads the scheduler's nodes, not a ledger's.
func WrapFilter(name string, f framework.Filter, h fwk.Handle) *FilterPlugin {
	return &FilterPlugin{plugin{name: name, key: fwk.StateKey("PreFilter" + name), handle: h, m: mirrorFor(h), x: f}}
}

type filtering struct {
	*mirror.Filtering[fwk.NodeInfo]
}

func (s filtering) Clone() fwk.StateData { return s }

// PreFilter prepares the filter for pod.
func (p *FilterPlugin) PreFilter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	st, pre, err := p.prepare(cs, pod, nodes)
	if err != nil || pre.Reject != "" {
		return nil, rejected(pre, err)
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

func (p *FilterPlugin) prepare(cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (filtering, framework.PreFilterResult, error) {
	pi, err := p.pod(cs, pod, nodes)
	if err != nil {
		return filtering{}, framework.PreFilterResult{}, err
	}
	f, pre, err := p.m.Filter(p.x.(framework.Filter), pi, p.builtin)
	return filtering{f}, pre, err
}

// PreFilterExtensions returns nil: altered NodeInfos are converted as they come.
func (p *FilterPlugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter checks one node.
func (p *FilterPlugin) Filter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	d, err := cs.Read(p.key)
	st, ok := d.(filtering)
	if err != nil { // no PreFilter, or it skipped: prepare here (slow)
		var pre framework.PreFilterResult
		if st, pre, err = p.prepare(cs, pod, nil); err != nil || pre.Reject != "" {
			return rejected(pre, err)
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

func orSkip(err error) *fwk.Status {
	if err != nil {
		return fwk.AsStatus(err)
	}
	return fwk.NewStatus(fwk.Skip)
}

func rejected(pre framework.PreFilterResult, err error) *fwk.Status {
	if err != nil {
		return fwk.AsStatus(err)
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, pre.Reject)
}

// EventsToRegister asks for a retry when a node is added or changes, or an
// assigned pod is deleted or scaled down (no queueing hints).
func (p *FilterPlugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete | fwk.UpdatePodScaleDown}},
	}, nil
}

// NewSchedkitFit is the factory of the [FitName] plugin.
func NewSchedkitFit(_ context.Context, obj k8sruntime.Object, h fwk.Handle) (fwk.Plugin, error) {
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

// PodSigner is implemented by a scorer or filter of your own that declares
// the pod fields it reads, so upstream's opportunistic batching may reuse
// its results for pods that agree on them: one fragment per field, keyed
// uniquely ("example.com/labels"); pods with equal fragments must get the
// same score or verdict on every node; an error disables batching for the
// pod. Without one a wrapped plugin refuses to sign (no batching: slower,
// never wrong).
type PodSigner interface {
	SignPod(pod *v1.Pod) ([]fwk.SignFragment, error)
}

// SignPod signs the pod fields schedkit's built-ins read plus those the
// wrapped scorer or filter declares ([PodSigner]), or refuses (Unschedulable).
func (p *plugin) SignPod(ctx context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	frags := signPod(pod)
	if p.builtin {
		return frags, nil
	}
	ps, ok := p.x.(PodSigner)
	if !ok {
		return nil, fwk.NewStatus(fwk.Unschedulable, p.name+": does not declare the pod fields it reads (kubescheduler.PodSigner): no opportunistic batching")
	}
	own, err := ps.SignPod(pod)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("kubescheduler: %s: SignPod: %w", p.name, err))
	}
	return append(frags, own...), nil
}

// signPod signs what schedkit's built-in scorers and filters may read: the
// whole pod spec (requests, images, affinity, tolerations, ports, node
// name, ...) and the labels (reservations select owners by label). Pods
// of one template share it, which is what batching is for.
func signPod(pod *v1.Pod) []fwk.SignFragment {
	return []fwk.SignFragment{{Key: "schedkit.io/PodSpec", Value: &pod.Spec}, {Key: fwk.LabelsSignerName, Value: pod.Labels}}
}
