package kubescheduler

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
)

// Deprecated: use WrapScorer, named for what it does.
func NewScorePlugin(name string, s score.Scorer, h fwk.Handle) *ScorePlugin {
	return WrapScorer(name, s, h)
}

// Deprecated: use WrapFilter, named for what it does.
func NewFilterPlugin(name string, f framework.Filter, h fwk.Handle) *FilterPlugin {
	return WrapFilter(name, f, h)
}

// Deprecated: use WrapLedger, named for what it does.
func NewReservePlugin(name string, l *reserve.Ledger, h fwk.Handle) (*ReservePlugin, error) {
	return WrapLedger(name, l, h)
}

// Deprecated: use SchedkitScoreFactory, named for what it builds.
func ScoreFactory(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return SchedkitScoreFactory(name)
}

// Deprecated: use NewSchedkitScore, named for what it builds.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return NewSchedkitScore(ctx, obj, h)
}

// Deprecated: use NewSchedkitFit, named for what it builds.
func NewFit(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return NewSchedkitFit(ctx, obj, h)
}

// Deprecated: use NewSchedkitReserve, named for what it builds.
func NewReserve(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return NewSchedkitReserve(ctx, obj, h)
}
