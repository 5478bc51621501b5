package reserve_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

func newEvictLedger(t *testing.T, nodes []*v1.Node) *reserve.Ledger {
	l := reserve.New()
	for _, n := range nodes {
		require.NoError(t, l.AddNode(n))
	}
	return l
}

func evictPod(name, node, cpu string) *v1.Pod {
	return snapshottest.MakePod(name).Req("cpu", cpu).Node(node).Obj()
}

func TestLedgerEvict(t *testing.T) {
	ledger := newEvictLedger(t, []*v1.Node{snapshottest.MakeNode("n1").Allocatable("cpu", "4000m", "pods", "110").Obj(), snapshottest.MakeNode("n2").Allocatable("cpu", "4000m", "pods", "110").Obj()})
	require.NoError(t, ledger.AddPod(evictPod("a", "n1", "1000m")))
	require.NoError(t, ledger.AddPod(evictPod("b", "n1", "1000m")))
	require.NoError(t, ledger.AddPod(evictPod("c", "n2", "1000m")))
	ka, kb, kc := snapshot.PodKey{Namespace: "default", Name: "a"}, snapshot.PodKey{Namespace: "default", Name: "b"}, snapshot.PodKey{Namespace: "default", Name: "c"}
	// c is not on n1: nothing evicted.
	err := ledger.Evict("n1", []snapshot.PodKey{ka, kc})
	require.ErrorIs(t, err, reserve.ErrNotHeld)
	assert.Equal(t, `reserve: Ledger.Evict: victim default/c is not on node "n1" (it is on "n2"): `+reserve.ErrNotHeld.Error(), err.Error())
	// An unknown victim is named as such, not "(it is on \"\")".
	err = ledger.Evict("n1", []snapshot.PodKey{ka, {Namespace: "default", Name: "ghost"}})
	require.ErrorIs(t, err, reserve.ErrNotHeld)
	assert.Equal(t, "reserve: Ledger.Evict: victim default/ghost is not in the ledger: "+reserve.ErrNotHeld.Error(), err.Error())
	err = ledger.Evict("n1", []snapshot.PodKey{ka, ka})
	require.ErrorIs(t, err, reserve.ErrInvalid)
	u, _ := ledger.Usage("n1")
	assert.Equal(t, int64(2000), u.Bound.MilliCPU(), "unchanged")
	require.NoError(t, ledger.Evict("n1", []snapshot.PodKey{ka, kb}))
	u, _ = ledger.Usage("n1")
	assert.Equal(t, int64(0), u.Bound.MilliCPU())
}
