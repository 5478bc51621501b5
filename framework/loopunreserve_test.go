package framework

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// breakableWriter is a journal writer that fails once broken is set.
type breakableWriter struct{ broken bool }

func (w *breakableWriter) Write(p []byte) (int, error) {
	if w.broken {
		return 0, errors.New("disk gone")
	}
	return len(p), nil
}

// A bind fails and the journal breaks with it, so the ledger refuses the
// Loop's Unreserve: the Attempt says so, and the pod is kept (requeued,
// its next attempt retrying the Unreserve) rather than skipped as placed
// because of the Loop's own left-over hold (a new-user trial lost it).
func TestLoopUnreserveRefusedKeepsPod(t *testing.T) {
	ledger := newLedger(t, nil)
	require.NoError(t, ledger.AddNode(mkNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	w := &breakableWriter{}
	require.NoError(t, ledger.SetJournal(w))
	bindErr := errors.New("apiserver unavailable")
	binds := 0
	loop := NewLoop(mustNew(t, Config{Seed: 1}), ledger, func(context.Context, Decision) error {
		binds++
		w.broken = true
		return bindErr
	})
	require.NoError(t, loop.Add(mkPod("a").Req("cpu", "1").Obj()))
	k := snapshot.PodKey{Namespace: "default", Name: "a"}

	for i := range 3 {
		a, ok, err := loop.ScheduleOne(context.Background())
		require.NoError(t, err)
		require.True(t, ok, "attempt %d: the pod is still queued", i)
		assert.Nil(t, a.Skipped, "attempt %d", i)
		require.Error(t, a.UnreserveErr, "attempt %d", i)
		assert.ErrorIs(t, a.UnreserveErr, reserve.ErrJournal)
		assert.Contains(t, a.UnreserveErr.Error(), "framework: Loop: pod default/a:")
		assert.Contains(t, a.UnreserveErr.Error(), "node n1")
		if i == 0 {
			assert.ErrorIs(t, a.BindErr, bindErr)
		}
		assert.Equal(t, 1, loop.Len(), "attempt %d: requeued", i)
	}
	assert.Equal(t, 1, binds, "no second bind while the first hold is not released")
	ph, node, held := ledger.PodPhase(k)
	require.True(t, held)
	assert.Equal(t, reserve.Held, ph)
	assert.Equal(t, "n1", node)

	// A delete event's Remove still takes the pod out.
	assert.True(t, loop.Remove(k))
	assert.Zero(t, loop.Len())
}

// Once the hold is released by other means (here the informer reports
// the pod bound: the bind had gone through after all), the pod is
// skipped as placed, as before.
func TestLoopUnreserveRefusedThenBound(t *testing.T) {
	ledger := newLedger(t, nil)
	require.NoError(t, ledger.AddNode(mkNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	w := &breakableWriter{}
	require.NoError(t, ledger.SetJournal(w))
	loop := NewLoop(mustNew(t, Config{Seed: 1}), ledger, func(context.Context, Decision) error {
		w.broken = true
		return errors.New("timeout")
	})
	require.NoError(t, loop.Add(mkPod("a").Req("cpu", "1").Obj()))
	a, ok, err := loop.ScheduleOne(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	require.Error(t, a.UnreserveErr)

	bound := mkPod("a").Req("cpu", "1").Obj()
	bound.Spec.NodeName = "n1"
	require.NoError(t, ledger.AddPod(bound))
	a, ok, err = loop.ScheduleOne(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	assert.NoError(t, a.UnreserveErr)
	assert.ErrorIs(t, a.Skipped, ErrAlreadyPlaced)
	assert.Zero(t, loop.Len())
}

// A StatefulSet pod is deleted and recreated: the new incarnation (uid-2)
// reaches the Loop while the ledger still has the old one (uid-1) bound.
// The new pod waits in the queue (upstream keys by UID: it is not the
// placed pod) and is scheduled once the old one is removed; a pod with
// the same UID, or without one, is still skipped as placed.
func TestLoopOtherIncarnationWaits(t *testing.T) {
	ledger := newLedger(t, nil)
	require.NoError(t, ledger.AddNode(mkNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	old := mkPod("web-0").Req("cpu", "1").Node("n1").Obj()
	old.UID = "uid-1"
	require.NoError(t, ledger.AddPod(old))
	uid, ok := ledger.PodUID(snapshot.KeyOf(old))
	require.True(t, ok)
	assert.Equal(t, "uid-1", string(uid))
	loop := NewLoop(mustNew(t, Config{Seed: 1}), ledger, nil)

	nw := mkPod("web-0").Req("cpu", "1").Obj()
	nw.UID = "uid-2"
	require.NoError(t, loop.Add(nw))
	a, ok, err := loop.ScheduleOne(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	assert.Nil(t, a.Skipped)
	require.Error(t, a.Waiting)
	assert.Equal(t, "framework: Loop: pod default/web-0 (uid uid-2): the ledger has another incarnation (uid uid-1) Bound on node n1; waiting until it is removed", a.Waiting.Error())
	assert.False(t, a.Scheduled())
	assert.Equal(t, 1, loop.Len(), "the new incarnation stays queued")

	require.True(t, ledger.RemovePod(snapshot.KeyOf(old)))
	a, ok, err = loop.ScheduleOne(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, a.Bound())
	uid, _ = ledger.PodUID(snapshot.KeyOf(nw))
	assert.Equal(t, "uid-2", string(uid))

	// Same UID (or none): skipped as placed.
	for _, u := range []string{"uid-2", ""} {
		again := mkPod("web-0").Req("cpu", "1").Obj()
		again.UID = types.UID(u)
		require.NoError(t, loop.Add(again))
		a, ok, err = loop.ScheduleOne(context.Background())
		require.NoError(t, err)
		require.True(t, ok)
		assert.ErrorIs(t, a.Skipped, ErrAlreadyPlaced, "uid %q", u)
		assert.Nil(t, a.Waiting)
		assert.Zero(t, loop.Len())
	}
}

// A pod in phase Succeeded or Failed is refused by Loop.Add and
// AddPodInfo, and nothing is queued (a new-user trial saw an unbound
// Succeeded pod bound).
func TestLoopAddRefusesTerminal(t *testing.T) {
	ledger := newLedger(t, nil)
	require.NoError(t, ledger.AddNode(mkNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	loop := NewLoop(mustNew(t, Config{Seed: 1}), ledger, nil)
	for _, ph := range []v1.PodPhase{v1.PodSucceeded, v1.PodFailed} {
		p := mkPod("done").Req("cpu", "3").Obj()
		p.Status.Phase = ph
		err := loop.Add(p)
		require.ErrorIs(t, err, ErrInvalidPod)
		assert.Equal(t, "framework: Loop.Add: pod default/done: status.phase is "+string(ph)+": a terminal pod is not scheduled (upstream's informer excludes it): "+ErrInvalidPod.Error(), err.Error())
		pi, perr := snapshot.NewPodInfo(p)
		require.NoError(t, perr)
		require.ErrorIs(t, loop.AddPodInfo(pi), ErrInvalidPod)
		require.ErrorContains(t, loop.AddPodInfo(pi.Lean()), "framework: Loop.AddPodInfo: pod default/done: status.phase is "+string(ph))
	}
	assert.Zero(t, loop.Len())
	as, err := loop.ScheduleAll(context.Background())
	require.NoError(t, err)
	assert.Empty(t, as)
	// A pod in phase Running or Pending without a node is queued.
	p := mkPod("live").Req("cpu", "3").Obj()
	p.Status.Phase = v1.PodPending
	require.NoError(t, loop.Add(p))
}
