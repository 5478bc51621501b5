package replay_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// BenchmarkRun replays 2,000 pods of four shapes, one at a time, with
// the default filters and profile (at 100 nodes some do not fit); ns/op
// is one whole replay.
func BenchmarkRun(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			in := &replay.Input{}
			for i := range n {
				in.Nodes = append(in.Nodes, snapshottest.MakeNode(fmt.Sprintf("node-%05d", i)).
					Capacity("cpu", "32", "memory", "128Gi", "pods", "110").Obj())
			}
			shapes := [][]string{{"cpu", "500m", "memory", "1Gi"}, {"cpu", "2", "memory", "4Gi"}, {"cpu", "4", "memory", "16Gi"}, {"cpu", "250m", "memory", "512Mi"}}
			for i := range 2000 {
				pi, err := snapshot.NewPodInfo(snapshottest.MakePod(fmt.Sprintf("pod-%05d", i)).Req(shapes[i%len(shapes)]...).Obj())
				if err != nil {
					b.Fatal(err)
				}
				in.Arrivals = append(in.Arrivals, replay.Arrival{Pod: pi})
			}
			b.ReportAllocs()
			for b.Loop() {
				rep, err := replay.Run(context.Background(), in, replay.Config{Seed: 1})
				if err != nil || rep.Arrived != len(in.Arrivals) {
					b.Fatalf("arrived %d of %d: %v", rep.Arrived, len(in.Arrivals), err)
				}
			}
		})
	}
}
