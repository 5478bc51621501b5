package interpod

import (
	"fmt"
	"testing"
	"unique"
)

// BenchmarkValueTableCycle is one pod's use of a hostname table at n
// nodes, as InterPodAffinity's score makes it for a term every node's
// domain holds: reserve, n Adds (a term group's totals), n look-ups (one
// per node scored), reset. ns/value is per value of the cycle.
func BenchmarkValueTableCycle(b *testing.B) {
	for _, n := range []int{1000, 5000, 15000} {
		vals := make([]unique.Handle[string], n)
		for i := range vals {
			vals[i] = unique.Make(fmt.Sprintf("scheduler-perf-%05d", i))
		}
		b.Run(fmt.Sprint("nodes=", n), func(b *testing.B) {
			b.ReportAllocs()
			var t ValueTable
			var sum int64
			for b.Loop() {
				t.reserve(n)
				for _, v := range vals {
					t.Add(v, 1)
				}
				for _, v := range vals {
					sum += t.Get(v)
				}
				t.reset()
			}
			if sum == 0 {
				b.Fatal("no values")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/value")
		})
	}
}
