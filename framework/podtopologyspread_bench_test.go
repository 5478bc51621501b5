package framework

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// spreadBenchCluster: n nodes in 3 zones, 10 pods per node, half of them
// app=web.
func spreadBenchCluster(tb testing.TB, n int) *snapshot.Snapshot {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		nodes = append(nodes, mkNode(name).Label(v1.LabelHostname, name).Label(zoneKey, fmt.Sprint("z", i%3)).Obj())
		for j := range 10 {
			pods = append(pods, mkPod(fmt.Sprintf("%s-%d", name, j)).Label("app", []string{"web", "db"}[j%2]).Node(name).Obj())
		}
	}
	return snapshottest.Snapshot(tb, nodes, pods...)
}

// TestSpreadFilterAllocatesNothing: the prepared filter checks a node
// without allocating.
func TestSpreadFilterAllocatesNothing(t *testing.T) {
	snap := spreadBenchCluster(t, 30)
	f, err := NewPodTopologySpread(score.PodTopologySpreadArgs{})
	require.NoError(t, err)
	pod := spreadPod(zoneKey, 1, nil)
	pod.Spec.TopologySpreadConstraints = append(pod.Spec.TopologySpreadConstraints, spreadPod(v1.LabelHostname, 1, nil).Spec.TopologySpreadConstraints...)
	res, err := f.(ClusterFilter).PreFilterCluster(snapshot.MustPodInfo(pod), snap)
	require.NoError(t, err)
	buf := make([]Reason, 0, 16)
	ni := snap.Node(7)
	require.Zero(t, testing.AllocsPerRun(100, func() { buf = res.Filter.Filter(ni, buf[:0]) }))
}

// BenchmarkPodTopologySpread: one pod with a zone and a hostname
// constraint (DoNotSchedule for the filter, ScheduleAnyway for the
// scorer): PreFilterCluster + Filter on every node, then Prepare + Score
// + Normalize on every node. Per pod, O(nodes × groups per node): the
// passes read each node's pod groups (2 here: app=web and app=db), not its
// 10 pods.
func BenchmarkPodTopologySpread(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			snap := spreadBenchCluster(b, n)
			f, err := NewPodTopologySpread(score.PodTopologySpreadArgs{})
			require.NoError(b, err)
			s, err := score.NewPodTopologySpread(score.PodTopologySpreadArgs{})
			require.NoError(b, err)
			hard := spreadPod(zoneKey, 1, nil)
			hard.Spec.TopologySpreadConstraints = append(hard.Spec.TopologySpreadConstraints, spreadPod(v1.LabelHostname, 1, nil).Spec.TopologySpreadConstraints...)
			soft := hard.DeepCopy()
			for i := range soft.Spec.TopologySpreadConstraints {
				soft.Spec.TopologySpreadConstraints[i].WhenUnsatisfiable = v1.ScheduleAnyway
			}
			hp, sp := snapshot.MustPodInfo(hard), snapshot.MustPodInfo(soft)
			var nodes []*snapshot.NodeInfo
			for _, ni := range snap.Nodes() {
				nodes = append(nodes, ni)
			}
			buf := make([]Reason, 0, 16)
			out := make([]int64, n)
			b.ReportAllocs()
			for b.Loop() {
				res, err := f.(ClusterFilter).PreFilterCluster(hp, snap)
				if err != nil {
					b.Fatal(err)
				}
				for _, ni := range nodes {
					buf = res.Filter.Filter(ni, buf[:0])
				}
				ps, err := s.Prepare(sp, snap)
				if err != nil {
					b.Fatal(err)
				}
				ps.Score(nodes, out)
				if err := ps.(score.Normalizer).Normalize(nodes, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
