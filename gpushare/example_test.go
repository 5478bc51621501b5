package gpushare_test

import (
	"fmt"

	"github.com/schedkit/schedkit/gpushare"
)

func gpus(free ...int64) []gpushare.Device {
	d := make([]gpushare.Device, len(free))
	for i, f := range free {
		d[i] = gpushare.Device{Model: "T4", CapacityMilliGPU: 1000, FreeMilliGPU: f}
	}
	return d
}

// Learn a target workload from observed tasks, measure a node's
// fragmentation and let FGD place a half-GPU task.
func Example() {
	half := gpushare.Task{MilliCPU: 1000, GPUCount: 1, MilliGPU: 500}
	one := gpushare.Task{MilliCPU: 1000, GPUCount: 1, MilliGPU: 1000}
	w, err := gpushare.WorkloadFromTasks([]gpushare.Task{half, one}, 100)
	if err != nil {
		panic(err)
	}
	nodes := []gpushare.NodeState{
		{FreeMilliCPU: 32000, FreeMemory: 64 << 30, Devices: gpus(1000, 1000)},
		{FreeMilliCPU: 32000, FreeMemory: 64 << 30, Devices: gpus(1000, 600)},
	}
	fmt.Printf("fragmentation: %.0f and %.0f milli-GPU\n", w.Fragmentation(&nodes[0]), w.Fragmentation(&nodes[1]))

	d := gpushare.NewFGD(w).Choose(nodes, half)
	fmt.Printf("FGD: node %d, devices %v, score %d\n", d.Node, d.Devices.AppendIndexes(nil), d.Score)
	if err := nodes[d.Node].Place(half, d.Devices); err != nil {
		panic(err)
	}
	fmt.Printf("after: %.0f milli-GPU\n", w.Fragmentation(&nodes[d.Node]))
	// Output:
	// fragmentation: 0 and 300 milli-GPU
	// FGD: node 1, devices [1], score 54
	// after: 100 milli-GPU
}

// The baselines score a node on their own; Choose picks the best node,
// ties going to the lowest index.
func ExampleChoose() {
	nodes := []gpushare.NodeState{
		{FreeMilliCPU: 64000, FreeMemory: 64 << 30, Devices: gpus(1000, 1000)},
		{FreeMilliCPU: 16000, FreeMemory: 64 << 30, Devices: gpus(300, 1000)},
	}
	task := gpushare.Task{MilliCPU: 4000, GPUCount: 1, MilliGPU: 250}
	for _, s := range []gpushare.NodeScorer{gpushare.BestFit{}, gpushare.DotProduct{}, gpushare.GPUPacking{}, gpushare.GPUClustering{}} {
		d := gpushare.Choose(s, nodes, task)
		fmt.Printf("%-13s node %d devices %v score %d\n", s.Name(), d.Node, d.Devices.AppendIndexes(nil), d.Score)
	}
	// Node 1: BestFit 100·(1 − ½·12000/128000 − ½·1050/8000) = 88.75;
	// DotProduct 100·(1 − (0.125·0.03125 + 0.1625·0.03125)/2) = 99.55;
	// GpuPacking 100 − (300·100/1000)/10 = 97; GpuClustering, no GPU task
	// yet: 25·(8000 − 1300)/8000 + 25 = 45.
	// Output:
	// BestFit       node 1 devices [0] score 88
	// DotProduct    node 1 devices [0] score 99
	// GpuPacking    node 1 devices [0] score 97
	// GpuClustering node 1 devices [0] score 45
}
