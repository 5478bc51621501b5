package framework

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// newLedger returns a ledger with the nodes.
func newLedger(t testing.TB, nodes []*v1.Node) *reserve.Ledger {
	t.Helper()
	l := reserve.New()
	for _, n := range nodes {
		require.NoError(t, l.AddNode(n))
	}
	return l
}

// informerBind binds by reporting the pod bound to the ledger, as the API
// server's watch would.
func informerBind(ledger *reserve.Ledger) BindFunc {
	return func(_ context.Context, d Decision) error {
		p := d.Pod.Pod().DeepCopy()
		p.Spec.NodeName = d.Node
		return ledger.AddPod(p)
	}
}

func TestLoopQueueOrder(t *testing.T) {
	ledger := newLedger(t, []*v1.Node{mkNode("n1").Capacity("cpu", "100", "memory", "100Gi", "pods", "110").Obj()})
	loop := NewLoop(mustNew(t, Config{}), ledger, nil)
	for _, p := range []*v1.Pod{
		mkPod("low-1").Priority(-5).Obj(),
		mkPod("none-1").Obj(),
		mkPod("high-1").Priority(1000).Obj(),
		mkPod("none-2").Obj(),
		mkPod("high-2").Priority(1000).Obj(),
		mkPod("zero").Priority(0).Obj(),
	} {
		require.NoError(t, loop.Add(p))
	}
	err := loop.Add(mkPod("none-1").Obj())
	require.ErrorIs(t, err, ErrInvalidPod)
	require.Equal(t, 6, loop.Len())

	as, err := loop.ScheduleAll(context.Background())
	require.NoError(t, err)
	var order []string
	for _, a := range as {
		require.True(t, a.Bound())
		order = append(order, a.Pod.Key().Name)
		phase, node, ok := ledger.PodPhase(a.Pod.Key())
		require.True(t, ok)
		assert.Equal(t, reserve.Bound, phase, "with a nil bind the loop reports the pod bound to the ledger")
		assert.Equal(t, "n1", node)
	}
	assert.Equal(t, []string{"high-1", "high-2", "none-1", "none-2", "zero", "low-1"}, order)
	assert.Zero(t, loop.Len())

	_, ok, err := loop.ScheduleOne(context.Background())
	require.NoError(t, err)
	assert.False(t, ok, "empty queue")
	require.NoError(t, loop.Add(mkPod("none-1").Obj()), "a bound pod's key may be queued again")
}

func TestLoopBindFailureRequeues(t *testing.T) {
	ledger := newLedger(t, []*v1.Node{mkNode("n1").Capacity("cpu", "2", "memory", "4Gi", "pods", "110").Obj()})
	fail := errors.New("apiserver: conflict")
	calls := 0
	loop := NewLoop(mustNew(t, Config{}), ledger, func(_ context.Context, d Decision) error {
		calls++
		if calls == 1 {
			return fail
		}
		return nil
	})
	require.NoError(t, loop.Add(mkPod("a").Req("cpu", "2").Obj()))
	require.NoError(t, loop.Add(mkPod("b").Req("cpu", "2").Obj()))

	as, err := loop.ScheduleAll(context.Background())
	require.NoError(t, err)
	require.Len(t, as, 2)
	// a: scheduled, bind failed, hold released, so b fits and binds.
	assert.Equal(t, "n1", as[0].Node)
	assert.ErrorIs(t, as[0].BindErr, fail)
	assert.False(t, as[0].Bound())
	_, _, held := ledger.PodPhase(as[0].Pod.Key())
	assert.False(t, held, "failed bind forgets the hold")
	assert.True(t, as[1].Bound())
	assert.Equal(t, 1, loop.Len(), "a is back in the queue")

	// a retries: n1 is full now, so it is set aside as unschedulable.
	a, ok, err := loop.ScheduleOne(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "a", a.Pod.Key().Name)
	require.False(t, a.Scheduled())
	assert.Equal(t, "0/1 nodes are available: 1 Insufficient cpu.", a.Diagnosis.Message())
	assert.Len(t, loop.Unschedulable(), 1)
	assert.Zero(t, loop.Len())

	// b leaves; after Requeue, a fits.
	require.True(t, ledger.RemovePod(snapshot.PodKey{Namespace: "default", Name: "b"}))
	assert.Equal(t, 1, loop.Requeue())
	a, ok, err = loop.ScheduleOne(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, a.Bound())
	assert.Empty(t, loop.Unschedulable())
}

func TestLoopContextCancel(t *testing.T) {
	ledger := newLedger(t, []*v1.Node{mkNode("n1").Capacity("cpu", "10", "pods", "110").Obj()})
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	loop := NewLoop(mustNew(t, Config{}), ledger, func(context.Context, Decision) error {
		n++
		if n == 2 {
			cancel()
		}
		return nil
	})
	for i := range 5 {
		require.NoError(t, loop.Add(mkPod(fmt.Sprintf("p%d", i)).Req("cpu", "1").Obj()))
	}
	as, err := loop.ScheduleAll(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Len(t, as, 2)
	assert.Equal(t, 3, loop.Len(), "unscheduled pods stay queued")
	_, ok, err := loop.ScheduleOne(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, ok)
	assert.Equal(t, 3, loop.Len())
}

func TestLoopSchedulingErrorRequeues(t *testing.T) {
	ledger := newLedger(t, []*v1.Node{mkNode("n1").Capacity("pods", "110").Obj()})
	boom := errors.New("boom")
	bad := filterFunc{name: "Bad", pre: func(*snapshot.PodInfo) (PreFilterResult, error) { return PreFilterResult{}, boom }}
	loop := NewLoop(mustNew(t, Config{Filters: []Filter{bad}}), ledger, nil)
	require.NoError(t, loop.Add(mkPod("p").Obj()))
	_, err := loop.ScheduleAll(context.Background())
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 1, loop.Len())
	_, ok, err := loop.ScheduleOne(context.Background())
	require.ErrorIs(t, err, boom)
	assert.True(t, ok)
	assert.Equal(t, 1, loop.Len())
	require.ErrorIs(t, loop.AddPodInfo(nil), ErrInvalidPod)
	require.Error(t, loop.Add(&v1.Pod{}))
}

// placements runs every pod through a fresh loop and returns pod -> node
// ("" for unschedulable).
func placements(t testing.TB, nodes []*v1.Node, pods []*v1.Pod, cfg Config) map[string]string {
	t.Helper()
	ledger := newLedger(t, nodes)
	loop := NewLoop(mustNew(t, cfg), ledger, informerBind(ledger))
	for _, p := range pods {
		require.NoError(t, loop.Add(p))
	}
	as, err := loop.ScheduleAll(context.Background())
	require.NoError(t, err)
	require.Len(t, as, len(pods))
	out := map[string]string{}
	for _, a := range as {
		out[a.Pod.Key().Name] = a.Node
	}
	return out
}

// TestDeterminism: the same seed, cluster and pods give the same
// placements run after run, with parallel filtering on or off, adaptive or
// scoring every node.
func TestDeterminism(t *testing.T) {
	nodes := genCluster(1, 200)
	pods := genPods(2, 3000)
	for _, pct := range []int32{0, 100} {
		t.Run(fmt.Sprintf("pct=%d", pct), func(t *testing.T) {
			base := placements(t, nodes, pods, Config{Seed: 42, PercentageOfNodesToScore: pct})
			unsched := 0
			for _, n := range base {
				if n == "" {
					unsched++
				}
			}
			require.Less(t, unsched, len(pods), "some pods must schedule")
			require.Positive(t, unsched, "the cluster should fill up")
			assert.Equal(t, base, placements(t, nodes, pods, Config{Seed: 42, PercentageOfNodesToScore: pct}), "run again")
			assert.Equal(t, base, placements(t, nodes, pods, Config{Seed: 42, PercentageOfNodesToScore: pct, Parallelism: 4}), "parallel")
			assert.NotEqual(t, base, placements(t, nodes, pods, Config{Seed: 43, PercentageOfNodesToScore: pct}), "another seed breaks ties differently")
		})
	}
}

func TestLoopRemove(t *testing.T) {
	ledger := newLedger(t, []*v1.Node{mkNode("n1").Capacity("cpu", "1", "pods", "110").Obj()})
	loop := NewLoop(mustNew(t, Config{}), ledger, nil)
	for _, p := range []*v1.Pod{mkPod("a").Obj(), mkPod("b").Obj(), mkPod("big").Req("cpu", "2").Obj()} {
		require.NoError(t, loop.Add(p))
	}
	key := func(n string) snapshot.PodKey { return snapshot.PodKey{Namespace: "default", Name: n} }
	assert.True(t, loop.Remove(key("a")))
	assert.False(t, loop.Remove(key("a")), "already removed")
	assert.False(t, loop.Remove(key("zzz")))
	as, err := loop.ScheduleAll(context.Background())
	require.NoError(t, err)
	require.Len(t, as, 2)
	assert.Equal(t, "b", as[0].Pod.Key().Name)
	require.Len(t, loop.Unschedulable(), 1)
	assert.True(t, loop.Remove(key("big")), "unschedulable pods can be removed")
	assert.Empty(t, loop.Unschedulable())
	assert.Zero(t, loop.Requeue())
	require.NoError(t, loop.Add(mkPod("a").Obj()), "a removed pod may be queued again")
}
