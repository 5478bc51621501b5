package kubescheduler

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/mirror"
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

// ScorePlugin runs a [score.Scorer] as an upstream score plugin, through
// [mirror.Mirror.Score]: PreScore scores every candidate in one pass (Skip
// when the scorer skips the pod), Score returns a node's score (a look-up,
// no allocation), NormalizeScore applies the scorer's [score.Normalizer].
// Without PreScore in the profile each Score call prepares anew (slow).
// With a ledger in the profile, nodes are scored as the ledger sees them.
// Safe for the framework's concurrent Score calls.
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

type scoreState struct{ *mirror.Scores[fwk.NodeInfo] } // nil: the pod is skipped

func (s scoreState) Clone() fwk.StateData { return s }

// PreScore prepares the scorer for pod and scores every candidate.
func (p *ScorePlugin) PreScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	st, err := p.prepare(cs, pod, nodes)
	if err != nil || st.Scores == nil {
		return orSkip(err)
	}
	cs.Write(p.key, st)
	return nil
}

// orSkip is err as a status, or Skip without an error.
func orSkip(err error) *fwk.Status {
	if err != nil {
		return fwk.AsStatus(err)
	}
	return fwk.NewStatus(fwk.Skip)
}

func (p *ScorePlugin) prepare(cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (scoreState, error) {
	if err := p.p.sync(p.handle, cs, nodes); err != nil {
		return scoreState{}, err
	}
	pi, err := snapshot.NewPodInfo(pod)
	if err != nil {
		return scoreState{}, err
	}
	sc, err := p.p.m.Score(p.scorer, pi, nodes)
	return scoreState{sc}, err
}

// state returns PreScore's state, or prepares it (PreScore not enabled).
func (p *ScorePlugin) state(cs fwk.CycleState, pod *v1.Pod) (scoreState, error) {
	d, err := cs.Read(p.key)
	if err != nil {
		return p.prepare(cs, pod, nil)
	}
	st, ok := d.(scoreState)
	if !ok {
		return st, fmt.Errorf("kubescheduler: %s: unexpected state %T", p.name, d)
	}
	return st, nil
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
func (p *ScorePlugin) NormalizeScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	st, err := p.state(cs, pod)
	if err != nil || st.Scores == nil {
		return fwk.AsStatus(err)
	}
	names, vals := make([]string, len(scores)), make([]int64, len(scores))
	for i, s := range scores {
		names[i], vals[i] = s.Name, s.Score
	}
	if err := st.Normalize(names, vals); err != nil {
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
// [SchedkitScoreFactory]'s): a built-in scorer and its settings, as
// [score.Config] (Scorer is one of [score.ScorerNames], "" LeastAllocated).
//
//	args: {scorer: DominantResource, resources: [{name: cpu}, {name: nvidia.com/gpu, weight: 4}]}
type ScoreArgs struct {
	metav1.TypeMeta `json:",inline"`
	Scorer          string                  `json:"scorer,omitempty"`
	Resources       []ResourceSpec          `json:"resources,omitempty"`
	Shape           []UtilizationShapePoint `json:"shape,omitempty"`
	Spread          bool                    `json:"spread,omitempty"`
}

// DeepCopyObject implements runtime.Object, so Go callers can pass args.
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

// SchedkitScoreFactory returns the factory of a score plugin called name
// running the built-in scorer its [ScoreArgs] name, to register several:
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
