package parity

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// PlacementUpstream is kube-scheduler v1.37.2's own scheduler, built by
// scheduler.New exactly as the binary builds it with no --config (the
// default profile, every in-tree plugin with the default feature gates,
// the real scheduler cache and informer-backed listers), with
// percentageOfNodesToScore 100, driven one scheduling cycle at a time
// instead of by its queue and informers: the caller feeds the cache
// (AddNode, Place) and the informer stores (AddObject) as the informers
// would, and Cycle runs upstream's scheduling algorithm for one pod.
//
// The informer factory is never started (the fake clientset holds no
// objects): its stores are filled directly, so the plugins' listers
// (PodTopologySpread's Services and controllers, InterPodAffinity's
// Namespaces) see exactly the objects given. Not safe for concurrent use.
type PlacementUpstream struct {
	sched   *scheduler.Scheduler
	fw      framework.Framework
	snap    *schedcache.Snapshot
	factory informers.SharedInformerFactory
	logger  klog.Logger
	cancel  context.CancelFunc
}

// NewPlacementUpstream builds the scheduler. Close stops its goroutines.
func NewPlacementUpstream(ctx context.Context) (*PlacementUpstream, error) {
	ctx, cancel := context.WithCancel(ctx)
	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	recorder := func(string) events.EventRecorderLogger { return &events.FakeRecorder{} }
	sched, err := scheduler.New(ctx, client, factory, nil, profile.RecorderFactory(recorder),
		scheduler.WithPercentageOfNodesToScore(ptrTo(int32(100))))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("parity: upstream scheduler: %w", err)
	}
	fw, ok := sched.Profiles["default-scheduler"]
	if !ok {
		cancel()
		return nil, fmt.Errorf("parity: upstream scheduler has no default-scheduler profile")
	}
	snap, ok := fw.SnapshotSharedLister().(*schedcache.Snapshot)
	if !ok {
		cancel()
		return nil, fmt.Errorf("parity: upstream snapshot lister is a %T", fw.SnapshotSharedLister())
	}
	return &PlacementUpstream{sched: sched, fw: fw, snap: snap, factory: factory, logger: klog.FromContext(ctx), cancel: cancel}, nil
}

// Close stops the scheduler's background goroutines (cache metrics, the
// DRA slice tracker).
func (u *PlacementUpstream) Close() { u.cancel() }

// AddNode adds node to the scheduler cache, as the node informer's add
// handler does.
func (u *PlacementUpstream) AddNode(node *v1.Node) { u.sched.Cache.AddNode(u.logger, node) }

// RemoveNode deletes node from the scheduler cache, as the node
// informer's delete handler does; its pods stay in the cache until
// deleted, outside every snapshot.
func (u *PlacementUpstream) RemoveNode(node *v1.Node) error {
	return u.sched.Cache.RemoveNode(u.logger, node)
}

// Place adds pod bound to node to the scheduler cache (the informer's
// report of a bound pod).
func (u *PlacementUpstream) Place(pod *v1.Pod, node string) error {
	p := pod.DeepCopy()
	p.Spec.NodeName = node
	return u.sched.Cache.AddPod(u.logger, p)
}

// Remove deletes pod, bound to node, from the scheduler cache (the
// informer's delete).
func (u *PlacementUpstream) Remove(pod *v1.Pod, node string) error {
	p := pod.DeepCopy()
	p.Spec.NodeName = node
	return u.sched.Cache.RemovePod(u.logger, p)
}

// AddObject puts a Namespace, Service, ReplicationController, ReplicaSet
// or StatefulSet into its informer store; other kinds are an error.
func (u *PlacementUpstream) AddObject(obj runtime.Object) error {
	var inf toolscache.SharedIndexInformer
	switch obj.(type) {
	case *v1.Namespace:
		inf = u.factory.Core().V1().Namespaces().Informer()
	case *v1.Service:
		inf = u.factory.Core().V1().Services().Informer()
	case *v1.ReplicationController:
		inf = u.factory.Core().V1().ReplicationControllers().Informer()
	case *appsv1.ReplicaSet:
		inf = u.factory.Apps().V1().ReplicaSets().Informer()
	case *appsv1.StatefulSet:
		inf = u.factory.Apps().V1().StatefulSets().Informer()
	default:
		return fmt.Errorf("parity: no informer store for %T", obj)
	}
	return inf.GetIndexer().Add(obj)
}

// UpstreamCycle is upstream's scheduling algorithm for one pod, with every
// node filtered and every feasible node scored.
type UpstreamCycle struct {
	// Feasible are the nodes that passed the filters, sorted.
	Feasible []string
	// Totals and Plugins give each feasible node's weighted total and
	// weighted per-plugin scores (RunScorePlugins' NodePluginScores);
	// nil when fewer than two nodes are feasible (upstream does not
	// score then).
	Totals  map[string]int64
	Plugins map[string][]fwk.PluginScore
	// Best are the feasible nodes with the highest total, sorted: the
	// nodes upstream's selection may return. With one feasible node, it.
	Best []string
	// Chosen is upstream's own choice (Scheduler.SchedulePod, the
	// function its scheduling cycle calls); "" when no node fits.
	Chosen string
	// Rejection says why no node fits (the FitError), "" when some does.
	Rejection string
}

// Cycle takes the cache's current state into the scheduler's snapshot (as
// a scheduling cycle starts) and computes the cycle for pod:
// RunPreFilterPlugins, RunFilterPluginsWithNominatedPods on every node
// the PreFilter result allows, RunPreScorePlugins and RunScorePlugins on
// every feasible node; then it runs the scheduler's own SchedulePod on the
// same snapshot for upstream's choice. It changes no state.
func (u *PlacementUpstream) Cycle(ctx context.Context, pod *v1.Pod) (UpstreamCycle, error) {
	var c UpstreamCycle
	if err := u.sched.Cache.UpdateSnapshot(u.logger, u.snap); err != nil {
		return c, err
	}
	state := framework.NewCycleState()
	pre, st, _ := u.fw.RunPreFilterPlugins(ctx, state, pod)
	if !st.IsSuccess() && !st.IsRejected() {
		return c, fmt.Errorf("parity: upstream PreFilter of pod %s/%s: %w", pod.Namespace, pod.Name, st.AsError())
	}
	var feasible []fwk.NodeInfo
	if st.IsSuccess() {
		all, err := u.snap.NodeInfos().List()
		if err != nil {
			return c, err
		}
		for _, ni := range all {
			name := ni.Node().Name
			if !pre.AllNodes() && !pre.NodeNames.Has(name) {
				continue
			}
			fs := u.fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if fs.Code() == fwk.Error {
				return c, fmt.Errorf("parity: upstream Filter of pod %s/%s on %s: %w", pod.Namespace, pod.Name, name, fs.AsError())
			}
			if fs.IsSuccess() {
				feasible = append(feasible, ni)
				c.Feasible = append(c.Feasible, name)
			}
		}
	}
	slices.Sort(c.Feasible)
	switch len(feasible) {
	case 0:
	case 1:
		c.Best = []string{c.Feasible[0]}
	default:
		if ps := u.fw.RunPreScorePlugins(ctx, state, pod, feasible); !ps.IsSuccess() {
			return c, fmt.Errorf("parity: upstream PreScore of pod %s/%s: %w", pod.Namespace, pod.Name, ps.AsError())
		}
		scores, ss := u.fw.RunScorePlugins(ctx, state, pod, feasible)
		if !ss.IsSuccess() {
			return c, fmt.Errorf("parity: upstream Score of pod %s/%s: %w", pod.Namespace, pod.Name, ss.AsError())
		}
		c.Totals = make(map[string]int64, len(scores))
		c.Plugins = make(map[string][]fwk.PluginScore, len(scores))
		for _, s := range scores {
			c.Totals[s.Name] = s.TotalScore
			c.Plugins[s.Name] = s.Scores
		}
		c.Best = argmax(c.Totals)
	}

	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		return c, err
	}
	res, err := u.sched.SchedulePod(ctx, u.fw, framework.NewCycleState(), &framework.QueuedPodInfo{PodInfo: pi})
	switch {
	case err == nil:
		c.Chosen = res.SuggestedHost
	case isFitError(err):
		c.Rejection = err.Error()
	default:
		return c, fmt.Errorf("parity: upstream SchedulePod of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return c, nil
}

func isFitError(err error) bool {
	_, ok := err.(*framework.FitError)
	return ok
}

// argmax returns the keys with the highest value, sorted.
func argmax(totals map[string]int64) []string {
	var best []string
	var top int64
	for n, t := range totals {
		switch {
		case len(best) == 0 || t > top:
			best, top = append(best[:0], n), t
		case t == top:
			best = append(best, n)
		}
	}
	slices.Sort(best)
	return best
}
