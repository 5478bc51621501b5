package framework

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// webOwner is a reservation of cpu on node for app=web pods.
func webOwner(name, node, cpu string) reserve.Reservation {
	return reserve.Reservation{Name: name, Node: node, Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)},
		Owner: reserve.Owner{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
}

func webPod(name, cpu string) *snapshot.PodInfo {
	return snapshot.MustPodInfo(mkPod(name).Req("cpu", cpu, "memory", "1Gi").Label("app", "web").Obj())
}

// Issue 17 item 1: node n has 4000m; reservation r holds all of it for
// app=web; an app=web pod of 2000m fits by the ledger, so the cycle must
// place it there too.
func TestScheduleOwnerOnFullyReservedNode(t *testing.T) {
	l := newLedger(t, []*v1.Node{mkNode("n").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj()})
	_, err := l.AddReservation(webOwner("r", "n", "4"))
	require.NoError(t, err)
	p := webPod("p", "2")
	reasons, err := l.Fits(p, "n")
	require.NoError(t, err)
	require.Nil(t, reasons, "the ledger says p fits")

	s := mustNew(t, Config{Seed: 1})
	d, err := s.Schedule(l, p)
	require.NoError(t, err)
	require.True(t, d.Scheduled(), "Schedule: %v", d.Diagnosis)
	assert.Equal(t, "n", d.Node)
	h, ok := l.Hold(p.Key())
	require.True(t, ok)
	assert.Equal(t, "r", h.Reservation)
	assert.Equal(t, int64(2000), h.Drawn.MilliCPU())

	// A pod that is not an owner still sees the node full.
	other := snapshot.MustPodInfo(mkPod("o").Req("cpu", "1").Obj())
	d, err = s.Schedule(l, other)
	require.NoError(t, err)
	require.False(t, d.Scheduled())
	assert.Equal(t, "0/1 nodes are available: 1 Insufficient cpu.", d.Diagnosis.Message())
}

// An owner goes to a node where its reservation holds room for it, even
// when the profile scores an emptier node higher: the reserved room is
// kept for it whether it is used or not.
func TestScheduleOwnerPrefersItsReservation(t *testing.T) {
	nodes := []*v1.Node{
		mkNode("empty-1").Capacity("cpu", "32", "memory", "64Gi", "pods", "110").Obj(),
		mkNode("reserved").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj(),
		mkNode("empty-2").Capacity("cpu", "32", "memory", "64Gi", "pods", "110").Obj(),
	}
	for seed := range uint64(8) {
		l := newLedger(t, nodes)
		_, err := l.AddReservation(webOwner("r", "reserved", "3"))
		require.NoError(t, err)
		s := mustNew(t, Config{Seed: seed, PercentageOfNodesToScore: 100})
		d, err := s.Schedule(l, webPod("p", "2"))
		require.NoError(t, err)
		assert.Equal(t, "reserved", d.Node, "seed %d", seed)
		// Without a reservation the profile picks an empty node.
		d, err = s.Schedule(l, snapshot.MustPodInfo(mkPod("q").Req("cpu", "2", "memory", "1Gi").Obj()))
		require.NoError(t, err)
		assert.NotEqual(t, "reserved", d.Node, "seed %d", seed)
	}
	// When the reservation's node cannot take the owner (2000m drawn of
	// 3000m, 1000m free: a 4000m owner needs 1000m more than the node has),
	// the ordinary cycle places it elsewhere.
	l := newLedger(t, nodes)
	_, err := l.AddReservation(webOwner("r", "reserved", "3"))
	require.NoError(t, err)
	s := mustNew(t, Config{Seed: 1, PercentageOfNodesToScore: 100})
	d, err := s.Schedule(l, webPod("big", "5"))
	require.NoError(t, err)
	require.True(t, d.Scheduled())
	assert.NotEqual(t, "reserved", d.Node)
}

// SnapshotFor is what any filter of the ledger's view must read for an
// owner: NodeResourcesFit on it gives Fits' verdict, node by node.
func TestSnapshotForAgreesWithFits(t *testing.T) {
	l := newLedger(t, []*v1.Node{
		mkNode("a").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj(),
		mkNode("b").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj(),
	})
	_, err := l.AddReservation(webOwner("r", "a", "4"))
	require.NoError(t, err)
	_, err = l.Reserve(snapshot.MustPodInfo(mkPod("x").Req("cpu", "3").Obj()), "b")
	require.NoError(t, err)
	for _, p := range []*snapshot.PodInfo{webPod("p", "2"), webPod("p5", "5"), snapshot.MustPodInfo(mkPod("q").Req("cpu", "1").Obj())} {
		res, err := (&nodeResourcesFitPlugin{}).PreFilter(p)
		require.NoError(t, err)
		view, reserved := l.SnapshotFor(p)
		for _, name := range []string{"a", "b"} {
			want, err := l.Fits(p, name)
			require.NoError(t, err)
			got := res.Filter.Filter(view.Get(name), nil)
			assert.Equal(t, want == nil, got == nil, "pod %s node %s: Fits %v, filter %v", p.Key(), name, want, got)
		}
		if p.Pod().Labels["app"] == "web" {
			assert.Equal(t, []string{"a"}, reserved)
		} else {
			assert.Nil(t, reserved)
			assert.Same(t, l.Snapshot(), view, "a pod that owns nothing gets the shared snapshot")
		}
	}
}
