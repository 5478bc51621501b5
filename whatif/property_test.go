package whatif_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
	"github.com/schedkit/schedkit/whatif"
)

// checkQuestionsLeaveForkUnchanged asks every question on a random
// cluster (seeded) and checks after each that the caller's fork has the
// same content and depth, and that asking twice gives the same answer.
func checkQuestionsLeaveForkUnchanged(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 5))
	nodes, bound := randomCluster(r, 1+r.IntN(30))
	for i, p := range bound {
		if r.IntN(3) > 0 {
			bound[i] = owned(p, "ReplicaSet", fmt.Sprint("rs-", r.IntN(4)))
		}
		bound[i].Labels = map[string]string{"app": fmt.Sprint("a", r.IntN(3))}
	}
	f := forkOf(t, nodes, bound)
	if r.IntN(2) == 0 {
		f.Fork() // the caller's own open layer
	}
	depth, before := f.Depth(), contentOf(f)
	same := func(what string) {
		t.Helper()
		require.Equal(t, depth, f.Depth(), "%s: depth", what)
		require.Equal(t, before, contentOf(f), "%s changed the fork", what)
	}
	cfg := framework.Config{Seed: seed}
	tmpl := snapshottest.MakePod("t").Req("cpu", fmt.Sprintf("%dm", 100*(1+r.IntN(40)))).Obj()
	a, err := whatif.FitCount(f, tmpl, r.IntN(100), cfg)
	require.NoError(t, err)
	same("FitCount")
	b, err := whatif.FitCount(f, tmpl, len(a.Placements), cfg)
	require.NoError(t, err)
	require.Equal(t, names(a.Placements), names(b.Placements))

	var cands []string
	for _, n := range nodes {
		if r.IntN(2) == 0 {
			cands = append(cands, n.Name)
		}
	}
	l := pdbs{pdb("p0", "a0", int32(r.IntN(3))), pdb("p1", "a1", int32(r.IntN(3)))}
	d1, err := whatif.Drain(f, cands, l, cfg)
	require.NoError(t, err)
	same("Drain")
	d2, err := whatif.RemovableNodes(f, cands, l, cfg)
	require.NoError(t, err)
	same("RemovableNodes")
	for i := range d1 {
		// Greedy removals only add pods to the remaining nodes and use
		// PDB budget: a node blocked by a rule or a PDB alone is blocked
		// then too (by the same pod or an earlier one).
		if d1[i].Block != "" && d1[i].Block != whatif.NoPlaceToMovePods {
			require.False(t, d2[i].Removable, d1[i].Node)
		}
	}

	var pending []*v1.Pod
	for i := range r.IntN(60) {
		pending = append(pending, owned(snapshottest.MakePod(fmt.Sprint("pend-", i)).Req("cpu", fmt.Sprintf("%dm", 200*(1+r.IntN(20)))).Obj(), "ReplicaSet", fmt.Sprint("p", r.IntN(3))))
	}
	groups := []whatif.NodeGroup{
		{Name: "g1", Template: snapshottest.MakeNode("t").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj(), MaxNodes: r.IntN(20)},
		{Name: "g2", Template: snapshottest.MakeNode("t").Capacity("cpu", "8", "memory", "8Gi", "pods", "110").Obj(), MaxNodes: r.IntN(20)},
	}
	s1, err := whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{Scheduler: cfg, Expander: whatif.Expander(r.IntN(4)), Seed: seed})
	require.NoError(t, err)
	same("ScaleUp")
	s2, err := whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{Scheduler: cfg, Expander: whatif.Expander(r.IntN(4)), Seed: seed})
	require.NoError(t, err)
	for i := range s1.Groups {
		require.Equal(t, s1.Groups[i].NodesAdded, s2.Groups[i].NodesAdded)
		require.Equal(t, len(s1.Groups[i].Placed)+len(s1.Groups[i].Pending)+len(s1.Existing), len(pending))
	}

	// A gang that cannot be placed (more members than the cluster has
	// room for) leaves the fork as it was.
	var members []*v1.Pod
	for i := range 3 {
		members = append(members, snapshottest.MakePod(fmt.Sprint("m-", i)).Req("cpu", "1000").Obj())
	}
	g, err := whatif.PlaceGang(f, whatif.Gang{Pods: members}, cfg)
	require.NoError(t, err)
	require.False(t, g.Placed)
	same("PlaceGang")
}

func TestQuestionsLeaveForkUnchanged(t *testing.T) {
	for seed := range uint64(25) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { checkQuestionsLeaveForkUnchanged(t, seed) })
	}
}

func FuzzQuestionsLeaveForkUnchanged(f *testing.F) {
	for _, s := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(checkQuestionsLeaveForkUnchanged)
}
