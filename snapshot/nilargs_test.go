package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// A nil PodInfo is an error naming what is nil, never a panic, and changes
// nothing.
func TestNilPodInfos(t *testing.T) {
	c := snapshot.NewCache()
	node := st.MakeNode("a").Capacity("cpu", "4").Obj()
	require.NoError(t, c.AddNode(node))
	require.ErrorIs(t, c.AddPodInfo(nil), snapshot.ErrInvalidObject)

	f := c.Snapshot().Fork()
	require.ErrorIs(t, f.AddPodInfo(nil, "a"), snapshot.ErrInvalidObject)
	pi := snapshot.MustPodInfo(st.MakePod("p").Req("cpu", "1").Obj())
	err := f.AddNodeInfo(st.MakeNode("b").Capacity("cpu", "4").Obj(), pi, nil)
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	require.ErrorContains(t, err, "pods[1] is nil")
	require.Nil(t, f.Get("b"), "a failed AddNodeInfo added the node")
	require.Zero(t, f.Get("a").NumPods())
}
