package framework

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestLoopRefusesBoundPod: Loop.Add queued a pod that already had
// spec.nodeName and bound it a second time (trial 5); upstream's queue
// takes only unassigned pods. Now an error naming the pod and field,
// nothing queued.
func TestLoopRefusesBoundPod(t *testing.T) {
	l := reserve.New()
	require.NoError(t, l.AddNode(st.MakeNode("n0").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	s, err := New(Config{})
	require.NoError(t, err)
	binds := 0
	loop := NewLoop(s, l, func(context.Context, Decision) error { binds++; return nil })
	bound := st.MakePod("b").Req("cpu", "1").Node("n0").Obj()
	err = loop.Add(bound)
	require.ErrorIs(t, err, ErrInvalidPod)
	require.ErrorContains(t, err, `pod default/b: spec.nodeName is "n0"`)
	require.ErrorIs(t, loop.AddPodInfo(snapshot.MustPodInfo(bound)), ErrInvalidPod)
	require.Zero(t, loop.Len())
	as, err := loop.ScheduleAll(context.Background())
	require.NoError(t, err)
	require.Empty(t, as)
	require.Zero(t, binds)
	require.NoError(t, loop.Add(st.MakePod("a").Req("cpu", "1").Obj()))
	require.Equal(t, 1, loop.Len())
}
