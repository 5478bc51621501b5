package framework

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

const benchPods = 10000

// meter adds up the process CPU time and heap allocations of the timed
// sections of a benchmark.
type meter struct {
	cpu     time.Duration
	mallocs uint64
	c0      time.Duration
	m0      uint64
}

func (m *meter) start() { m.c0, m.m0 = cpuTime(), mallocs() }
func (m *meter) stop() {
	m.cpu += cpuTime() - m.c0
	m.mallocs += mallocs() - m.m0
}

// report reports pods/s (wall clock), pods/cpu-s (process CPU time, the
// steadier figure on a shared machine; with -cpu 1 it is the one-core
// rate) and allocs/pod for ops operations of benchPods pods each.
func (m *meter) report(b *testing.B, ops int) {
	pods := float64(ops * benchPods)
	b.ReportMetric(pods/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(pods/m.cpu.Seconds(), "pods/cpu-s")
	b.ReportMetric(float64(m.mallocs)/pods, "allocs/pod")
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// BenchmarkSchedule schedules 10,000 pods one after the other onto a
// seeded cluster with the default filters and profile, each decision
// added to a Fork of the snapshot before the next pod (what a simulator
// does). Run with -cpu 1 for the one-core figure.
func BenchmarkSchedule(b *testing.B) { benchSchedule(b, 0) }

// BenchmarkScheduleUncached is BenchmarkSchedule with the equivalence
// cache off (Config.EquivalenceClasses -1): every pod filters and scores
// every node it visits.
func BenchmarkScheduleUncached(b *testing.B) { benchSchedule(b, -1) }

func benchSchedule(b *testing.B, classes int) {
	sweep(b, func(b *testing.B, pct int32, n int, mix []*v1.Pod) {
		base := snapshottest.Snapshot(b, genCluster(1, n))
		pods := podInfos(mix)
		b.ReportAllocs()
		var m meter
		ops, scheduled := 0, 0
		m.start()
		for b.Loop() {
			// A new Scheduler each time: every run starts with an empty
			// equivalence cache and the same random source.
			scheduled += scheduleOnFork(b, Config{PercentageOfNodesToScore: pct, Seed: 1, EquivalenceClasses: classes}, base, pods)
			ops++
		}
		m.stop()
		m.report(b, ops)
		b.ReportMetric(float64(scheduled)/float64(ops*benchPods), "scheduled/pod")
	})
}

// scheduleOnFork schedules pods one after the other with a new Scheduler
// for cfg on a Fork of base, each decision added to the Fork before the
// next pod (Decision.Pod: with the devices chosen for a GPU pod), and
// returns how many were scheduled.
func scheduleOnFork(b *testing.B, cfg Config, base *snapshot.Snapshot, pods []*snapshot.PodInfo) int {
	s := mustNew(b, cfg)
	f := base.Fork()
	scheduled := 0
	for _, pi := range pods {
		d, err := s.SchedulePod(f, pi)
		if err != nil {
			b.Fatal(err)
		}
		if d.Scheduled() {
			scheduled++
			if err := f.AddPodInfo(d.Pod, d.Node); err != nil {
				b.Fatal(err)
			}
		}
	}
	return scheduled
}

// sweep runs f as sub-benchmarks pods=replicas/mixed × score=all
// (percentage 100) and score=adaptive (percentage 0) ×
// nodes=1000/5000/15000. The two pod mixes, 10,000 pods each:
//
//   - replicas: copies of 20 pod specs (genPods), like the pods of 20
//     Deployments or Jobs; upstream's scheduler_perf schedules copies of
//     one spec;
//   - mixed: genPods' 10,000 random pods, 550 distinct specs (the most
//     common 64, as many as the equivalence cache keeps by default, cover
//     71 % of the pods) — a hard case for the cache.
func sweep(b *testing.B, f func(b *testing.B, pct int32, nodes int, pods []*v1.Pod)) {
	mixes := []struct {
		name string
		pods []*v1.Pod
	}{{"replicas", replicaPods(3, 20, benchPods)}, {"mixed", genPods(2, benchPods)}}
	for _, mix := range mixes {
		for _, pct := range []int32{100, 0} {
			name := "score=all"
			if pct == 0 {
				name = "score=adaptive"
			}
			for _, n := range []int{1000, 5000, 15000} {
				b.Run(fmt.Sprintf("pods=%s/%s/nodes=%d", mix.name, name, n), func(b *testing.B) { f(b, pct, n, mix.pods) })
			}
		}
	}
}

// replicaPods makes n pods, each a copy (own name) of one of k seeded
// genPods specs drawn at random.
func replicaPods(seed uint64, k, n int) []*v1.Pod {
	specs := genPods(seed, k)
	r := rand.New(rand.NewPCG(seed, 3))
	out := make([]*v1.Pod, n)
	for i := range out {
		p := specs[r.IntN(k)].DeepCopy()
		p.Name = fmt.Sprintf("replica-%05d", i)
		out[i] = p
	}
	return out
}

// BenchmarkLoop runs the same 10,000 pods through a [Loop] over a
// reserve.Ledger whose bind reports each pod bound back to the ledger, as
// an informer would: queue, snapshot, cycle, Reserve, bind, Confirm.
func BenchmarkLoop(b *testing.B) {
	sweep(b, func(b *testing.B, pct int32, n int, mix []*v1.Pod) {
		nodes := genCluster(1, n)
		pods := podInfos(mix)
		b.ReportAllocs()
		var m meter
		ops := 0
		for b.Loop() {
			b.StopTimer()
			ledger := newLedger(b, nodes)
			loop := NewLoop(mustNew(b, Config{PercentageOfNodesToScore: pct, Seed: 1}), ledger, informerBind(ledger))
			for _, pi := range pods {
				if err := loop.AddPodInfo(pi); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			m.start()
			if _, err := loop.ScheduleAll(context.Background()); err != nil {
				b.Fatal(err)
			}
			m.stop()
			ops++
		}
		m.report(b, ops)
	})
}

// BenchmarkCycle is one pod's cycle over a fixed snapshot, every node
// filtered and scored, repeated: the per-node cost with the cluster warm
// in cache, split into the default filters alone, the default profile
// alone, and the whole cycle.
func BenchmarkCycle(b *testing.B) {
	for _, n := range []int{1000, 5000, 15000} {
		snap := snapshottest.Snapshot(b, genCluster(1, n))
		pod := snapshot.MustPodInfo(genPods(2, 1)[0])
		nodes := make([]*snapshot.NodeInfo, 0, n)
		for _, ni := range snap.Nodes() {
			nodes = append(nodes, ni)
		}
		// perNode reports wall and CPU nanoseconds per node (the CPU
		// figure is the steadier one on a shared machine).
		perNode := func(b *testing.B, cpu time.Duration) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/node")
		}
		b.Run(fmt.Sprintf("part=filters/nodes=%d", n), func(b *testing.B) {
			s := mustNew(b, Config{PercentageOfNodesToScore: 100})
			for _, f := range s.filters {
				res, _ := f.PreFilter(pod)
				if res.Filter != nil {
					s.pfs, s.pfNames = append(s.pfs, res.Filter), append(s.pfNames, f.Name())
				}
			}
			s.fuse() // as SchedulePod does
			var wk worker
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				wk.reasons, wk.tally = wk.reasons[:0], wk.tally[:0]
				for _, ni := range nodes {
					s.filterNode(ni, &wk, 0)
				}
			}
			perNode(b, cpuTime()-c0)
		})
		b.Run(fmt.Sprintf("part=scores/nodes=%d", n), func(b *testing.B) {
			prof := score.DefaultProfile()
			totals := make([]int64, n)
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				if err := prof.Score(pod, snap, nodes, totals); err != nil {
					b.Fatal(err)
				}
			}
			perNode(b, cpuTime()-c0)
		})
		b.Run(fmt.Sprintf("part=cycle/nodes=%d", n), func(b *testing.B) {
			s := mustNew(b, Config{PercentageOfNodesToScore: 100})
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				if _, err := s.SchedulePod(snap, pod); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuTime() - c0
			perNode(b, cpu)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
			b.ReportMetric(float64(b.N)/cpu.Seconds(), "pods/cpu-s")
		})
	}
}
