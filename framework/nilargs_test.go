package framework_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// Nil arguments are errors, never panics (found by a new user).
func TestNilArguments(t *testing.T) {
	s, err := framework.New(framework.Config{})
	require.NoError(t, err)
	pod := snapshot.MustPodInfo(st.MakePod("p").Req("cpu", "1").Obj())

	_, err = s.SchedulePod(nil, pod)
	require.ErrorIs(t, err, framework.ErrInvalidConfig)
	_, err = s.SchedulePod((*snapshot.Snapshot)(nil), pod)
	require.ErrorIs(t, err, framework.ErrInvalidConfig)
	_, err = s.SchedulePod((*snapshot.Fork)(nil), pod)
	require.ErrorIs(t, err, framework.ErrInvalidConfig)
	_, err = s.Schedule(nil, pod)
	require.ErrorIs(t, err, framework.ErrInvalidConfig)
	_, err = s.Schedule(reserve.New(), nil)
	require.ErrorIs(t, err, framework.ErrInvalidPod)

	snap := st.Snapshot(t, []*v1.Node{st.MakeNode("n").Capacity("cpu", "4").Obj()})
	totals := make([]int64, 2)
	require.ErrorIs(t, score.DefaultProfile().Score(nil, snap, []*snapshot.NodeInfo{snap.Node(0)}, totals), score.ErrInvalidPod)
	require.ErrorIs(t, score.DefaultProfile().Score(pod, snap, []*snapshot.NodeInfo{snap.Node(0), nil}, totals), score.ErrInvalidConfig)

	_, err = reserve.Import(nil)
	require.ErrorIs(t, err, reserve.ErrInvalid)
	_, err = load.Read(nil, "x.yaml")
	require.ErrorIs(t, err, load.ErrIO)
}
