package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// schedkitUnsupported says why schedkit's answers on p would not be
// comparable with upstream's: the plan's pods use a feature schedkit does
// not implement (its filters are NodeName, NodeUnschedulable,
// TaintToleration, NodeAffinity, NodePorts and NodeResourcesFit; it does
// not preempt). "" if none. Preemption is checked after the run
// (needsPreemption), since whether a higher-priority pod needs victims
// depends on where the others went.
func schedkitUnsupported(p *plan) string {
	if p.TC.SchedulerConfigPath != "" {
		return fmt.Sprintf("custom scheduler config %s (schedkit runs upstream's default profile)", p.TC.SchedulerConfigPath)
	}
	if why := systemDefaultSpreading(p); why != "" {
		return why
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
			if len(pod.Spec.TopologySpreadConstraints) > 0 {
				return "PodTopologySpread: " + where + " has topologySpreadConstraints"
			}
			if a := pod.Spec.Affinity; a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil) {
				return "InterPodAffinity: " + where + " has pod (anti-)affinity"
			}
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

// systemDefaultSpreading says which pod of p upstream's default profile
// spreads with PodTopologySpread's system default constraints (hostname
// maxSkew 3, zone maxSkew 5, ScheduleAnyway; PodTopologySpreadArgs
// defaultingType System): a pod selected by a Service,
// ReplicationController, ReplicaSet or StatefulSet of its namespace, the
// objects upstream's DefaultSelector (pkg/scheduler/framework/plugins/helper
// /spread.go) lists. schedkit has no PodTopologySpread yet, so its scores
// for such pods differ from upstream's. "" if no pod is selected.
func systemDefaultSpreading(p *plan) string {
	type selector struct {
		ns, what string
		sel      labels.Selector
	}
	var sels []selector
	for _, s := range p.Steps {
		for _, o := range s.Objects {
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
	if len(sels) == 0 {
		return ""
	}
	for _, s := range p.Steps {
		for _, pod := range s.Pods {
			for _, x := range sels {
				if x.ns == pod.Namespace && x.sel.Matches(labels.Set(pod.Labels)) {
					return fmt.Sprintf("PodTopologySpread (system default constraints): workloadTemplate[%d] pod %s/%s is selected by %s", s.Op.Index, pod.Namespace, pod.Name, x.what)
				}
			}
		}
	}
	return ""
}

// runSchedkit runs p through schedkit's Loop over a Ledger: nodes and
// bound pods fed to the ledger as informer events would be, each
// createPods op's pods added to the loop and scheduled (ScheduleOne until
// the queue is empty), unschedulable pods requeued when nodes are added or
// pods deleted (upstream moves them back on such events).
func runSchedkit(ctx context.Context, p *plan, progress func(int)) (res sideResult) {
	res.Ran = true
	ledger := reserve.New()
	sched, err := framework.New(framework.Config{Seed: 1})
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

	drain := func(tick func()) error {
		for {
			if tick != nil {
				tick()
			}
			a, ok, err := loop.ScheduleOne(ctx)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			if a.Bound() {
				now := time.Now()
				k := a.Pod.Key()
				obs.bound(k, a.Node, now)
				pod := a.Pod.Pod().DeepCopy()
				pod.Spec.NodeName = a.Node
				placed[k] = pod
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
	churnCreate := func(obj runtime.Object) error {
		switch o := obj.(type) {
		case *v1.Node:
			if err := addNode(o); err != nil {
				return err
			}
			loop.Requeue()
		case *v1.Pod:
			churnPods[snapshot.KeyOf(o)] = o
			return loop.Add(o)
		}
		return nil // Services and the like: no schedkit filter reads them
	}
	churnRemove := func(obj runtime.Object) error {
		switch o := obj.(type) {
		case *v1.Node:
			delete(nodes, o.Name)
			loop.Requeue()
			return ledger.RemoveNode(o.Name)
		case *v1.Pod:
			k := snapshot.KeyOf(o)
			loop.Remove(k)
			ledger.RemovePod(k)
			delete(placed, k)
			delete(churnPods, k)
			loop.Requeue()
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
		switch s.Kind {
		case stepNodes:
			for _, n := range s.Nodes {
				if stepErr = addNode(n); stepErr != nil {
					break
				}
			}
			loop.Requeue()
		case stepPods:
			start := time.Now()
			for _, pod := range s.Pods {
				obs.created(pod)
				if stepErr = loop.Add(pod); stepErr != nil {
					break
				}
			}
			if stepErr == nil {
				stepErr = drain(tick)
			}
			if s.Measure {
				obs.measure(start, []string{s.Namespace}, nil)
			}
		case stepChurn:
			live := make([][]runtime.Object, len(s.Churn.templates))
			for i := range live {
				live[i] = make([]runtime.Object, max(s.Churn.Number, 1))
			}
			churns = append(churns, &churnState{c: s.Churn, next: time.Now().Add(s.Churn.Interval), live: live})
		case stepSleep:
			end := time.Now().Add(s.Sleep)
			for time.Now().Before(end) && ctx.Err() == nil {
				stepErr = drain(tick)
				time.Sleep(min(time.Until(end), 5*time.Millisecond))
			}
		case stepDelete:
			for _, k := range obs.existing(s.Delete.Namespace, s.Delete.LabelSelector) {
				loop.Remove(k)
				ledger.RemovePod(k)
				delete(placed, k)
				obs.deleted(k)
			}
			loop.Requeue()
			stepErr = drain(tick)
		case stepStartMetrics:
			obs.startWindow(s.Window)
		case stepStopMetrics:
			obs.stopWindow()
		case stepBarrier, stepObjects:
			// Every queued pod has been tried; namespaces, priority
			// classes, services: no schedkit filter reads them.
		}
		if stepErr != nil {
			res.Err = fmt.Sprintf("workloadTemplate[%d] (%s): %v", s.Op.Index, s.Op.Code, stepErr)
			break
		}
	}
	if err := drain(nil); err != nil && res.Err == "" && !errors.Is(err, context.Canceled) {
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
	obs.finish(&res, nodeList, podList)
	if reason := needsPreemption(loop.Unschedulable(), nodeList, podList); reason != "" {
		res.Unsupported = reason
	}
	return res
}

// needsPreemption reports a pending pod that would fit on some node (its
// taints and required node affinity allowing it) once the bound pods of
// lower priority there were evicted: upstream's DefaultPreemption would
// then evict them, and schedkit, which does not preempt, is not
// comparable. It checks cpu, memory and the pod count.
func needsPreemption(pending []*snapshot.PodInfo, nodes []*v1.Node, bound []*v1.Pod) string {
	type use struct{ cpu, mem, pods int64 }
	byNode := map[string][]*v1.Pod{}
	for _, p := range bound {
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	logger := klog.Background()
	for _, pi := range pending {
		pod := pi.Pod()
		prio := corev1helpers.PodPriority(pod)
		req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		for _, n := range nodes {
			if _, bad := corev1helpers.FindMatchingUntoleratedTaint(logger, n.Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
				return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
			}, true); bad {
				continue
			}
			if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(n); !ok {
				continue
			}
			var u use
			victims := 0
			for _, q := range byNode[n.Name] {
				if corev1helpers.PodPriority(q) >= prio {
					r := resourcehelper.PodRequests(q, resourcehelper.PodResourcesOptions{})
					u.cpu += r.Cpu().MilliValue()
					u.mem += r.Memory().Value()
					u.pods++
				} else {
					victims++
				}
			}
			a := n.Status.Allocatable
			if victims > 0 && u.cpu+req.Cpu().MilliValue() <= a.Cpu().MilliValue() &&
				u.mem+req.Memory().Value() <= a.Memory().Value() && u.pods+1 <= a.Pods().Value() {
				return fmt.Sprintf("preemption: pending pod %s (priority %d) fits on %s after evicting %d lower-priority pods", pi.Key(), prio, n.Name, victims)
			}
		}
	}
	return ""
}
