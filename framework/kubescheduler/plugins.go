package kubescheduler

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/internal/mirror"
	"github.com/schedkit/schedkit/internal/scoring"
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
	_ fwk.ReservePlugin     = (*ReservePlugin)(nil)
	_ fwk.PostBindPlugin    = (*ReservePlugin)(nil)
)

type nodeMirror = mirror.Mirror[fwk.NodeInfo]

// mirrors finds the mirror an earlier plugin made on a handle; it holds only weak
// pointers (the plugins own the mirror), and a cleanup drops a collected one.
var mirrors sync.Map // weak.Pointer[byte] (the handle) → weak.Pointer[nodeMirror]

func mirrorFor(h fwk.Handle) *nodeMirror {
	m := mirror.New(mirror.Methods[fwk.NodeInfo, fwk.PodInfo](), mirror.Devices)
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
	// lazy: the plugin reads the mirror only through look-ups of the
	// nodes it is given (a filter; a scorer that ignores the cluster),
	// so its cycle's sync may leave changed nodes to be rebuilt as they
	// are looked up (mirror.SyncLazy) instead of reading every node.
	lazy bool
	// last is the state the plugin wrote last (PreFilter, PreScore)
	// with the CycleState it was written to: stateOr answers from it
	// when asked for that CycleState, so that a cycle's per-node Filter
	// and Score calls skip the CycleState's map look-up. It keeps that
	// one CycleState (and what it holds) alive until the plugin next
	// writes: bounded, one cycle's state per plugin.
	last atomic.Pointer[written]
}

// written is a state a plugin wrote to the CycleState cs (a pointer:
// see write).
type written struct {
	cs fwk.CycleState
	d  fwk.StateData // the state[T] written to cs
}

// Name returns the plugin name.
func (p *plugin) Name() string { return p.name }

const syncedKey fwk.StateKey = "schedkit.io/mirror" // the mirror synced in this cycle

// synced is the mirror a cycle synced, and whether fully (Sync) or lazily.
type synced struct {
	m    *nodeMirror
	full bool
}

func (s *synced) Clone() fwk.StateData { return s }

// pod syncs the mirror with all the scheduler's nodes once per cycle —
// lazily when the plugin allows, and a lazily synced cycle again fully
// for a plugin that does not — and parses pod.
func (p *plugin) pod(cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*snapshot.PodInfo, error) {
	d, err := cs.Read(syncedKey)
	if s, ok := d.(*synced); err != nil || !ok || s.m != p.m || !(s.full || p.lazy) {
		if h := p.handle; h != nil && h.SnapshotSharedLister() != nil {
			if nodes, err = h.SnapshotSharedLister().NodeInfos().List(); err != nil {
				return nil, err
			}
		}
		if nodes != nil {
			sync := p.m.Sync
			if p.lazy {
				sync = p.m.SyncLazy
			}
			if _, err := sync(nodes); err != nil {
				return nil, err
			}
			cs.Write(syncedKey, &synced{m: p.m, full: !p.lazy || p.m.Full()})
		}
	}
	return p.m.PodInfo(pod)
}

// ScorePlugin runs a [score.Scorer] as a PreScore + Score plugin: PreScore
// scores all candidates ([mirror.Mirror.Score]), Score looks a score up.
// From 256 candidates PreScore finds and scores them in pieces of at
// least 128, two per processor (GOMAXPROCS) or fewer, on the handle's
// Parallelizer (the scheduler's parallelism), so
// a PodScorer's Score runs on disjoint batches at once, as
// [score.PodScorer] allows; with fewer candidates, a nil handle or a
// handle whose Parallelizer is nil, it scores them on the calling
// goroutine, to the end whatever its context. A panic in a scorer
// crashes the scheduler by default, as one in upstream's own Score
// phase does (upstream's workers re-panic while
// utilruntime.ReallyCrash is true). PreScore fails when a piece did not
// finish: its context ended first (the error wraps the context's), or
// a piece's panic was recovered (ReallyCrash false). Upstream's Parallelizer
// writes the scheduler's goroutine metrics: a framework built outside a
// scheduler (a test's frameworkruntime.NewFramework) needs them
// registered first (k8s.io/kubernetes/pkg/scheduler/metrics.Register),
// as upstream's own plugins that use it do.
type ScorePlugin struct{ plugin }

// WrapScorer makes scorer a plugin called name; call it in your factory.
func WrapScorer(name string, scorer score.Scorer, h fwk.Handle) *ScorePlugin {
	return &ScorePlugin{plugin{name: name, key: fwk.StateKey("PreScore" + name), handle: h, m: mirrorFor(h), x: scorer,
		lazy: scoring.IgnoresCluster(scorer)}}
}

// Scorer returns the schedkit scorer the plugin runs.
func (p *ScorePlugin) Scorer() score.Scorer { return p.x.(score.Scorer) }

// state is what PreScore or PreFilter leaves in the cycle state.
type state[T any] struct{ v T }

func (s state[T]) Clone() fwk.StateData { return s }

// write leaves v in cs, and remembers it (plugin.last) when cs is a
// pointer: the identity the cache compares (interfaces holding equal
// pointers are the same state; comparing a non-comparable value would
// panic, so a non-pointer is not remembered). O(1), at most two
// allocations (v boxed once, for cs and the cache, none when v is a
// pointer; the cache's record).
func write[T any](p *plugin, cs fwk.CycleState, v T) {
	var d fwk.StateData = state[T]{v}
	cs.Write(p.key, d)
	if t := reflect.TypeOf(cs); t != nil && t.Kind() == reflect.Pointer {
		p.last.Store(&written{cs: cs, d: d})
	} else {
		p.last.Store(nil)
	}
}

// stateOr returns what PreScore/PreFilter left in cs — from plugin.last
// when cs is the state it was written to (upstream makes a CycleState
// per cycle; preemption's and nominated pods' clones are other states,
// read from their maps), else from cs — or prepare's (slow path).
func stateOr[T any](p *plugin, cs fwk.CycleState, prepare func() (T, error)) (T, error) {
	if w := p.last.Load(); w != nil && w.cs == cs {
		if st, ok := w.d.(state[T]); ok {
			return st.v, nil
		}
	}
	d, err := cs.Read(p.key)
	if err != nil {
		return prepare()
	}
	st, ok := d.(state[T])
	if !ok {
		err = fmt.Errorf("kubescheduler: %s: unexpected state %T", p.name, d)
	}
	return st.v, err
}

// PreScore prepares the scorer for pod and scores every candidate.
func (p *ScorePlugin) PreScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	sc, err := p.prepare(ctx, cs, pod, nodes)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if sc == nil {
		return fwk.NewStatus(fwk.Skip)
	}
	write(&p.plugin, cs, sc)
	return nil
}

// prepare scores nodes for pod; nil when the scorer skips the pod. A
// long list is scored in pieces on the handle's Parallelizer, as
// upstream's Score phase runs its plugins across the scheduler's
// workers (a serial pass here would lengthen the cycle by what the
// workers save).
func (p *ScorePlugin) prepare(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*mirror.Scores[fwk.NodeInfo], error) {
	pi, err := p.pod(cs, pod, nodes)
	if err != nil {
		return nil, err
	}
	var par mirror.Parallel
	if p.handle != nil {
		if pz := p.handle.Parallelizer(); pz != nil {
			par = func(pieces int, work func(int)) { pz.Until(ctx, pieces, work, p.name) }
		}
	}
	sc, err := p.m.Score(p.Scorer(), pi, nodes, par)
	if errors.Is(err, mirror.ErrPiecesLeftOut) {
		if ctx.Err() != nil { // Until stops handing out pieces when ctx is done
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		err = fmt.Errorf("kubescheduler: %s: scoring %s/%s: %w", p.name, pod.Namespace, pod.Name, err)
	}
	return sc, err
}

func (p *ScorePlugin) state(ctx context.Context, cs fwk.CycleState, pod *v1.Pod) (*mirror.Scores[fwk.NodeInfo], error) {
	return stateOr(&p.plugin, cs, func() (*mirror.Scores[fwk.NodeInfo], error) { return p.prepare(ctx, cs, pod, nil) })
}

// Score returns the node's score; 0 for a skipped pod.
func (p *ScorePlugin) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	sc, err := p.state(ctx, cs, pod)
	if err != nil || sc == nil {
		return 0, fwk.AsStatus(err)
	}
	v, err := sc.Of(ni)
	return v, fwk.AsStatus(err)
}

// ScoreExtensions returns the plugin itself (see NormalizeScore).
func (p *ScorePlugin) ScoreExtensions() fwk.ScoreExtensions { return p }

// NormalizeScore applies the scorer's [score.Normalizer]; a no-op without.
func (p *ScorePlugin) NormalizeScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, list fwk.NodeScoreList) *fwk.Status {
	sc, err := p.state(ctx, cs, pod)
	if err == nil && sc != nil {
		err = sc.Normalize(len(list), func(i int) (string, *int64) { return list[i].Name, &list[i].Score })
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

// FilterPlugin runs a [framework.Filter] as a PreFilter + Filter plugin
// ([mirror.Mirror.Filter]): Reject is UnschedulableAndUnresolvable, no
// PodFilter Skip; reasons map to statuses with upstream's messages.
type FilterPlugin struct{ plugin }

// WrapFilter makes f a plugin called name, as [WrapScorer] (no ledger check).
func WrapFilter(name string, f framework.Filter, h fwk.Handle) *FilterPlugin {
	// A framework.Filter sees the pod in PreFilter and one node in its
	// PodFilter: it reads nothing else of the mirror. (mirror.Filter
	// calls PreFilter; a ClusterFilter, which would want the cluster,
	// syncs fully should that change.)
	_, cluster := f.(framework.ClusterFilter)
	return &FilterPlugin{plugin{name: name, key: fwk.StateKey("PreFilter" + name), handle: h, m: mirrorFor(h), x: f, lazy: !cluster}}
}

type filtering struct {
	f   *mirror.Filtering[fwk.NodeInfo]
	pre framework.PreFilterResult
}

// PreFilter prepares the filter for pod.
func (p *FilterPlugin) PreFilter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	st, err := p.prepare(cs, pod, nodes)
	if err != nil || st.pre.Reject != "" {
		return nil, rejected(st.pre, err)
	} else if st.pre.Filter == nil {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	if write(&p.plugin, cs, st); st.pre.NodeNames == nil {
		return nil, nil
	}
	return &fwk.PreFilterResult{NodeNames: sets.New(st.pre.NodeNames...)}, nil
}

func (p *FilterPlugin) prepare(cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (filtering, error) {
	pi, err := p.pod(cs, pod, nodes)
	if err != nil {
		return filtering{}, err
	}
	f, pre, err := p.m.Filter(p.x.(framework.Filter), pi, p.builtin)
	return filtering{f, pre}, err
}

func rejected(pre framework.PreFilterResult, err error) *fwk.Status {
	if err != nil {
		return fwk.AsStatus(err)
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, pre.Reject)
}

// PreFilterExtensions returns nil: altered NodeInfos are converted as they come.
func (p *FilterPlugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter checks one node.
func (p *FilterPlugin) Filter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	st, err := stateOr(&p.plugin, cs, func() (filtering, error) { return p.prepare(cs, pod, nil) })
	if err != nil || st.pre.Reject != "" {
		return rejected(st.pre, err)
	}
	reasons, err := st.f.Check(ni)
	if err != nil {
		return fwk.AsStatus(err)
	}
	return status(reasons)
}

// status: nil, or UnschedulableAndUnresolvable if a reason is, else Unschedulable.
func status(reasons []framework.Reason) *fwk.Status {
	if len(reasons) == 0 {
		return nil
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

// EventsToRegister: node added or changed, assigned pod deleted or scaled down.
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
	f, err := framework.NewNodeResourcesFit(args.IgnoredResources, args.IgnoredResourceGroups)
	if err != nil {
		return nil, argsError(FitName, err)
	}
	p := WrapFilter(FitName, f, h)
	p.builtin = true
	return p, nil
}

// PodSigner is a scorer or filter of yours that declares the pod fields it
// reads (one fragment per field, keyed uniquely), so upstream's batching
// may reuse its results for pods with equal fragments. Without one a
// wrapped plugin refuses to sign: no batching, slower, never wrong.
type PodSigner interface {
	SignPod(pod *v1.Pod) ([]fwk.SignFragment, error)
}

// SignPod signs all that schedkit's built-ins may read, the spec and labels
// (pods of one template share it: what batching is for), plus a wrapped
// [PodSigner]'s fragments; a wrapped plugin without one refuses.
func (p *plugin) SignPod(ctx context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	frags := []fwk.SignFragment{{Key: "schedkit.io/PodSpec", Value: &pod.Spec}, {Key: fwk.LabelsSignerName, Value: pod.Labels}}
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
