package main

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/schedkit/schedkit/examples/internal/openb"
)

// The built-in workload: a seeded synthetic cluster and pod stream shaped
// like the production GPU cluster of the openb trace (Alibaba
// cluster-trace-gpu-v2023): a few node shapes, CPU-only and 2/4/8-GPU
// nodes; pods that are CPU-only, take whole GPUs, or share one GPU. At
// scale 1 it has 1,500 nodes (6,080 GPUs) and 8,000 pods asking for about
// 98 % of the GPUs, so that placement quality shows in who gets left out.
// Nodes and pods use the trace's Kubernetes mapping (openb.Node.Object,
// openb.Pod.Object).

// nodeShape is one kind of machine and how many of 1,500 have it.
type nodeShape struct {
	count     int
	milliCPU  int64
	memoryMiB int64
	gpus      int64
	model     string
}

var nodeShapes = []nodeShape{
	{500, 96000, 393216, 8, "G2"},
	{60, 96000, 786432, 8, "V100M32"},
	{140, 32000, 131072, 4, "V100M16"},
	{400, 104000, 524288, 2, "T4"},
	{120, 16000, 122880, 2, "P100"},
	{180, 32000, 262144, 0, ""},
	{100, 96000, 524288, 0, ""},
}

// weighted draws one of values with the given integer weights.
type weighted[T any] struct {
	values  []T
	weights []int
	total   int
}

func choice[T any](values []T, weights []int) weighted[T] {
	w := weighted[T]{values: values, weights: weights}
	for _, x := range weights {
		w.total += x
	}
	return w
}

func (w weighted[T]) draw(r *rand.Rand) T {
	n := r.IntN(w.total)
	for i, x := range w.weights {
		if n < x {
			return w.values[i]
		}
		n -= x
	}
	return w.values[len(w.values)-1]
}

// Pod mixes, after the openb default trace: 13 % CPU-only, 49 % one whole
// GPU, 37 % a share of one GPU (the trace's common shares and their
// frequencies), 1 % 2/4/8 GPUs; 5 % of GPU pods restricted to GPU models.
var (
	podKinds    = choice([]string{"cpu", "whole", "share", "multi"}, []int{13, 49, 37, 1})
	cpuOnlyCPU  = choice([]int64{1000, 2000, 4000, 8000, 16000, 32000}, []int{15, 25, 25, 20, 10, 5})
	gpuPodCPU   = choice([]int64{2000, 4000, 6000, 8000, 12000, 16000}, []int{10, 25, 20, 20, 15, 10})
	memPerCore  = choice([]int64{2048, 4096, 8192}, []int{30, 50, 20}) // MiB per core
	shares      = choice([]int64{810, 470, 320, 650, 230, 460, 590, 160, 550, 220, 370, 110}, []int{1078, 750, 328, 253, 140, 128, 75, 74, 72, 62, 47, 24})
	multiGPUs   = choice([]int64{2, 4, 8}, []int{16, 15, 44})
	modelSpecs  = choice([]string{"V100M16|V100M32", "T4", "G2", "P100|T4"}, []int{40, 30, 20, 10})
	specPercent = 5
)

// synthetic returns the built-in cluster and pods for seed; nodeScale
// multiplies the node counts of nodeShapes (1: 1,500 nodes), and there are
// numPods pods.
func synthetic(seed uint64, nodeScale float64, numPods int) (nodes []openb.Node, pods []openb.Pod) {
	r := rand.New(rand.NewPCG(seed, 0x5eed5ca1e))
	for _, s := range nodeShapes {
		for range max(int(float64(s.count)*nodeScale+0.5), 1) {
			nodes = append(nodes, openb.Node{Name: fmt.Sprintf("node-%05d", len(nodes)), MilliCPU: s.milliCPU,
				MemoryMiB: s.memoryMiB, GPUs: s.gpus, Model: s.model})
		}
	}
	for i := range numPods {
		p := openb.Pod{Name: fmt.Sprintf("pod-%05d", i)}
		switch podKinds.draw(r) {
		case "cpu":
			p.MilliCPU = cpuOnlyCPU.draw(r)
		case "whole":
			p.MilliCPU, p.NumGPU, p.GPUMilli = gpuPodCPU.draw(r), 1, 1000
		case "share":
			p.MilliCPU, p.NumGPU, p.GPUMilli = gpuPodCPU.draw(r)/2, 1, shares.draw(r)
		case "multi":
			p.NumGPU, p.GPUMilli = multiGPUs.draw(r), 1000
			p.MilliCPU = 8000 * p.NumGPU
		}
		p.MemoryMiB = p.MilliCPU / 1000 * memPerCore.draw(r)
		if p.NumGPU > 0 && r.IntN(100) < specPercent {
			p.GPUSpec = strings.Split(modelSpecs.draw(r), "|")
		}
		pods = append(pods, p)
	}
	return nodes, pods
}

// loadSynthetic builds the built-in cluster at a scale (1: 1,500 nodes,
// 8,000 pods).
func loadSynthetic(seed uint64, scale float64) (*cluster, error) {
	return loadSyntheticSized(seed, scale, max(int(8000*scale+0.5), 1))
}

// loadSyntheticSized builds the built-in cluster with nodeScale × 1,500
// nodes and numPods pods.
func loadSyntheticSized(seed uint64, nodeScale float64, numPods int) (*cluster, error) {
	nodes, pods := synthetic(seed, nodeScale, numPods)
	c := &cluster{source: fmt.Sprintf("synthetic GPU cluster (seed %d, %d nodes, %d pods)", seed, len(nodes), len(pods))}
	// Pod by pod: only the lean records stay (a pod object is several KB).
	b, err := c.start(openb.NodeObjects(nodes), false)
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		if err := b.Add(p.Object()); err != nil {
			return nil, fromReplay(err)
		}
	}
	if err := c.end(b); err != nil {
		return nil, err
	}
	return c, nil
}
