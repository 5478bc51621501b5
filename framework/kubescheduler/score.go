package kubescheduler

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// ScoreName is the name of the score plugin [NewSchedkitScore] builds.
const ScoreName = "SchedkitScore"

var (
	_ fwk.ScorePlugin     = (*ScorePlugin)(nil)
	_ fwk.PreScorePlugin  = (*ScorePlugin)(nil)
	_ fwk.ScoreExtensions = (*ScorePlugin)(nil)
	_ fwk.SignPlugin      = (*ScorePlugin)(nil)
)

// ScorePlugin runs a schedkit [score.Scorer] as an upstream score plugin:
// the built-in ones configured by [ScoreArgs] ([NewSchedkitScore],
// [SchedkitScoreFactory]) or your own ([WrapScorer]).
//
// PreScore mirrors the cycle's nodes (see the package doc), prepares the
// scorer for the pod once and scores every candidate node in one call of the
// PodScorer, the data-oriented path; Score then returns the node's score by
// index. A scorer that skips the pod (Prepare returns nil) makes PreScore
// return Skip, as upstream's plugins do. If the PodScorer is a
// [score.Normalizer], NormalizeScore applies it to the list the framework
// collected. SignPod signs every pod field the built-in scorers read, so
// upstream's opportunistic batching stays on; for your own scorer see
// [PodSigner].
//
// With a reservation ledger in the profile ([NewSchedkitReserve],
// [WrapLedger]) nodes are scored as the ledger sees them
// ([reserve.Ledger.Snapshot]: bound pods, holds, and named reservations
// as placeholder pods), so capacity set aside through the ledger counts as
// requested; this costs a node-name look-up per candidate.
//
// Cost: Score is a map look-up, an index and no allocation (measured by
// TestScoreAllocatesNothing); PreScore is O(nodes) look-ups plus the
// scorer's own O(candidates) pass. Safe for concurrent Score calls, as the
// framework makes them.
type ScorePlugin struct {
	name    string
	key     fwk.StateKey
	scorer  score.Scorer
	handle  fwk.Handle
	mirror  *mirror
	builtin bool // a schedkit scorer: signPod covers what it reads
}

// WrapScorer makes your own schedkit scorer (any [score.Scorer]) an
// upstream score plugin called name, for the scheduler behind h; call it
// from your plugin's factory:
//
//	app.WithPlugin("PreferLabel", func(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
//		return kubescheduler.WrapScorer("PreferLabel", &PreferLabel{Key: "example.com/fast"}, h), nil
//	})
//
// and enable it in the profile under multiPoint (or both preScore and
// score: without preScore every Score call prepares the scorer anew).
// Several schedkit plugins on one handle share one mirror of the nodes.
//
// Upstream's opportunistic batching reuses scores for pods with the same
// signature: the plugin signs a pod only if scorer implements [PodSigner]
// (declaring the pod fields it reads), and otherwise turns batching off
// for the profile's pods, which is always correct.
func WrapScorer(name string, scorer score.Scorer, h fwk.Handle) *ScorePlugin {
	return &ScorePlugin{name: name, key: fwk.StateKey("PreScore" + name), scorer: scorer, handle: h, mirror: mirrorFor(h)}
}

// NewScorePlugin is [WrapScorer].
//
// Deprecated: use WrapScorer, named for what it does.
func NewScorePlugin(name string, scorer score.Scorer, h fwk.Handle) *ScorePlugin {
	return WrapScorer(name, scorer, h)
}

// Name returns the plugin name.
func (p *ScorePlugin) Name() string { return p.name }

// Scorer returns the schedkit scorer the plugin runs.
func (p *ScorePlugin) Scorer() score.Scorer { return p.scorer }

type scoreState struct {
	snap *snapshot.Snapshot // what the scorer reads: the mirror's, or the ledger's
	ps   score.PodScorer
	// pos[slot] is the position in raw of the mirrored node with that
	// slot, or -1.
	pos []int32
	// mirrored[i] is the mirror's node of candidate i, nodes[i] the node
	// scored (the ledger's, when there is a ledger).
	mirrored []*snapshot.NodeInfo
	nodes    []*snapshot.NodeInfo
	raw      []int64
	// viaLedger: snap is the ledger's
	viaLedger bool
}

func (s *scoreState) Clone() fwk.StateData { return s }

// allNodes is the scheduler's whole snapshot (ImageLocality and friends
// count every node, not only the candidates).
func allNodes(h fwk.Handle, fallback []fwk.NodeInfo) ([]fwk.NodeInfo, error) {
	if h == nil || h.SnapshotSharedLister() == nil {
		return fallback, nil
	}
	return h.SnapshotSharedLister().NodeInfos().List()
}

// PreScore prepares the scorer for pod and scores every candidate.
func (p *ScorePlugin) PreScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	st, err := p.prepare(cs, pod, nodes)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if st.ps == nil {
		return fwk.NewStatus(fwk.Skip)
	}
	cs.Write(p.key, st)
	return nil
}

// prepare mirrors the cluster, prepares the scorer for pod and scores the
// candidates (none when nodes is nil). st.ps is nil when the scorer skips
// the pod.
func (p *ScorePlugin) prepare(cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*scoreState, error) {
	all, err := allNodes(p.handle, nodes)
	if err != nil {
		return nil, err
	}
	snap, err := p.mirror.forCycle(cs, all)
	if err != nil {
		return nil, err
	}
	pi, err := snapshot.NewPodInfo(pod)
	if err != nil {
		return nil, err
	}
	l := p.mirror.ledger.Load()
	if l != nil {
		snap = l.Snapshot()
	}
	ps, err := p.scorer.Prepare(pi, snap)
	if err != nil || ps == nil {
		return &scoreState{snap: snap}, err
	}
	st := &scoreState{snap: snap, ps: ps, viaLedger: l != nil, pos: make([]int32, p.mirror.slots()),
		mirrored: make([]*snapshot.NodeInfo, len(nodes)), nodes: make([]*snapshot.NodeInfo, len(nodes)), raw: make([]int64, len(nodes))}
	for i := range st.pos {
		st.pos[i] = -1
	}
	for i, ni := range nodes {
		if e := p.mirror.lookup(ni); e != nil {
			st.mirrored[i] = e.ours
			if int(e.slot) < len(st.pos) {
				st.pos[e.slot] = int32(i)
			}
		} else {
			ours, err := p.mirror.nodeFor(ni)
			if err != nil {
				return nil, err
			}
			st.mirrored[i] = ours
		}
		st.nodes[i] = st.scored(st.mirrored[i])
	}
	ps.Score(st.nodes, st.raw)
	return st, nil
}

// scored is the node to score for the mirror's node ours: the ledger's
// node of that name when the state reads the ledger, else ours.
func (s *scoreState) scored(ours *snapshot.NodeInfo) *snapshot.NodeInfo {
	if !s.viaLedger {
		return ours
	}
	if n := s.snap.Get(ours.Name()); n != nil {
		return n
	}
	return ours // a node the ledger has not seen yet
}

func (p *ScorePlugin) state(cs fwk.CycleState) (*scoreState, error) {
	d, err := cs.Read(p.key)
	if err != nil {
		return nil, fmt.Errorf("kubescheduler: %s: PreScore did not run: %w", p.name, err)
	}
	st, ok := d.(*scoreState)
	if !ok {
		return nil, fmt.Errorf("kubescheduler: %s: unexpected state %T", p.name, d)
	}
	return st, nil
}

// Score returns the score PreScore computed for the node. For a node
// PreScore did not see it scores that node alone; if PreScore is not
// enabled in the profile (a plugin listed under score but not preScore or
// multiPoint) it prepares the scorer on every call, as upstream's plugins
// fall back — correct, but allocating and slow.
func (p *ScorePlugin) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	st, err := p.state(cs)
	if err != nil {
		if st, err = p.prepare(cs, pod, nil); err != nil {
			return 0, fwk.AsStatus(err)
		}
		if st.ps == nil {
			return 0, nil // skipped pod: the scorer gives nothing
		}
	}
	if e := p.mirror.lookup(ni); e != nil && int(e.slot) < len(st.pos) {
		if i := st.pos[e.slot]; i >= 0 && st.mirrored[i] == e.ours {
			return st.raw[i], nil
		}
	}
	ours, err := p.mirror.nodeFor(ni)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	out := []int64{0}
	st.ps.Score([]*snapshot.NodeInfo{st.scored(ours)}, out)
	return out[0], nil
}

// ScoreExtensions returns the plugin itself: NormalizeScore applies the
// PodScorer's Normalizer when it has one and is a no-op otherwise.
func (p *ScorePlugin) ScoreExtensions() fwk.ScoreExtensions { return p }

// NormalizeScore rewrites scores with the PodScorer's [score.Normalizer].
func (p *ScorePlugin) NormalizeScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	st, err := p.state(cs)
	if err != nil {
		if st, err = p.prepare(cs, pod, nil); err != nil {
			return fwk.AsStatus(err)
		}
	}
	n, ok := st.ps.(score.Normalizer)
	if !ok {
		return nil
	}
	nodes := make([]*snapshot.NodeInfo, len(scores))
	vals := make([]int64, len(scores))
	for i, s := range scores {
		nodes[i] = st.snap.Get(s.Name)
		vals[i] = s.Score
	}
	if err := n.Normalize(nodes, vals); err != nil {
		return fwk.AsStatus(err)
	}
	for i := range scores {
		scores[i].Score = vals[i]
	}
	return nil
}

// SignPod signs the pod fields schedkit's built-in scorers and filters
// read, plus, for a scorer of your own, the fields its [PodSigner]
// declares; such a scorer without a PodSigner refuses to sign
// (Unschedulable: the pod is not batched).
func (p *ScorePlugin) SignPod(ctx context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return signAs(p.mirror, p.name, p.builtin, p.scorer, pod)
}

// ScoreArgs are the pluginConfig args of the plugin [NewSchedkitScore]
// builds (and of those [SchedkitScoreFactory] builds).
//
//	pluginConfig:
//	- name: SchedkitScore
//	  args:
//	    scorer: DominantResource
//	    resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: nvidia.com/gpu, weight: 4}]
type ScoreArgs struct {
	metav1.TypeMeta `json:",inline"`
	// Scorer is one of LeastAllocated (default), MostAllocated,
	// RequestedToCapacityRatio, BalancedAllocation, ImageLocality,
	// TaintToleration, NodeAffinity, BinPack, DominantResource, DotProduct.
	Scorer string `json:"scorer,omitempty"`
	// Resources and weights for the resource scorers (empty: cpu and
	// memory, weight 1). BalancedAllocation takes weight 1 only.
	Resources []ResourceSpec `json:"resources,omitempty"`
	// Shape of RequestedToCapacityRatio.
	Shape []UtilizationShapePoint `json:"shape,omitempty"`
	// Spread selects DotProduct's spreading direction.
	Spread bool `json:"spread,omitempty"`
}

// DeepCopyObject implements runtime.Object, so Go callers can pass args
// to the factory directly.
func (a *ScoreArgs) DeepCopyObject() runtime.Object {
	c := *a
	c.Resources = append([]ResourceSpec(nil), a.Resources...)
	c.Shape = append([]UtilizationShapePoint(nil), a.Shape...)
	return &c
}

// ResourceSpec is a resource name and weight, as in upstream's
// NodeResourcesFitArgs.
type ResourceSpec struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight,omitempty"`
}

// UtilizationShapePoint is a point of a RequestedToCapacityRatio shape.
type UtilizationShapePoint struct {
	Utilization int32 `json:"utilization"`
	Score       int32 `json:"score"`
}

// ScorerFor builds the schedkit scorer args describe, for plugin (named in errors). Errors wrap
// ErrInvalidArgs and name the field.
func (a *ScoreArgs) ScorerFor(plugin string) (score.Scorer, error) {
	var specs []score.ResourceSpec
	for _, r := range a.Resources {
		specs = append(specs, score.ResourceSpec{Name: v1.ResourceName(r.Name), Weight: r.Weight})
	}
	var (
		s   score.Scorer
		err error
	)
	switch a.Scorer {
	case "", "LeastAllocated":
		s, err = score.NewLeastAllocated(specs...)
	case "MostAllocated":
		s, err = score.NewMostAllocated(specs...)
	case "RequestedToCapacityRatio":
		var shape []score.UtilizationShapePoint
		for _, pt := range a.Shape {
			shape = append(shape, score.UtilizationShapePoint{Utilization: pt.Utilization, Score: pt.Score})
		}
		s, err = score.NewRequestedToCapacityRatio(score.RequestedToCapacityRatioArgs{Resources: specs, Shape: shape})
	case "BalancedAllocation":
		var names []v1.ResourceName
		for i, r := range a.Resources {
			if r.Weight != 0 && r.Weight != 1 {
				return nil, argsError(plugin, fmt.Errorf("resources[%d].weight: %d, BalancedAllocation takes weight 1 only", i, r.Weight))
			}
			names = append(names, v1.ResourceName(r.Name))
		}
		s, err = score.NewBalancedAllocation(names...)
	case "ImageLocality":
		s = score.NewImageLocality()
	case "TaintToleration":
		s = score.NewTaintToleration()
	case "NodeAffinity":
		s, err = score.NewNodeAffinity(nil)
	case "BinPack":
		s, err = score.NewBinPack(specs...)
	case "DominantResource":
		s, err = score.NewDominantResource(specs...)
	case "DotProduct":
		var d *score.Tetris
		if d, err = score.NewTetris(specs...); err == nil {
			d.Spread = a.Spread
			s = d
		}
	default:
		return nil, argsError(plugin, fmt.Errorf("scorer: unknown scorer %q (want LeastAllocated, MostAllocated, RequestedToCapacityRatio, BalancedAllocation, ImageLocality, TaintToleration, NodeAffinity, BinPack, DominantResource or DotProduct)", a.Scorer))
	}
	if err != nil {
		return nil, argsError(plugin, err)
	}
	if a.Shape != nil && a.Scorer != "RequestedToCapacityRatio" {
		return nil, argsError(plugin, fmt.Errorf("shape: only for scorer RequestedToCapacityRatio"))
	}
	return s, nil
}

// SchedkitScoreFactory returns a plugin factory, with upstream's
// PluginFactory signature, for a score plugin called name that runs a
// built-in schedkit scorer configured by [ScoreArgs]; use it to register
// several differently configured schedkit scorers in one scheduler
// (app.WithPlugin("BinPackGPU", kubescheduler.SchedkitScoreFactory("BinPackGPU"))).
// For a scorer of your own use [WrapScorer].
func SchedkitScoreFactory(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
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

// NewSchedkitScore is the factory of the [ScoreName] plugin (a built-in
// schedkit scorer configured by [ScoreArgs]), with upstream's
// PluginFactory signature:
// app.WithPlugin(kubescheduler.ScoreName, kubescheduler.NewSchedkitScore).
func NewSchedkitScore(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return SchedkitScoreFactory(ScoreName)(ctx, obj, h)
}

// ScoreFactory is [SchedkitScoreFactory].
//
// Deprecated: use SchedkitScoreFactory, named for what it builds.
func ScoreFactory(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return SchedkitScoreFactory(name)
}

// New is [NewSchedkitScore].
//
// Deprecated: use NewSchedkitScore, named for what it builds.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return NewSchedkitScore(ctx, obj, h)
}
