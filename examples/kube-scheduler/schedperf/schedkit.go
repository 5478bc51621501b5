package main

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// schedkitUnsupported says why schedkit's answers on p would not be
// comparable with upstream's: the plan's pods use a feature schedkit does
// not implement (its filters are upstream's default profile without the
// volume and DRA plugins: NodeName, NodeUnschedulable, TaintToleration,
// NodeAffinity, NodePorts, NodeResourcesFit, PodTopologySpread,
// InterPodAffinity — see schedkitConfig — and it preempts as upstream's
// DefaultPreemption, see preemptOptions). "" if none.
func schedkitUnsupported(p *plan) string {
	if p.TC.SchedulerConfigPath != "" {
		return fmt.Sprintf("custom scheduler config %s (schedkit runs upstream's default profile)", p.TC.SchedulerConfigPath)
	}
	for _, s := range p.Steps {
		pods := s.Pods
		if s.Churn != nil {
			for _, t := range s.Churn.templates {
				if pod, ok := t.(*v1.Pod); ok {
					pods = append(pods, pod)
				}
			}
		}
		for _, pod := range pods {
			where := fmt.Sprintf("workloadTemplate[%d] pod %s/%s", s.Op.Index, pod.Namespace, pod.Name)
			if len(pod.Spec.SchedulingGates) > 0 {
				return "scheduling gates: " + where + " is gated (SchedulingGates plugin)"
			}
			if len(pod.Spec.ResourceClaims) > 0 {
				return "DRA: " + where + " has resourceClaims"
			}
			for _, vol := range pod.Spec.Volumes {
				if vol.PersistentVolumeClaim != nil || vol.Ephemeral != nil {
					return "volumes: " + where + " mounts a PersistentVolumeClaim"
				}
			}
		}
	}
	return ""
}

// spreadingReason says why schedkit must run PodTopologySpread on p to
// decide as upstream's default profile does, "" if it need not (the
// plugin would then skip every pod: no constraint, no default selector):
// a pod (of a createPods op or a churn template) with
// topologySpreadConstraints, or one that upstream spreads with the system
// default constraints (hostname maxSkew 3, zone maxSkew 5,
// ScheduleAnyway; PodTopologySpreadArgs defaultingType System) because a
// Service, ReplicationController, ReplicaSet or StatefulSet the workload
// creates in its namespace selects it — the objects upstream's
// DefaultSelector (pkg/scheduler/framework/plugins/helper/spread.go)
// reads. Controllers count by selector alone (upstream also needs the
// pod's controller reference), so the answer errs towards running the
// plugin, which changes no decision then, only speed.
func spreadingReason(p *plan) string {
	type selector struct {
		ns, what string
		sel      labels.Selector
	}
	var sels []selector
	var pods []*v1.Pod
	for _, s := range p.Steps {
		objs := s.Objects
		for _, pod := range s.Pods {
			if len(pod.Spec.TopologySpreadConstraints) > 0 {
				return fmt.Sprintf("workloadTemplate[%d] pod %s/%s has topologySpreadConstraints", s.Op.Index, pod.Namespace, pod.Name)
			}
			pods = append(pods, pod)
		}
		if s.Churn != nil {
			for _, t := range s.Churn.templates {
				switch x := t.(type) {
				case *v1.Pod:
					if len(x.Spec.TopologySpreadConstraints) > 0 {
						return fmt.Sprintf("workloadTemplate[%d] churn pod %s has topologySpreadConstraints", s.Op.Index, x.GenerateName)
					}
					x = x.DeepCopy()
					x.Namespace = s.Churn.Namespace
					pods = append(pods, x)
				default:
					o := t.DeepCopyObject()
					if m, err := meta.Accessor(o); err == nil {
						m.SetNamespace(s.Churn.Namespace)
						m.SetName(m.GetGenerateName() + "*")
					}
					objs = append(objs, o)
				}
			}
		}
		for _, o := range objs {
			var ns, what string
			var sel labels.Selector
			switch x := o.(type) {
			case *v1.Service:
				if len(x.Spec.Selector) > 0 {
					ns, what, sel = x.Namespace, "Service "+x.Name, labels.SelectorFromSet(x.Spec.Selector)
				}
			case *v1.ReplicationController:
				if len(x.Spec.Selector) > 0 {
					ns, what, sel = x.Namespace, "ReplicationController "+x.Name, labels.SelectorFromSet(x.Spec.Selector)
				}
			case *appsv1.ReplicaSet:
				if ls, err := metav1.LabelSelectorAsSelector(x.Spec.Selector); err == nil && x.Spec.Selector != nil {
					ns, what, sel = x.Namespace, "ReplicaSet "+x.Name, ls
				}
			case *appsv1.StatefulSet:
				if ls, err := metav1.LabelSelectorAsSelector(x.Spec.Selector); err == nil && x.Spec.Selector != nil {
					ns, what, sel = x.Namespace, "StatefulSet "+x.Name, ls
				}
			}
			if sel != nil {
				sels = append(sels, selector{ns, what, sel})
			}
		}
	}
	for _, pod := range pods {
		for _, x := range sels {
			if x.ns == pod.Namespace && x.sel.Matches(labels.Set(pod.Labels)) {
				return fmt.Sprintf("system default constraints: pod %s/%s is selected by %s", pod.Namespace, pod.Name, x.what)
			}
		}
	}
	return ""
}

// schedkitConfig is the Scheduler configuration for p: upstream's default
// profile as schedkit implements it (framework.Config{Seed: 1}, which
// includes PodTopologySpread in upstream's order and weight), with
// workloads as PodTopologySpread's lookup for system default spreading
// when spreadingReason(p) says p needs it (the live objects the workload
// created; the defaults would look on the cycle's snapshot, which the
// runner does not feed them to). spreading is spreadingReason(p).
func schedkitConfig(p *plan, workloads snapshot.Workloads) (cfg framework.Config, spreading string, err error) {
	cfg = framework.Config{Seed: schedkitSeed}
	if nodesToScore >= 0 {
		cfg.PercentageOfNodesToScore = nodesToScore
	}
	spreading = spreadingReason(p)
	if spreading == "" {
		return cfg, "", nil
	}
	args := score.PodTopologySpreadArgs{Workloads: workloads}
	f, err := framework.NewPodTopologySpread(args)
	if err != nil {
		return cfg, "", err
	}
	sc, err := score.NewPodTopologySpread(args)
	if err != nil {
		return cfg, "", err
	}
	// The defaults hold PodTopologySpread already (finding the objects
	// on the cycle's cluster); swap in the ones reading workloads.
	cfg.Filters = framework.DefaultFilters()
	for i, x := range cfg.Filters {
		if x.Name() == f.Name() {
			cfg.Filters[i] = f
		}
	}
	ws := score.DefaultProfile().Scorers()
	for i := range ws {
		if ws[i].Scorer.Name() == sc.Name() {
			ws[i].Scorer = sc
		}
	}
	cfg.Profile, err = score.NewProfile(ws...)
	return cfg, spreading, err
}

// liveWorkloads is the PodTopologySpread lookup (snapshot.Workloads) over
// the Services, ReplicationControllers, ReplicaSets and StatefulSets the
// workload has created and not deleted: a snapshot.WorkloadIndex rebuilt
// on every change, O(objects) (the suite creates a few). Not safe for
// concurrent use: the loop changes it between cycles.
type liveWorkloads struct {
	objs snapshot.WorkloadObjects
	idx  *snapshot.WorkloadIndex
}

var _ snapshot.Workloads = (*liveWorkloads)(nil)

func newLiveWorkloads() *liveWorkloads {
	idx, err := snapshot.NewWorkloadIndex(snapshot.WorkloadObjects{})
	if err != nil {
		panic(err) // no objects: nothing to reject
	}
	return &liveWorkloads{idx: idx}
}

// apply adds (or, remove set, deletes) obj if it is one of the four kinds;
// other objects are ignored. An object the index rejects (a duplicate
// name) is an error and leaves w unchanged.
func (w *liveWorkloads) apply(obj runtime.Object, remove bool) error {
	next := w.objs
	switch x := obj.(type) {
	case *v1.Service:
		next.Services = edit(w.objs.Services, x, remove)
	case *v1.ReplicationController:
		next.ReplicationControllers = edit(w.objs.ReplicationControllers, x, remove)
	case *appsv1.ReplicaSet:
		next.ReplicaSets = edit(w.objs.ReplicaSets, x, remove)
	case *appsv1.StatefulSet:
		next.StatefulSets = edit(w.objs.StatefulSets, x, remove)
	default:
		return nil
	}
	idx, err := snapshot.NewWorkloadIndex(next)
	if err != nil {
		return err
	}
	w.objs, w.idx = next, idx
	return nil
}

// edit returns a copy of objs with o appended or (remove) the object of
// o's namespace and name left out.
func edit[T metav1.Object](objs []T, o T, remove bool) []T {
	out := make([]T, 0, len(objs)+1)
	for _, x := range objs {
		if !remove || x.GetNamespace() != o.GetNamespace() || x.GetName() != o.GetName() {
			out = append(out, x)
		}
	}
	if !remove {
		out = append(out, o)
	}
	return out
}

func (w *liveWorkloads) Services(ns string) []*v1.Service { return w.idx.Services(ns) }
func (w *liveWorkloads) ReplicationController(ns, name string) *v1.ReplicationController {
	return w.idx.ReplicationController(ns, name)
}
func (w *liveWorkloads) ReplicaSet(ns, name string) *appsv1.ReplicaSet {
	return w.idx.ReplicaSet(ns, name)
}
func (w *liveWorkloads) StatefulSet(ns, name string) *appsv1.StatefulSet {
	return w.idx.StatefulSet(ns, name)
}

// schedkitSeed seeds schedkit's tie-breaking among equally scored nodes
// (Config.Seed); tests vary it to see which placements depend on ties.
var schedkitSeed uint64 = 1

// nodesToScore is -percentage-of-nodes-to-score: both sides'
// percentageOfNodesToScore, -1 for their default (adaptive);
// upParallelism is -up-parallelism (0: UP's default). Tests and the
// shape investigations change them.
var (
	nodesToScore  int32 = -1
	upParallelism int
)

// preemptOptions are the Loop's preemption options: upstream's
// DefaultPreemptionArgs defaults (minCandidateNodesPercentage 10,
// minCandidateNodesAbsolute 100), which upstream's default profile runs
// with, so that both schedulers do the same amount of dry-run work. Below
// 100 potential nodes both examine every one and choose the same node and
// victims whenever the choice is unique; above, upstream starts its
// sample at a random offset and schedkit at Offset 0, so they may pick
// different (equally good) nodes. PriorityClasses and PDBs are read from
// the ledger's snapshot at each cycle (Objects nil): the runner feeds the
// ledger the workload's objects as it creates them.
func preemptOptions() framework.PreemptOptions {
	return framework.PreemptOptions{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}
}

// runSchedkit runs p through schedkit's Loop over a Ledger: nodes and
// bound pods fed to the ledger as informer events would be, each
// createPods op's pods added to the loop and scheduled (ScheduleOne until
// the queue is empty), unschedulable pods requeued when nodes are added or
// pods deleted (upstream moves them back on such events). A pod that fits
// nowhere preempts (Loop.SetPreemption with preemptOptions): its victims
// are evicted from the ledger by the EvictFunc, which records them, and
// the unschedulable pods are requeued (the victims' deletions are cluster
// events upstream moves them on).
func runSchedkit(ctx context.Context, p *plan, progress func(int)) (res sideResult) {
	res.Ran = true
	ledger := reserve.New()
	workloads := newLiveWorkloads()
	cfg, spreading, err := schedkitConfig(p, workloads)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	res.Spreading = spreading
	sched, err := framework.New(cfg)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	loop := framework.NewLoop(sched, ledger, nil)
	obs := newObserver(p)
	nodes := map[string]*v1.Node{}
	var nodeOrder []string
	placed := map[snapshot.PodKey]*v1.Pod{} // bound pods, the workload's and churn's
	churnPods := map[snapshot.PodKey]*v1.Pod{}
	evicted := map[snapshot.PodKey]bool{}
	// blocked are the unschedulable pods that PodTopologySpread or
	// InterPodAffinity rejected somewhere, in the order they failed, with
	// the plugins that rejected them: a pod bound elsewhere may let them
	// fit, so a bind moves those whose plugins' queueing hints accept it
	// (requeueOnBind; upstream moves them on an assigned pod's add
	// event); a pod that fit nowhere for other reasons is left for the
	// events that free some. A moved blocked pod waits out upstream's
	// backoff (backoffDuration of its failed attempts) in waiting before
	// it is queued again, as upstream's backoff queue holds it: without
	// it a pod no event can help (StarvationIndependent's cloggers) is
	// retried after every churn event ahead of lower-priority pods.
	var blocked []blockedPod
	failures := map[snapshot.PodKey]int{}
	lastFailure := map[snapshot.PodKey]time.Time{}
	waiting := &backoffHeap{}
	inBackoff := map[snapshot.PodKey]bool{}
	toBackoff := func(pi *snapshot.PodInfo) {
		k := pi.Key()
		if !loop.Remove(k) { // deleted meanwhile, or already moved
			return
		}
		inBackoff[k] = true
		heap.Push(waiting, backoffPod{pi: pi, ready: lastFailure[k].Add(backoffDuration(failures[k]))})
	}
	requeueAll := func() {
		for _, b := range blocked {
			toBackoff(b.pi)
		}
		clear(blocked)
		blocked = blocked[:0]
		loop.Requeue()
	}
	requeueOn := func(bound *v1.Pod) {
		kept := blocked[:0]
		for _, b := range blocked {
			if requeueOnBind(b.pi.Pod(), b.plugins, bound, obs.nsLabels) {
				toBackoff(b.pi)
			} else {
				kept = append(kept, b)
			}
		}
		clear(blocked[len(kept):])
		blocked = kept
	}
	// release queues the waiting pods whose backoff has ended.
	release := func(now time.Time) error {
		for waiting.Len() > 0 && !(*waiting)[0].ready.After(now) {
			b := heap.Pop(waiting).(backoffPod)
			if !inBackoff[b.pi.Key()] {
				continue // deleted while waiting
			}
			delete(inBackoff, b.pi.Key())
			if err := loop.AddPodInfo(b.pi); err != nil {
				return err
			}
		}
		return nil
	}
	forget := func(k snapshot.PodKey) { delete(inBackoff, k) }
	loop.SetPreemption(preemptOptions(), func(_ context.Context, node string, victims []*snapshot.PodInfo) error {
		keys := make([]snapshot.PodKey, len(victims))
		for i, v := range victims {
			keys[i] = v.Key()
		}
		if err := ledger.Evict(node, keys); err != nil {
			return err
		}
		for _, k := range keys {
			evicted[k] = true
			obs.deleted(k)
			delete(placed, k)
			delete(churnPods, k)
		}
		return nil
	})

	// drain schedules until the queue is empty; while pods waitFor
	// accepts are waiting out their backoff it waits for them (calling
	// tick) and goes on.
	drain := func(tick func(), waitFor func(snapshot.PodKey) bool) error {
		for {
			if tick != nil {
				tick()
			}
			if err := release(time.Now()); err != nil {
				return err
			}
			a, ok, err := loop.ScheduleOne(ctx)
			if err != nil {
				return err
			}
			if !ok {
				if waitFor == nil || !slices.ContainsFunc(*waiting, func(b backoffPod) bool { return inBackoff[b.pi.Key()] && waitFor(b.pi.Key()) }) {
					return nil
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(min(time.Until((*waiting)[0].ready), 5*time.Millisecond)):
				}
				continue
			}
			res.Attempts++
			if !a.Scheduled() {
				k := a.Pod.Key()
				failures[k]++
				lastFailure[k] = time.Now()
			}
			if a.Preemption != nil && a.Preemption.Found() {
				requeueAll()
			}
			if d := a.Diagnosis; !a.Scheduled() && (a.Preemption == nil || !a.Preemption.Found()) && d != nil &&
				(slices.Contains(d.UnschedulablePlugins, score.PodTopologySpreadName) || slices.Contains(d.UnschedulablePlugins, score.InterPodAffinityName)) {
				blocked = append(blocked, blockedPod{pi: a.Pod, plugins: slices.Clone(d.UnschedulablePlugins)})
			}
			if a.Bound() {
				now := time.Now()
				k := a.Pod.Key()
				obs.bound(k, a.Node, now)
				pod := a.Pod.Pod().DeepCopy()
				pod.Spec.NodeName = a.Node
				placed[k] = pod
				requeueOn(pod)
				if progress != nil {
					progress(1)
				}
			}
		}
	}
	addNode := func(n *v1.Node) error {
		if _, ok := nodes[n.Name]; !ok {
			nodeOrder = append(nodeOrder, n.Name)
		}
		nodes[n.Name] = n
		return ledger.AddNode(n)
	}

	// churn: the ops' timers, checked between scheduling cycles.
	type churnState struct {
		c     *churnPlan
		next  time.Time
		count int
		live  [][]runtime.Object
	}
	var churns []*churnState
	// objects: the kinds the ledger keeps (namespaces for
	// InterPodAffinity's namespaceSelector, Services and controllers for
	// PodTopologySpread's system defaults, priority classes, PDBs) go to
	// it as informer events would; others (PersistentVolumes, ...) no
	// schedkit plugin reads.
	object := func(obj runtime.Object, remove bool) error {
		switch obj.(type) {
		case *v1.Namespace, *v1.Service, *v1.ReplicationController, *appsv1.ReplicaSet, *appsv1.StatefulSet,
			*schedulingv1.PriorityClass, *policyv1.PodDisruptionBudget:
			var err error
			if remove {
				err = ledger.RemoveObject(obj)
			} else {
				err = ledger.AddObject(obj)
			}
			if err != nil {
				return err
			}
		}
		return workloads.apply(obj, remove)
	}
	churnCreate := func(obj runtime.Object) error {
		switch o := obj.(type) {
		case *v1.Node:
			if err := addNode(o); err != nil {
				return err
			}
			requeueAll()
		case *v1.Pod:
			churnPods[snapshot.KeyOf(o)] = o
			return loop.Add(o)
		}
		return object(obj, false)
	}
	churnRemove := func(obj runtime.Object) error {
		switch o := obj.(type) {
		case *v1.Node:
			delete(nodes, o.Name)
			requeueAll()
			return ledger.RemoveNode(o.Name)
		case *v1.Pod:
			k := snapshot.KeyOf(o)
			loop.Remove(k)
			forget(k)
			ledger.RemovePod(k)
			delete(placed, k)
			delete(churnPods, k)
			requeueAll()
		default:
			return object(obj, true)
		}
		return nil
	}
	tick := func() {
		now := time.Now()
		for _, cs := range churns {
			for !cs.next.After(now) && (cs.c.Mode == "recreate" || cs.c.Number == 0 || cs.count < cs.c.Number) {
				cs.c.tick(cs.count, cs.live, churnCreate, churnRemove)
				cs.count++
				cs.next = cs.next.Add(cs.c.Interval)
			}
		}
	}

	for _, s := range p.Steps {
		if err := ctx.Err(); err != nil {
			res.Err = err.Error()
			break
		}
		var stepErr error
		for _, o := range s.Objects {
			if stepErr = object(o, false); stepErr != nil {
				break
			}
		}
		switch {
		case stepErr != nil:
		case s.Kind == stepNodes:
			for _, n := range s.Nodes {
				if stepErr = addNode(n); stepErr != nil {
					break
				}
			}
			requeueAll()
		case s.Kind == stepPods:
			start := time.Now()
			for _, pod := range s.Pods {
				obs.created(pod)
				if stepErr = loop.Add(pod); stepErr != nil {
					break
				}
			}
			if stepErr == nil {
				var waitFor func(snapshot.PodKey) bool
				if s.Wait { // the op waits for its pods, also those in backoff
					mine := make(map[snapshot.PodKey]bool, len(s.Pods))
					for _, pod := range s.Pods {
						mine[snapshot.KeyOf(pod)] = true
					}
					waitFor = func(k snapshot.PodKey) bool { return mine[k] }
				}
				stepErr = drain(tick, waitFor)
			}
			if s.Measure {
				obs.measure(start, []string{s.Namespace}, nil)
			}
		case s.Kind == stepChurn:
			live := make([][]runtime.Object, len(s.Churn.templates))
			for i := range live {
				live[i] = make([]runtime.Object, max(s.Churn.Number, 1))
			}
			churns = append(churns, &churnState{c: s.Churn, next: time.Now().Add(s.Churn.Interval), live: live})
		case s.Kind == stepSleep:
			end := time.Now().Add(s.Sleep)
			for time.Now().Before(end) && ctx.Err() == nil {
				stepErr = drain(tick, nil)
				time.Sleep(min(time.Until(end), 5*time.Millisecond))
			}
		case s.Kind == stepDelete:
			for _, k := range obs.existing(s.Delete.Namespace, s.Delete.LabelSelector) {
				loop.Remove(k)
				forget(k)
				ledger.RemovePod(k)
				delete(placed, k)
				obs.deleted(k)
			}
			requeueAll()
			stepErr = drain(tick, nil)
		case s.Kind == stepStartMetrics:
			obs.startWindow(s.Window)
		case s.Kind == stepStopMetrics:
			obs.stopWindow()
		case s.Kind == stepBarrier && s.Barrier.StageRequirement != "Attempted":
			// Pods waiting out their backoff are not bound yet.
			stepErr = drain(tick, func(snapshot.PodKey) bool { return true })
		case s.Kind == stepBarrier, s.Kind == stepObjects:
			// Every queued pod has been tried; the step's objects went
			// to the ledger (and workloads) above.
		}
		if stepErr != nil {
			res.Err = fmt.Sprintf("workloadTemplate[%d] (%s): %v", s.Op.Index, s.Op.Code, stepErr)
			break
		}
	}
	if err := drain(nil, nil); err != nil && res.Err == "" && !errors.Is(err, context.Canceled) {
		res.Err = err.Error()
	}
	var nodeList []*v1.Node
	for _, name := range nodeOrder {
		if n, ok := nodes[name]; ok {
			nodeList = append(nodeList, n)
		}
	}
	var podList []*v1.Pod
	for _, pod := range placed {
		podList = append(podList, pod)
	}
	res.Preempted = len(evicted)
	res.Evicted = sortedKeys(evicted)
	obs.finish(&res, nodeList, podList)
	return res
}
