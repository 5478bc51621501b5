package framework

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/schedkit/schedkit/snapshot"
)

// preemptionBasic builds scheduler_perf's PreemptionBasic shape
// (test/integration/scheduler_perf/default_preemption): n nodes of 4 cpu,
// 32Gi, 110 pods, each full with four low-priority pods of 900m / 500Mi
// (priority 0), and the high-priority pod (3000m / 500Mi, priority 10)
// that must evict three of them.
func preemptionBasic(b *testing.B, n int) (*snapshot.Snapshot, *snapshot.PodInfo) {
	c := snapshot.NewCache()
	for i := range n {
		node := mkNode(fmt.Sprintf("node-%d", i)).Allocatable("cpu", "4", "memory", "32Gi", "pods", "110").Obj()
		if err := c.AddNode(node); err != nil {
			b.Fatal(err)
		}
		for j := range 4 {
			p := mkPod(fmt.Sprintf("low-%d-%d", i, j)).Req("cpu", "900m", "memory", "500Mi").Node(node.Name).Obj()
			if err := c.AddPod(p); err != nil {
				b.Fatal(err)
			}
		}
	}
	high := mkPod("high").Req("cpu", "3000m", "memory", "500Mi").Priority(10).Obj()
	return c.Snapshot(), snapshot.MustPodInfo(high)
}

// BenchmarkPreemptionBasic is one high-priority pod of PreemptionBasic
// per op: a cycle that finds no node, Preempt, and ApplyTo on a fork
// layer (reverted after, so every op sees the full cluster). "every"
// examines every node (the default); "sampled" upstream's default
// DefaultPreemptionArgs (10 %, at least 100 nodes, stopping early).
// pods/s is 1e9 / ns/op.
func BenchmarkPreemptionBasic(b *testing.B) {
	for _, n := range []int{500, 5000} {
		sn, high := preemptionBasic(b, n)
		for _, mode := range []struct {
			name string
			opts PreemptOptions
		}{{"every", PreemptOptions{}}, {"sampled", PreemptOptions{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}}} {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, mode.name), func(b *testing.B) {
				s, err := New(Config{})
				if err != nil {
					b.Fatal(err)
				}
				f := sn.Fork()
				b.ReportAllocs()
				cpu0 := cpuNanos()
				for b.Loop() {
					f.Fork()
					d, err := s.SchedulePod(f, high)
					if err != nil || d.Scheduled() {
						b.Fatalf("cycle: %v %v", d.Node, err)
					}
					res, err := s.Preempt(f, high, mode.opts)
					if err != nil || !res.Found() || len(res.Victims) != 3 {
						b.Fatalf("preempt: %+v %v", res, err)
					}
					if err := res.ApplyTo(f, high); err != nil {
						b.Fatal(err)
					}
					if err := f.Revert(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
				b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// cpuNanos is the process's user + system CPU time: on a loaded machine
// (other builds sharing the cores) wall-clock ns/op overstates the work,
// cpu-ns/op does not (it includes the GC's CPU).
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
