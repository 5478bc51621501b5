package framework

import (
	"fmt"
	"testing"

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
