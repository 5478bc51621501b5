package framework

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestLoopSkipsDeletingPod: the Loop scheduled a pod whose
// metadata.deletionTimestamp was set (trial s8), taking the capacity a
// later pod needed. Upstream skips it without a cycle and without
// requeueing it (v1.37 schedule_one.go skipPodSchedule, case 1): here
// Attempt.Skipped wraps ErrPodDeleting, the pod is neither bound nor set
// aside as unschedulable, and the next pod gets the node.
func TestLoopSkipsDeletingPod(t *testing.T) {
	for _, lean := range []bool{false, true} {
		var opts []reserve.Option
		if lean {
			opts = append(opts, reserve.WithLeanPods())
		}
		l := reserve.New(opts...)
		require.NoError(t, l.AddNode(st.MakeNode("n0").Capacity("cpu", "2", "memory", "8Gi", "pods", "110").Obj()))
		s, err := New(Config{})
		require.NoError(t, err)
		var bound []string
		loop := NewLoop(s, l, func(_ context.Context, d Decision) error {
			bound = append(bound, d.Pod.Key().Name)
			return l.AddPodInfo(d.Pod, d.Node)
		})
		deleting := st.MakePod("deleting").Req("cpu", "2").Obj()
		now := metav1.Now()
		deleting.DeletionTimestamp = &now
		require.NoError(t, loop.Add(deleting))
		require.NoError(t, loop.Add(st.MakePod("normal").Req("cpu", "1").Obj()))
		as, err := loop.ScheduleAll(context.Background())
		require.NoError(t, err)
		require.Len(t, as, 2)
		require.ErrorIs(t, as[0].Skipped, ErrPodDeleting)
		require.ErrorContains(t, as[0].Skipped, "skip schedule deleting pod: default/deleting")
		require.False(t, as[0].Scheduled())
		require.Nil(t, as[0].Diagnosis)
		require.Nil(t, as[1].Skipped)
		require.True(t, as[1].Bound())
		require.Equal(t, "n0", as[1].Node)
		require.Equal(t, []string{"normal"}, bound)
		require.Empty(t, loop.Unschedulable())
		require.Zero(t, loop.Len())
		require.Zero(t, loop.Requeue()) // not set aside: nothing comes back
		_, _, held := l.PodPhase(snapshot.PodKey{Namespace: "default", Name: "deleting"})
		require.False(t, held)
	}
}
