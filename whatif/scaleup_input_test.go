package whatif_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
	"github.com/schedkit/schedkit/whatif"
)

// TestScaleUpRefusesDuplicatesAndNameClash: two pending pods with one
// namespace/name were both counted, and a group whose new node's name
// was taken gave a bare "snapshot: node already exists" (trial 5). Both
// are now ErrInvalidInput errors naming the pod, or the group and node,
// and the fork is left as it was.
func TestScaleUpRefusesDuplicatesAndNameClash(t *testing.T) {
	c := snapshot.NewCache()
	require.NoError(t, c.AddNode(st.MakeNode("n0").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	require.NoError(t, c.AddNode(st.MakeNode("g-new-0").Capacity("cpu", "1", "pods", "110").Obj()))
	f := c.Snapshot().Fork()
	tn := st.MakeNode("tmpl").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()
	groups := []whatif.NodeGroup{{Name: "g", Template: tn, MaxNodes: 5}}

	pend := []*v1.Pod{st.MakePod("a").Req("cpu", "3").Obj(), st.MakePod("b").Req("cpu", "3").Obj(), st.MakePod("a").Req("cpu", "3").Obj()}
	_, err := whatif.ScaleUp(f, pend, groups, whatif.ScaleUpConfig{})
	require.ErrorIs(t, err, whatif.ErrInvalidInput)
	require.ErrorContains(t, err, "pending[2]: pod default/a: listed twice (also pending[0])")
	require.Equal(t, 0, f.Depth())
	require.Equal(t, 2, f.NumNodes())

	pend = []*v1.Pod{st.MakePod("a").Req("cpu", "3").Obj(), st.MakePod("b").Req("cpu", "3").Obj(), st.MakePod("c").Req("cpu", "3").Obj()}
	_, err = whatif.ScaleUp(f, pend, groups, whatif.ScaleUpConfig{})
	require.ErrorIs(t, err, whatif.ErrInvalidInput)
	require.ErrorIs(t, err, snapshot.ErrNodeExists)
	require.ErrorContains(t, err, "group g: new node g-new-0")
	require.Equal(t, 0, f.Depth())
	require.Equal(t, 2, f.NumNodes())
}
