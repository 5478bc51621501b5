package framework

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestLoopDropsPodTheLedgerHasPlaced: a pod pending in the Loop that the
// ledger already reports bound (another scheduler bound it, and the
// informer's report reached the ledger before anyone called Loop.Remove)
// or holds on another node made every ScheduleAll fail with
// reserve.ErrConflict and requeue it, so `for loop.Len() > 0` never ended
// (second trial). Upstream's queue drops a pod the informer reports
// assigned (v1.37 eventhandlers.go updatePod: deletePodFromSchedulingQueue)
// and scheduleOne skips an assumed pod without requeueing it
// (schedule_one.go skipPodSchedule). Now the pod is dropped with an
// Attempt whose Skipped error wraps ErrAlreadyPlaced, and the other pods
// are scheduled.
func TestLoopDropsPodTheLedgerHasPlaced(t *testing.T) {
	for _, tc := range []struct {
		name  string
		place func(t *testing.T, l *reserve.Ledger)
		want  string
	}{
		{"bound by the informer", func(t *testing.T, l *reserve.Ledger) {
			require.NoError(t, l.AddPod(st.MakePod("stale").Req("cpu", "1").Node("n2").Obj()))
		}, `framework: Loop: pod default/stale: the ledger has it Bound on node n2`},
		{"held on another node", func(t *testing.T, l *reserve.Ledger) {
			ins, err := l.Reserve(snapshot.MustPodInfo(st.MakePod("stale").Req("cpu", "1").Obj()), "n2")
			require.NoError(t, err)
			require.Empty(t, ins)
		}, `framework: Loop: pod default/stale: the ledger has it Held on node n2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := reserve.New()
			for _, n := range []string{"n1", "n2"} {
				require.NoError(t, l.AddNode(st.MakeNode(n).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
			}
			s, err := New(Config{Seed: 1})
			require.NoError(t, err)
			loop := NewLoop(s, l, nil)
			require.NoError(t, loop.Add(st.MakePod("stale").Req("cpu", "1").Obj()))
			require.NoError(t, loop.Add(st.MakePod("fresh").Req("cpu", "1").Obj()))
			tc.place(t, l)
			before := l.Holds()
			stale := snapshot.PodKey{Namespace: "default", Name: "stale"}

			for range 3 { // the trial's loop; each pass used to fail and requeue
				if loop.Len() == 0 {
					break
				}
				as, err := loop.ScheduleAll(context.Background())
				require.NoError(t, err)
				require.Len(t, as, 2)
				require.ErrorIs(t, as[0].Skipped, ErrAlreadyPlaced)
				require.EqualError(t, as[0].Skipped, tc.want+": "+ErrAlreadyPlaced.Error())
				require.False(t, as[0].Bound())
				require.Equal(t, "default/stale", as[0].Pod.Key().String())
				require.True(t, as[1].Bound(), "fresh: %+v", as[1])
			}
			require.Zero(t, loop.Len())
			require.Empty(t, loop.Unschedulable())
			require.False(t, loop.Remove(stale), "stale is no longer queued")
			// The ledger's record of the stale pod is untouched.
			ph, node, ok := l.PodPhase(stale)
			require.True(t, ok)
			require.Equal(t, "n2", node)
			if len(before) == 1 {
				require.Equal(t, reserve.Held, ph)
			} else {
				require.Equal(t, reserve.Bound, ph)
			}
			// A pod of the same key can be queued again (a new pod after
			// the old one was deleted).
			l.RemovePod(stale)
			require.NoError(t, loop.Add(st.MakePod("stale").Req("cpu", "1").Obj()))
			as, err := loop.ScheduleAll(context.Background())
			require.NoError(t, err)
			require.Len(t, as, 1)
			require.True(t, as[0].Bound())
		})
	}
}
