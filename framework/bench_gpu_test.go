package framework

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// BenchmarkScheduleGPUFill fills a GPU cluster shaped like simulate's
// built-in one (runs of 8-, 4- and 2-GPU nodes of three models, then
// CPU-only nodes) with 16/3 pods per node — CPU-only, whole-GPU, GPU
// shares, a few multi-GPU and model-restricted ones, about 1,200 specs —
// asking for about the cluster's GPUs, so that late pods find most
// blocks full. Default filters plus GPUDevices, adaptive percentage,
// each decision added to a Fork before the next pod: the workload of
// `simulate -scale N -policy default`, without the loop and the ledger.
func BenchmarkScheduleGPUFill(b *testing.B) {
	for _, n := range []int{1500, 5000, 20000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			base, pods := gpuFillCluster(b, n)
			cfg := Config{Filters: append(DefaultFilters(), NewGPUDevices()), DeviceChooser: gpushare.BestFit{}, Seed: 1}
			b.ReportAllocs()
			var m meter
			ops, scheduled := 0, 0
			m.start()
			for b.Loop() {
				scheduled += scheduleOnFork(b, cfg, base, pods)
				ops++
			}
			m.stop()
			cpu := m.cpu.Seconds()
			b.ReportMetric(float64(ops*len(pods))/cpu, "pods/cpu-s")
			b.ReportMetric(float64(m.mallocs)/float64(ops*len(pods)), "allocs/pod")
			b.ReportMetric(float64(scheduled)/float64(ops*len(pods)), "scheduled/pod")
		})
	}
}

func gpuFillCluster(b *testing.B, n int) (*snapshot.Snapshot, []*snapshot.PodInfo) {
	shapes := []struct {
		per10 int
		gpus  string
		model string
	}{{4, "8", "G2"}, {1, "4", "V100M16"}, {3, "2", "T4"}, {2, "0", ""}}
	var nodes []*v1.Node
	for _, sh := range shapes {
		for range n * sh.per10 / 10 {
			name := fmt.Sprintf("node-%05d", len(nodes))
			if sh.gpus == "0" {
				nodes = append(nodes, mkNode(name).Capacity("cpu", "96", "memory", "512Gi", "pods", "110").Obj())
				continue
			}
			nodes = append(nodes, mkNode(name).Capacity("cpu", "64", "memory", "256Gi", "pods", "110",
				"alibabacloud.com/gpu-count", sh.gpus, "alibabacloud.com/gpu-milli", sh.gpus+"000").
				Label(openb.LabelGPUModel, sh.model).Obj())
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	shares := []int{810, 470, 320, 650, 230, 460, 590, 160, 550, 220, 370, 110}
	models := []string{"V100M16", "T4", "G2", "T4|G2"}
	pods := make([]*snapshot.PodInfo, n*16/3)
	for i := range pods {
		cpu := 1 + r.IntN(16)
		w := snapshottest.MakePod(fmt.Sprintf("pod-%06d", i)).Req("cpu", fmt.Sprint(cpu), "memory", fmt.Sprintf("%dGi", cpu*(1<<r.IntN(3))))
		switch k := r.IntN(100); {
		case k < 13: // CPU only
		case k < 62:
			w = w.Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, "1000")
		case k < 99:
			w = w.Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, fmt.Sprint(shares[r.IntN(len(shares))]))
		default:
			w = w.Annotation(openb.AnnotationGPUCount, fmt.Sprint(2<<r.IntN(2))).Annotation(openb.AnnotationGPUMilli, "1000")
		}
		p := w.Obj()
		if p.Annotations[openb.AnnotationGPUCount] != "" && r.IntN(20) == 0 {
			p.Annotations[openb.AnnotationGPUModel] = models[r.IntN(len(models))]
		}
		pods[i] = openb.MustPodInfo(p)
	}
	return snapshottest.SnapshotWithDevices(b, openb.Devices, nodes), pods
}
