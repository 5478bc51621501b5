package parity

import (
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PreemptCase is one random preemption problem. Pods carry spec.priority
// as upstream sees it (the Priority admission plugin has run); ClassOnly
// names the pods that schedkit sees with only spec.priorityClassName
// (resolved through Classes).
type PreemptCase struct {
	Nodes     []*v1.Node
	Bound     []*v1.Pod
	Nominated []*v1.Pod // pending pods with status.nominatedNodeName
	PDBs      []*policy.PodDisruptionBudget
	Classes   map[string]*schedulingv1.PriorityClass
	ClassOnly map[string]bool
	Pod       *v1.Pod
}

var preemptPriorities = []int32{-5, 0, 0, 10, 10, 50, 100, 1000}

// GenPreemptCase draws a case: 1-8 nodes (some tainted, cordoned or
// labelled), up to 5 pods per node with mixed priorities, labels and start
// times (unique, so upstream's victim order is defined), some host ports,
// some terminating by preemption; 0-3 PDBs (overlapping selectors,
// disruptionsAllowed 0-2, some disruptedPods); 0-2 nominated pods; a
// preemptor (sometimes preemptionPolicy Never, nominated, with a node
// selector or a host port).
func GenPreemptCase(r *rand.Rand) PreemptCase {
	c := PreemptCase{Classes: map[string]*schedulingv1.PriorityClass{}, ClassOnly: map[string]bool{}}
	for _, p := range preemptPriorities {
		name := fmt.Sprintf("prio%d", p)
		c.Classes[name] = &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: p}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	nn := 1 + r.IntN(8)
	for i := range nn {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{"zone": fmt.Sprintf("z%d", r.IntN(2))}}}
		n.Status.Allocatable = v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(int64(1000*(1+r.IntN(4))), resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(int64(1+r.IntN(8))<<30, resource.BinarySI),
			v1.ResourcePods:   *resource.NewQuantity(int64(2+r.IntN(5)), resource.DecimalSI),
		}
		n.Status.Capacity = n.Status.Allocatable
		switch r.IntN(20) {
		case 0:
			n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}}
		case 1:
			n.Spec.Unschedulable = true
		}
		c.Nodes = append(c.Nodes, n)
	}
	pod := func(name string, prio int32) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)}}
		p.Spec.Priority = &prio
		p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(int64(100*(1+r.IntN(15))), resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(int64(r.IntN(5))<<28, resource.BinarySI),
		}}}}
		if r.IntN(4) == 0 {
			c.ClassOnly[name] = true
		}
		p.Spec.PriorityClassName = fmt.Sprintf("prio%d", prio)
		return p
	}
	np := 2*nn + r.IntN(3*nn+1)
	perm := r.Perm(np) // unique start times
	portUsed := map[string]bool{}
	for i := range np {
		p := pod(fmt.Sprintf("pod-%d", i), preemptPriorities[r.IntN(len(preemptPriorities))])
		p.Spec.NodeName = c.Nodes[r.IntN(nn)].Name
		st := metav1.NewTime(t0.Add(time.Duration(perm[i]) * time.Minute))
		p.Status.StartTime = &st
		p.Status.Phase = v1.PodRunning
		if r.IntN(3) > 0 {
			p.Labels = map[string]string{"app": fmt.Sprintf("a%d", r.IntN(4))}
		}
		// At most one pod per node uses the host port: with two, removing
		// one frees the port upstream (its used ports are a set), which
		// differences_test.go names; schedkit keeps it in use.
		if r.IntN(20) == 0 && !portUsed[p.Spec.NodeName] {
			portUsed[p.Spec.NodeName] = true
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{HostPort: 8080, ContainerPort: 8080, Protocol: v1.ProtocolTCP}}
		}
		if r.IntN(20) == 0 {
			now := metav1.NewTime(t0)
			p.DeletionTimestamp = &now
			p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
		}
		c.Bound = append(c.Bound, p)
	}
	for i := range r.IntN(4) {
		d := &policy.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pdb-%d", i), Namespace: "default"}}
		if r.IntN(3) == 0 {
			d.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn,
				Values: []string{fmt.Sprintf("a%d", r.IntN(4)), fmt.Sprintf("a%d", r.IntN(4))}}}}
		} else {
			d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("a%d", r.IntN(4))}}
		}
		d.Status.DisruptionsAllowed = int32(r.IntN(3))
		if np > 0 && r.IntN(4) == 0 {
			d.Status.DisruptedPods = map[string]metav1.Time{fmt.Sprintf("pod-%d", r.IntN(np)): metav1.NewTime(t0)}
		}
		c.PDBs = append(c.PDBs, d)
	}
	for i := range r.IntN(3) {
		p := pod(fmt.Sprintf("nominated-%d", i), preemptPriorities[r.IntN(len(preemptPriorities))])
		p.Status.NominatedNodeName = c.Nodes[r.IntN(nn)].Name
		c.Nominated = append(c.Nominated, p)
	}
	c.Pod = pod("preemptor", preemptPriorities[2+r.IntN(len(preemptPriorities)-2)])
	c.Pod.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = *resource.NewMilliQuantity(int64(200*(1+r.IntN(15))), resource.DecimalSI)
	switch r.IntN(10) {
	case 0:
		never := v1.PreemptNever
		c.Pod.Spec.PreemptionPolicy = &never
	case 1:
		c.Pod.Spec.NodeSelector = map[string]string{"zone": "z0"}
	case 2:
		c.Pod.Spec.Containers[0].Ports = []v1.ContainerPort{{HostPort: 8080, ContainerPort: 8080, Protocol: v1.ProtocolTCP}}
	case 3, 4:
		c.Pod.Status.NominatedNodeName = c.Nodes[r.IntN(nn)].Name
		c.Nominated = append(c.Nominated, c.Pod)
	}
	return c
}
