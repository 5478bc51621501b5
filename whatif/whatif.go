package whatif

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
)

// ErrInvalidInput is wrapped by every error a question returns for bad
// input (a nil fork, a nil pod, a negative limit, an unknown node); the
// message names the object and the field. The fork is then as before the
// call.
var ErrInvalidInput = errors.New("whatif: invalid input")

// Placement is one pod's answer: the node the scheduler chose for it, or
// why it has none.
type Placement struct {
	// Pod is the pod placed (or not).
	Pod *snapshot.PodInfo
	// Node is the chosen node's name; "" when the pod is not placed.
	Node string
	// Diagnosis is the scheduling cycle's diagnosis when the scheduler
	// found no node for the pod; nil otherwise.
	Diagnosis *framework.Diagnosis
	// Why explains a pod left unplaced for a reason other than a failed
	// scheduling cycle (a limit, a gang below its minimum, a rule that
	// blocks a drain); "" otherwise.
	Why string
}

// String is "ns/name -> node" or "ns/name: reason".
func (p Placement) String() string {
	switch {
	case p.Node != "":
		return p.Pod.Key().String() + " -> " + p.Node
	case p.Diagnosis != nil:
		return p.Pod.Key().String() + ": " + p.Diagnosis.Message()
	default:
		return p.Pod.Key().String() + ": " + p.Why
	}
}

// open checks f and opens a layer on it.
func open(f *snapshot.Fork) error {
	if f == nil {
		return fmt.Errorf("fork is nil: %w", ErrInvalidInput)
	}
	f.Fork()
	return nil
}

// place runs one scheduling cycle for pi on f and, when it finds a node,
// binds pi there (the Decision's pod, which records any GPU devices).
func place(s *framework.Scheduler, f *snapshot.Fork, pi *snapshot.PodInfo) (Placement, error) {
	d, err := s.SchedulePod(f, pi)
	if err != nil {
		return Placement{}, fmt.Errorf("pod %s: %w", pi.Key(), err)
	}
	if !d.Scheduled() {
		return Placement{Pod: pi, Diagnosis: d.Diagnosis}, nil
	}
	if err := f.AddPodInfo(d.Pod, d.Node); err != nil {
		return Placement{}, err
	}
	return Placement{Pod: d.Pod, Node: d.Node}, nil
}

// copyOf is template named name, with no node and no UID: the Spec and
// the rest of the metadata are shared (read-only).
func copyOf(template *v1.Pod, name string) *v1.Pod {
	c := *template
	c.ObjectMeta = *template.ObjectMeta.DeepCopy()
	c.Name = name
	c.GenerateName = ""
	c.UID = ""
	c.Spec.NodeName = ""
	return &c
}

// copyName is the name of a template's i-th copy: "<name>-<i>" (the
// template's GenerateName, which ends in "-" by convention, then i).
func copyName(template *v1.Pod, i int) string {
	if template.Name == "" {
		return template.GenerateName + strconv.Itoa(i)
	}
	return template.Name + "-" + strconv.Itoa(i)
}

// queueOrder sorts pods as framework.Loop's queue does: higher
// spec.priority first, then in the given order.
func queueOrder(pods []*snapshot.PodInfo) {
	sort.SliceStable(pods, func(i, j int) bool { return priority(pods[i].Pod()) > priority(pods[j].Pod()) })
}

func priority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}
