package reserve_test

import (
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

var benchSizes = []int{1000, 5000, 15000}

// benchBound is the number of bound pods per node in benchmark ledgers.
var benchBound = 30

// benchLedger returns a ledger with n nodes (32 cpu, 128Gi, 110 pods, one
// GPU resource each), 30 bound pods per node, and the node names.
//
// The names are allocated together, as a scheduler's are warm when it
// reserves on the node it has just scored. Interleaving their allocation
// with the 30 pods of each node (names scattered over the heap, one page
// each) adds about 300 ns per pair at nodes=15000: cache and TLB misses
// reading the caller's string to hash it, which the ledger cannot avoid.
func benchLedger(tb testing.TB, n int) (*reserve.Ledger, []string) {
	tb.Helper()
	l := reserve.New()
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("node-%05d", i)
	}
	for i := range n {
		require.NoError(tb, l.AddNode(st.MakeNode(names[i]).Capacity("cpu", "32", "memory", "128Gi", "pods", "110", "nvidia.com/gpu", "8").Obj()))
		for j := range benchBound {
			require.NoError(tb, l.AddPod(st.MakePod(fmt.Sprintf("bound-%d-%d", i, j)).Req("cpu", "500m", "memory", "1Gi").Node(names[i]).Obj()))
		}
	}
	return l, names
}

// benchPods returns m distinct pending pods requesting cpu and memory.
func benchPods(m int, prefix string) []*snapshot.PodInfo {
	pods := make([]*snapshot.PodInfo, m)
	for i := range pods {
		pods[i] = snapshot.MustPodInfo(st.MakePod(fmt.Sprintf("%s-%d", prefix, i)).Req("cpu", "250m", "memory", "512Mi").Obj())
	}
	return pods
}

// cpuClock reports, as the custom metric cpu-ns/op, the process CPU time
// (user + system, all threads) per iteration: on a shared machine it is the
// honest per-core cost, where ns/op also counts time spent waiting for a
// core. 1e9 / cpu-ns/op is the pairs per second one core sustains.
type cpuClock struct{ start time.Duration }

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{cpuNow()} }

func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(cpuNow()-c.start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkReserveUnreserve: one Reserve + Unreserve pair per iteration, a
// different pod and node each time.
func BenchmarkReserveUnreserve(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			l, names := benchLedger(b, n)
			pods := benchPods(1024, "p")
			b.ReportAllocs()
			runtime.GC()
			clock := startCPU()
			i := 0
			for b.Loop() {
				p := pods[i&1023]
				if reasons, err := l.Reserve(p, names[i%n]); err != nil || reasons != nil {
					b.Fatalf("Reserve: %v %v", reasons, err)
				}
				l.Unreserve(p.Key())
				i++
			}
			clock.report(b)
		})
	}
}

// BenchmarkReserveUnreserveParallel: the same pairs from GOMAXPROCS
// goroutines, each with its own pods.
func BenchmarkReserveUnreserveParallel(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			l, names := benchLedger(b, n)
			sets := make([][]*snapshot.PodInfo, runtime.GOMAXPROCS(0))
			for w := range sets {
				sets[w] = benchPods(1024, fmt.Sprintf("w%d", w))
			}
			var worker atomic.Int32
			b.ReportAllocs()
			runtime.GC()
			clock := startCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				pods := sets[int(worker.Add(1)-1)%len(sets)]
				i := 0
				for pb.Next() {
					p := pods[i&1023]
					if reasons, err := l.Reserve(p, names[i%n]); err != nil || reasons != nil {
						b.Errorf("Reserve: %v %v", reasons, err)
						return
					}
					l.Unreserve(p.Key())
					i++
				}
			})
			clock.report(b)
		})
	}
}

// BenchmarkReserveUnreserveJournal: the pair with a journal attached
// (io.Discard): each operation encodes and frames one JSON record.
func BenchmarkReserveUnreserveJournal(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			l, names := benchLedger(b, n)
			require.NoError(b, l.SetJournal(io.Discard))
			pods := benchPods(1024, "p")
			b.ReportAllocs()
			clock := startCPU()
			i := 0
			for b.Loop() {
				p := pods[i&1023]
				if reasons, err := l.Reserve(p, names[i%n]); err != nil || reasons != nil {
					b.Fatalf("Reserve: %v %v", reasons, err)
				}
				l.Unreserve(p.Key())
				i++
			}
			clock.report(b)
		})
	}
}

// BenchmarkSnapshotOverlay: with 100 holds spread over the nodes, one hold
// comes or goes, then Snapshot() brings the view up to date — what a
// scheduling cycle pays once per cycle.
func BenchmarkSnapshotOverlay(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			l, names := benchLedger(b, n)
			pods := benchPods(101, "h")
			for i, p := range pods[:100] {
				if reasons, err := l.Reserve(p, names[i*n/100]); err != nil || reasons != nil {
					b.Fatalf("Reserve: %v %v", reasons, err)
				}
			}
			b.ReportAllocs()
			clock := startCPU()
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					_, _ = l.Reserve(pods[100], names[0])
				} else {
					l.Unreserve(pods[100].Key())
				}
				i++
				if l.Snapshot().NumNodes() != n {
					b.Fatal("nodes")
				}
			}
			clock.report(b)
		})
	}
}
