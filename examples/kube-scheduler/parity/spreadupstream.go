package parity

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// SpreadUpstream runs upstream's own PodTopologySpread plugin: an
// [Upstream] whose handle also has a SharedInformerFactory (the plugin
// needs one for its default constraints), whose Service,
// ReplicationController, ReplicaSet and StatefulSet stores [SpreadUpstream.LoadWorkloads]
// fills directly (the factory is never started and talks to no API
// server). Not safe for concurrent use.
type SpreadUpstream struct {
	*Upstream
	factory informers.SharedInformerFactory
}

// NewSpreadUpstream builds the handle, registering the scheduler's
// metrics (the plugin's parallelizer writes them).
func NewSpreadUpstream(ctx context.Context) (*SpreadUpstream, error) {
	metrics.Register() // the plugin's parallelizer reports goroutine gauges; once per process
	factory := informers.NewSharedInformerFactory(nil, 0)
	lister := &swapLister{Snapshot: schedcache.NewEmptySnapshot()}
	h, err := frameworkruntime.NewFramework(ctx, nil, nil,
		frameworkruntime.WithSnapshotSharedLister(lister),
		frameworkruntime.WithSharedDRAManager(noDRA{}),
		frameworkruntime.WithInformerFactory(factory))
	if err != nil {
		return nil, fmt.Errorf("parity: upstream framework: %w", err)
	}
	u := &Upstream{handle: h, lister: lister, registry: plugins.NewInTreeRegistry()}
	return &SpreadUpstream{Upstream: u, factory: factory}, nil
}

// SpreadPlugin builds upstream's PodTopologySpread with v1 args (scheme
// defaulting, then conversion, as a KubeSchedulerConfiguration's
// pluginConfig); nil args are the defaults (System defaulting).
func (u *SpreadUpstream) SpreadPlugin(ctx context.Context, args *configv1.PodTopologySpreadArgs) (fwk.Plugin, error) {
	if args == nil {
		args = &configv1.PodTopologySpreadArgs{}
	}
	scheme.Scheme.Default(args)
	in := &config.PodTopologySpreadArgs{}
	if err := scheme.Scheme.Convert(args, in, nil); err != nil {
		return nil, fmt.Errorf("parity: converting PodTopologySpreadArgs: %w", err)
	}
	return u.registry[names.PodTopologySpread](ctx, in, u.handle)
}

// LoadWorkloads replaces the informer stores' contents.
func (u *SpreadUpstream) LoadWorkloads(svcs []*v1.Service, rcs []*v1.ReplicationController, rss []*appsv1.ReplicaSet, sss []*appsv1.StatefulSet) error {
	replace := func(inf cache.SharedIndexInformer, objs []any) error {
		return inf.GetIndexer().Replace(objs, "")
	}
	if err := replace(u.factory.Core().V1().Services().Informer(), anys(svcs)); err != nil {
		return err
	}
	if err := replace(u.factory.Core().V1().ReplicationControllers().Informer(), anys(rcs)); err != nil {
		return err
	}
	if err := replace(u.factory.Apps().V1().ReplicaSets().Informer(), anys(rss)); err != nil {
		return err
	}
	return replace(u.factory.Apps().V1().StatefulSets().Informer(), anys(sss))
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// ScoreOn runs a score plugin as the framework does when only the
// candidates (indexes into the loaded nodes, upstream's filtered nodes)
// passed filtering: PreScore with them (Skip: no score), Score on each,
// NormalizeScore over them. Raw and Normalized are per candidate.
func (u *SpreadUpstream) ScoreOn(ctx context.Context, pl fwk.Plugin, pod *v1.Pod, candidates []int) (Scores, error) {
	all, err := u.nodeInfos()
	if err != nil {
		return Scores{}, err
	}
	infos := make([]fwk.NodeInfo, len(candidates))
	for i, c := range candidates {
		infos[i] = all[c]
	}
	return scoreInfos(ctx, pl, pod, infos)
}
