package reserve_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// ownerPod is a pod labelled app=web requesting cpu.
func ownerPod(name, cpu string) *snapshot.PodInfo {
	return snapshot.MustPodInfo(st.MakePod(name).Req("cpu", cpu).Label("app", "web").Obj())
}

// webReservation holds cpu on node for app=web pods.
func webReservation(name, node, cpu string, once bool) reserve.Reservation {
	return reserve.Reservation{Name: name, Node: node, Capacity: st.List("cpu", cpu), AllocateOnce: once,
		Owner: reserve.Owner{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
}

// boundObj is pi's pod as the informer reports it bound to node.
func boundObj(pi *snapshot.PodInfo, node string) *snapshot.PodInfo {
	p := pi.Pod().DeepCopy()
	p.Spec.NodeName = node
	return snapshot.MustPodInfo(p)
}

// Issue 17 item 2: Reserve(P) draws 2000m of R → the bind is reported
// failed → Unreserve (R back to 4000m) → the informer reports P bound on N
// after all. P must draw on R again, so N is not over-committed and a
// 4000m owner no longer fits.
func TestLateBindDrawsOnReservation(t *testing.T) {
	setup := func(t *testing.T, once bool) (*reserve.Ledger, *snapshot.PodInfo) {
		l := newLedger(t, node("n", "4"))
		_, err := l.AddReservation(webReservation("r", "n", "4", once))
		require.NoError(t, err)
		p := ownerPod("p", "2")
		mustFit(t, l, p, "n")
		h, _ := l.Hold(p.Key())
		require.Equal(t, int64(2000), h.Drawn.MilliCPU())
		require.True(t, l.Unreserve(p.Key()))
		r, _ := l.Reservation("r")
		require.Zero(t, r.Allocated.MilliCPU(), "Unreserve returns the share")
		require.NoError(t, l.AddPod(boundObj(p, "n").Pod()))
		return l, p
	}
	t.Run("reusable", func(t *testing.T) {
		l, p := setup(t, false)
		r, ok := l.Reservation("r")
		require.True(t, ok)
		assert.Equal(t, int64(2000), r.Allocated.MilliCPU(), "the late-bound pod draws on the reservation again")
		assert.Equal(t, []snapshot.PodKey{p.Key()}, r.Pods)
		u, _ := l.Usage("n")
		// bound p 2000; held: the reservation's 4000 - 2000 left; free 0
		assert.Equal(t, [3]int64{2000, 2000, 0}, [3]int64{u.Bound.MilliCPU(), u.Held.MilliCPU(), u.Free(snapshot.CPU)})
		big := ownerPod("big", "4")
		reasons, err := l.Fits(big, "n")
		require.NoError(t, err)
		// draws the 2000 left, needs 2000 more from a node with 0 free
		assert.Equal(t, []reserve.Insufficient{{Resource: snapshot.CPU, Requested: 2000, Used: 4000, Capacity: 4000}}, reasons)

		// The reverse: deleting p returns its share, as for any pod.
		require.True(t, l.RemovePod(p.Key()))
		r, _ = l.Reservation("r")
		assert.Zero(t, r.Allocated.MilliCPU())
		u, _ = l.Usage("n")
		assert.Equal(t, [3]int64{0, 4000, 0}, [3]int64{u.Bound.MilliCPU(), u.Held.MilliCPU(), u.Free(snapshot.CPU)})
		mustFit(t, l, big, "n")
	})
	t.Run("allocate once", func(t *testing.T) {
		l, p := setup(t, true)
		_, ok := l.Reservation("r")
		assert.False(t, ok, "the late-bound pod consumes the allocate-once reservation")
		u, _ := l.Usage("n")
		// bound p 2000; the reservation's rest and slot released
		assert.Equal(t, [4]int64{2000, 1, 0, 0}, [4]int64{u.Bound.MilliCPU(), u.Bound.AllowedPodNumber(), u.Held.MilliCPU(), u.Held.AllowedPodNumber()})
		require.True(t, l.RemovePod(p.Key()))
		u, _ = l.Usage("n")
		assert.Equal(t, int64(4000), u.Free(snapshot.CPU), "consumed: nothing returns")
	})
	t.Run("bound on another node", func(t *testing.T) {
		l := newLedger(t, node("n", "4"), node("m", "4"))
		_, err := l.AddReservation(webReservation("r", "n", "4", false))
		require.NoError(t, err)
		p := ownerPod("p", "2")
		mustFit(t, l, p, "n")
		l.Unreserve(p.Key())
		require.NoError(t, l.AddPod(boundObj(p, "m").Pod()))
		r, _ := l.Reservation("r")
		assert.Zero(t, r.Allocated.MilliCPU(), "a pod bound elsewhere does not draw")
		// and it forgot the share: the same pod cannot be reported on n
		// (spec.nodeName cannot change: refused), and a pod created again
		// under its name and bound to n draws nothing
		require.ErrorIs(t, l.AddPod(boundObj(p, "n").Pod()), reserve.ErrInvalid)
		again := boundObj(p, "n").Pod()
		again.UID += "-again"
		require.NoError(t, l.AddPod(again))
		r, _ = l.Reservation("r")
		assert.Zero(t, r.Allocated.MilliCPU())
	})
	t.Run("never reserved through the ledger", func(t *testing.T) {
		l := newLedger(t, node("n", "8"))
		_, err := l.AddReservation(webReservation("r", "n", "4", false))
		require.NoError(t, err)
		require.NoError(t, l.AddPod(boundObj(ownerPod("q", "2"), "n").Pod()))
		r, _ := l.Reservation("r")
		assert.Zero(t, r.Allocated.MilliCPU(), "a pod the ledger never placed on the reservation does not draw")
	})
	t.Run("deleted before the report", func(t *testing.T) {
		l := newLedger(t, node("n", "4"))
		_, err := l.AddReservation(webReservation("r", "n", "4", false))
		require.NoError(t, err)
		p := ownerPod("p", "2")
		mustFit(t, l, p, "n")
		l.Unreserve(p.Key())
		assert.False(t, l.RemovePod(p.Key()), "nothing held or used")
		// a new pod of the same name bound there later is a new pod
		require.NoError(t, l.AddPod(boundObj(p, "n").Pod()))
		r, _ := l.Reservation("r")
		assert.Zero(t, r.Allocated.MilliCPU())
	})
	t.Run("expired hold", func(t *testing.T) {
		l := newLedger(t, node("n", "4"))
		_, err := l.AddReservation(webReservation("r", "n", "4", false))
		require.NoError(t, err)
		p := ownerPod("p", "2")
		_, err = l.ReserveUntil(p, "n", t0.Add(1))
		require.NoError(t, err)
		require.Len(t, l.Expire(t0.Add(2)), 1)
		require.NoError(t, l.AddPod(boundObj(p, "n").Pod()))
		r, _ := l.Reservation("r")
		assert.Equal(t, int64(2000), r.Allocated.MilliCPU())
	})
}

// The share a late bind draws on survives a restart: replaying the
// journal (before or after the informer's list) and Export→Import keep
// the fact that P's share lapsed, so P's report after the restart draws.
func TestLateBindAcrossRestart(t *testing.T) {
	for _, informerFirst := range []bool{false, true} {
		l := newLedger(t, node("n", "4"))
		var journal bytes.Buffer
		require.NoError(t, l.SetJournal(&journal))
		_, err := l.AddReservation(webReservation("r", "n", "4", false))
		require.NoError(t, err)
		p := ownerPod("p", "2")
		mustFit(t, l, p, "n")
		l.Unreserve(p.Key())

		imp, err := reserve.Import(bytesReader(export(t, l)))
		require.NoError(t, err)
		replayed := newLedger(t)
		bound := boundObj(p, "n").Pod()
		if informerFirst {
			require.NoError(t, replayed.AddNode(node("n", "4")))
			require.NoError(t, replayed.AddPod(bound))
		}
		_, err = replayed.Replay(bytes.NewReader(journal.Bytes()))
		require.NoError(t, err)
		if !informerFirst {
			require.NoError(t, replayed.AddNode(node("n", "4")))
			require.NoError(t, replayed.AddPod(bound))
		}
		require.NoError(t, l.AddPod(bound))
		require.NoError(t, imp.AddPod(bound))
		for name, x := range map[string]*reserve.Ledger{"live": l, "imported": imp, "replayed": replayed} {
			r, _ := x.Reservation("r")
			assert.Equal(t, int64(2000), r.Allocated.MilliCPU(), "%s (informer first: %v)", name, informerFirst)
		}
		assert.Equal(t, export(t, l), export(t, replayed), "informer first: %v", informerFirst)
		assert.Equal(t, export(t, l), export(t, imp))
	}
}

// A pod that owns no reservation gets the shared snapshot from SnapshotFor
// without allocating, reservations or not; an owner gets its own view.
func TestSnapshotForNonOwnerAllocatesNothing(t *testing.T) {
	l := newLedger(t, node("n", "4"), node("m", "4"))
	other := pod("o", "1")
	snap, reserved := l.SnapshotFor(other)
	require.Nil(t, reserved)
	require.Same(t, l.Snapshot(), snap)
	assert.Zero(t, testing.AllocsPerRun(100, func() { l.SnapshotFor(other) }), "no reservations")

	_, err := l.AddReservation(webReservation("r", "n", "4", false))
	require.NoError(t, err)
	_, err = l.AddReservation(reserve.Reservation{Name: "c", Node: "m", Capacity: st.List("cpu", "1"), Owner: reserve.Owner{Controller: "uid-1"}})
	require.NoError(t, err)
	snap, reserved = l.SnapshotFor(other)
	require.Nil(t, reserved)
	require.Same(t, l.Snapshot(), snap)
	assert.Zero(t, testing.AllocsPerRun(100, func() { l.SnapshotFor(other) }), "reservations the pod does not own")

	owner := ownerPod("p", "1")
	view, reserved := l.SnapshotFor(owner)
	assert.Equal(t, []string{"n"}, reserved)
	assert.NotSame(t, l.Snapshot(), view)
	// n: the placeholder requests 4000 - 1000 (p's share) in p's view
	assert.Equal(t, int64(3000), view.Get("n").Requested().MilliCPU())
	assert.Equal(t, int64(4000), l.Snapshot().Get("n").Requested().MilliCPU(), "the shared snapshot is unchanged")
}
