package whatif_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
	"github.com/schedkit/schedkit/whatif"
)

// oneNodeOneGroup is a fork of one 4-CPU node, n0, and a group g of up
// to 5 such nodes.
func oneNodeOneGroup(t *testing.T) (*snapshot.Fork, []whatif.NodeGroup) {
	c := snapshot.NewCache()
	require.NoError(t, c.AddNode(st.MakeNode("n0").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	tn := st.MakeNode("tmpl").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()
	return c.Snapshot().Fork(), []whatif.NodeGroup{{Name: "g", Template: tn, MaxNodes: 5}}
}

// TestScaleUpRefusesDuplicates: two pending pods with one namespace/name
// were both counted (trial 5); now an ErrInvalidInput error naming the
// pod, and the fork is left as it was.
func TestScaleUpRefusesDuplicates(t *testing.T) {
	f, groups := oneNodeOneGroup(t)

	pend := []*v1.Pod{st.MakePod("a").Req("cpu", "3").Obj(), st.MakePod("b").Req("cpu", "3").Obj(), st.MakePod("a").Req("cpu", "3").Obj()}
	_, err := whatif.ScaleUp(f, pend, groups, whatif.ScaleUpConfig{})
	require.ErrorIs(t, err, whatif.ErrInvalidInput)
	require.ErrorContains(t, err, "pending[2]: pod default/a: listed twice (also pending[0])")
	require.Equal(t, 0, f.Depth())
	require.Equal(t, 1, f.NumNodes())
}

// TestScaleUpSkipsTakenNames: new nodes were always "<group>-new-0",
// "-1", ..., so a ScaleUp on a fork that held an earlier ScaleUp's nodes
// (added to try the chosen option) failed with "node already exists"
// (trial 5 had made the bare error an ErrInvalidInput). The names already
// taken are now skipped: the second estimate names its nodes g-new-2,
// g-new-3 and g-new-4, places on them as on fresh names, and leaves the
// fork as it was.
func TestScaleUpSkipsTakenNames(t *testing.T) {
	f, groups := oneNodeOneGroup(t)
	wave := func(prefix string) []*v1.Pod {
		var ps []*v1.Pod
		for i := range 3 { // n0 takes one 3-CPU pod, each new node one
			ps = append(ps, st.MakePod(prefix+strconv.Itoa(i)).Req("cpu", "3").Obj())
		}
		return ps
	}

	first, err := whatif.ScaleUp(f, wave("a"), groups, whatif.ScaleUpConfig{})
	require.NoError(t, err)
	require.Equal(t, []string{"g-new-0", "g-new-1"}, nodesOf(first.Groups[0].Placed))
	// Try the option: add its nodes and place its pods on the fork.
	for _, name := range nodesOf(first.Groups[0].Placed) {
		require.NoError(t, f.AddNode(st.MakeNode(name).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	}
	for _, p := range append(first.Existing, first.Groups[0].Placed...) {
		require.NoError(t, f.AddPodInfo(p.Pod, p.Node))
	}
	require.Equal(t, 3, f.NumNodes())

	second, err := whatif.ScaleUp(f, wave("b"), groups, whatif.ScaleUpConfig{})
	require.NoError(t, err)
	assert.Empty(t, second.Existing, "every node is full")
	assert.Equal(t, []string{"g-new-2", "g-new-3", "g-new-4"}, nodesOf(second.Groups[0].Placed))
	assert.Equal(t, 3, second.Groups[0].NodesAdded)
	assert.Equal(t, 0, f.Depth())
	assert.Equal(t, 3, f.NumNodes(), "the estimate's nodes are gone again")
	for _, name := range []string{"g-new-0", "g-new-1"} {
		require.NotNil(t, f.Get(name))
		assert.Len(t, f.Get(name).Pods(), 1, "%s keeps the first wave's pod", name)
	}
}

// nodesOf lists the placements' nodes, in order.
func nodesOf(ps []whatif.Placement) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Node)
	}
	return out
}
