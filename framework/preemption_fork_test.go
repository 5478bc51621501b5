package framework

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// nodeState is what a node holds, for exact comparison.
type nodeState struct {
	pods                []string
	requested, nonZero  string
	ports               int
	generationUnchanged bool
}

func clusterState(c score.Cluster) map[string]nodeState {
	out := map[string]nodeState{}
	for i := range c.NumNodes() {
		ni := c.Node(i)
		var pods []string
		for _, p := range ni.Pods() {
			pods = append(pods, p.Key().String())
		}
		slices.Sort(pods)
		out[ni.Name()] = nodeState{pods: pods, requested: ni.Requested().String(), nonZero: ni.NonZeroRequested().String(), ports: len(ni.UsedPorts())}
	}
	return out
}

// randomPreemptCluster builds nodes and bound pods with mixed priorities
// and labels, PDBs on some labels, and a preemptor.
func randomPreemptCluster(r *rand.Rand) (nodes []*v1.Node, pods []*v1.Pod, pdbs []*policyv1.PodDisruptionBudget, pre *v1.Pod) {
	nn := 1 + r.IntN(6)
	for i := range nn {
		nodes = append(nodes, mkNode(fmt.Sprintf("n%d", i)).Allocatable("cpu", fmt.Sprintf("%dm", 1000*(1+r.IntN(4))), "memory", "8Gi", "pods", fmt.Sprint(2+r.IntN(6))).Obj())
	}
	np := r.IntN(4 * nn)
	for i := range np {
		n := nodes[r.IntN(nn)].Name
		p := bound(fmt.Sprintf("p%d", i), n, fmt.Sprintf("%dm", 100*(1+r.IntN(15))), int32(r.IntN(5)*10), i)
		p.Labels = map[string]string{"app": fmt.Sprintf("a%d", r.IntN(3))}
		pods = append(pods, p)
	}
	for i := range r.IntN(3) {
		pdbs = append(pdbs, pdb(fmt.Sprintf("pdb%d", i), "app", fmt.Sprintf("a%d", r.IntN(3)), int32(r.IntN(2))))
	}
	pre = mkPod("preemptor").Req("cpu", fmt.Sprintf("%dm", 100*(1+r.IntN(20)))).Priority(int32(r.IntN(6) * 10)).Obj()
	return nodes, pods, pdbs, pre
}

// checkPreemptFork: preempt -> ApplyTo in a layer -> Revert restores the
// fork exactly; ApplyTo -> Commit equals evicting and placing on a fresh
// cache.
func checkPreemptFork(t *testing.T, seed uint64) bool {
	r := rand.New(rand.NewPCG(seed, 7))
	nodes, pods, pdbs, pre := randomPreemptCluster(r)
	c := snapshot.NewCache()
	for _, n := range nodes {
		require.NoError(t, c.AddNode(n))
	}
	for _, p := range pods {
		require.NoError(t, c.AddPod(p))
	}
	sn := c.Snapshot()
	s := newSched(t)
	pi := snapshot.MustPodInfo(pre)
	res, err := s.Preempt(sn, pi, PreemptOptions{Objects: &objects{pdbs: pdbs}})
	require.NoError(t, err)
	if !res.Found() {
		return false
	}
	f := sn.Fork()
	want := clusterState(f)
	f.Fork()
	require.NoError(t, res.ApplyTo(f, pi))
	require.NoError(t, f.Revert())
	require.Equal(t, want, clusterState(f), "seed %d: Revert restores", seed)
	require.Equal(t, want, clusterState(sn), "seed %d: snapshot unchanged", seed)

	require.NoError(t, res.ApplyTo(f, pi))
	ref := snapshot.NewCache()
	for _, n := range nodes {
		require.NoError(t, ref.AddNode(n))
	}
	for _, p := range pods {
		if !slices.ContainsFunc(res.Victims, func(v *snapshot.PodInfo) bool { return v.Key() == snapshot.KeyOf(p) }) {
			require.NoError(t, ref.AddPod(p))
		}
	}
	placed := pre.DeepCopy()
	placed.Spec.NodeName = res.Node
	require.NoError(t, ref.AddPod(placed))
	require.Equal(t, clusterState(ref.Snapshot()), clusterState(f), "seed %d: Commit equals evict+place on a fresh cache", seed)

	// The preemptor fits the chosen node afterwards, by the filters.
	f2 := sn.Fork()
	for _, v := range res.Victims {
		require.NoError(t, f2.RemovePod(v.Key(), res.Node))
	}
	d, err := s.SchedulePod(f2, pi)
	require.NoError(t, err)
	require.True(t, d.Scheduled(), "seed %d: preemptor fits after eviction", seed)
	return true
}

func TestPreemptForkInvariants(t *testing.T) {
	found := 0
	for seed := range uint64(2000) {
		if checkPreemptFork(t, seed) {
			found++
		}
	}
	require.Greater(t, found, 200, "enough seeds preempt")
}

func FuzzPreemptFork(f *testing.F) {
	for _, s := range []uint64{0, 1, 2, 3, 17, 99, 12345} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkPreemptFork(t, seed) })
}
