package framework

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// ipaBenchCluster: n nodes in 3 zones, 10 pods per node; one pod per node
// is an app=web replica with hostname anti-affinity to app=web (the
// scheduler_perf SchedulingPodAntiAffinity shape), the rest plain
// app=db pods.
func ipaBenchCluster(tb testing.TB, n int) *snapshot.Snapshot {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		nodes = append(nodes, mkNode(name).Label(v1.LabelHostname, name).Label(zoneKey, fmt.Sprint("z", i%3)).Obj())
		for j := range 10 {
			p := mkPod(fmt.Sprintf("%s-%d", name, j)).Label("app", "db").Node(name).Obj()
			if j == 0 {
				p = withAffinity(mkPod(fmt.Sprintf("%s-%d", name, j)).Label("app", "web").Node(name).Obj(), nil,
					[]v1.PodAffinityTerm{ipaTerm(v1.LabelHostname, "web")})
			}
			pods = append(pods, p)
		}
	}
	return snapshottest.Snapshot(tb, nodes, pods...)
}

// ipaBenchPods: an anti-affine web replica (required hostname
// anti-affinity, as the existing replicas), and a pod with preferred
// zone affinity to app=db (SchedulingPreferredPodAffinity's shape).
func ipaBenchPods() (anti, pref *v1.Pod) {
	anti = withAffinity(mkPod("incoming").Label("app", "web").Obj(), nil, []v1.PodAffinityTerm{ipaTerm(v1.LabelHostname, "web")})
	pref = mkPod("pref").Label("app", "api").Obj()
	pref.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
		{Weight: 10, PodAffinityTerm: ipaTerm(zoneKey, "db")}}}}
	return anti, pref
}

// TestIPAFilterAllocatesNothing: the prepared filter and scorer check a
// node without allocating.
func TestIPAFilterAllocatesNothing(t *testing.T) {
	snap := ipaBenchCluster(t, 30)
	f, err := NewInterPodAffinity(score.InterPodAffinityArgs{})
	require.NoError(t, err)
	anti, pref := ipaBenchPods()
	res, err := RunPreFilter(f, snapshot.MustPodInfo(anti), snap)
	require.NoError(t, err)
	buf := make([]Reason, 0, 16)
	ni := snap.Node(7)
	require.Zero(t, testing.AllocsPerRun(100, func() { buf = res.Filter.Filter(ni, buf[:0]) }))
	s, err := score.NewInterPodAffinity(score.InterPodAffinityArgs{})
	require.NoError(t, err)
	ps, err := s.Prepare(snapshot.MustPodInfo(pref), snap)
	require.NoError(t, err)
	nodes := []*snapshot.NodeInfo{ni}
	out := make([]int64, 1)
	require.Zero(t, testing.AllocsPerRun(100, func() { ps.Score(nodes, out) }))
}

// BenchmarkInterPodAffinity: PreFilterCluster + Filter on every node for
// the anti-affine replica, then Prepare + Score + Normalize on every node
// for the anti-affine replica (scored against the existing pods with
// affinity only) and for the preferred-affinity pod (against every pod).
// Per pod: O(nodes) plus the pods with affinity, or every pod for a pod
// with terms of its own.
func BenchmarkInterPodAffinity(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			snap := ipaBenchCluster(b, n)
			f, err := NewInterPodAffinity(score.InterPodAffinityArgs{})
			require.NoError(b, err)
			s, err := score.NewInterPodAffinity(score.InterPodAffinityArgs{})
			require.NoError(b, err)
			anti, pref := ipaBenchPods()
			ap, pp := snapshot.MustPodInfo(anti), snapshot.MustPodInfo(pref)
			var nodes []*snapshot.NodeInfo
			for _, ni := range snap.Nodes() {
				nodes = append(nodes, ni)
			}
			buf := make([]Reason, 0, 16)
			out := make([]int64, n)
			b.ReportAllocs()
			for b.Loop() {
				res, err := RunPreFilter(f, ap, snap)
				if err != nil {
					b.Fatal(err)
				}
				for _, ni := range nodes {
					buf = res.Filter.Filter(ni, buf[:0])
				}
				ipaScoreAll(b, s, ap, snap, nodes, out, false)
				ipaScoreAll(b, s, pp, snap, nodes, out, false)
			}
		})
	}
}

// ipaScoreAll prepares s for p over snap and, unless it skips the pod,
// scores and normalises every node of nodes into out; with release it
// then releases the PodScorer, as Profile.Score does.
func ipaScoreAll(b testing.TB, s score.Scorer, p *snapshot.PodInfo, snap *snapshot.Snapshot, nodes []*snapshot.NodeInfo, out []int64, release bool) {
	ps, err := s.Prepare(p, snap)
	if err != nil {
		b.Fatal(err)
	}
	if ps == nil {
		return
	}
	ps.Score(nodes, out)
	if err := ps.(score.Normalizer).Normalize(nodes, out); err != nil {
		b.Fatal(err)
	}
	if release {
		ps.(releaser).Release()
	}
}

// BenchmarkScheduleAfterAffinityPod is BenchmarkSchedule in a process
// that has parsed a pod with pod anti-affinity (none is on the cluster):
// InterPodAffinity's inertness check must stay O(1) per pod (it reads
// the snapshot's count of pods with terms), not fall back to reading
// every node.
func BenchmarkScheduleAfterAffinityPod(b *testing.B) {
	anti, _ := ipaBenchPods()
	_ = snapshot.MustPodInfo(anti)
	benchSchedule(b, 0)
}

// perfShapePod is a pod of scheduler_perf's affinity templates
// (test/integration/scheduler_perf/affinity, as the side-by-side
// benchmark in examples/kube-scheduler/sidebyside builds them): label
// color, one hostname term over namespaces sched-1 and sched-0 selecting
// that color, required anti-affinity (anti) or preferred affinity of
// weight 1.
func perfShapePod(i int, ns string, anti bool) *v1.Pod {
	color, prefix := "red", "preferred-affinity-pod-"
	if anti {
		color, prefix = "green", "anti-affinity-pod-"
	}
	t := v1.PodAffinityTerm{TopologyKey: v1.LabelHostname, Namespaces: []string{"sched-1", "sched-0"},
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": color}}}
	p := mkPod(fmt.Sprintf("%s%05d", prefix, i)).Namespace(ns).Label("color", color).Req("cpu", "100m", "memory", "500Mi").Obj()
	if anti {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{t}}}
	} else {
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: t}}}}
	}
	return p
}

// BenchmarkInterPodAffinityPerfShapes is the schedkit side of
// sidebyside's BenchmarkInterPodAffinity without the kube-scheduler
// build: SchedulingPodAntiAffinity (200 bound anti-affine pods per 1,000
// hostname-labelled nodes) and SchedulingPreferredPodAffinity (1,000
// per 1,000), one pending pod of the shape per iteration: NewPodInfo,
// PreFilterCluster, Filter on every node, Prepare, Score and Normalize
// on every node; release=true then releases the filter and scorer (as
// the Scheduler and Profile.Score do: the next pod reuses their tables),
// release=false drops them to the GC (as before Release), interleaved
// per size. Each cycle takes the next Snapshot of a chain
// (perfShapeChain), one bound pod ahead of the last. Reports cpu-ns/op
// (process CPU time, garbage
// collection included: steadier than wall time on a shared machine). For
// profiling the per-pod cost.
func BenchmarkInterPodAffinityPerfShapes(b *testing.B) {
	for _, shape := range []struct {
		name     string
		anti     bool
		perThous int
	}{{"SchedulingPodAntiAffinity", true, 200}, {"SchedulingPreferredPodAffinity", false, 1000}} {
		for _, n := range []int{1000, 5000} {
			snaps := perfShapeChain(b, n, shape.perThous, shape.anti)
			for _, release := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/nodes=%d/release=%v", shape.name, n, release), func(b *testing.B) {
					pending := perfShapePod(0, "sched-1", shape.anti)
					f, err := NewInterPodAffinity(score.InterPodAffinityArgs{})
					require.NoError(b, err)
					s, err := score.NewInterPodAffinity(score.InterPodAffinityArgs{})
					require.NoError(b, err)
					lists := make([][]*snapshot.NodeInfo, len(snaps))
					for j, snap := range snaps {
						for _, ni := range snap.Nodes() {
							lists[j] = append(lists[j], ni)
						}
					}
					buf := make([]Reason, 0, 16)
					out := make([]int64, n)
					b.ReportAllocs()
					c0, iters := cpuTime(), 0
					for b.Loop() {
						snap, ours := snaps[iters%len(snaps)], lists[iters%len(snaps)]
						iters++
						pi, err := snapshot.NewPodInfo(pending)
						if err != nil {
							b.Fatal(err)
						}
						res, err := RunPreFilter(f, pi, snap)
						if err != nil || res.Reject != "" {
							b.Fatal(err, res.Reject)
						}
						if res.Filter != nil {
							for _, ni := range ours {
								buf = res.Filter.Filter(ni, buf[:0])
							}
							if release {
								res.Filter.(releaser).Release()
							}
						}
						ipaScoreAll(b, s, pi, snap, ours, out, release)
					}
					b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(max(iters, 1)), "cpu-ns/op")
				})
			}
		}
	}
}

// perfShapeCluster is n hostname-labelled nodes holding perThous×n/1000
// bound pods of scheduler_perf's shape (perfShapePod in sched-0, anti or
// preferred), spread by a stride.
func perfShapeCluster(tb testing.TB, n, perThous int, anti bool) *snapshot.Snapshot {
	var nodes []*v1.Node
	for i := range n {
		name := fmt.Sprintf("scheduler-perf-%05d", i)
		nodes = append(nodes, mkNode(name).Capacity("cpu", "4", "memory", "32Gi", "pods", "110").Obj())
	}
	var pods []*v1.Pod
	for i := range perThous * n / 1000 {
		p := perfShapePod(i, "sched-0", anti)
		p.Spec.NodeName = nodes[(i*7919)%n].Name
		pods = append(pods, p)
	}
	return snapshottest.Snapshot(tb, nodes, pods...)
}

// perfShapeChain is perfShapeCluster followed by 31 more Snapshots,
// each with one more bound pod of the shape than the one before: the
// clusters consecutive cycles of scheduler_perf see, each having bound
// the previous cycle's pod (so that a memoised score is brought up to
// date by a difference, as in a scheduling loop, not served for an
// unchanged cluster).
func perfShapeChain(tb testing.TB, n, perThous int, anti bool) []*snapshot.Snapshot {
	c := snapshot.NewCache()
	for i := range n {
		require.NoError(tb, c.AddNode(mkNode(fmt.Sprintf("scheduler-perf-%05d", i)).Capacity("cpu", "4", "memory", "32Gi", "pods", "110").Obj()))
	}
	bound := perThous * n / 1000
	for i := range bound {
		p := perfShapePod(i, "sched-0", anti)
		p.Spec.NodeName = fmt.Sprintf("scheduler-perf-%05d", (i*7919)%n)
		require.NoError(tb, c.AddPod(p))
	}
	snaps := make([]*snapshot.Snapshot, 32)
	for j := range snaps {
		snaps[j] = c.Snapshot()
		p := perfShapePod(bound+j, "sched-0", anti)
		p.Spec.NodeName = fmt.Sprintf("scheduler-perf-%05d", (j*7919+13)%n)
		require.NoError(tb, c.AddPod(p))
	}
	return snaps
}

// TestIPAReleaseReusesTables: a pod prepared after the previous pod's
// filter and scorer were released (as the Scheduler and Profile.Score
// release them) allocates none of the table storage, so its preparation
// allocates far fewer bytes than one whose predecessors were dropped:
// SchedulingPodAntiAffinity and SchedulingPreferredPodAffinity shapes
// over 2,000 nodes (tables of 400 and 2,000 hostname values, 16 and 64
// KiB of slots). Bytes, not counts: the remaining allocations (the
// pod's resolved terms and per-term views) are the same either way.
func TestIPAReleaseReusesTables(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops a quarter of its items under the race detector")
	}
	for _, shape := range []struct {
		anti     bool
		perThous int
	}{{true, 200}, {false, 1000}} {
		snap := perfShapeCluster(t, 2000, shape.perThous, shape.anti)
		f, err := NewInterPodAffinity(score.InterPodAffinityArgs{})
		require.NoError(t, err)
		s, err := score.NewInterPodAffinity(score.InterPodAffinityArgs{})
		require.NoError(t, err)
		pi := snapshot.MustPodInfo(perfShapePod(0, "sched-1", shape.anti))
		var nodes []*snapshot.NodeInfo
		for _, ni := range snap.Nodes() {
			nodes = append(nodes, ni)
		}
		out := make([]int64, len(nodes))
		bytesPerPod := func(release bool) uint64 {
			const runs = 50
			pod := func() {
				res, err := RunPreFilter(f, pi, snap)
				require.NoError(t, err)
				if release && res.Filter != nil {
					res.Filter.(releaser).Release()
				}
				ipaScoreAll(t, s, pi, snap, nodes, out, release)
			}
			pod() // warm the pool
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			for range runs {
				pod()
			}
			runtime.ReadMemStats(&m1)
			return (m1.TotalAlloc - m0.TotalAlloc) / runs
		}
		dropped, released := bytesPerPod(false), bytesPerPod(true)
		t.Logf("anti=%v: %d B/pod dropped, %d B/pod released", shape.anti, dropped, released)
		require.Greater(t, dropped, uint64(16<<10), "anti=%v: the tables are allocated when dropped", shape.anti)
		require.Less(t, released, uint64(4<<10), "anti=%v: released tables are reused", shape.anti)
	}
}

// BenchmarkIPAHostFilter is the per-node filter of a replica with
// required hostname anti-affinity to its own workload
// (SchedulingPodAntiAffinity), in one binary both ways: filter=host is
// the ipaHostFilter PreFilterCluster returns (one table look-up of the
// node's hostname), filter=general the ipaFilter of the same
// interpod.Filter (interpod.Filter.Check). Every third node holds a
// replica, so a third of the nodes fail. ns/node is the loop's time per
// node.
func BenchmarkIPAHostFilter(b *testing.B) {
	for _, n := range []int{1000, 5000, 15000} {
		var nodes []*v1.Node
		var pods []*v1.Pod
		for i := range n {
			name := fmt.Sprintf("n%d", i)
			nodes = append(nodes, mkNode(name).Label(v1.LabelHostname, name).Label(zoneKey, fmt.Sprint("z", i%3)).Obj())
			if i%3 == 0 {
				pods = append(pods, withAffinity(mkPod(fmt.Sprintf("web-%d", i)).Label("app", "web").Node(name).Obj(), nil,
					[]v1.PodAffinityTerm{ipaTerm(v1.LabelHostname, "web")}))
			}
		}
		snap := snapshottest.Snapshot(b, nodes, pods...)
		f, err := NewInterPodAffinity(score.InterPodAffinityArgs{})
		require.NoError(b, err)
		anti, _ := ipaBenchPods()
		res, err := RunPreFilter(f, snapshot.MustPodInfo(anti), snap)
		require.NoError(b, err)
		hf, ok := res.Filter.(ipaHostFilter)
		require.True(b, ok, "filter %T", res.Filter)
		all := snap.AppendNodes(nil)
		for _, pf := range []struct {
			name string
			f    PodFilter
		}{{"general", ipaFilter{hf.st}}, {"host", hf}} {
			b.Run(fmt.Sprintf("filter=%s/nodes=%d", pf.name, n), func(b *testing.B) { filterNodesBench(b, all, pf.f, n-(n+2)/3) })
		}
	}
}
