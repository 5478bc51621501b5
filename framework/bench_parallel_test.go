package framework

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// BenchmarkScheduleParallelism is BenchmarkSchedule's mixed pods (550
// distinct specs), every node scored, at 5,000 and 15,000 nodes with
// Config.Parallelism 1 and 2, with the equivalence cache (default size)
// and without: the scaling curve of one Scheduler over the cores (the
// filtering of a cycle that is not served from the cache runs on
// Parallelism goroutines). pods/s is the wall-clock rate, the figure
// parallelism moves; run with -cpu at least the largest parallelism.
func BenchmarkScheduleParallelism(b *testing.B) {
	pods := podInfos(genPods(2, benchPods))
	for _, n := range []int{5000, 15000} {
		base := snapshottest.Snapshot(b, genCluster(1, n))
		for _, classes := range []int{0, -1} {
			cache := "on"
			if classes < 0 {
				cache = "off"
			}
			for _, par := range []int{1, 2} {
				b.Run(fmt.Sprintf("nodes=%d/cache=%s/par=%d", n, cache, par), func(b *testing.B) {
					b.ReportAllocs()
					var m meter
					ops := 0
					m.start()
					for b.Loop() {
						scheduleOnFork(b, Config{PercentageOfNodesToScore: 100, Seed: 1, EquivalenceClasses: classes, Parallelism: par}, base, pods)
						ops++
					}
					m.stop()
					m.report(b, ops)
				})
			}
		}
	}
}

// BenchmarkParallelismInterleaved measures what Parallelism 2 costs
// against Parallelism 1 on a loaded machine: two Schedulers, without
// the equivalence cache, every node scored, each on its own Fork of one
// snapshot, schedule the same pods (BenchmarkScheduleParallelism's) in
// alternating blocks of 50, so that both see the same load; the process
// CPU time and wall time of each block count for its parallelism.
// Reports pods/cpu-s and pods/s of each, and cpu-ratio (CPU per pod of
// Parallelism 2 over 1) and wall-ratio (wall time per pod, 2 over 1).
func BenchmarkParallelismInterleaved(b *testing.B) {
	pods := podInfos(genPods(2, benchPods))
	for _, n := range []int{5000, 15000} {
		base := snapshottest.Snapshot(b, genCluster(1, n))
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			const block = 50
			var cpu, wall [2]time.Duration
			for b.Loop() {
				var scheds [2]*Scheduler
				var forks [2]*snapshot.Fork
				for i := range scheds {
					scheds[i] = mustNew(b, Config{PercentageOfNodesToScore: 100, Seed: 1, EquivalenceClasses: -1, Parallelism: i + 1})
					forks[i] = base.Fork()
				}
				for lo := 0; lo < len(pods); lo += block {
					for i := range scheds {
						c0, w0 := cpuTime(), time.Now()
						for _, pi := range pods[lo:min(lo+block, len(pods))] {
							d, err := scheds[i].SchedulePod(forks[i], pi)
							if err != nil {
								b.Fatal(err)
							}
							if d.Scheduled() {
								if err := forks[i].AddPodInfo(pi, d.Node); err != nil {
									b.Fatal(err)
								}
							}
						}
						cpu[i] += cpuTime() - c0
						wall[i] += time.Since(w0)
					}
				}
			}
			total := float64(b.N * len(pods))
			for i, name := range []string{"par1", "par2"} {
				b.ReportMetric(total/cpu[i].Seconds(), name+"-pods/cpu-s")
				b.ReportMetric(total/wall[i].Seconds(), name+"-pods/s")
			}
			b.ReportMetric(cpu[1].Seconds()/cpu[0].Seconds(), "cpu-ratio")
			b.ReportMetric(wall[1].Seconds()/wall[0].Seconds(), "wall-ratio")
		})
	}
}
