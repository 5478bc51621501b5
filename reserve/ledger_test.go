package reserve_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestFit checks the upstream NodeResourcesFit semantics of Reserve on a
// node with cpu 4, memory 4Gi, ephemeral-storage 10Gi, example.com/gpu 2,
// pods 3, which already has a bound pod (1 cpu, 1Gi) and a hold (1 cpu).
func TestFit(t *testing.T) {
	const gi = 1 << 30
	gpuID, _ := snapshot.Intern("example.com/gpu")
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want []reserve.Insufficient
	}{
		// 2000 <= 4000 - (1000 bound + 1000 held)
		{"fits exactly", st.MakePod("p").Req("cpu", "2").Obj(), nil},
		// 2001 > 4000 - 2000
		{"one milli-cpu over", st.MakePod("p").Req("cpu", "2001m").Obj(),
			[]reserve.Insufficient{{Resource: snapshot.CPU, Requested: 2001, Used: 2000, Capacity: 4000}}},
		// memory: 3Gi + 1 byte > 4Gi - 1Gi
		{"memory", st.MakePod("p").Req("memory", fmt.Sprint(int64(3*gi+1))).Obj(),
			[]reserve.Insufficient{{Resource: snapshot.Memory, Requested: 3*gi + 1, Used: gi, Capacity: 4 * gi}}},
		{"ephemeral storage", st.MakePod("p").Req("ephemeral-storage", "11Gi").Obj(),
			[]reserve.Insufficient{{Resource: snapshot.EphemeralStorage, Requested: 11 * gi, Used: 0, Capacity: 10 * gi}}},
		{"scalar resource", st.MakePod("p").Req("example.com/gpu", "3").Obj(),
			[]reserve.Insufficient{{Resource: gpuID, Requested: 3, Used: 0, Capacity: 2}}},
		// a resource the node does not have at all
		{"missing scalar resource", st.MakePod("p").Req("example.com/fpga", "1").Obj(),
			[]reserve.Insufficient{{Resource: mustIntern("example.com/fpga"), Requested: 1, Used: 0, Capacity: 0}}},
		// every failing resource reported, upstream's order
		{"all reasons in order", st.MakePod("p").Req("cpu", "3", "memory", "4Gi", "example.com/gpu", "3").Obj(),
			[]reserve.Insufficient{
				{Resource: snapshot.CPU, Requested: 3000, Used: 2000, Capacity: 4000},
				{Resource: snapshot.Memory, Requested: 4 * gi, Used: gi, Capacity: 4 * gi},
				{Resource: gpuID, Requested: 3, Used: 0, Capacity: 2},
			}},
		// requests nothing: only the pod count is checked (2 + 1 <= 3)
		{"best effort", st.MakePod("p").Obj(), nil},
		// init container peak counts (upstream effective request)
		{"init container peak", st.MakePod("p").Init("cpu", "3").Req("cpu", "1").Obj(),
			[]reserve.Insufficient{{Resource: snapshot.CPU, Requested: 3000, Used: 2000, Capacity: 4000}}},
		// overhead counts
		{"overhead", st.MakePod("p").Req("cpu", "2").Overhead("cpu", "1m").Obj(),
			[]reserve.Insufficient{{Resource: snapshot.CPU, Requested: 2001, Used: 2000, Capacity: 4000}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := fitLedger(t)
			pi := snapshot.MustPodInfo(tc.pod)
			got, err := l.Fits(pi, "n1")
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, "Fits")
			before := export(t, l)
			got, err = l.Reserve(pi, "n1")
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, "Reserve")
			if tc.want != nil {
				assert.Equal(t, before, export(t, l), "a pod that does not fit changed the ledger")
			}
		})
	}
	t.Run("too many pods", func(t *testing.T) {
		l := fitLedger(t)
		_, err := l.Reserve(pod("third", "0"), "n1")
		require.NoError(t, err)
		// 3 pods + 1 > 3 allowed
		got, err := l.Reserve(snapshot.MustPodInfo(st.MakePod("fourth").Obj()), "n1")
		require.NoError(t, err)
		assert.Equal(t, []reserve.Insufficient{{Resource: snapshot.Pods, Requested: 1, Used: 3, Capacity: 3}}, got)
		assert.Equal(t, "Too many pods (requested 1, used 3, capacity 3)", got[0].String())
	})
}

func mustIntern(name v1.ResourceName) snapshot.ResourceID {
	id, ok := snapshot.Intern(name)
	if !ok {
		panic(name)
	}
	return id
}

func fitLedger(t *testing.T) *reserve.Ledger {
	t.Helper()
	l := newLedger(t, st.MakeNode("n1").Capacity("cpu", "4", "memory", "4Gi", "ephemeral-storage", "10Gi", "example.com/gpu", "2", "pods", "3").Obj())
	require.NoError(t, l.AddPod(st.MakePod("bound").Req("cpu", "1", "memory", "1Gi").Node("n1").Obj()))
	_, err := l.Reserve(pod("held", "1"), "n1")
	require.NoError(t, err)
	return l
}

func TestSaturation(t *testing.T) {
	// Quantities beyond int64 saturate; nothing wraps into "fits".
	l := newLedger(t, st.MakeNode("n1").Capacity("cpu", "4", "example.com/gpu", "9223372036854775807", "pods", "10").Obj())
	huge := snapshot.MustPodInfo(st.MakePod("huge").Req("example.com/gpu", "1e30").Obj())
	reasons, err := l.Reserve(huge, "n1")
	require.NoError(t, err)
	assert.Nil(t, reasons, "MaxInt64 <= MaxInt64 - 0")
	reasons, err = l.Reserve(snapshot.MustPodInfo(st.MakePod("one").Req("example.com/gpu", "1").Obj()), "n1")
	require.NoError(t, err)
	require.Len(t, reasons, 1)
	assert.Equal(t, int64(math.MaxInt64), reasons[0].Used)
}

func TestErrors(t *testing.T) {
	l := newLedger(t, node("n1", "4"))
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"Reserve nil pod", second(l.Reserve(nil, "n1")), reserve.ErrInvalid},
		{"Reserve unknown node", second(l.Reserve(pod("a", "1"), "nope")), reserve.ErrNodeNotFound},
		{"Fits unknown node", second(l.Fits(pod("a", "1"), "nope")), reserve.ErrNodeNotFound},
		{"Confirm never reserved", l.Confirm(snapshot.PodKey{Namespace: "default", Name: "ghost"}), reserve.ErrNotHeld},
		{"AddPod nil", l.AddPod(nil), reserve.ErrInvalid},
		{"AddPod negative request", l.AddPod(st.MakePod("neg").Req("cpu", "-1").Node("n1").Obj()), snapshot.ErrNegativeQuantity},
		{"AddNode negative allocatable", l.AddNode(st.MakeNode("bad").Capacity("cpu", "-4").Obj()), snapshot.ErrNegativeQuantity},
		{"RemoveNode unknown", l.RemoveNode("nope"), snapshot.ErrNodeNotFound},
		{"gang nil member", second(l.ReserveGang([]reserve.GangMember{{Pod: nil, Node: "n1"}}, time.Time{})), reserve.ErrInvalid},
		{"gang duplicate", second(l.ReserveGang([]reserve.GangMember{{Pod: pod("a", "1"), Node: "n1"}, {Pod: pod("a", "1"), Node: "n1"}}, time.Time{})), reserve.ErrInvalid},
		{"gang unknown node", second(l.ReserveGang([]reserve.GangMember{{Pod: pod("a", "1"), Node: "n1"}, {Pod: pod("b", "1"), Node: "nope"}}, time.Time{})), reserve.ErrNodeNotFound},
		{"reservation without owner", second(l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "1")})), reserve.ErrInvalid},
		{"reservation of pods", second(l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("pods", "1"), Owner: reserve.Owner{Controller: "u"}})), reserve.ErrInvalid},
		{"reservation negative", second(l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "-1"), Owner: reserve.Owner{Controller: "u"}})), snapshot.ErrNegativeQuantity},
		{"reservation bad selector", second(l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "1"),
			Owner: reserve.Owner{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Nope"}}}}})), reserve.ErrInvalid},
		{"reservation unknown node", second(l.AddReservation(reserve.Reservation{Name: "r", Node: "nope", Capacity: st.List("cpu", "1"), Owner: reserve.Owner{Controller: "u"}})), reserve.ErrNodeNotFound},
		{"remove unknown reservation", l.RemoveReservation("nope"), reserve.ErrReservationNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, tc.err, tc.want)
		})
	}
	assert.Empty(t, l.Holds(), "failed calls left holds")
	assert.Equal(t, []string{"n1"}, l.Nodes())
}

func second[T any](_ T, err error) error { return err }

// TestNodeNotFoundSaysItOnce: every unknown-node error matches both
// sentinels (reserve's and snapshot's) and says "not found" once, as in
// `reserve: Ledger.Reserve: pod default/a: node "nope": reserve: node not found`.
func TestNodeNotFoundSaysItOnce(t *testing.T) {
	l := newLedger(t, node("n1", "4"))
	for name, err := range map[string]error{
		"Reserve":        second(l.Reserve(pod("a", "1"), "nope")),
		"Fits":           second(l.Fits(pod("a", "1"), "nope")),
		"RemoveNode":     l.RemoveNode("nope"),
		"ReserveGang":    second(l.ReserveGang([]reserve.GangMember{{Pod: pod("b", "1"), Node: "nope"}}, time.Time{})),
		"AddReservation": second(l.AddReservation(reserve.Reservation{Name: "r", Node: "nope", Capacity: st.List("cpu", "1"), Owner: reserve.Owner{Controller: "u"}})),
	} {
		require.ErrorIs(t, err, reserve.ErrNodeNotFound, name)
		require.ErrorIs(t, err, snapshot.ErrNodeNotFound, name)
		assert.Equal(t, 1, strings.Count(err.Error(), "not found"), "%s: %v", name, err)
		assert.Contains(t, err.Error(), `"nope"`, name)
	}
	assert.NotErrorIs(t, snapshot.ErrNodeNotFound, reserve.ErrNodeNotFound, "the snapshot's sentinel is not the ledger's")
}

func TestGangAllOrNothing(t *testing.T) {
	l := newLedger(t, node("n1", "4"), node("n2", "4"))
	_, err := l.Reserve(pod("existing", "1"), "n1")
	require.NoError(t, err)
	_, err = l.AddReservation(reserve.Reservation{Name: "r", Node: "n2", Capacity: st.List("cpu", "2"), Owner: reserve.Owner{Selector: &metav1.LabelSelector{}}})
	require.NoError(t, err)
	before := export(t, l)
	beforeSnap := l.Snapshot()
	members := []reserve.GangMember{
		{Pod: pod("existing", "1"), Node: "n1"}, // already held here: counts as landed
		{Pod: pod("g1", "2"), Node: "n2"},       // draws on r
		{Pod: pod("g2", "2"), Node: "n1"},
		{Pod: pod("g3", "2"), Node: "n1"}, // 1 + 2 + 2 > 4
	}
	unfit, err := l.ReserveGang(members, time.Time{})
	require.NoError(t, err)
	require.NotNil(t, unfit)
	assert.Equal(t, 3, unfit.Member)
	// 2000 > 4000 - (1000 existing + 2000 g2)
	assert.Equal(t, []reserve.Insufficient{{Resource: snapshot.CPU, Requested: 2000, Used: 3000, Capacity: 4000}}, unfit.Reasons)
	assert.Equal(t, before, export(t, l), "a failed gang changed the ledger")
	assert.Same(t, beforeSnap, l.Snapshot(), "a failed gang invalidated the snapshot")

	_, err = l.ReserveGang([]reserve.GangMember{{Pod: pod("g4", "1"), Node: "n2"}, {Pod: pod("existing", "1"), Node: "n2"}}, time.Time{})
	require.ErrorIs(t, err, reserve.ErrConflict)
	assert.Contains(t, err.Error(), "member 1")
	assert.Equal(t, before, export(t, l))

	unfit, err = l.ReserveGang(members[:3], time.Time{})
	require.NoError(t, err)
	require.Nil(t, unfit)
	assert.Len(t, l.Holds(), 3)
	h, ok := l.Hold(members[1].Pod.Key())
	require.True(t, ok)
	assert.Equal(t, "r", h.Reservation)
}

func TestNamedReservations(t *testing.T) {
	yes := true
	owned := func(name, cpu string, labels map[string]string, ctrl string) *snapshot.PodInfo {
		p := st.MakePod(name).Req("cpu", cpu).Obj()
		p.Labels = labels
		if ctrl != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", UID: "uid-" + "rs", Controller: &yes}}
			p.OwnerReferences[0].UID = "uid-" + "rs"
		}
		return snapshot.MustPodInfo(p)
	}
	web := map[string]string{"app": "web"}
	sel := &metav1.LabelSelector{MatchLabels: web}

	t.Run("partial consumption and return", func(t *testing.T) {
		l := newLedger(t, node("n1", "8"))
		_, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "4"), Owner: reserve.Owner{Selector: sel}})
		require.NoError(t, err)
		a, b := owned("a", "3", web, ""), owned("b", "3", web, "")
		mustFit(t, l, a, "n1") // draws 3 of 4
		mustFit(t, l, b, "n1") // draws the last 1, 2 from the node
		u, _ := l.Usage("n1")
		// held: a 3000 + b 3000 + reservation left 0; pods: a, b, the reservation
		assert.Equal(t, int64(6000), u.Held.MilliCPU())
		assert.Equal(t, int64(3), u.Held.AllowedPodNumber())
		hb, _ := l.Hold(b.Key())
		assert.Equal(t, int64(1000), hb.Drawn.MilliCPU())
		// a's bind fails: 3 return to the reservation
		l.Unreserve(a.Key())
		r, _ := l.Reservation("r")
		assert.Equal(t, int64(1000), r.Allocated.MilliCPU())
		assert.Equal(t, []snapshot.PodKey{b.Key()}, r.Pods)
		u, _ = l.Usage("n1")
		// b 3000 + left 3000
		assert.Equal(t, int64(6000), u.Held.MilliCPU())
	})
	t.Run("non-matching pods cannot use it", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		_, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "3"),
			Owner: reserve.Owner{Namespace: "prod", Selector: sel}})
		require.NoError(t, err)
		// app=web but namespace default
		reasons, err := l.Reserve(owned("a", "2", web, ""), "n1")
		require.NoError(t, err)
		assert.Equal(t, []reserve.Insufficient{{Resource: snapshot.CPU, Requested: 2000, Used: 3000, Capacity: 4000}}, reasons)
	})
	t.Run("controller reference", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		_, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "3"), Owner: reserve.Owner{Controller: "uid-rs"}})
		require.NoError(t, err)
		mustFit(t, l, owned("a", "3", nil, "rs"), "n1")
	})
	t.Run("allocate once: consumed by confirm, rest released", func(t *testing.T) {
		l := newLedger(t, node("n1", "8"))
		_, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "4"), AllocateOnce: true, Owner: reserve.Owner{Selector: sel}})
		require.NoError(t, err)
		a, b := owned("a", "1", web, ""), owned("b", "1", web, "")
		mustFit(t, l, a, "n1")
		mustFit(t, l, b, "n1")
		hb, _ := l.Hold(b.Key())
		assert.Equal(t, "", hb.Reservation, "a second pod drew on an allocate-once reservation")
		require.NoError(t, l.Confirm(a.Key()))
		_, ok := l.Reservation("r")
		assert.False(t, ok, "consumed reservation still there")
		u, _ := l.Usage("n1")
		// bound a 1000; held b 1000, the reservation's 3000 and its slot released
		assert.Equal(t, [4]int64{1000, 1, 1000, 1}, [4]int64{u.Bound.MilliCPU(), u.Bound.AllowedPodNumber(), u.Held.MilliCPU(), u.Held.AllowedPodNumber()})
	})
	t.Run("allocate once: consumed by the informer's report", func(t *testing.T) {
		l := newLedger(t, node("n1", "8"))
		_, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "4"), AllocateOnce: true, Owner: reserve.Owner{Selector: sel}})
		require.NoError(t, err)
		p := st.MakePod("a").Label("app", "web").Req("cpu", "1").Obj()
		mustFit(t, l, snapshot.MustPodInfo(p), "n1")
		p.Spec.NodeName = "n1"
		require.NoError(t, l.AddPod(p))
		assert.Empty(t, l.Reservations())
		require.NoError(t, l.Confirm(snapshot.KeyOf(p)), "late Confirm")
		u, _ := l.Usage("n1")
		assert.Equal(t, [2]int64{1000, 0}, [2]int64{u.Bound.MilliCPU(), u.Held.MilliCPU()})
	})
	t.Run("reusable: bound pod keeps its share until deleted", func(t *testing.T) {
		l := newLedger(t, node("n1", "8"))
		_, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "4"), Owner: reserve.Owner{Selector: sel}})
		require.NoError(t, err)
		p := st.MakePod("a").Label("app", "web").Req("cpu", "3").Obj()
		mustFit(t, l, snapshot.MustPodInfo(p), "n1")
		p.Spec.NodeName = "n1"
		require.NoError(t, l.AddPod(p))
		r, _ := l.Reservation("r")
		assert.Equal(t, int64(3000), r.Allocated.MilliCPU())
		snap := l.Snapshot()
		ph := snap.Get("n1")
		// bound 3000 + placeholder for the 1000 left
		assert.Equal(t, int64(4000), ph.Requested().MilliCPU())
		assert.True(t, ph.HasPod(snapshot.PodKey{Namespace: reserve.ReservationNamespace, Name: "r"}))
		l.RemovePod(snapshot.KeyOf(p))
		r, _ = l.Reservation("r")
		assert.Equal(t, int64(0), r.Allocated.MilliCPU())
		u, _ := l.Usage("n1")
		assert.Equal(t, [2]int64{0, 4000}, [2]int64{u.Bound.MilliCPU(), u.Held.MilliCPU()})
	})
	t.Run("does not fit", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		reasons, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "5"), Owner: reserve.Owner{Selector: sel}})
		require.NoError(t, err)
		assert.Equal(t, []reserve.Insufficient{{Resource: snapshot.CPU, Requested: 5000, Used: 0, Capacity: 4000}}, reasons)
		assert.Empty(t, l.Reservations())
		_, err = l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "1"), Owner: reserve.Owner{Selector: sel}})
		require.NoError(t, err)
		_, err = l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "1"), Owner: reserve.Owner{Selector: sel}})
		require.ErrorIs(t, err, reserve.ErrReservationExists)
	})
	t.Run("removal releases the rest, drawers keep their requests", func(t *testing.T) {
		l := newLedger(t, node("n1", "8"))
		_, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "4"), Owner: reserve.Owner{Selector: sel}})
		require.NoError(t, err)
		a := owned("a", "1", web, "")
		mustFit(t, l, a, "n1")
		require.NoError(t, l.RemoveReservation("r"))
		u, _ := l.Usage("n1")
		assert.Equal(t, [2]int64{1000, 1}, [2]int64{u.Held.MilliCPU(), u.Held.AllowedPodNumber()})
		h, _ := l.Hold(a.Key())
		assert.Equal(t, "", h.Reservation)
	})
}

func mustFit(t *testing.T, l *reserve.Ledger, pi *snapshot.PodInfo, node string) {
	t.Helper()
	reasons, err := l.Reserve(pi, node)
	require.NoError(t, err)
	require.Nil(t, reasons)
}

func TestInformerEdges(t *testing.T) {
	t.Run("pod before its node", func(t *testing.T) {
		l := reserve.New()
		require.NoError(t, l.AddPod(st.MakePod("early").Req("cpu", "1").Node("n1").Obj()))
		u, ok := l.Usage("n1")
		require.True(t, ok)
		assert.False(t, u.Present)
		_, err := l.Reserve(pod("a", "1"), "n1")
		require.ErrorIs(t, err, reserve.ErrNodeNotFound)
		require.NoError(t, l.AddNode(node("n1", "2")))
		reasons, err := l.Reserve(pod("a", "2"), "n1")
		require.NoError(t, err)
		assert.Equal(t, []reserve.Insufficient{{Resource: snapshot.CPU, Requested: 2000, Used: 1000, Capacity: 2000}}, reasons)
	})
	t.Run("node removed under a hold, then back", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		mustFit(t, l, pod("a", "3"), "n1")
		require.NoError(t, l.RemoveNode("n1"))
		assert.Nil(t, l.Snapshot().Get("n1"))
		_, err := l.Reserve(pod("b", "1"), "n1")
		require.ErrorIs(t, err, reserve.ErrNodeNotFound)
		require.NoError(t, l.AddNode(node("n1", "4")))
		reasons, _ := l.Reserve(pod("b", "2"), "n1")
		require.NotNil(t, reasons, "the hold came back with the node")
		l.Unreserve(snapshot.PodKey{Namespace: "default", Name: "a"})
		require.NoError(t, l.RemoveNode("n1"))
		_, ok := l.Usage("n1")
		assert.False(t, ok, "an absent node with nothing on it is forgotten")
	})
	t.Run("node shrinks under holds", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		mustFit(t, l, pod("a", "3"), "n1")
		require.NoError(t, l.UpdateNode(node("n1", "2")))
		u, _ := l.Usage("n1")
		assert.Equal(t, int64(-1000), u.Free(snapshot.CPU), "the hold stays; the node is over-committed by the informer")
		reasons, _ := l.Reserve(pod("b", "1m"), "n1")
		assert.NotNil(t, reasons)
		mustFit(t, l, snapshot.MustPodInfo(st.MakePod("c").Req("memory", "1Gi").Obj()), "n1")
	})
	t.Run("pending pods are ignored", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		require.NoError(t, l.AddPod(st.MakePod("pending").Req("cpu", "1").Obj()))
		_, _, ok := l.PodPhase(snapshot.PodKey{Namespace: "default", Name: "pending"})
		assert.False(t, ok)
	})
	t.Run("an unbound report keeps holds and confirmations, and is an error for a bound pod", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		held := st.MakePod("held").Req("cpu", "1").Obj()
		confirmed := st.MakePod("confirmed").Req("cpu", "1").Obj()
		mustFit(t, l, snapshot.MustPodInfo(held), "n1")
		mustFit(t, l, snapshot.MustPodInfo(confirmed), "n1")
		require.NoError(t, l.Confirm(snapshot.KeyOf(confirmed)))
		bound := st.MakePod("bound").Req("cpu", "1").Node("n1").Obj()
		require.NoError(t, l.AddPod(bound))
		before := export(t, l)
		// A stale pending report (sent before the bind landed) is ignored.
		require.NoError(t, l.UpdatePod(held))
		require.NoError(t, l.UpdatePod(confirmed))
		// spec.nodeName cannot be cleared: an error, nothing changes.
		err := l.UpdatePod(st.MakePod("bound").Req("cpu", "1").Obj())
		require.ErrorIs(t, err, reserve.ErrInvalid)
		require.ErrorIs(t, err, snapshot.ErrInvalidObject)
		assert.Contains(t, err.Error(), "pod default/bound: spec.nodeName is empty, but the pod is bound to node n1")
		assert.Equal(t, before, export(t, l))
		u, _ := l.Usage("n1")
		assert.Equal(t, [2]int64{2000, 1000}, [2]int64{u.Bound.MilliCPU(), u.Held.MilliCPU()})
	})
	t.Run("a pod report without a key is an error whatever its phase", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		for _, phase := range []v1.PodPhase{v1.PodRunning, v1.PodSucceeded, v1.PodFailed} {
			p := st.MakePod("").Req("cpu", "1").Node("n1").Obj()
			p.Status.Phase = phase
			err := l.AddPod(p)
			require.ErrorIs(t, err, reserve.ErrInvalid, phase)
			require.ErrorIs(t, err, snapshot.ErrInvalidObject, phase)
			assert.Contains(t, err.Error(), "metadata.name is empty", phase)
		}
		require.ErrorIs(t, l.AddPod(nil), reserve.ErrInvalid)
	})
	t.Run("terminal pods free their capacity", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		p := st.MakePod("job").Req("cpu", "3").Node("n1").Obj()
		require.NoError(t, l.AddPod(p))
		p.Status.Phase = v1.PodSucceeded
		require.NoError(t, l.UpdatePod(p))
		u, _ := l.Usage("n1")
		assert.Zero(t, u.Bound.MilliCPU())
		assert.False(t, l.Snapshot().Get("n1").HasPod(snapshot.KeyOf(p)))
		held := st.MakePod("held").Req("cpu", "1").Obj()
		mustFit(t, l, snapshot.MustPodInfo(held), "n1")
		held.Status.Phase = v1.PodFailed
		require.NoError(t, l.UpdatePod(held))
		assert.Empty(t, l.Holds())
	})
	t.Run("informer moves a pod created again, never the same pod", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"), node("n2", "4"))
		p := st.MakePod("a").Req("cpu", "1").Node("n1").Obj()
		require.NoError(t, l.AddPod(p))
		usage := func() [2]int64 {
			u1, _ := l.Usage("n1")
			u2, _ := l.Usage("n2")
			return [2]int64{u1.Bound.MilliCPU(), u2.Bound.MilliCPU()}
		}
		before := l.Snapshot()
		// The same pod (same metadata.uid) on n2: spec.nodeName cannot
		// change, so the report is refused, as snapshot.Cache refuses it,
		// and nothing changes (the same snapshot comes back).
		p.Spec.NodeName = "n2"
		err := l.UpdatePod(p)
		require.ErrorIs(t, err, reserve.ErrInvalid)
		require.ErrorIs(t, err, snapshot.ErrInvalidObject)
		assert.EqualError(t, err, "reserve: Ledger.UpdatePod: pod default/a (uid "+string(p.UID)+"): spec.nodeName: reported on node n2, but the pod is bound to node n1 (upstream's scheduler cache takes this as corruption and exits); remove the pod first, or give a pod created again its new metadata.uid: spec.nodeName cannot change: reserve: invalid argument: snapshot: invalid object")
		assert.Equal(t, [2]int64{1000, 0}, usage())
		assert.Same(t, before, l.Snapshot(), "a refused report changed the ledger")
		pi := snapshot.MustPodInfo(p)
		require.ErrorIs(t, l.AddPodInfo(pi, "n2"), reserve.ErrInvalid, "AddPodInfo refuses the same move")
		assert.Equal(t, [2]int64{1000, 0}, usage())
		// Deleted and created again under the name (a new uid), the delete
		// and add merged into one update: it moves.
		p.UID += "-again"
		require.NoError(t, l.UpdatePod(p))
		assert.Equal(t, [2]int64{0, 1000}, usage())
	})
}

func TestSnapshotOverlay(t *testing.T) {
	l := newLedger(t, node("n1", "4"), node("n2", "4"))
	base := l.Snapshot()
	assert.Same(t, base, l.Snapshot(), "unchanged ledger: same snapshot")
	a := pod("a", "1")
	mustFit(t, l, a, "n1")
	s1 := l.Snapshot()
	assert.NotSame(t, base, s1)
	assert.True(t, s1.Get("n1").HasPod(a.Key()))
	assert.Equal(t, int64(1000), s1.Get("n1").Requested().MilliCPU())
	assert.Zero(t, base.Get("n1").NumPods(), "an old snapshot changed")
	assert.Zero(t, l.BoundSnapshot().Get("n1").NumPods(), "BoundSnapshot shows holds")
	require.NoError(t, l.Confirm(a.Key()))
	assert.True(t, l.Snapshot().Get("n1").HasPod(a.Key()), "confirmed pods stay in the overlay")
	l.Unreserve(a.Key())
	assert.False(t, l.Snapshot().Get("n1").HasPod(a.Key()))
}

func TestReconcile(t *testing.T) {
	l := newLedger(t, node("n1", "8"))
	_, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "2"), Owner: reserve.Owner{Selector: &metav1.LabelSelector{}}})
	require.NoError(t, err)
	alive, gone, confirmedGone := pod("alive", "1"), pod("gone", "1"), pod("confirmed-gone", "1")
	for _, p := range []*snapshot.PodInfo{alive, gone, confirmedGone} {
		mustFit(t, l, p, "n1")
	}
	require.NoError(t, l.Confirm(confirmedGone.Key()))
	exists := func(k snapshot.PodKey) bool { return k == alive.Key() }
	got := l.Reconcile(exists)
	assert.Equal(t, []snapshot.PodKey{confirmedGone.Key(), gone.Key()}, got)
	assert.Len(t, l.Holds(), 1)
	r, _ := l.Reservation("r")
	assert.Equal(t, []snapshot.PodKey{alive.Key()}, r.Pods)
	assert.Nil(t, l.Reconcile(exists))
}

func TestExportImportErrors(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"not json", "{"},
		{"version", `{"version":9}`},
		{"version 1", `{"version":1,"nodes":[]}`},
		{"unbound pod", signedExport(`{"pods":[{"metadata":{"name":"p"}}]}`)},
		{"hold on nothing", signedExport(`{"holds":[{"pod":{"metadata":{"name":"p"}},"node":""}]}`)},
		{"share of unknown reservation", signedExport(`{"draws":[{"pod":{"namespace":"d","name":"p"},"reservation":"r","drawn":{"cpu":1}}]}`)},
		{"unknown field", signedExport(`{"nodes":[],"extra":1}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := reserve.Import(bytesReader(tc.in))
			require.Error(t, err)
			assert.True(t, errors.Is(err, reserve.ErrInvalid) || errors.Is(err, reserve.ErrCorruptExport), "%v", err)
		})
	}
}

// TestReserveUnreserveAllocs: the hot pair allocates nothing in steady
// state (no journal, no named reservation on the node), nor does Fits for a
// pod that fits.
func TestReserveUnreserveAllocs(t *testing.T) {
	l, names := benchLedger(t, 100)
	pods := benchPods(64, "p")
	i := 0
	allocs := testing.AllocsPerRun(10_000, func() {
		p := pods[i&63]
		if reasons, err := l.Reserve(p, names[i%100]); err != nil || reasons != nil {
			t.Fatalf("Reserve: %v %v", reasons, err)
		}
		l.Unreserve(p.Key())
		i++
	})
	assert.Zero(t, allocs, "Reserve+Unreserve allocations")
	allocs = testing.AllocsPerRun(10_000, func() {
		if reasons, err := l.Fits(pods[i&63], names[i%100]); err != nil || reasons != nil {
			t.Fatalf("Fits: %v %v", reasons, err)
		}
		i++
	})
	assert.Zero(t, allocs, "Fits allocations")
	allocs = testing.AllocsPerRun(10_000, func() {
		p := pods[i&63]
		_, _ = l.Reserve(p, names[i%100])
		_ = l.Confirm(p.Key())
		l.Unreserve(p.Key())
		i++
	})
	assert.Zero(t, allocs, "Reserve+Confirm+Unreserve allocations")
}

// Every ledger error wraps a reserve sentinel: a pod whose requests do not
// parse is ErrInvalid (and still names the field), and an unknown node is
// ErrNodeNotFound and snapshot.ErrNodeNotFound alike, as in RemoveNode.
func TestErrorSentinels(t *testing.T) {
	l := reserve.New()
	require.NoError(t, l.AddNode(st.MakeNode("a").Capacity("cpu", "4", "memory", "8Gi", "pods", "10").Obj()))
	err := l.AddPod(st.MakePod("neg").Req("cpu", "-1").Node("a").Obj())
	require.ErrorIs(t, err, reserve.ErrInvalid)
	require.ErrorIs(t, err, snapshot.ErrNegativeQuantity)
	require.ErrorContains(t, err, "requests[cpu]")
	require.ErrorIs(t, l.UpdatePod(st.MakePod("").Node("a").Obj()), reserve.ErrInvalid)

	pi := snapshot.MustPodInfo(st.MakePod("p").Req("cpu", "1").Obj())
	_, err = l.Reserve(pi, "nosuch")
	require.ErrorIs(t, err, reserve.ErrNodeNotFound)
	require.ErrorIs(t, err, snapshot.ErrNodeNotFound)
	require.ErrorIs(t, l.RemoveNode("nosuch"), snapshot.ErrNodeNotFound)
	require.Empty(t, l.Nodes()[1:], "nothing added")
}
