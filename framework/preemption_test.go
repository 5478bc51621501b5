package framework

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// objects is a map-backed PreemptionObjects.
type objects struct {
	classes map[string]*schedulingv1.PriorityClass
	pdbs    []*policyv1.PodDisruptionBudget
}

func (o *objects) PriorityClass(name string) *schedulingv1.PriorityClass { return o.classes[name] }

func (o *objects) PodDisruptionBudgets(ns string) []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	for _, p := range o.pdbs {
		if p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

func pdb(name, key, value string, allowed int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// bound is a pod of cpu milli-CPU and priority prio on node, started at
// t0 + startMin minutes.
func bound(name, node, cpu string, prio int32, startMin int) *v1.Pod {
	p := mkPod(name).Req("cpu", cpu).Priority(prio).Node(node).Obj()
	st := metav1.NewTime(t0.Add(time.Duration(startMin) * time.Minute))
	p.Status.StartTime = &st
	return p
}

func snap(t *testing.T, nodes []*v1.Node, pods ...*v1.Pod) *snapshot.Snapshot {
	t.Helper()
	c := snapshot.NewCache()
	for _, n := range nodes {
		require.NoError(t, c.AddNode(n))
	}
	for _, p := range pods {
		require.NoError(t, c.AddPod(p))
	}
	return c.Snapshot()
}

func keys(pis []*snapshot.PodInfo) []string {
	var out []string
	for _, p := range pis {
		out = append(out, p.Key().Name)
	}
	return out
}

func newSched(t *testing.T) *Scheduler {
	s, err := New(Config{})
	require.NoError(t, err)
	return s
}

func TestPreemptPDBReprieve(t *testing.T) {
	// One node, 4000m. Bound: a (1500m, prio 1, PDB app=a allows 0), b
	// (1500m, prio 1, no PDB), c (1000m, prio 5). Preemptor: 1500m, prio 10.
	// Free 0; every pod is lower: remove a, b, c -> free 4000 >= 1500.
	// Reprieve PDB-violating first: a back -> used 1500, free 2500 ≥ 1500,
	// fits: a stays. Then non-violating, most important first: c (prio 5)
	// back -> used 2500, free 1500 fits: c stays; b back -> used 4000, free
	// 0 < 1500: b is the victim. PDB violations 0.
	n := mkNode("n1").Allocatable("cpu", "4000m", "pods", "110").Obj()
	a := bound("a", "n1", "1500m", 1, 1)
	a.Labels = map[string]string{"app": "a"}
	b := bound("b", "n1", "1500m", 1, 2)
	c := bound("c", "n1", "1000m", 5, 3)
	s := newSched(t)
	pod := snapshot.MustPodInfo(mkPod("p").Req("cpu", "1500m").Priority(10).Obj())
	res, err := s.Preempt(snap(t, []*v1.Node{n}, a, b, c), pod, PreemptOptions{Objects: &objects{pdbs: []*policyv1.PodDisruptionBudget{pdb("pa", "app", "a", 0)}}})
	require.NoError(t, err)
	assert.Equal(t, "n1", res.Node)
	assert.Equal(t, []string{"b"}, keys(res.Victims))
	assert.Equal(t, 0, res.NumPDBViolations)

	// Same cluster, b is 1000m and a 2000m: after removal free 4000; a back
	// (2000) -> free 2000 fits; c back (1000) -> free 1000 < 1500: c is a
	// victim; b back (1000) -> free 1000 < 1500: b is a victim. Two victims,
	// the protected pod a reprieved though bigger.
	a2 := bound("a", "n1", "2000m", 1, 1)
	a2.Labels = map[string]string{"app": "a"}
	b2 := bound("b", "n1", "1000m", 1, 2)
	res, err = s.Preempt(snap(t, []*v1.Node{n}, a2, b2, c), pod, PreemptOptions{Objects: &objects{pdbs: []*policyv1.PodDisruptionBudget{pdb("pa", "app", "a", 0)}}})
	require.NoError(t, err)
	assert.Equal(t, []string{"c", "b"}, keys(res.Victims), "victims most important first")
}

func TestPreemptTieOnPDBDecidedByHighestPriority(t *testing.T) {
	// Two nodes of 2000m, each full with one 2000m pod, no PDB (0 violations
	// on both: tie). n1's pod has priority 5, n2's priority 3. The preemptor
	// (1000m, prio 10) needs one victim on either; criterion 2 (lowest
	// highest-victim priority): max(3) < max(5) -> n2.
	n1 := mkNode("n1").Allocatable("cpu", "2000m", "pods", "110").Obj()
	n2 := mkNode("n2").Allocatable("cpu", "2000m", "pods", "110").Obj()
	s := newSched(t)
	pod := snapshot.MustPodInfo(mkPod("p").Req("cpu", "1000m").Priority(10).Obj())
	res, err := s.Preempt(snap(t, []*v1.Node{n1, n2}, bound("x", "n1", "2000m", 5, 1), bound("y", "n2", "2000m", 3, 1)), pod, PreemptOptions{})
	require.NoError(t, err)
	assert.Equal(t, "n2", res.Node)
	assert.Equal(t, []string{"y"}, keys(res.Victims))

	// With a PDB on y (allows 0): n2 has 1 violation, n1 0 -> criterion 1
	// picks n1 although its victim has the higher priority.
	y := bound("y", "n2", "2000m", 3, 1)
	y.Labels = map[string]string{"app": "y"}
	res, err = s.Preempt(snap(t, []*v1.Node{n1, n2}, bound("x", "n1", "2000m", 5, 1), y), pod,
		PreemptOptions{Objects: &objects{pdbs: []*policyv1.PodDisruptionBudget{pdb("py", "app", "y", 0)}}})
	require.NoError(t, err)
	assert.Equal(t, "n1", res.Node)
}

func TestPreemptPolicyNever(t *testing.T) {
	// The node is full of a priority-0 pod; the preemptor (prio 100) would
	// fit after evicting it, but preemptionPolicy Never: no node, no victim.
	n := mkNode("n1").Allocatable("cpu", "1000m", "pods", "110").Obj()
	p := mkPod("p").Req("cpu", "500m").Priority(100).Obj()
	never := v1.PreemptNever
	p.Spec.PreemptionPolicy = &never
	res, err := newSched(t).Preempt(snap(t, []*v1.Node{n}, bound("x", "n1", "1000m", 0, 1)), snapshot.MustPodInfo(p), PreemptOptions{})
	require.NoError(t, err)
	assert.False(t, res.Found())
	assert.Empty(t, res.Victims)
	assert.Equal(t, "preemption: not eligible due to preemptionPolicy=Never.", res.Message)
}

func TestPreemptNoCandidateMessage(t *testing.T) {
	// n1: the only pod has the preemptor's priority -> "No preemption
	// victims found"; n2: tainted (unresolvable) -> not helpful.
	n1 := mkNode("n1").Allocatable("cpu", "1000m", "pods", "110").Obj()
	n2 := mkNode("n2").Allocatable("cpu", "1000m", "pods", "110").Taint("k", "v", v1.TaintEffectNoSchedule).Obj()
	pod := snapshot.MustPodInfo(mkPod("p").Req("cpu", "500m").Priority(5).Obj())
	res, err := newSched(t).Preempt(snap(t, []*v1.Node{n1, n2}, bound("x", "n1", "1000m", 5, 1)), pod, PreemptOptions{})
	require.NoError(t, err)
	assert.False(t, res.Found())
	assert.Equal(t, "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.", res.Message)
}

func TestNominatedNodeHeld(t *testing.T) {
	// n1 has 2000m, a 1500m prio-0 pod runs there. The preemptor (1000m,
	// prio 10) evicts it and is nominated to n1 (free 2000 after eviction).
	// A lower pod l (1500m, prio 1) then must not take n1: with the nominee
	// counted, used 1000, free 1000 < 1500. A pod of prio 10 or more is not
	// held off by it... unless the room is short: h (1500m, prio 20) sees
	// free 2000 (nominees of lower priority are not counted) and fits.
	n := mkNode("n1").Allocatable("cpu", "2000m", "pods", "110").Obj()
	c := snapshot.NewCache()
	require.NoError(t, c.AddNode(n))
	require.NoError(t, c.AddPod(bound("x", "n1", "1500m", 0, 1)))
	s := newSched(t)
	pre := snapshot.MustPodInfo(mkPod("p").Req("cpu", "1000m").Priority(10).Obj())
	d, err := s.SchedulePod(c.Snapshot(), pre)
	require.NoError(t, err)
	require.False(t, d.Scheduled())
	res, err := s.Preempt(c.Snapshot(), pre, PreemptOptions{})
	require.NoError(t, err)
	require.Equal(t, "n1", res.Node)
	for _, v := range res.Victims {
		c.RemovePod(v.Key())
	}
	s.Nominate(pre, res.Priority, res.Node)

	low := snapshot.MustPodInfo(mkPod("l").Req("cpu", "1500m").Priority(1).Obj())
	d, err = s.SchedulePod(c.Snapshot(), low)
	require.NoError(t, err)
	assert.False(t, d.Scheduled(), "the nominated node is held against a lower-priority pod")
	require.NotNil(t, d.Diagnosis)
	assert.Contains(t, d.Diagnosis.Message(), "Insufficient cpu")
	require.NotEmpty(t, d.Diagnosis.Counts)
	assert.Equal(t, "NodeResourcesFit", d.Diagnosis.Counts[0].Reason.Plugin)

	// Without the nomination, the lower pod takes the room.
	s2 := newSched(t)
	d, err = s2.SchedulePod(c.Snapshot(), low)
	require.NoError(t, err)
	assert.True(t, d.Scheduled())

	high := snapshot.MustPodInfo(mkPod("h").Req("cpu", "1500m").Priority(20).Obj())
	d, err = s.SchedulePod(c.Snapshot(), high)
	require.NoError(t, err)
	assert.Equal(t, "n1", d.Node, "a higher-priority pod is not held off")

	// The nominee itself fits.
	d, err = s.SchedulePod(c.Snapshot(), pre)
	require.NoError(t, err)
	assert.Equal(t, "n1", d.Node)
	s.Nominate(pre, 0, "")
	d, err = s.SchedulePod(c.Snapshot(), low)
	require.NoError(t, err)
	assert.True(t, d.Scheduled(), "nomination cleared")
}

func TestPreemptTerminatingVictimWaits(t *testing.T) {
	// The preemptor is nominated to n1 where a lower pod is terminating
	// by preemption: not eligible; the filters fail resolvably there.
	n := mkNode("n1").Allocatable("cpu", "1000m", "pods", "110").Obj()
	x := bound("x", "n1", "1000m", 0, 1)
	now := metav1.NewTime(t0)
	x.DeletionTimestamp = &now
	x.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
	p := mkPod("p").Req("cpu", "500m").Priority(10).Obj()
	p.Status.NominatedNodeName = "n1"
	res, err := newSched(t).Preempt(snap(t, []*v1.Node{n}, x), snapshot.MustPodInfo(p), PreemptOptions{})
	require.NoError(t, err)
	assert.False(t, res.Found())
	assert.Equal(t, "preemption: not eligible due to a terminating pod on the nominated node.", res.Message)
}

func TestPreemptBadInput(t *testing.T) {
	n := mkNode("n1").Allocatable("cpu", "1000m", "pods", "110").Obj()
	x := bound("x", "n1", "1000m", 0, 1)
	x.Labels = map[string]string{"app": "x"}
	sn := snap(t, []*v1.Node{n}, x)
	s := newSched(t)
	before := sn.Get("n1").Generation()

	// priorityClassName naming no PriorityClass (the preemptor).
	p := mkPod("p").Req("cpu", "500m").Obj()
	p.Spec.PriorityClassName = "gold"
	_, err := s.Preempt(sn, snapshot.MustPodInfo(p), PreemptOptions{Objects: &objects{}})
	require.ErrorIs(t, err, ErrInvalidPod)
	assert.Contains(t, err.Error(), "default/p")
	assert.Contains(t, err.Error(), "spec.priorityClassName")
	assert.Contains(t, err.Error(), `"gold"`)

	// Resolved, it preempts.
	obj := &objects{classes: map[string]*schedulingv1.PriorityClass{"gold": {ObjectMeta: metav1.ObjectMeta{Name: "gold"}, Value: 1000}}}
	res, err := s.Preempt(sn, snapshot.MustPodInfo(p), PreemptOptions{Objects: obj})
	require.NoError(t, err)
	assert.Equal(t, int32(1000), res.Priority)
	assert.Equal(t, "n1", res.Node)

	// A PDB with an invalid selector.
	bad := pdb("broken", "app", "x", 1)
	bad.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}
	obj.pdbs = []*policyv1.PodDisruptionBudget{bad}
	_, err = s.Preempt(sn, snapshot.MustPodInfo(p), PreemptOptions{Objects: obj})
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "PodDisruptionBudget default/broken")
	assert.Contains(t, err.Error(), "spec.selector")

	// Nothing changed: the snapshot, and the scheduler's nominations.
	assert.Equal(t, before, sn.Get("n1").Generation())
	assert.Equal(t, 1, sn.Get("n1").NumPods())
	assert.Empty(t, s.nominated.byPod)

	_, err = s.Preempt(nil, snapshot.MustPodInfo(p), PreemptOptions{})
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = s.Preempt(sn, nil, PreemptOptions{})
	assert.ErrorIs(t, err, ErrInvalidPod)
	_, err = s.Preempt(sn, snapshot.MustPodInfo(p), PreemptOptions{MinCandidateNodesPercentage: 101})
	assert.True(t, errors.Is(err, ErrInvalidConfig))
}
