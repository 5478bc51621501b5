package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// sideResult is what one scheduler did with one workload.
type sideResult struct {
	Ran bool `json:"ran"`
	// Unsupported says why schedkit's answers would not be comparable
	// (a feature it does not implement); Err why the run stopped.
	Unsupported string `json:"unsupported,omitempty"`
	Err         string `json:"error,omitempty"`
	// Spreading says why schedkit ran PodTopologySpread (spreadingReason);
	// "" when it did not need to (upstream's plugin skips every pod then).
	Spreading string `json:"spreading,omitempty"`
	// Scheduled and Pending count the workload's createPods pods at the
	// end (bound, not bound); Preempted the pods the scheduler deleted
	// (preemption victims, the workload's and churn's), Evicted their
	// keys ("namespace/name", sorted).
	Scheduled int      `json:"scheduled"`
	Pending   int      `json:"pending"`
	Preempted int      `json:"preempted"`
	Evicted   []string `json:"evicted,omitempty"`
	// Attempts counts SK's scheduling cycles (Loop.ScheduleOne calls that
	// took a pod); 0 for UP.
	Attempts int `json:"attempts,omitempty"`
	// bound lists the workload's createPods pods bound at the end
	// ("namespace/name", sorted): the test compares the two sides.
	bound []string
	// MeasuredPods were bound in the measured windows (createPods ops with
	// collectMetrics, or start/stopCollectingMetrics) over
	// MeasuredSeconds: from the window's start (the first pod's creation)
	// to the last of those binds. PodsPerSecond is their ratio.
	MeasuredPods    int       `json:"measuredPods"`
	MeasuredSeconds float64   `json:"measuredSeconds"`
	PodsPerSecond   float64   `json:"podsPerSecond"`
	Placement       placement `json:"placement"`
}

type podState struct {
	pod     *v1.Pod
	node    string
	boundAt time.Time
	created bool
	deleted bool
}

type window struct {
	start      time.Time
	namespaces []string
	sel        map[string]string
}

// observer follows the workload's createPods pods through one run:
// created, bound (when, where), deleted; and the measured windows. Safe
// for concurrent use (the upstream scheduler binds from its own
// goroutines).
type observer struct {
	mu       sync.Mutex
	pods     map[snapshot.PodKey]*podState
	byNS     map[string][]*podState
	open     *window
	measured []measurement
	nsLabels map[string]map[string]string
}

type measurement struct {
	pods    int
	seconds float64
}

func newObserver(p *plan) *observer {
	o := &observer{pods: map[snapshot.PodKey]*podState{}, byNS: map[string][]*podState{}, nsLabels: map[string]map[string]string{}}
	for _, s := range p.Steps {
		for _, obj := range s.Objects {
			if ns, ok := obj.(*v1.Namespace); ok {
				o.nsLabels[ns.Name] = ns.Labels
			}
		}
		for _, pod := range s.Pods {
			ps := &podState{pod: pod}
			o.pods[snapshot.KeyOf(pod)] = ps
			o.byNS[pod.Namespace] = append(o.byNS[pod.Namespace], ps)
		}
	}
	return o
}

func (o *observer) created(pod *v1.Pod) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ps := o.pods[snapshot.KeyOf(pod)]; ps != nil {
		ps.created = true
	}
}

func (o *observer) bound(k snapshot.PodKey, node string, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ps := o.pods[k]; ps != nil {
		ps.node, ps.boundAt = node, at
	}
}

func (o *observer) deleted(k snapshot.PodKey) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ps := o.pods[k]; ps != nil {
		ps.deleted = true
	}
}

func matches(labels, sel map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// countIf counts the created, not deleted pods of ns (every namespace if
// "") matching sel for which f holds. The caller holds no lock of o.
func (o *observer) countIf(ns string, sel map[string]string, f func(k snapshot.PodKey, bound bool) bool) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	visit := func(list []*podState) {
		for _, ps := range list {
			if ps.created && !ps.deleted && matches(ps.pod.Labels, sel) && f(snapshot.KeyOf(ps.pod), ps.node != "") {
				n++
			}
		}
	}
	if ns == "" {
		for _, list := range o.byNS {
			visit(list)
		}
	} else {
		visit(o.byNS[ns])
	}
	return n
}

// existing lists the created, not deleted pods of ns matching sel.
func (o *observer) existing(ns string, sel map[string]string) []snapshot.PodKey {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []snapshot.PodKey
	for _, ps := range o.byNS[ns] {
		if ps.created && !ps.deleted && matches(ps.pod.Labels, sel) {
			out = append(out, snapshot.KeyOf(ps.pod))
		}
	}
	return out
}

// waitBound polls until want pods of ns matching sel are bound.
func (o *observer) waitBound(ctx context.Context, ns string, sel map[string]string, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n := o.countIf(ns, sel, func(_ snapshot.PodKey, bound bool) bool { return bound })
		if n >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d pods in %s bound after %s", n, want, ns, timeout)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%d of %d pods in %s bound when stopped: %w", n, want, ns, ctx.Err())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// measure closes a window that began at start: the pods of namespaces
// (all if empty) matching sel bound since start, over the time to the
// last of their binds.
func (o *observer) measure(start time.Time, namespaces []string, sel map[string]string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	in := map[string]bool{}
	for _, ns := range namespaces {
		in[ns] = true
	}
	n, last := 0, start
	for _, ps := range o.pods {
		if ps.node == "" || ps.boundAt.Before(start) || len(in) > 0 && !in[ps.pod.Namespace] || !matches(ps.pod.Labels, sel) {
			continue
		}
		n++
		if ps.boundAt.After(last) {
			last = ps.boundAt
		}
	}
	o.measured = append(o.measured, measurement{pods: n, seconds: last.Sub(start).Seconds()})
}

func (o *observer) startWindow(op *startMetricsOp) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.open = &window{start: time.Now(), namespaces: op.Namespaces, sel: op.LabelSelector}
}

func (o *observer) stopWindow() {
	o.mu.Lock()
	w := o.open
	o.open = nil
	o.mu.Unlock()
	if w != nil {
		o.measure(w.start, w.namespaces, w.sel)
	}
}

// finish fills res from the observations and the cluster's final state.
func (o *observer) finish(res *sideResult, nodes []*v1.Node, pods []*v1.Pod) {
	o.mu.Lock()
	res.bound = res.bound[:0]
	for k, ps := range o.pods {
		if !ps.created || ps.deleted {
			continue
		}
		if ps.node != "" {
			res.Scheduled++
			res.bound = append(res.bound, k.String())
		} else {
			res.Pending++
		}
	}
	slices.Sort(res.bound)
	secs := 0.0
	for _, m := range o.measured {
		res.MeasuredPods += m.pods
		secs += m.seconds
	}
	o.mu.Unlock()
	res.MeasuredSeconds = secs
	if secs > 0 {
		res.PodsPerSecond = float64(res.MeasuredPods) / secs
	}
	res.Placement = measurePlacement(nodes, pods, o.nsLabels)
}

// sortedKeys lists the keys of set as "namespace/name", sorted.
func sortedKeys(set map[snapshot.PodKey]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k.String())
	}
	slices.Sort(out)
	return out
}
