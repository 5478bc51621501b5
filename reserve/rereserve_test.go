package reserve_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestReReserveDifferentRequest: reserving a held pod again on its node
// with a bigger request was a silent no-op, the hold staying at the old
// size (trial 5). The ledger never resizes a hold (Reserve's contract:
// same node, a no-op; upstream's AssumePod refuses a pod already assumed),
// so a different request is an ErrInvalid error naming both; the same
// request is still a no-op, and the hold is unchanged either way.
func TestReReserveDifferentRequest(t *testing.T) {
	l := reserve.New()
	require.NoError(t, l.AddNode(st.MakeNode("n0").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	small := snapshot.MustPodInfo(st.MakePod("p").Req("cpu", "1").Obj())
	big := snapshot.MustPodInfo(st.MakePod("p").Req("cpu", "3").Obj())
	ins, err := l.Reserve(small, "n0")
	require.NoError(t, err)
	require.Nil(t, ins)
	before, _ := l.Usage("n0")

	_, err = l.Reserve(big, "n0")
	require.ErrorIs(t, err, reserve.ErrInvalid)
	require.ErrorContains(t, err, "pod default/p is Held on node n0 requesting")
	after, _ := l.Usage("n0")
	require.Equal(t, before, after)

	_, err = l.Reserve(snapshot.MustPodInfo(st.MakePod("p").Req("cpu", "1").Obj()), "n0")
	require.NoError(t, err, "same request: a no-op")
	require.NoError(t, l.Confirm(small.Key()))
	_, err = l.Reserve(big, "n0")
	require.ErrorIs(t, err, reserve.ErrInvalid, "confirmed too")
}

// TestReserveUntilPastDeadline: the ledger reads no clock, so a deadline
// already past is accepted; the hold counts until the caller's next
// Expire at or after the deadline releases it.
func TestReserveUntilPastDeadline(t *testing.T) {
	l := reserve.New()
	require.NoError(t, l.AddNode(st.MakeNode("n0").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	pi := snapshot.MustPodInfo(st.MakePod("p").Req("cpu", "1").Obj())
	ins, err := l.ReserveUntil(pi, "n0", now.Add(-time.Hour))
	require.NoError(t, err)
	require.Nil(t, ins)
	_, held := l.Hold(pi.Key())
	require.True(t, held)
	require.Equal(t, []snapshot.PodKey{pi.Key()}, l.Expire(now))
	_, held = l.Hold(pi.Key())
	require.False(t, held)
}
