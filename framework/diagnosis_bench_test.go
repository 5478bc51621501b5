package framework

import (
	"fmt"
	"testing"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// BenchmarkUnschedulable schedules a pod that fits none of the nodes
// (every node filtered, three kinds of reasons) and formats its message,
// as a replay does for every such pod: the cost of a full cluster.
func BenchmarkUnschedulable(b *testing.B) {
	pod := snapshot.MustPodInfo(mkPod("big").Req("cpu", "64", "memory", "1Gi").Obj())
	for _, n := range []int{1500, 15000} {
		snap := snapshottest.Snapshot(b, genCluster(5, n))
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			s := mustNew(b, Config{})
			b.ReportAllocs()
			for b.Loop() {
				d, err := s.SchedulePod(snap, pod)
				if err != nil || d.Diagnosis == nil {
					b.Fatalf("SchedulePod: %v, node %q", err, d.Node)
				}
				_ = d.Diagnosis.Message()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/node")
		})
	}
}
