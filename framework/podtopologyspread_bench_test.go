package framework

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// ptsCycleShape is one of scheduler_perf's topology-spreading workloads as
// examples/kube-scheduler/sidebyside's BenchmarkPodTopologySpreadSideBySide
// builds them (zone labels moon-1..3, one unlabelled pod per node).
type ptsCycleShape struct {
	name     string
	pod      func(i int) *v1.Pod
	services []*v1.Service
}

var ptsCycleShapes = []ptsCycleShape{
	{
		name: "TopologySpreading",
		pod: func(i int) *v1.Pod {
			p := mkPod(fmt.Sprintf("spreading-pod-%d", i)).Label("color", "blue").Req("cpu", "100m", "memory", "500Mi").Obj()
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
				MaxSkew: 5, TopologyKey: zoneKey, WhenUnsatisfiable: v1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": "blue"}},
			}}
			return p
		},
	},
	{
		name: "DefaultTopologySpreading",
		pod: func(i int) *v1.Pod {
			return mkPod(fmt.Sprintf("pod-%d", i)).Namespace("service-ns").Label("app", "scheduler-perf").Req("cpu", "100m", "memory", "500Mi").Obj()
		},
		services: []*v1.Service{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "service-ns", Name: "service-1"},
			Spec:       v1.ServiceSpec{Selector: map[string]string{"app": "scheduler-perf"}},
		}},
	},
}

// BenchmarkPodTopologySpreadCycle is one pod of the side-by-side
// benchmark's loop (examples/kube-scheduler/sidebyside, schedkit's side)
// per op: parse the pod, PreFilterCluster, Filter on every node, Prepare,
// Score and Normalize every feasible node, bind the pod to the best node
// on the fork. Every nodes/5 pods the fork starts again from the
// snapshot (untimed), as the side-by-side benchmark measures nodes/5
// pods per run. The pod objects are made before the timer starts, as
// the side-by-side benchmark makes them in its setup (an API server's
// work, not a scheduler's).
func BenchmarkPodTopologySpreadCycle(b *testing.B) {
	for _, sh := range ptsCycleShapes {
		for _, n := range []int{1000, 5000} {
			b.Run(fmt.Sprintf("shape=%s/nodes=%d", sh.name, n), func(b *testing.B) {
				c := ptsBenchNodes(b, n)
				for i := range n {
					require.NoError(b, c.AddPod(mkPod(fmt.Sprintf("pod-init-%d", i)).Req("cpu", "100m", "memory", "500Mi").Node(fmt.Sprintf("scheduler-perf-%d", i)).Obj()))
				}
				for _, s := range sh.services {
					require.NoError(b, c.AddObject(s))
				}
				flt, err := NewPodTopologySpread(score.PodTopologySpreadArgs{})
				require.NoError(b, err)
				sc, err := score.NewPodTopologySpread(score.PodTopologySpreadArgs{})
				require.NoError(b, err)
				measured := make([]*v1.Pod, n/5)
				for i := range measured {
					measured[i] = sh.pod(i)
				}
				snap := c.Snapshot()
				f := snap.Fork()
				feasible := make([]int, 0, n)
				fnodes := make([]*snapshot.NodeInfo, 0, n)
				scores := make([]int64, n)
				var reasons []Reason
				i, ops := 0, 0
				var cpu time.Duration
				b.ReportAllocs()
				start := cpuTime()
				for b.Loop() {
					if i == n/5 {
						b.StopTimer()
						cpu += cpuTime() - start
						f, i = snap.Fork(), 0
						start = cpuTime()
						b.StartTimer()
					}
					ops++
					pi, err := snapshot.NewPodInfo(measured[i])
					if err != nil {
						b.Fatal(err)
					}
					res, err := flt.(ClusterFilter).PreFilterCluster(pi, f)
					if err != nil {
						b.Fatal(err)
					}
					feasible, fnodes = feasible[:0], fnodes[:0]
					for j := range f.NumNodes() {
						ni := f.Node(j)
						if res.Filter != nil {
							if reasons = res.Filter.Filter(ni, reasons[:0]); len(reasons) > 0 {
								continue
							}
						}
						feasible, fnodes = append(feasible, j), append(fnodes, ni)
					}
					out := scores[:len(fnodes)]
					clear(out)
					ps, err := sc.Prepare(pi, f)
					if err != nil {
						b.Fatal(err)
					}
					if ps != nil {
						ps.Score(fnodes, out)
						if err := ps.(score.Normalizer).Normalize(fnodes, out); err != nil {
							b.Fatal(err)
						}
					}
					choice, top := -1, int64(-1)
					for k, j := range feasible {
						if out[k] > top {
							choice, top = j, out[k]
						}
					}
					if choice < 0 {
						b.Fatalf("pod %d fits no node", i)
					}
					if err := f.AddPodInfo(pi, f.Node(choice).Name()); err != nil {
						b.Fatal(err)
					}
					i++
				}
				cpu += cpuTime() - start
				b.ReportMetric(float64(ops)/cpu.Seconds(), "pods/cpu-s")
			})
		}
	}
}

// BenchmarkSpreadZoneFilter is the per-node filter of a pod whose only
// DoNotSchedule constraint is on the zone key (scheduler_perf's
// TopologySpreading), in one binary both ways: filter=zone is the
// spreadZoneFilter PreFilterCluster returns (the blocked zones compared
// with the head's zone handle), filter=general the spreadFilter of the
// same spread.Filter (CheckHead through the filter). One zone of three
// is full, so every node is checked. ns/node is the loop's time per
// node.
func BenchmarkSpreadZoneFilter(b *testing.B) {
	for _, n := range []int{1000, 5000, 15000} {
		c := ptsBenchNodes(b, n)
		for i := range 6 { // moon-1 holds 6 blue pods, the others none
			require.NoError(b, c.AddPod(mkPod(fmt.Sprintf("blue-%d", i)).Label("color", "blue").Node(fmt.Sprintf("scheduler-perf-%d", 3*i)).Obj()))
		}
		snap := c.Snapshot()
		pod := mkPod("incoming").Label("color", "blue").Obj()
		pod.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 5, TopologyKey: zoneKey,
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": "blue"}}}}
		flt, err := NewPodTopologySpread(score.PodTopologySpreadArgs{})
		require.NoError(b, err)
		res, err := flt.(ClusterFilter).PreFilterCluster(snapshot.MustPodInfo(pod), snap)
		require.NoError(b, err)
		zf, ok := res.Filter.(*spreadZoneFilter)
		require.True(b, ok, "filter %T", res.Filter)
		require.Equal(b, 1, zf.n)
		nodes := snap.AppendNodes(nil)
		for _, f := range []struct {
			name string
			pf   PodFilter
		}{{"general", spreadFilter{zf.st}}, {"zone", zf}} {
			b.Run(fmt.Sprintf("filter=%s/nodes=%d", f.name, n), func(b *testing.B) { filterNodesBench(b, nodes, f.pf, 2*n/3) })
		}
	}
}

// ptsBenchNodes is a cache of scheduler_perf's node-default.yaml nodes,
// n of them named scheduler-perf-<i>, in zones moon-1..3 by i mod 3,
// with the hostname label.
func ptsBenchNodes(b *testing.B, n int) *snapshot.Cache {
	c := snapshot.NewCache()
	zones := []string{"moon-1", "moon-2", "moon-3"}
	for i := range n {
		name := fmt.Sprintf("scheduler-perf-%d", i)
		require.NoError(b, c.AddNode(mkNode(name).Label(zoneKey, zones[i%3]).Label(v1.LabelHostname, name).
			Capacity("pods", "110", "cpu", "4", "memory", "32Gi").Obj()))
	}
	return c
}

// filterNodesBench times pf over nodes per b.Loop iteration, checks that
// pass of them pass, and reports ns/node.
func filterNodesBench(b *testing.B, nodes []*snapshot.NodeInfo, pf PodFilter, pass int) {
	reasons := make([]Reason, 0, 16)
	got := 0
	b.ReportAllocs()
	for b.Loop() {
		got = 0
		for _, ni := range nodes {
			if reasons = pf.Filter(ni, reasons[:0]); len(reasons) == 0 {
				got++
			}
		}
	}
	require.Equal(b, pass, got)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(nodes)), "ns/node")
}
