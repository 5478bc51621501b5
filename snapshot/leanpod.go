package snapshot

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
	"time"
	"unique"
	"weak"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/informer"
)

// Lean pod records (PodInfo.Lean). A lean record drops the pod object and
// keeps, per pod, its key, node name, start time, phase and the rare
// status fields scheduling reads (podExtra); everything else — the
// derived requests, host ports, device demand, parsed terms, spread class
// and a skeleton of the pod (namespace, labels, annotations, owner
// references, spec without nodeName) — is a podShape interned by content,
// so the replicas of a workload share one.

// noStart is PodInfo.startNanos for a pod without status.startTime.
const noStart = math.MinInt64

func startNanosOf(pod *v1.Pod) int64 {
	if t := pod.Status.StartTime; t != nil {
		return t.UnixNano()
	}
	return noStart
}

// phaseCode is status.phase in one byte; phaseOther keeps an unknown
// string in podExtra.
type phaseCode uint8

const (
	phaseNone phaseCode = iota
	phasePending
	phaseRunning
	phaseSucceeded
	phaseFailed
	phaseUnknown
	phaseOther
)

var phaseNames = [...]v1.PodPhase{phaseNone: "", phasePending: v1.PodPending, phaseRunning: v1.PodRunning,
	phaseSucceeded: v1.PodSucceeded, phaseFailed: v1.PodFailed, phaseUnknown: v1.PodUnknown}

func phaseOf(ph v1.PodPhase) phaseCode {
	for c, n := range phaseNames {
		if n == ph {
			return phaseCode(c)
		}
	}
	return phaseOther
}

// podExtra is what a lean record keeps of a pod's rarely set per-pod
// fields; nil when none is set.
type podExtra struct {
	phase      v1.PodPhase // for phaseOther
	deletion   *metav1.Time
	nominated  string
	disruption *v1.PodCondition // the DisruptionTarget condition
}

func extraOf(pod *v1.Pod, ph phaseCode) *podExtra {
	e := podExtra{deletion: pod.DeletionTimestamp, nominated: pod.Status.NominatedNodeName}
	if ph == phaseOther {
		e.phase = pod.Status.Phase
	}
	for i := range pod.Status.Conditions {
		if c := pod.Status.Conditions[i]; c.Type == v1.DisruptionTarget {
			e.disruption = &c
			break
		}
	}
	if e == (podExtra{}) {
		return nil
	}
	if e.deletion != nil {
		d := *e.deletion
		e.deletion = &d
	}
	return &e
}

// Lean returns p as a lean record: p itself if it is one, else a new
// record that keeps what scheduling reads and drops the pod object (see
// [PodInfo] and [PodInfo.Pod]); every accessor but Pod and Retained
// answers as p's. Records of pods with equal templates and derived
// requests share one interned template, held while a record uses it (a
// process-wide table of weak references, like package unique's: sharing
// is invisible, a shape being immutable). O(size of the pod) to marshal
// its template for the look-up; two allocations (the record and the
// look-up key) when the shape is known, a few more the first time.
// Safe for concurrent use.
func (p *PodInfo) Lean() *PodInfo {
	pod := p.pod
	if pod == nil {
		return p
	}
	skel := skeletonOf(pod)
	mk := func() *podShape {
		s := *p.shape
		s.tmpl = skel
		return &s
	}
	var sh *podShape
	if key, ok := shapeKey(skel, p); ok {
		sh = shapes.intern(key, mk)
	} else {
		sh = mk()
	}
	return &PodInfo{keyHash: p.keyHash, shape: sh, key: PodKey{skel.Namespace, p.key.Name},
		nodeName: unique.Make(p.nodeName).Value(), startNanos: p.startNanos, devices: p.devices,
		extra: extraOf(pod, p.phase), phase: p.phase, assigned: p.assigned, terminating: p.terminating}
}

// skeletonOf is pod's template: namespace (interned), labels,
// annotations, owner references and spec without nodeName. It shares the
// maps and slices of pod (read-only), not pod itself.
func skeletonOf(pod *v1.Pod) *v1.Pod {
	s := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: unique.Make(pod.Namespace).Value(), Labels: pod.Labels,
			Annotations: pod.Annotations, OwnerReferences: pod.OwnerReferences},
		Spec: pod.Spec,
	}
	s.Spec.NodeName = ""
	return s
}

// shapeKey is the interning key of p's shape with template skel: the
// template's protobuf encoding (deterministic: map keys sorted) and what
// p derived from outside it (requests read status; the spread class reads
// the deletion timestamp; the device demand is the decoder's reading).
func shapeKey(skel *v1.Pod, p *PodInfo) (string, bool) {
	b, err := skel.Marshal()
	if err != nil {
		return "", false
	}
	r := &p.shape.req
	for _, v := range []*Vector{&r.Requested, &r.Pending, &r.Scoring} {
		b = appendVector(b, v)
	}
	b = binary.AppendVarint(b, r.NonZeroMilliCPU)
	b = binary.AppendVarint(b, r.NonZeroMemory)
	g := &p.shape.gpu
	b = binary.AppendVarint(b, int64(g.Count))
	b = binary.AppendVarint(b, g.MilliGPU)
	b = appendString(b, string(g.CountResource))
	b = appendString(b, string(g.MilliResource))
	b = binary.AppendUvarint(b, uint64(len(g.Models)))
	for _, m := range g.Models {
		b = appendString(b, m)
	}
	var flags byte
	if g.Whole {
		flags |= 1
	}
	if p.terminating {
		flags |= 2
	}
	return string(append(b, flags)), true
}

func appendVector(b []byte, v *Vector) []byte {
	for _, x := range v.base {
		b = binary.AppendVarint(b, x)
	}
	b = binary.AppendUvarint(b, uint64(len(v.ext)))
	for _, x := range v.ext {
		b = binary.AppendVarint(b, x)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// classify is informer.Classify of p's pod, without rebuilding a lean
// record's.
func (p *PodInfo) classify() (informer.Kind, error) {
	if p.pod != nil {
		return informer.Classify(p.pod)
	}
	switch {
	case p.phase == phaseSucceeded || p.phase == phaseFailed:
		return informer.Terminal, nil
	case p.nodeName == "":
		return informer.Unbound, nil
	}
	return informer.Assigned, nil
}

// rebuild is a lean record's Pod.
func (p *PodInfo) rebuild() *v1.Pod {
	// A deep copy: the template's maps and slices are shared by every
	// replica of the shape, and a caller may change the pod it gets.
	q := &v1.Pod{}
	p.shape.tmpl.ObjectMeta.DeepCopyInto(&q.ObjectMeta)
	p.shape.tmpl.Spec.DeepCopyInto(&q.Spec)
	q.Name, q.Namespace = p.key.Name, p.key.Namespace
	q.Spec.NodeName = p.nodeName
	q.Status.Phase = phaseNames[min(p.phase, phaseUnknown)]
	if p.startNanos != noStart {
		st := metav1.NewTime(time.Unix(0, p.startNanos))
		q.Status.StartTime = &st
	}
	if e := p.extra; e != nil {
		if p.phase == phaseOther {
			q.Status.Phase = e.phase
		}
		q.DeletionTimestamp = e.deletion
		q.Status.NominatedNodeName = e.nominated
		if e.disruption != nil {
			q.Status.Conditions = []v1.PodCondition{*e.disruption}
		}
	}
	return q
}

// shapes interns the shapes of lean records (PodInfo.Lean).
var shapes = shapeTable{m: map[string]weak.Pointer[podShape]{}}

// shapeTable maps a shape key to a weak reference to the shape; an entry
// is removed once its shape is collected.
type shapeTable struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[podShape]
}

func (t *shapeTable) intern(key string, mk func() *podShape) *podShape {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w, ok := t.m[key]; ok {
		if s := w.Value(); s != nil {
			return s
		}
	}
	s := mk()
	t.m[key] = weak.Make(s)
	runtime.AddCleanup(s, t.forget, key)
	return s
}

// forget removes key's entry if its shape is gone (a newer live shape
// under the same key stays).
func (t *shapeTable) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w, ok := t.m[key]; ok && w.Value() == nil {
		delete(t.m, key)
	}
}
