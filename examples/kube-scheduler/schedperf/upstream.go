package main

import (
	"context"
	"fmt"
	"k8s.io/kubernetes/pkg/scheduler"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/component-base/featuregate"
	kubeschedulerconfigv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/schedkit/schedkit/examples/kube-scheduler/inprocess"
	"github.com/schedkit/schedkit/snapshot"
)

var (
	podsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
)

// gvrOf maps a typed object to its resource, as a RESTMapper would for the
// kinds the suite creates.
func gvrOf(obj runtime.Object) (schema.GroupVersionResource, error) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvks[0])
	return gvr, nil
}

// pumpWatch relays a fake watcher's events through an unbounded queue: the
// fake tracker's watchers hold 100 events and panic when full, and the
// suite creates objects in bulk while the scheduler runs.
type pumpWatch struct {
	in      watch.Interface
	out     chan watch.Event
	stop    chan struct{}
	once    sync.Once
	stopped atomic.Bool
}

// backlog is the number of events waiting in the fake watcher's channel.
func (p *pumpWatch) backlog() int {
	if p.stopped.Load() {
		return 0
	}
	return len(p.in.ResultChan())
}

func newPump(in watch.Interface) *pumpWatch {
	p := &pumpWatch{in: in, out: make(chan watch.Event), stop: make(chan struct{})}
	go p.run()
	return p
}

func (p *pumpWatch) run() {
	defer close(p.out)
	var queue []watch.Event
	src := p.in.ResultChan()
	for {
		var send chan watch.Event
		var head watch.Event
		if len(queue) > 0 {
			send, head = p.out, queue[0]
		}
		if src == nil && len(queue) == 0 {
			return
		}
		select {
		case e, ok := <-src:
			if !ok {
				src = nil
				continue
			}
			queue = append(queue, e)
		case send <- head:
			queue[0] = watch.Event{}
			queue = queue[1:]
		case <-p.stop:
			return
		}
	}
}

func (p *pumpWatch) Stop() {
	p.once.Do(func() {
		p.stopped.Store(true)
		p.in.Stop()
		close(p.stop)
	})
}

func (p *pumpWatch) ResultChan() <-chan watch.Event { return p.out }

// upstreamRun is one workload through the real kube-scheduler.
type upstreamRun struct {
	p       *plan
	cluster *inprocess.Cluster
	obs     *observer

	mu        sync.Mutex
	watching  map[string]bool
	attempted map[snapshot.PodKey]bool
	preempted map[snapshot.PodKey]bool // pods the scheduler deleted
	pumps     []*pumpWatch
}

// throttle waits while a watcher's channel (100 events) is half full: a
// busy creator could otherwise fill it before the pump goroutine runs.
func (u *upstreamRun) throttle() {
	for {
		u.mu.Lock()
		worst := 0
		for _, p := range u.pumps {
			worst = max(worst, p.backlog())
		}
		u.mu.Unlock()
		if worst < 50 {
			return
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// defaultConfig is scheduler_perf's newDefaultComponentConfig: the v1
// defaults, converted.
func defaultConfig() (*config.KubeSchedulerConfiguration, error) {
	gvk := kubeschedulerconfigv1.SchemeGroupVersion.WithKind("KubeSchedulerConfiguration")
	cfg := config.KubeSchedulerConfiguration{}
	if _, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode(nil, &gvk, &cfg); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// setFeatureGates applies the test case's and the workload's gates and
// returns a function restoring the previous values.
func setFeatureGates(p *plan) (func(), error) {
	gates := map[string]bool{}
	for k, v := range p.TC.FeatureGates {
		gates[k] = v
	}
	for k, v := range p.W.FeatureGates {
		gates[k] = v
	}
	if len(gates) == 0 {
		return func() {}, nil
	}
	prev := map[string]bool{}
	known := utilfeature.DefaultMutableFeatureGate.GetAll()
	for k := range gates {
		if _, ok := known[featuregate.Feature(k)]; !ok {
			return nil, fmt.Errorf("feature gate %s is unknown to k8s.io/kubernetes v1.37.2", k)
		}
		prev[k] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(k))
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return nil, fmt.Errorf("feature gates %v: %w", gates, err)
	}
	return func() { _ = utilfeature.DefaultMutableFeatureGate.SetFromMap(prev) }, nil
}

// fakeWatchBuffer is the event buffer of the fake clientset's watchers
// (apimachinery's watch.DefaultChanSize, 100 by default, which the fake
// tracker's watchers panic on when full: the scheduler's own bindings can
// fill it before the pump runs on a busy machine). 2^17 events hold the
// largest workload this program runs; the channels are allocated per
// watcher and freed with the run.
const fakeWatchBuffer = 1 << 17

// runUpstream runs p through kube-scheduler on a fake clientset.
func runUpstream(ctx context.Context, p *plan, timeout time.Duration, progress func(int)) (res sideResult) {
	res.Ran = true
	watch.DefaultChanSize = fakeWatchBuffer
	restore, err := setFeatureGates(p)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer restore()
	var cfg *config.KubeSchedulerConfiguration
	if p.TC.SchedulerConfigPath != "" {
		cfg, err = inprocess.LoadConfig(filepath.Join(filepath.Dir(p.TC.File), p.TC.SchedulerConfigPath))
	} else {
		cfg, err = defaultConfig()
	}
	if err != nil {
		res.Err = fmt.Sprintf("scheduler config: %v", err)
		return res
	}
	if nodesToScore >= 0 {
		pct := nodesToScore
		cfg.PercentageOfNodesToScore = &pct
		for i := range cfg.Profiles {
			cfg.Profiles[i].PercentageOfNodesToScore = nil // the global value applies
		}
	}
	if upParallelism > 0 {
		cfg.Parallelism = int32(upParallelism)
	}
	cluster, err := inprocess.NewCluster(nil, nil)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	u := &upstreamRun{p: p, cluster: cluster, obs: newObserver(p), watching: map[string]bool{}, attempted: map[snapshot.PodKey]bool{}, preempted: map[snapshot.PodKey]bool{}}
	client := cluster.Client
	client.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		var opts []metav1.ListOptions
		if wa, ok := action.(k8stesting.WatchActionImpl); ok {
			opts = append(opts, wa.ListOptions)
		}
		w, err := client.Tracker().Watch(action.GetResource(), action.GetNamespace(), opts...)
		if err != nil {
			return true, nil, err
		}
		p := newPump(w)
		u.mu.Lock()
		u.watching[action.GetResource().Resource] = true
		u.pumps = append(u.pumps, p)
		u.mu.Unlock()
		return true, p, nil
	})
	// Objects this runner writes go to the tracker directly, so what the
	// reactors below see is the scheduler's own writes.
	client.PrependReactor("delete", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		d := action.(k8stesting.DeleteAction)
		k := snapshot.PodKey{Namespace: d.GetNamespace(), Name: d.GetName()}
		u.mu.Lock()
		u.preempted[k] = true
		u.mu.Unlock()
		u.obs.deleted(k)
		return false, nil, nil
	})
	markAttempted := func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() == "status" {
			var name string
			switch a := action.(type) {
			case k8stesting.PatchAction:
				name = a.GetName()
			case k8stesting.UpdateAction:
				if m, err := meta.Accessor(a.GetObject()); err == nil {
					name = m.GetName()
				}
			}
			u.mu.Lock()
			u.attempted[snapshot.PodKey{Namespace: action.GetNamespace(), Name: name}] = true
			u.mu.Unlock()
		}
		return false, nil, nil
	}
	client.PrependReactor("patch", "pods", markAttempted)
	client.PrependReactor("update", "pods", markAttempted)
	cluster.OnBind(func(b *v1.Binding) {
		u.obs.bound(snapshot.PodKey{Namespace: b.Namespace, Name: b.Name}, b.Target.Name, time.Now())
		if progress != nil {
			progress(1)
		}
	})

	runCtx, cancel := context.WithCancel(ctx)
	var churnWG sync.WaitGroup
	defer func() {
		cancel()
		churnWG.Wait()
	}()
	sched, err := cluster.Start(runCtx, cfg, frameworkruntime.Registry{})
	if err != nil {
		res.Err = err.Error()
		return res
	}
	// The informers list, then watch: wait for the watches of pods and
	// nodes so that nothing created next is delivered twice or late.
	deadline := time.Now().Add(10 * time.Second)
	for {
		u.mu.Lock()
		ok := u.watching["pods"] && u.watching["nodes"]
		u.mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			res.Err = "the scheduler's informers did not watch pods and nodes within 10s"
			return res
		}
		time.Sleep(time.Millisecond)
	}

	tracker := client.Tracker()
	create := func(obj runtime.Object) error {
		gvr, err := gvrOf(obj)
		if err != nil {
			return err
		}
		m, _ := meta.Accessor(obj)
		u.throttle()
		return tracker.Create(gvr, obj.DeepCopyObject(), m.GetNamespace())
	}
	remove := func(obj runtime.Object) error {
		gvr, err := gvrOf(obj)
		if err != nil {
			return err
		}
		m, _ := meta.Accessor(obj)
		u.throttle()
		return tracker.Delete(gvr, m.GetNamespace(), m.GetName())
	}
	// createSeen creates objs and waits until the scheduler's informers
	// hold those it reads (a Service created just before pods must be
	// seen when they are scored, as schedkit's ledger sees it).
	createSeen := func(objs []runtime.Object) error {
		for _, o := range objs {
			if err := create(o); err != nil {
				return err
			}
		}
		for _, o := range objs {
			if err := cluster.WaitSeen(runCtx, o, 10*time.Second); err != nil {
				return err
			}
		}
		return nil
	}
	expected := map[string]int{} // pods of skipWaitToCompletion ops a barrier waits for
	nodesCreated := 0            // nodes the plan has created so far
	for _, s := range p.Steps {
		if err := runCtx.Err(); err != nil {
			res.Err = err.Error()
			break
		}
		var stepErr error
		switch s.Kind {
		case stepNodes:
			for _, n := range s.Nodes {
				if stepErr = create(n); stepErr != nil {
					break
				}
				nodesCreated++
			}
			if stepErr == nil {
				stepErr = waitNodesCached(runCtx, sched, nodesCreated, 30*time.Second)
			}
		case stepObjects:
			stepErr = createSeen(s.Objects)
		case stepPods:
			stepErr = createSeen(s.Objects)
			if stepErr != nil {
				break
			}
			start := time.Now()
			for _, pod := range s.Pods {
				u.obs.created(pod)
				u.throttle()
				for _, c := range pod.Status.Conditions {
					if c.Type == v1.PodScheduled { // gated: upstream's isAttempted counts it
						u.mu.Lock()
						u.attempted[snapshot.KeyOf(pod)] = true
						u.mu.Unlock()
					}
				}
				if stepErr = tracker.Create(podsGVR, pod.DeepCopy(), pod.Namespace); stepErr != nil {
					break
				}
			}
			if stepErr != nil {
				break
			}
			if !s.Wait {
				expected[s.Namespace] += len(s.Pods)
				break
			}
			stepErr = u.obs.waitBound(runCtx, s.Namespace, nil, len(s.Pods), timeout)
			if s.Measure {
				u.obs.measure(start, []string{s.Namespace}, nil)
			}
		case stepChurn:
			for _, o := range s.Objects {
				if stepErr = create(o); stepErr != nil {
					break
				}
			}
			churnWG.Add(1)
			go func() {
				defer churnWG.Done()
				runChurn(runCtx, s.Churn, create, remove)
			}()
		case stepBarrier:
			nss := s.Barrier.Namespaces
			if len(nss) == 0 {
				for ns := range expected {
					nss = append(nss, ns)
				}
			}
			for _, ns := range nss {
				if s.Barrier.StageRequirement == "Attempted" {
					stepErr = u.waitAttempted(runCtx, ns, s.Barrier.LabelSelector, expected[ns], timeout)
				} else {
					stepErr = u.obs.waitBound(runCtx, ns, s.Barrier.LabelSelector, expected[ns], timeout)
					delete(expected, ns)
				}
				if stepErr != nil {
					break
				}
			}
		case stepSleep:
			select {
			case <-runCtx.Done():
			case <-time.After(s.Sleep):
			}
		case stepDelete:
			stepErr = u.deletePods(runCtx, s.Delete)
		case stepStartMetrics:
			u.obs.startWindow(s.Window)
		case stepStopMetrics:
			u.obs.stopWindow()
		}
		if stepErr != nil {
			res.Err = fmt.Sprintf("workloadTemplate[%d] (%s): %v", s.Op.Index, s.Op.Code, stepErr)
			break
		}
	}
	cancel()
	churnWG.Wait()

	nodes, pods, err := trackerState(tracker)
	if err != nil && res.Err == "" {
		res.Err = err.Error()
	}
	u.mu.Lock()
	res.Preempted = len(u.preempted)
	res.Evicted = sortedKeys(u.preempted)
	u.mu.Unlock()
	u.obs.finish(&res, nodes, pods)
	return res
}

// waitAttempted waits until want pods of ns matching sel were bound or
// marked unschedulable.
func (u *upstreamRun) waitAttempted(ctx context.Context, ns string, sel map[string]string, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		u.mu.Lock()
		att := u.attempted
		n := u.obs.countIf(ns, sel, func(k snapshot.PodKey, bound bool) bool { return bound || att[k] })
		u.mu.Unlock()
		if n >= want {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%d of %d pods in %s attempted after %s", n, want, ns, time.Since(deadline.Add(-timeout)).Round(time.Second))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// deletePods deletes the pods of a deletePods op, at its rate.
func (u *upstreamRun) deletePods(ctx context.Context, d *deletePodsOp) error {
	keys := u.obs.existing(d.Namespace, d.LabelSelector)
	var tick <-chan time.Time
	if d.DeletePodsPerSecond > 0 {
		t := time.NewTicker(time.Second / time.Duration(d.DeletePodsPerSecond))
		defer t.Stop()
		tick = t.C
	}
	for _, k := range keys {
		if tick != nil {
			select {
			case <-tick:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		u.throttle()
		if err := u.cluster.Client.Tracker().Delete(podsGVR, k.Namespace, k.Name); err != nil {
			return err
		}
		u.obs.deleted(k)
	}
	return nil
}

// runChurn creates (and in recreate mode deletes) the churn op's objects
// on its interval until ctx ends, as upstream's runChurnOp.
func runChurn(ctx context.Context, c *churnPlan, create, remove func(runtime.Object) error) {
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	live := make([][]runtime.Object, len(c.templates))
	for i := range live {
		live[i] = make([]runtime.Object, max(c.Number, 1))
	}
	for count := 0; c.Mode == "recreate" || c.Number == 0 || count < c.Number; count++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.tick(count, live, create, remove)
	}
}

// tick is one churn interval: in create mode every template makes a new
// object; in recreate mode slot count%Number alternates between creating
// an object and deleting it.
func (c *churnPlan) tick(count int, live [][]runtime.Object, create, remove func(runtime.Object) error) {
	for i := range c.templates {
		if c.Mode == "create" {
			if obj, err := c.next(i); err == nil {
				_ = create(obj)
			}
			continue
		}
		slot := count % c.Number
		if old := live[i][slot]; old != nil {
			_ = remove(old)
			live[i][slot] = nil
			continue
		}
		obj, err := c.next(i)
		if err != nil {
			continue
		}
		if create(obj) == nil {
			live[i][slot] = obj
		}
	}
}

// trackerState lists the nodes and pods at the end of a run.
func trackerState(t k8stesting.ObjectTracker) ([]*v1.Node, []*v1.Pod, error) {
	nl, err := t.List(nodesGVR, schema.GroupVersionKind{Version: "v1", Kind: "Node"}, "")
	if err != nil {
		return nil, nil, err
	}
	pl, err := t.List(podsGVR, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "")
	if err != nil {
		return nil, nil, err
	}
	var nodes []*v1.Node
	for i := range nl.(*v1.NodeList).Items {
		nodes = append(nodes, &nl.(*v1.NodeList).Items[i])
	}
	var pods []*v1.Pod
	for i := range pl.(*v1.PodList).Items {
		pods = append(pods, &pl.(*v1.PodList).Items[i])
	}
	return nodes, pods, nil
}

// waitNodesCached waits until the scheduler's cache holds want nodes. The
// nodes' informer delivers them on a watch of its own, independent of the
// pods' watch: without the wait the first pods of the next step can be
// scheduled while some nodes are not yet in the cache, and upstream
// places them on fewer nodes than schedkit, whose ledger holds every node
// once AddNode returns (TestEndToEndSchedulingBasic failed so, about once
// in 40 runs, with 15 pods on 5 nodes placed 2, 2, 3, 3, 5).
func waitNodesCached(ctx context.Context, sched *scheduler.Scheduler, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for sched.Cache.NodeCount() < want {
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the scheduler's cache holds %d of %d nodes after %s", sched.Cache.NodeCount(), want, timeout)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}
