// Package inprocess runs the real kube-scheduler (pkg/scheduler.New, the
// same code as the binary) inside a test or benchmark, on a fake clientset
// with informers, with schedkit's plugins in its out-of-tree registry.
package inprocess

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	"github.com/schedkit/schedkit/framework/kubescheduler"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// Registry is the out-of-tree registry the binary registers with
// app.WithPlugin: schedkit's plugins by name.
func Registry() frameworkruntime.Registry {
	return frameworkruntime.Registry{
		kubescheduler.ScoreName:   kubescheduler.NewSchedkitScore,
		kubescheduler.FitName:     kubescheduler.NewSchedkitFit,
		kubescheduler.ReserveName: kubescheduler.NewSchedkitReserve,
	}
}

// LoadConfig reads a KubeSchedulerConfiguration file with upstream's loader
// (decoding, defaulting) — what the binary does with --config.
func LoadConfig(path string) (*config.KubeSchedulerConfiguration, error) {
	return options.LoadConfigFromFile(klog.Background(), path)
}

// Cluster is a fake API server: a fake clientset (which does no API
// defaulting) whose pods/binding creations set spec.nodeName through the
// object tracker.
type Cluster struct {
	Client *fake.Clientset

	// informers is the scheduler's informer factory, set by Start.
	informers informers.SharedInformerFactory

	// seenBinds counts the bindings the scheduler's pod informer has
	// delivered (an update that sets spec.nodeName); bind keeps at most
	// maxUnseenBinds ahead of it.
	seenBinds atomic.Int64

	mu       sync.Mutex
	failBind func(*v1.Binding) error
	onBind   func(*v1.Binding)
	binds    int
}

// NewCluster loads nodes and pods into a fake clientset before any
// informer starts (its watch channels hold 100 unread events, so objects
// created later in bulk would have to be drained). Pods need a UID and a
// schedulerName: the fake does no defaulting.
func NewCluster(nodes []*v1.Node, pods []*v1.Pod) (*Cluster, error) {
	objs := make([]runtime.Object, 0, len(nodes)+len(pods))
	for _, n := range nodes {
		objs = append(objs, n)
	}
	for _, p := range pods {
		if p.UID == "" || p.Spec.SchedulerName == "" {
			return nil, fmt.Errorf("inprocess: pod %s/%s needs a UID and a schedulerName", p.Namespace, p.Name)
		}
		objs = append(objs, p)
	}
	// NewSimpleClientset, not NewClientset: the latter rebuilds a REST
	// mapper on every write (~2 ms each).
	c := &Cluster{Client: fake.NewSimpleClientset(objs...)}
	c.Client.PrependReactor("create", "pods", c.bind)
	return c, nil
}

// FailBind makes the binding of a pod fail when f returns an error (the
// scheduler then runs Unreserve and retries the pod).
func (c *Cluster) FailBind(f func(*v1.Binding) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failBind = f
}

// OnBind makes f observe every successful binding, after the pod was
// updated and counted (schedperf records bind times with it). f runs in
// the scheduler's binding goroutine and must not call the clientset.
func (c *Cluster) OnBind(f func(*v1.Binding)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onBind = f
}

// Binds returns the number of successful bindings.
func (c *Cluster) Binds() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.binds
}

// bind handles create pods/binding by updating the pod in the tracker;
// calling the clientset from inside a reactor would deadlock.
func (c *Cluster) bind(action k8stesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "binding" {
		return false, nil, nil
	}
	b, ok := action.(k8stesting.CreateAction).GetObject().(*v1.Binding)
	if !ok {
		return true, nil, fmt.Errorf("inprocess: binding of type %T", action.(k8stesting.CreateAction).GetObject())
	}
	c.mu.Lock()
	fail := c.failBind
	c.mu.Unlock()
	if fail != nil {
		if err := fail(b); err != nil {
			return true, nil, err
		}
	}
	obj, err := c.Client.Tracker().Get(podsGVR, b.Namespace, b.Name)
	if err != nil {
		return true, nil, err
	}
	pod := obj.(*v1.Pod).DeepCopy()
	if pod.Spec.NodeName != "" {
		return true, nil, fmt.Errorf("inprocess: pod %s/%s is already bound to %s", b.Namespace, b.Name, pod.Spec.NodeName)
	}
	pod.Spec.NodeName = b.Target.Name
	c.awaitInformer()
	if err := c.Client.Tracker().Update(podsGVR, pod, b.Namespace); err != nil {
		return true, nil, err
	}
	c.mu.Lock()
	c.binds++
	observe := c.onBind
	c.mu.Unlock()
	if observe != nil {
		observe(b)
	}
	return true, b, nil
}

// maxUnseenBinds bounds how far the bindings may run ahead of the
// scheduler's pod informer. The fake's watch channels hold 100 unread
// events and panic ("channel full") on the next one
// (watch.RaceFreeFakeWatcher); on a loaded machine the binding goroutines
// (16 at once) can write faster than the informer reads. The margin
// leaves room for those goroutines and for the scheduler's own status
// patches.
const maxUnseenBinds = 32

// awaitInformer waits, in the binding goroutine, until the pod informer
// is fewer than maxUnseenBinds bindings behind, polling every 100 µs for
// at most 30 s (then it goes on: a test that stopped its informer gets
// the fake's own panic rather than a hang).
func (c *Cluster) awaitInformer() {
	deadline := time.Now().Add(30 * time.Second)
	for int64(c.Binds())-c.seenBinds.Load() >= maxUnseenBinds && time.Now().Before(deadline) {
		time.Sleep(100 * time.Microsecond)
	}
}

// Start builds the scheduler from cfg with registry as its out-of-tree
// registry, starts the informers and runs it until ctx is done.
func (c *Cluster) Start(ctx context.Context, cfg *config.KubeSchedulerConfiguration, registry frameworkruntime.Registry) (*scheduler.Scheduler, error) {
	informerFactory := scheduler.NewInformerFactory(c.Client, 0, nil)
	// A FakeRecorder with no channel drops events. NewFakeRecorder(0)
	// would make an unbuffered channel nobody reads: every Eventf (a
	// bound pod's Scheduled, a preemption victim's Preempted) would block
	// its goroutine for ever, and preemption would never finish.
	recorder := func(string) events.EventRecorderLogger { return &events.FakeRecorder{} }
	sched, err := scheduler.New(ctx, c.Client, informerFactory, nil, profile.RecorderFactory(recorder),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithFrameworkOutOfTreeRegistry(registry),
	)
	if err != nil {
		return nil, fmt.Errorf("inprocess: creating scheduler: %w", err)
	}
	c.informers = informerFactory
	// The scheduler's own pod informer (InformerFor returns the one
	// scheduler.New registered), not a second watch.
	if _, err := informerFactory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*v1.Pod)
			n, ok2 := newObj.(*v1.Pod)
			if ok1 && ok2 && o.Spec.NodeName == "" && n.Spec.NodeName != "" {
				c.seenBinds.Add(1)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("inprocess: pod informer handler: %w", err)
	}
	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return nil, fmt.Errorf("inprocess: handlers: %w", err)
	}
	go sched.Run(ctx)
	return sched, nil
}

// WaitBinds waits until the fake API server has accepted want bindings,
// polling a counter (cheap: listing pods would copy every pod and steal CPU
// from the scheduler being measured).
func (c *Cluster) WaitBinds(ctx context.Context, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for c.Binds() < want {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("inprocess: %d of %d pods bound", c.Binds(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// WaitBound polls until want pods are bound or ctx/timeout ends, and
// returns every pod.
func (c *Cluster) WaitBound(ctx context.Context, want int, timeout time.Duration) ([]*v1.Pod, error) {
	deadline := time.Now().Add(timeout)
	for {
		list, err := c.Client.Tracker().List(podsGVR, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "")
		if err != nil {
			return nil, err
		}
		pods := list.(*v1.PodList)
		bound := 0
		out := make([]*v1.Pod, len(pods.Items))
		for i := range pods.Items {
			out[i] = &pods.Items[i]
			if pods.Items[i].Spec.NodeName != "" {
				bound++
			}
		}
		if bound >= want {
			return out, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return out, fmt.Errorf("inprocess: %d of %d pods bound", bound, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitSeen waits until the scheduler's informer for obj's kind holds obj,
// for the kinds upstream's plugins look up (Services, ReplicaSets,
// StatefulSets, ReplicationControllers, PodDisruptionBudgets, Namespaces)
// when the scheduler watches that kind; other objects return at once.
// Objects written to the fake clientset reach the informers
// asynchronously: without this, the first pods after a Service can be
// scored before the scheduler sees it (no system default spreading).
// Call it after Start; an error when timeout passes first.
func (c *Cluster) WaitSeen(ctx context.Context, obj runtime.Object, timeout time.Duration) error {
	if c.informers == nil {
		return errors.New("inprocess: WaitSeen before Start")
	}
	var inf cache.SharedIndexInformer
	switch obj.(type) {
	case *v1.Service:
		inf = c.informers.Core().V1().Services().Informer()
	case *v1.ReplicationController:
		inf = c.informers.Core().V1().ReplicationControllers().Informer()
	case *v1.Namespace:
		inf = c.informers.Core().V1().Namespaces().Informer()
	case *appsv1.ReplicaSet:
		inf = c.informers.Apps().V1().ReplicaSets().Informer()
	case *appsv1.StatefulSet:
		inf = c.informers.Apps().V1().StatefulSets().Informer()
	case *policyv1.PodDisruptionBudget:
		inf = c.informers.Policy().V1().PodDisruptionBudgets().Informer()
	default:
		return nil
	}
	if !inf.HasSynced() { // not one the scheduler started: it never reads it
		return nil
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		if _, ok, _ := inf.GetStore().GetByKey(key); ok {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("inprocess: the scheduler's informer did not see %T %s within %v", obj, key, timeout)
		}
		time.Sleep(100 * time.Microsecond)
	}
}
