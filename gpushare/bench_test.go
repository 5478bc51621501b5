package gpushare

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchCluster returns n nodes shaped like openb's G2 and T4 nodes, partly
// filled, and a 35-shape workload like the openb default trace's.
func benchCluster(n int) ([]NodeState, *Workload) {
	r := rand.New(rand.NewPCG(9, 9))
	nodes := make([]NodeState, n)
	for i := range nodes {
		if i%2 == 0 {
			nodes[i] = node(96000, gpus("G2", 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000))
		} else {
			nodes[i] = node(104000, gpus("T4", 1000, 1000))
		}
		for k := range nodes[i].Devices {
			nodes[i].Devices[k].FreeMilliGPU = []int64{0, 1000, 540, 190, 1000}[r.IntN(5)]
		}
		nodes[i].FreeMilliCPU -= r.Int64N(60000)
	}
	shapes := make([]Task, 35)
	weights := make([]float64, 35)
	for i := range shapes {
		switch i % 3 {
		case 0:
			shapes[i] = shared(int64(1+i)*1000, int64(100+25*i))
		case 1:
			shapes[i] = whole(int64(1+i)*1000, 1+i%4)
		default:
			shapes[i] = cpuOnly(int64(1+i) * 1000)
		}
		weights[i] = 1 / float64(1+i)
	}
	return nodes, mustWorkload(shapes, weights)
}

func BenchmarkChoose(b *testing.B) {
	for _, n := range []int{1000, 5000, 15000} {
		nodes, w := benchCluster(n)
		task := shared(4000, 460)
		for _, p := range []Policy{NewFGD(w), BestFit{}, DotProduct{}, GPUPacking{}, GPUClustering{}, NewRandom(1)} {
			b.Run(fmt.Sprintf("policy=%s/nodes=%d", p.Name(), n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p.Choose(nodes, task)
				}
			})
		}
	}
}

func BenchmarkFragmentation(b *testing.B) {
	nodes, w := benchCluster(1)
	b.ReportAllocs()
	for b.Loop() {
		w.Fragmentation(&nodes[0])
	}
}
