package snapshot_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// BenchmarkNewPodInfo: the per-pod cost of deriving requests, for a plain
// pod, one with an extended resource and overhead, and one carrying
// in-place-resize status (the only kind whose pending request is
// computed separately).
func BenchmarkNewPodInfo(b *testing.B) {
	resized := st.MakePod("r").Req("cpu", "1", "memory", "1Gi").Overhead("cpu", "250m").Obj()
	total := st.List("cpu", "1250m", "memory", "1Gi")
	resized.Status.AllocatedResources = total
	resized.Status.Resources = &v1.ResourceRequirements{Requests: total}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
	}{
		{"plain", st.MakePod("p").Req("cpu", "500m", "memory", "1Gi").Obj()},
		{"extended+overhead", st.MakePod("g").Req("cpu", "1", "memory", "2Gi", "nvidia.com/gpu", "1").Overhead("cpu", "100m").Obj()},
		{"resize-status", resized},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := snapshot.NewPodInfo(tc.pod); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
