package snapshot_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// hostAntiPod: a pod labelled app=web with required hostname
// anti-affinity to app=web and a preferred zone affinity to app=db.
func hostAntiPod(name string) *v1.Pod {
	p := st.MakePod(name).Label("app", "web").Req("cpu", "100m", "memory", "256Mi").Obj()
	p.Spec.Affinity = &v1.Affinity{
		PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: v1.LabelHostname}}},
		PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 5,
			PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: "zone"}}}}}
	return p
}

// affinityBenchSnapshot: benchCache's n nodes of 30 plain pods, each
// labelled with hostname and one of 3 zones, plus an anti-affine web
// replica (hostAntiPod) on every fifth node: the affinity index holds two
// groups, of n/5 hostname domains and 3 zone domains.
func affinityBenchSnapshot(tb testing.TB, n int) *snapshot.Snapshot {
	c, _ := benchCache(tb, n)
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		require.NoError(tb, c.UpdateNode(st.MakeNode(name).Capacity("cpu", "64", "memory", "256Gi", "pods", "110").
			Label(v1.LabelHostname, name).Label("zone", fmt.Sprint("z", i%3)).Obj()))
		if i%5 == 0 {
			p := hostAntiPod(fmt.Sprintf("web-%d", i))
			p.Spec.NodeName = name
			require.NoError(tb, c.AddPod(p))
		}
	}
	return c.Snapshot()
}

// BenchmarkForkAddPodRevertAffinity is BenchmarkForkAddPodRevert on a
// cluster whose affinity index is populated: adding a plain pod (the
// index is not touched) and adding an anti-affine replica (its two terms
// update two groups: the first change to a group in a layer copies the
// group and the deltas of the kind's group map and of its domains).
func BenchmarkForkAddPodRevertAffinity(b *testing.B) {
	for _, n := range benchSizes {
		snap := affinityBenchSnapshot(b, n)
		for _, kind := range []string{"plain", "anti"} {
			pi := snapshot.MustPodInfo(st.MakePod("new").Req("cpu", "1", "memory", "1Gi").Obj())
			if kind == "anti" {
				pi = snapshot.MustPodInfo(hostAntiPod("new"))
			}
			b.Run(fmt.Sprintf("pod=%s/nodes=%d", kind, n), func(b *testing.B) { forkAddPodRevert(b, snap, pi) })
		}
	}
}

// forkAddPodRevert times Fork, AddPodInfo(pi) on a node 7919 nodes
// after the last, Revert, on a Fork of snap.
func forkAddPodRevert(b *testing.B, snap *snapshot.Snapshot, pi *snapshot.PodInfo) {
	n := snap.NumNodes()
	f := snap.Fork()
	runtime.GC()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f.Fork()
		if err := f.AddPodInfo(pi, snap.Node(i%n).Name()); err != nil {
			b.Fatal(err)
		}
		if err := f.Revert(); err != nil {
			b.Fatal(err)
		}
		i += 7919
	}
}

// TestForkAddPodRevertAffinityAllocs: with the affinity index populated,
// a Fork+AddPod+Revert of a pod without terms still allocates nothing
// (the index is not touched); one of a pod with terms allocates a bounded
// number of objects per cycle (for each of its term groups: the group
// copy and the copied deltas), independent of the cluster size.
func TestForkAddPodRevertAffinityAllocs(t *testing.T) {
	for _, n := range []int{500, 3000} {
		snap := affinityBenchSnapshot(t, n)
		f := snap.Fork()
		cycle := func(pi *snapshot.PodInfo) func() {
			i := 0
			return func() {
				f.Fork()
				require.NoError(t, f.AddPodInfo(pi, snap.Node(i%n).Name()))
				require.NoError(t, f.Revert())
				i += 7919
			}
		}
		plain := cycle(snapshot.MustPodInfo(st.MakePod("new").Req("cpu", "1", "memory", "1Gi").Obj()))
		for range 2000 {
			plain()
		}
		require.Zero(t, testing.AllocsPerRun(1000, plain), "nodes=%d", n)
		anti := cycle(snapshot.MustPodInfo(hostAntiPod("new")))
		got := testing.AllocsPerRun(1000, anti)
		require.LessOrEqual(t, got, 24.0, "nodes=%d", n)
		t.Logf("nodes=%d: %.1f allocations per Fork+AddPod(anti-affine)+Revert", n, got)
	}
}
