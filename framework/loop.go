package framework

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// BindFunc binds a scheduled pod to d.Node — typically a Binding POST to
// the API server, or in a simulator an update of its own state. It runs
// in the goroutine that called [Loop.ScheduleOne] or [Loop.ScheduleAll]
// and should honour ctx.
type BindFunc func(ctx context.Context, d Decision) error

// EvictFunc evicts the victims of a preemption from node — typically
// pod deletions through the API server (upstream also sets their
// DisruptionTarget condition), or in a simulator an update of its own
// state. It runs beside the [BindFunc], in the same goroutine, and should
// honour ctx. The Loop does not remove the victims from the ledger itself
// (the informer's delete events do) unless the EvictFunc is nil.
type EvictFunc func(ctx context.Context, node string, victims []*snapshot.PodInfo) error

// Attempt is one pod's pass through a [Loop]: the scheduling decision and,
// if the pod was scheduled, how the bind went, or, if it fit nowhere and
// preemption is on, what preemption did.
type Attempt struct {
	Decision
	// BindErr is the BindFunc's error; the hold was then released and the
	// pod requeued. nil when the bind succeeded or the pod was not
	// scheduled.
	BindErr error
	// UnreserveErr is non-nil when the bind failed (BindErr) and the
	// ledger refused to release the pod's hold because its journal is
	// broken (reserve.Ledger.Unreserve returned false while the ledger
	// still holds the pod; see reserve.Ledger.SetJournal). It names the
	// pod and the node and wraps reserve.Ledger.JournalErr's error
	// (reserve.ErrJournal). The pod is requeued all the same, and its
	// next attempt retries the Unreserve instead of skipping the pod as
	// placed (the hold is the Loop's own, not a placement): the pod is
	// never dropped while its hold is left over from a failed bind.
	UnreserveErr error
	// Preemption is the outcome of preemption for a pod that fit nowhere
	// (nil when preemption is off or the pod was scheduled). When it
	// found a node, the victims were evicted, the pod nominated to the
	// node and requeued.
	Preemption *Preemption
	// Skipped is non-nil when the pod was dropped without a cycle: it was
	// being deleted (metadata.deletionTimestamp set; the error wraps
	// [ErrPodDeleting] and carries upstream's FailedScheduling event
	// message, "skip schedule deleting pod: <namespace>/<name>"; upstream
	// skips such a pod without a cycle and without requeueing it, v1.37
	// schedule_one.go skipPodSchedule case 1), or
	// the ledger already holds it (the same pod: same metadata.uid, or
	// either uid empty; see Waiting) (phase Held or Confirmed: someone
	// reserved it outside this Loop) or reports it bound (another
	// scheduler bound it and the informer's report came before
	// [Loop.Remove]); it wraps [ErrAlreadyPlaced] and names the pod, the
	// phase and the node. Upstream likewise skips an assumed pod without
	// requeueing it (v1.37 schedule_one.go skipPodSchedule) and drops a
	// pod from its queue when the informer reports it assigned
	// (eventhandlers.go updatePod). Decision holds only the pod.
	Skipped error
	// Waiting is non-nil when the ledger records another incarnation of
	// the pod under its namespace/name (both metadata.uid set and
	// different: a StatefulSet pod deleted and recreated, the new pod's
	// add reaching the Loop before the old one's delete reached the
	// ledger). Upstream's queue and cache key pods by UID, so the new pod
	// is not the placed one; the ledger keys by namespace/name and cannot
	// hold both, so the pod stays queued and waits until the old one is
	// removed (reserve.Ledger.RemovePod). It names the pod, both UIDs, the
	// phase and the node. Decision holds only the pod.
	Waiting error
}

// Bound reports whether the pod was scheduled and bound.
func (a *Attempt) Bound() bool { return a.Scheduled() && a.BindErr == nil }

// FailureMessage is upstream's FitError.Error() for an attempt that fit
// nowhere, as kube-scheduler logs it and puts in the FailedScheduling
// event (v1.37 pkg/scheduler/framework/types.go): the filter diagnosis
// ([Diagnosis.Message]) followed, when preemption ran, by a space and
// its PostFilter message ([Preemption.Message]), as in
//
//	0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.
//
// "" for a scheduled pod. Allocates.
func (a *Attempt) FailureMessage() string {
	msg := a.Diagnosis.Message()
	if msg == "" || a.Diagnosis.NumAllNodes == 0 {
		return msg // no FitError (upstream's ErrNoNodesAvailable runs no PostFilter)
	}
	if a.Preemption != nil && a.Preemption.Message != "" {
		msg += " " + a.Preemption.Message
	}
	return msg
}

// Loop is a minimal scheduler loop over a [reserve.Ledger]: a queue of
// pending pods ordered by priority, then arrival (upstream's PrioritySort
// queue-sort plugin: higher spec.priority first, earlier first among
// equals), and for each pod a scheduling cycle ([Scheduler.Schedule]),
// the caller's Bind, then ledger.Confirm on success or ledger.Unreserve
// and a requeue on failure.
//
// A pod that fits nowhere is set aside (upstream's unschedulable pool)
// until [Loop.Requeue] — call it when the cluster changed. Arrival is a
// counter, not a clock: the Loop reads no time.
//
// Not safe for concurrent use. The ledger may be fed informer events
// concurrently (it has its own lock).
type Loop struct {
	sched  *Scheduler
	ledger *reserve.Ledger
	bind   BindFunc

	queue         podQueue
	queued        map[snapshot.PodKey]bool
	unschedulable []*snapshot.PodInfo
	seq           uint64
	// unreleased holds the pods whose bind failed and whose hold the
	// ledger refused to release (Attempt.UnreserveErr): their next
	// attempt retries the Unreserve rather than skipping them as placed.
	unreleased map[snapshot.PodKey]bool

	preempt *PreemptOptions // nil: preemption off
	evict   EvictFunc
}

// SetPreemption turns preemption on (upstream's DefaultPreemption
// PostFilter): a pod that fits nowhere runs [Scheduler.Preempt] on the
// ledger's snapshot with opts; if a node is found, evict evicts the
// victims (nil: the ledger evicts them at once with reserve.Ledger.Evict,
// as in a simulator), the pod is nominated to the node
// ([Scheduler.Nominate], which holds it against lower-priority pods) and
// requeued, as upstream requeues it when the victims are gone.
// opts.Objects nil (the usual case): PriorityClasses and PDBs are read
// from the ledger's snapshot at each cycle, so objects the ledger is fed
// later count.
func (l *Loop) SetPreemption(opts PreemptOptions, evict EvictFunc) {
	l.preempt, l.evict = &opts, evict
}

// NewLoop returns a loop scheduling with s, holding capacity in ledger and
// binding with bind (nil: binding always succeeds and the pod is reported
// bound to the ledger at once with reserve.Ledger.AddPodInfo, as in a
// simulator that keeps its state in the ledger).
func NewLoop(s *Scheduler, ledger *reserve.Ledger, bind BindFunc) *Loop {
	return &Loop{sched: s, ledger: ledger, bind: bind, queued: map[snapshot.PodKey]bool{}, unreleased: map[snapshot.PodKey]bool{}}
}

// Add parses pod with the ledger's DeviceDecoder (reserve.WithDeviceDecoder)
// and queues it; see [Loop.AddPodInfo]. A pod that does not parse is an
// error wrapping [ErrInvalidPod] and the parser's error
// (snapshot.ErrInvalidObject, ...) — among them an empty metadata.name or
// metadata.namespace (a Required value error: pods built in code must set
// a namespace; see snapshot.ValidatePod). Every error starts
// "framework: Loop.Add:".
func (l *Loop) Add(pod *v1.Pod) error {
	pi, err := snapshot.DecodePodInfo(pod, l.decoder())
	if err != nil {
		return fmt.Errorf("framework: Loop.Add: %w: %w", err, ErrInvalidPod)
	}
	return l.add("Add", pi)
}

// decoder returns the DeviceDecoder pods are parsed with: the ledger's
// (snapshot.NvidiaDevices without a ledger).
func (l *Loop) decoder() snapshot.DeviceDecoder {
	if l.ledger == nil {
		return snapshot.NvidiaDevices
	}
	return l.ledger.Snapshot().DeviceDecoder()
}

// AddPodInfo queues a pending pod. A pod already queued or set aside as
// unschedulable, a pod in status.phase Succeeded or Failed (terminal:
// upstream's pod informer excludes it with a field selector, v1.37
// scheduler.go, so it is never queued), or a pod with spec.nodeName set (upstream's scheduler
// queues only unassigned pods — v1.37 eventhandlers.go addPod sends
// assigned ones to the cache, except resize-deferred ones behind the
// InPlacePodVerticalScalingSchedulerPreemption gate, which schedkit does
// not model; report it with reserve.Ledger.AddPod), is an error wrapping
// [ErrInvalidPod] that queues nothing. A pod with
// priorityClassName but no spec.priority is queued with the class's value
// in spec.priority (of a copy), as the API server's admission sets it;
// the class is read from the ledger (or from SetPreemption's
// opts.Objects), and an unknown class is an error wrapping ErrInvalidPod
// that queues nothing. O(log n).
func (l *Loop) AddPodInfo(pi *snapshot.PodInfo) error { return l.add("AddPodInfo", pi) }

// add is AddPodInfo; op names the entry point in errors.
func (l *Loop) add(op string, pi *snapshot.PodInfo) error {
	if pi == nil {
		return fmt.Errorf("framework: Loop.%s: pod is nil: %w", op, ErrInvalidPod)
	}
	if l.queued[pi.Key()] {
		return fmt.Errorf("framework: Loop.%s: pod %s is already queued: %w", op, pi.Key(), ErrInvalidPod)
	}
	if ph := pi.Pod().Status.Phase; ph == v1.PodSucceeded || ph == v1.PodFailed {
		return fmt.Errorf("framework: Loop.%s: pod %s: status.phase is %s: a terminal pod is not scheduled (upstream's informer excludes it): %w", op, pi.Key(), ph, ErrInvalidPod)
	}
	if n := pi.Pod().Spec.NodeName; n != "" {
		return fmt.Errorf("framework: Loop.%s: pod %s: spec.nodeName is %q: a bound pod is not queued (upstream's queue takes only unassigned pods); report it with reserve.Ledger.AddPod: %w", op, pi.Key(), n, ErrInvalidPod)
	}
	if p := pi.Pod(); p.Spec.Priority == nil && p.Spec.PriorityClassName != "" {
		var classes PriorityClasses
		if l.ledger != nil {
			classes = l.ledger.Snapshot()
		}
		if l.preempt != nil && l.preempt.Objects != nil {
			classes = l.preempt.Objects
		}
		prio, err := PodPriority(p, classes)
		if err != nil { // the only error of a non-nil pod: an unknown class
			return fmt.Errorf("framework: Loop.%s: pod %s: spec.priorityClassName: no PriorityClass %q: %w", op, pi.Key(), p.Spec.PriorityClassName, ErrInvalidPod)
		}
		q := p.DeepCopy()
		q.Spec.Priority = &prio
		if pi, err = snapshot.DecodePodInfo(q, l.decoder()); err != nil {
			return fmt.Errorf("framework: Loop.%s: %w: %w", op, err, ErrInvalidPod)
		}
	}
	l.queued[pi.Key()] = true
	l.push(pi)
	return nil
}

func (l *Loop) push(pi *snapshot.PodInfo) {
	var prio int32
	if p := pi.Pod().Spec.Priority; p != nil {
		prio = *p
	}
	heap.Push(&l.queue, queuedPod{pi: pi, priority: prio, seq: l.seq})
	l.seq++
}

// Remove drops the pod with key k from the queue or the unschedulable
// pods (the pod was deleted, or another scheduler bound it); it reports
// whether the pod was there. O(n).
func (l *Loop) Remove(k snapshot.PodKey) bool {
	if !l.queued[k] {
		return false
	}
	l.drop(k)
	for i := range l.queue {
		if l.queue[i].pi.Key() == k {
			heap.Remove(&l.queue, i)
			return true
		}
	}
	l.unschedulable = slices.DeleteFunc(l.unschedulable, func(pi *snapshot.PodInfo) bool { return pi.Key() == k })
	return true
}

// Len is the number of pods waiting in the queue (not counting the
// unschedulable ones).
func (l *Loop) Len() int { return len(l.queue) }

// Unschedulable returns the pods set aside because they fit nowhere, in
// the order they failed. The slice is the caller's.
func (l *Loop) Unschedulable() []*snapshot.PodInfo {
	return append([]*snapshot.PodInfo(nil), l.unschedulable...)
}

// Requeue moves every unschedulable pod back into the queue (upstream's
// MoveAllToActiveOrBackoffQueue after a cluster event); it returns how
// many.
func (l *Loop) Requeue() int {
	n := len(l.unschedulable)
	for _, pi := range l.unschedulable {
		l.push(pi)
	}
	clear(l.unschedulable)
	l.unschedulable = l.unschedulable[:0]
	return n
}

// ScheduleOne takes the first pod of the queue through one cycle and its
// bind (or drops it, see [Attempt.Skipped]). ok is false when the queue
// was empty. err is ctx's error (nothing
// was taken from the queue) or a scheduling error (a filter or scorer
// failed, the ledger refused the pod); the pod is then requeued.
func (l *Loop) ScheduleOne(ctx context.Context) (a Attempt, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return Attempt{}, false, err
	}
	if len(l.queue) == 0 {
		return Attempt{}, false, nil
	}
	pi := heap.Pop(&l.queue).(queuedPod).pi
	a, retry, err := l.attempt(ctx, pi)
	if retry {
		l.push(pi)
	}
	return a, true, err
}

// attempt schedules and binds pi; retry reports that it should be queued
// again.
func (l *Loop) attempt(ctx context.Context, pi *snapshot.PodInfo) (a Attempt, retry bool, err error) {
	if l.unreleased[pi.Key()] {
		// This Loop's bind of the pod failed and the hold outlived it:
		// release it now, or report it again and keep the pod.
		if err := l.release(pi.Key()); err != nil {
			a.Pod = pi
			a.UnreserveErr = err
			return a, true, nil
		}
	}
	if pi.Terminating() {
		l.drop(pi.Key())
		a.Pod = pi
		a.Skipped = fmt.Errorf("framework: Loop: skip schedule deleting pod: %s (metadata.deletionTimestamp is set): %w", pi.Key(), ErrPodDeleting)
		return a, false, nil
	}
	if ph, node, ok := l.ledger.PodPhase(pi.Key()); ok {
		var uid types.UID // empty for a lean record, which drops it
		if pi.Retained() {
			uid = pi.Pod().UID
		}
		if old, _ := l.ledger.PodUID(pi.Key()); uid != "" && old != "" && old != uid {
			a.Pod = pi
			a.Waiting = fmt.Errorf("framework: Loop: pod %s (uid %s): the ledger has another incarnation (uid %s) %s on node %s; waiting until it is removed", pi.Key(), uid, old, ph, node)
			return a, true, nil
		}
		l.drop(pi.Key())
		a.Pod = pi
		a.Skipped = fmt.Errorf("framework: Loop: pod %s: the ledger has it %s on node %s: %w", pi.Key(), ph, node, ErrAlreadyPlaced)
		return a, false, nil
	}
	d, err := l.sched.Schedule(l.ledger, pi)
	a.Decision = d
	if err != nil {
		return a, true, err
	}
	if !d.Scheduled() {
		if l.preempt != nil {
			return l.preemptFor(ctx, pi, a)
		}
		l.unschedulable = append(l.unschedulable, pi)
		return a, false, nil
	}
	if l.bind != nil {
		a.BindErr = l.bind(ctx, d)
	}
	if a.BindErr != nil {
		if err := l.release(pi.Key()); err != nil {
			l.unreleased[pi.Key()] = true
			a.UnreserveErr = err
		}
		return a, true, nil
	}
	l.drop(pi.Key()) // bound: no longer queued or nominated
	// ErrNotHeld means the informer already reported the pod bound and
	// then deleted: nothing is held either way.
	_ = l.ledger.Confirm(pi.Key())
	if l.bind == nil {
		// No API server, so no informer will report the pod bound: do it
		// here, so the ledger holds it as a bound pod (with its devices)
		// rather than as a confirmation every later snapshot re-checks.
		_ = l.ledger.AddPodInfo(d.Pod, d.Node)
	}
	return a, false, nil
}

// release unreserves the pod with key k after a failed bind. It returns
// nil when the ledger no longer holds the pod (released now, or before:
// expired, removed, reported bound by the informer), else an error naming
// the pod and node that wraps the ledger's journal error.
func (l *Loop) release(k snapshot.PodKey) error {
	if l.ledger.Unreserve(k) {
		delete(l.unreleased, k)
		return nil
	}
	ph, node, ok := l.ledger.PodPhase(k)
	if !ok || ph == reserve.Bound {
		delete(l.unreleased, k)
		return nil
	}
	jerr := l.ledger.JournalErr()
	if jerr == nil { // not expected: Unreserve refuses only with a broken journal
		jerr = errors.New("reserve.Ledger.Unreserve released nothing")
	}
	return fmt.Errorf("framework: Loop: pod %s: the bind failed and Unreserve of its %s hold on node %s was refused: %w", k, ph, node, jerr)
}

// drop forgets the pod with key k, which is out of the queue: it is no
// longer queued nor nominated.
func (l *Loop) drop(k snapshot.PodKey) {
	delete(l.queued, k)
	delete(l.unreleased, k)
	if l.preempt != nil {
		l.sched.unnominate(k)
	}
}

// preemptFor runs preemption for pi, which fit nowhere, and applies it.
func (l *Loop) preemptFor(ctx context.Context, pi *snapshot.PodInfo, a Attempt) (Attempt, bool, error) {
	res, err := l.sched.Preempt(l.ledger.Snapshot(), pi, *l.preempt)
	if err != nil {
		return a, true, err
	}
	a.Preemption = &res
	if !res.Found() {
		l.unschedulable = append(l.unschedulable, pi)
		return a, false, nil
	}
	if l.evict != nil {
		err = l.evict(ctx, res.Node, res.Victims)
	} else {
		keys := make([]snapshot.PodKey, len(res.Victims))
		for i, v := range res.Victims {
			keys[i] = v.Key()
		}
		err = l.ledger.Evict(res.Node, keys)
	}
	if err != nil {
		return a, true, fmt.Errorf("framework: evicting the victims of pod %s on node %s: %w", pi.Key(), res.Node, err)
	}
	l.sched.Nominate(pi, res.Priority, res.Node)
	return a, true, nil
}

// ScheduleAll takes every pod queued at the call through one cycle and its
// bind, in queue order, and returns the attempts in that order. Pods whose
// bind failed go back into the queue after the pass (so each pod is tried
// at most once per call); unschedulable pods are set aside; pods being
// deleted and pods the ledger already holds or reports bound are dropped
// ([Attempt.Skipped]). It stops early
// when ctx is done (returning ctx's error) or at a scheduling error (the
// pod is requeued).
func (l *Loop) ScheduleAll(ctx context.Context) ([]Attempt, error) {
	var out []Attempt
	var retry []*snapshot.PodInfo
	defer func() {
		for _, pi := range retry {
			l.push(pi)
		}
	}()
	for len(l.queue) > 0 {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		pi := heap.Pop(&l.queue).(queuedPod).pi
		a, again, err := l.attempt(ctx, pi)
		if again {
			retry = append(retry, pi)
		}
		if err != nil {
			return out, err
		}
		out = append(out, a)
	}
	return out, nil
}

// queuedPod is a queue entry; seq is the arrival number.
type queuedPod struct {
	pi       *snapshot.PodInfo
	priority int32
	seq      uint64
}

// podQueue is a heap ordered by priority (high first), then arrival.
type podQueue []queuedPod

func (q podQueue) Len() int { return len(q) }
func (q podQueue) Less(i, j int) bool {
	if q[i].priority != q[j].priority {
		return q[i].priority > q[j].priority
	}
	return q[i].seq < q[j].seq
}
func (q podQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *podQueue) Push(x any)   { *q = append(*q, x.(queuedPod)) }
func (q *podQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	old[len(old)-1] = queuedPod{}
	*q = old[:len(old)-1]
	return x
}
