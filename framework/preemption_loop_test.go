package framework

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// TestLoopPreemption is the PreemptionBasic shape in small: 4 nodes of
// 4000m each full with four 1000m pods of priority 0 (16 pods); then 4
// pods of 3000m at priority 100 arrive. Each fits nowhere (free 0 <
// 3000), preempts three low pods on one node (4000 − 3000 = 1000 left
// for one reprieved low pod), is nominated and requeued, and binds on
// the next pass: 4 bound, 12 evicted, 4 low pods left.
func TestLoopPreemption(t *testing.T) {
	var nodes []*v1.Node
	for i := range 4 {
		nodes = append(nodes, mkNode(fmt.Sprintf("n%d", i)).Allocatable("cpu", "4000m", "memory", "16Gi", "pods", "110").Obj())
	}
	ledger := newLedger(t, nodes)
	for i := range 16 {
		require.NoError(t, ledger.AddPod(bound(fmt.Sprintf("low-%d", i), fmt.Sprintf("n%d", i%4), "1000m", 0, i)))
	}
	s := newSched(t)
	loop := NewLoop(s, ledger, nil)
	loop.SetPreemption(PreemptOptions{Objects: &objects{classes: map[string]*schedulingv1.PriorityClass{
		"high": {ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 100}}}}, nil)
	for i := range 4 {
		p := mkPod(fmt.Sprintf("high-%d", i)).Req("cpu", "3000m").Obj()
		p.Spec.PriorityClassName = "high" // resolved to spec.priority 100 on Add
		require.NoError(t, loop.Add(p))
	}
	ctx := context.Background()
	as, err := loop.ScheduleAll(ctx)
	require.NoError(t, err)
	evicted, nominated := 0, map[string]bool{}
	for _, a := range as {
		require.False(t, a.Scheduled())
		require.NotNil(t, a.Preemption)
		require.True(t, a.Preemption.Found(), a.Preemption.Message)
		assert.Len(t, a.Preemption.Victims, 3)
		assert.Equal(t, int32(100), a.Preemption.Priority)
		evicted += len(a.Preemption.Victims)
		nominated[a.Preemption.Node] = true
	}
	assert.Equal(t, 12, evicted)
	assert.Len(t, nominated, 4, "one preemptor per node: each nominated node is held")
	require.Equal(t, 4, loop.Len(), "preemptors requeued")
	as, err = loop.ScheduleAll(ctx)
	require.NoError(t, err)
	for _, a := range as {
		require.True(t, a.Bound(), "%s", a.Pod.Key())
		assert.True(t, nominated[a.Node])
	}
	assert.Empty(t, s.nominated.byPod, "bound pods are no longer nominated")
	low := 0
	for _, n := range ledger.Snapshot().Nodes() {
		for _, p := range n.Pods() {
			if *p.Pod().Spec.Priority == 0 {
				low++
			}
		}
	}
	assert.Equal(t, 4, low)
}

func TestLoopPreemptionEvictFunc(t *testing.T) {
	// With an EvictFunc the loop leaves the ledger to the informer: the
	// callback sees the node and the victims; its error requeues the pod.
	ledger := newLedger(t, []*v1.Node{mkNode("n1").Allocatable("cpu", "1000m", "pods", "110").Obj()})
	require.NoError(t, ledger.AddPod(bound("x", "n1", "1000m", 0, 1)))
	loop := NewLoop(newSched(t), ledger, nil)
	var got []string
	fail := true
	loop.SetPreemption(PreemptOptions{}, func(_ context.Context, node string, victims []*snapshot.PodInfo) error {
		for _, v := range victims {
			got = append(got, node+"/"+v.Key().Name)
		}
		if fail {
			return fmt.Errorf("api server down")
		}
		for _, v := range victims {
			ledger.RemovePod(v.Key())
		}
		return nil
	})
	require.NoError(t, loop.Add(mkPod("p").Req("cpu", "500m").Priority(5).Obj()))
	_, _, err := loop.ScheduleOne(context.Background())
	require.ErrorContains(t, err, "api server down")
	assert.Equal(t, 1, loop.Len(), "requeued")
	fail = false
	a, _, err := loop.ScheduleOne(context.Background())
	require.NoError(t, err)
	require.True(t, a.Preemption.Found())
	a, _, err = loop.ScheduleOne(context.Background())
	require.NoError(t, err)
	assert.True(t, a.Bound())
	assert.Equal(t, []string{"n1/x", "n1/x"}, got)
}

func TestLoopPreemptionBadClass(t *testing.T) {
	loop := NewLoop(newSched(t), newLedger(t, nil), nil)
	loop.SetPreemption(PreemptOptions{Objects: &objects{}}, nil)
	p := mkPod("p").Obj()
	p.Spec.PriorityClassName = "nope"
	err := loop.Add(p)
	require.ErrorIs(t, err, ErrInvalidPod)
	assert.Contains(t, err.Error(), "spec.priorityClassName")
	assert.Equal(t, 0, loop.Len(), "nothing queued")
	require.NoError(t, loop.Add(mkPod("q").Obj()), "the key was not taken")
}

// TestLoopPreemptionReadsLedgerObjects: with opts.Objects nil, the loop
// reads PDBs and PriorityClasses from the ledger at each cycle, so an
// object the ledger is fed after SetPreemption counts. n1 holds
// "guarded" (1000m, prio 10, app=g), n2 holds "free" (1000m, prio 20,
// app=f), both full (1000m). A PDB for app=g with 0 disruptions allowed
// arrives after SetPreemption. hp (1000m, class "top" = 1000, also fed
// later) fits nowhere and preempts: on n1 the victim violates the PDB (1
// violation), on n2 none, so n2 wins on upstream's first criterion
// (fewest PDB violations), though its victim's priority is higher (20 >
// 10). With the objects read once at SetPreemption (as before), n1 and
// "guarded" were chosen and hp's class was unknown at Add.
func TestLoopPreemptionReadsLedgerObjects(t *testing.T) {
	ledger := newLedger(t, []*v1.Node{
		mkNode("n1").Allocatable("cpu", "1000m", "pods", "10").Obj(),
		mkNode("n2").Allocatable("cpu", "1000m", "pods", "10").Obj(),
	})
	guarded := bound("guarded", "n1", "1000m", 10, 0)
	guarded.Labels = map[string]string{"app": "g"}
	free := bound("free", "n2", "1000m", 20, 0)
	free.Labels = map[string]string{"app": "f"}
	require.NoError(t, ledger.AddPod(guarded))
	require.NoError(t, ledger.AddPod(free))
	loop := NewLoop(newSched(t), ledger, nil)
	loop.SetPreemption(PreemptOptions{}, nil)
	require.NoError(t, ledger.AddObject(pdb("guard", "app", "g", 0)))
	require.NoError(t, ledger.AddObject(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "top"}, Value: 1000}))
	hp := mkPod("hp").Req("cpu", "1000m").Obj()
	hp.Spec.PriorityClassName = "top"
	require.NoError(t, loop.Add(hp))
	a, ok, err := loop.ScheduleOne(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	require.NotNil(t, a.Preemption)
	require.True(t, a.Preemption.Found(), a.Preemption.Message)
	assert.Equal(t, "n2", a.Preemption.Node)
	require.Len(t, a.Preemption.Victims, 1)
	assert.Equal(t, "free", a.Preemption.Victims[0].Pod().Name)
	assert.Zero(t, a.Preemption.NumPDBViolations)
	assert.Equal(t, int32(1000), a.Preemption.Priority)
}

// TestLoopQueueReadsPriorityClass: without preemption, a pod with only
// priorityClassName is still queued by its class's value (read from the
// ledger), as admission sets spec.priority: on one 1000m node, "a-low"
// (no class, priority 0) is added before "b-high" (class "high" = 1000),
// both 1000m; b-high is tried first and binds, a-low finds no room.
// Before, the class was resolved only with preemption on, and a-low
// (added first, same priority 0) took the node.
func TestLoopQueueReadsPriorityClass(t *testing.T) {
	ledger := newLedger(t, []*v1.Node{mkNode("n").Allocatable("cpu", "1000m", "pods", "10").Obj()})
	require.NoError(t, ledger.AddObject(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}))
	loop := NewLoop(newSched(t), ledger, nil)
	require.NoError(t, loop.Add(mkPod("a-low").Req("cpu", "1000m").Obj()))
	high := mkPod("b-high").Req("cpu", "1000m").Obj()
	high.Spec.PriorityClassName = "high"
	require.NoError(t, loop.Add(high))
	as, err := loop.ScheduleAll(context.Background())
	require.NoError(t, err)
	require.Len(t, as, 2)
	assert.Equal(t, "b-high", as[0].Pod.Pod().Name)
	assert.True(t, as[0].Bound())
	assert.False(t, as[1].Scheduled())
}

// TestPreemptionNilArguments: nil arguments are errors, not panics.
func TestPreemptionNilArguments(t *testing.T) {
	snap := snapshot.Empty()
	pi := snapshot.MustPodInfo(mkPod("p").Obj())
	p := &Preemption{Node: "n1"}
	require.ErrorIs(t, p.ApplyTo(nil, pi), ErrInvalidConfig)
	require.ErrorIs(t, p.ApplyTo(snap.Fork(), nil), ErrInvalidPod)
	_, err := PodPriority(nil, nil)
	require.ErrorIs(t, err, ErrInvalidPod)
}

// TestAttemptFailureMessage: a pod that fits nowhere under preemption
// reports upstream's FitError.Error() — the filter diagnosis, a space,
// then the PostFilter message (v1.37 framework/types.go) — and without
// preemption the diagnosis alone.
func TestAttemptFailureMessage(t *testing.T) {
	nodes := []*v1.Node{
		mkNode("n1").Allocatable("cpu", "1000m", "pods", "110").Obj(),
		mkNode("n2").Allocatable("cpu", "1000m", "pods", "110").Obj(),
	}
	never := v1.PreemptNever
	for _, preempt := range []bool{true, false} {
		ledger := newLedger(t, nodes)
		loop := NewLoop(newSched(t), ledger, nil)
		if preempt {
			loop.SetPreemption(PreemptOptions{}, nil)
		}
		p := mkPod("big").Req("cpu", "2000m").Obj()
		p.Spec.PreemptionPolicy = &never
		require.NoError(t, loop.Add(p))
		as, err := loop.ScheduleAll(context.Background())
		require.NoError(t, err)
		require.Len(t, as, 1)
		want := "0/2 nodes are available: 2 Insufficient cpu."
		if preempt {
			want += " preemption: not eligible due to preemptionPolicy=Never."
		}
		assert.Equal(t, want, as[0].FailureMessage(), "preemption %v", preempt)
	}
}
