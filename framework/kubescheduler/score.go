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

// ScorePlugin runs a [score.Scorer] as an upstream score plugin. PreScore
// prepares the scorer for the pod once and scores every candidate in one
// PodScorer call; Score returns the node's value (a look-up and an index,
// no allocation), or scores a node PreScore did not see on its own;
// without PreScore in the profile every Score prepares anew (slow). A
// scorer that skips the pod makes PreScore return Skip. NormalizeScore
// applies the PodScorer's [score.Normalizer], if any. With a ledger in the
// profile ([NewSchedkitReserve], [WrapLedger]) nodes are scored as
// [reserve.Ledger.Snapshot] sees them (holds, named reservations). Safe for
// the framework's concurrent Score calls.
type ScorePlugin struct {
	name    string
	key     fwk.StateKey
	scorer  score.Scorer
	handle  fwk.Handle
	p       *profile
	builtin bool // a schedkit scorer: signPod covers what it reads
}

// WrapScorer makes scorer an upstream score plugin called name, for the
// scheduler behind h; call it from your plugin's factory and enable the
// plugin under multiPoint (or preScore and score). It takes part in
// upstream's batching only if scorer is a [PodSigner].
func WrapScorer(name string, scorer score.Scorer, h fwk.Handle) *ScorePlugin {
	return &ScorePlugin{name: name, key: fwk.StateKey("PreScore" + name), scorer: scorer, handle: h, p: profileFor(h)}
}

// Name returns the plugin name.
func (p *ScorePlugin) Name() string { return p.name }

// Scorer returns the schedkit scorer the plugin runs.
func (p *ScorePlugin) Scorer() score.Scorer { return p.scorer }

type scoreState struct {
	snap   *snapshot.Snapshot // what the scorer reads: the mirror's or the ledger's
	ledger bool               // snap is the ledger's
	ps     score.PodScorer
	at     []*snapshot.NodeInfo // at[slot]: the mirrored node PreScore scored, raw[slot] its score
	raw    []int64
}

func (s *scoreState) Clone() fwk.StateData { return s }

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

// prepare syncs the mirror, prepares the scorer for pod (st.ps nil: the
// scorer skips the pod) and scores nodes in one PodScorer call.
func (p *ScorePlugin) prepare(cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*scoreState, error) {
	snap, l, err := p.p.nodes(p.handle, cs, nodes)
	if err != nil {
		return nil, err
	}
	pi, err := snapshot.NewPodInfo(pod)
	if err != nil {
		return nil, err
	}
	if l != nil {
		snap = l.Snapshot()
	}
	ps, err := p.scorer.Prepare(pi, snap)
	st := &scoreState{snap: snap, ledger: l != nil, ps: ps}
	if err != nil || ps == nil {
		return st, err
	}
	st.at, st.raw = make([]*snapshot.NodeInfo, p.p.mirror.Slots()), make([]int64, p.p.mirror.Slots())
	scored, slots, raw := make([]*snapshot.NodeInfo, len(nodes)), make([]int, len(nodes)), make([]int64, len(nodes))
	for i, ni := range nodes {
		ours, slot := p.p.mirror.Lookup(ni)
		if ours == nil {
			if ours, err = p.p.mirror.Convert(ni); err != nil {
				return nil, err
			}
		} else if slot < len(st.at) {
			st.at[slot] = ours
		}
		scored[i], slots[i] = st.scored(ours), slot
	}
	ps.Score(scored, raw)
	for i, slot := range slots {
		if slot >= 0 && slot < len(st.raw) {
			st.raw[slot] = raw[i]
		}
	}
	return st, nil
}

// scored is the node to score for the mirror's node ours: the ledger's
// node of that name when the state reads a ledger that has it, else ours.
func (s *scoreState) scored(ours *snapshot.NodeInfo) *snapshot.NodeInfo {
	if !s.ledger {
		return ours
	}
	if n := s.snap.Get(ours.Name()); n != nil {
		return n
	}
	return ours
}

// state returns PreScore's state, or prepares it here (PreScore not
// enabled in the profile: slow).
func (p *ScorePlugin) state(cs fwk.CycleState, pod *v1.Pod) (*scoreState, error) {
	d, err := cs.Read(p.key)
	if err != nil {
		return p.prepare(cs, pod, nil)
	}
	if st, ok := d.(*scoreState); ok {
		return st, nil
	}
	return nil, fmt.Errorf("kubescheduler: %s: unexpected state %T", p.name, d)
}

// Score returns the score PreScore computed for the node, or scores a node
// PreScore did not see on its own.
func (p *ScorePlugin) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	st, err := p.state(cs, pod)
	if err != nil || st.ps == nil {
		return 0, fwk.AsStatus(err) // a skipped pod scores nothing
	}
	ours, slot := p.p.mirror.Lookup(ni)
	if ours != nil && slot < len(st.at) && st.at[slot] == ours {
		return st.raw[slot], nil
	}
	if ours, err = p.p.mirror.Convert(ni); err != nil {
		return 0, fwk.AsStatus(err)
	}
	out := []int64{0}
	st.ps.Score([]*snapshot.NodeInfo{st.scored(ours)}, out)
	return out[0], nil
}

// ScoreExtensions returns the plugin itself (see NormalizeScore).
func (p *ScorePlugin) ScoreExtensions() fwk.ScoreExtensions { return p }

// NormalizeScore rewrites scores with the PodScorer's [score.Normalizer];
// a no-op without one.
func (p *ScorePlugin) NormalizeScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	st, err := p.state(cs, pod)
	if err != nil {
		return fwk.AsStatus(err)
	}
	n, ok := st.ps.(score.Normalizer)
	if !ok {
		return nil
	}
	nodes, vals := make([]*snapshot.NodeInfo, len(scores)), make([]int64, len(scores))
	for i, s := range scores {
		nodes[i], vals[i] = st.snap.Get(s.Name), s.Score
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
// read, plus those a scorer of your own declares ([PodSigner]); such a
// scorer without a PodSigner refuses (Unschedulable: no batching).
func (p *ScorePlugin) SignPod(ctx context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return p.p.signAs(p.name, p.builtin, p.scorer, pod)
}

// ScoreArgs are the pluginConfig args of [NewSchedkitScore]'s plugin (and
// of [SchedkitScoreFactory]'s): a built-in scorer by name and its settings,
// as [score.Config].
//
//	args: {scorer: DominantResource, resources: [{name: cpu}, {name: nvidia.com/gpu, weight: 4}]}
type ScoreArgs struct {
	metav1.TypeMeta `json:",inline"`
	// Scorer is one of [score.ScorerNames]; "" is LeastAllocated.
	Scorer string `json:"scorer,omitempty"`
	// Resources and weights (empty: cpu and memory, weight 1).
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

// ResourceSpec is a resource name and weight ([score.ResourceSpec]).
type ResourceSpec struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight,omitempty"`
}

// UtilizationShapePoint is a point of a RequestedToCapacityRatio shape.
type UtilizationShapePoint struct {
	Utilization int32 `json:"utilization"`
	Score       int32 `json:"score"`
}

// ScorerFor builds the scorer args describe ([score.Config.Build]); errors
// wrap [ErrInvalidArgs] and name plugin and the field.
func (a *ScoreArgs) ScorerFor(plugin string) (score.Scorer, error) {
	c := score.Config{Scorer: a.Scorer, Spread: a.Spread}
	for _, r := range a.Resources {
		c.Resources = append(c.Resources, score.ResourceSpec{Name: v1.ResourceName(r.Name), Weight: r.Weight})
	}
	for _, pt := range a.Shape {
		c.Shape = append(c.Shape, score.UtilizationShapePoint{Utilization: pt.Utilization, Score: pt.Score})
	}
	s, err := c.Build()
	if err != nil {
		return nil, argsError(plugin, err)
	}
	return s, nil
}

// SchedkitScoreFactory returns a factory (upstream's PluginFactory
// signature) of a score plugin called name running the built-in scorer
// its [ScoreArgs] name, to register several in one scheduler:
// app.WithPlugin("BinPackGPU", kubescheduler.SchedkitScoreFactory("BinPackGPU")).
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

// NewSchedkitScore is the factory of the [ScoreName] plugin:
// app.WithPlugin(kubescheduler.ScoreName, kubescheduler.NewSchedkitScore).
func NewSchedkitScore(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return SchedkitScoreFactory(ScoreName)(ctx, obj, h)
}
