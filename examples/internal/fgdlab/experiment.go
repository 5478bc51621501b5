package fgdlab

import (
	"cmp"
	"fmt"
	"math/rand" // v1 on purpose: its seeded stream is the one the authors' Go 1.15 simulator drew from
	"slices"
	"strings"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/gpushare"
)

// Policies are the six policies of the paper's Fig. 9(a), by the names of
// the authors' result files (sc_policy "01-Random" ... "06-FGD").
var Policies = []string{"Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD"}

// Seeds are the ten seeds of the authors' runs.
var Seeds = []int64{42, 43, 44, 45, 46, 47, 48, 49, 50, 51}

const (
	// TuneRatio is the authors' -tune 1.3: arrivals are inflated until the
	// total GPU request reaches 130 % of the cluster's GPUs.
	TuneRatio = 1.3
	// PopularityPercent is the simulator's podPopularityThreshold: the target
	// workload keeps the most popular shapes covering 95 % of the tasks.
	PopularityPercent = 95
	// reflectorDraws is the number of math/rand.Float64 calls that the
	// simulator's ten client-go informers make (one watch timeout each)
	// between the workload tuning and the node permutation.
	reflectorDraws = 10
)

// Experiment is one openb trace on one cluster, ready to be replayed with
// any policy and seed as in the authors' simulator (see
// /work/notes/fgd-facts.md for the sources).
type Experiment struct {
	nodes    []openb.Node    // sorted by name
	tasks    []gpushare.Task // per pod, pods sorted by name (the simulator's workloadPods)
	shapeOf  []int32         // per pod: index of its distinct Task
	shapes   int             // number of distinct Tasks
	workload *gpushare.Workload
	totalGPU int64 // cluster capacity in milli-GPU
	gpus     int   // number of GPUs
	podTotal int64 // Σ tasks' GPU milli
}

// TaskOf converts an openb row to a Task the way pod_csv_to_yaml.py and the
// simulator's GetPodResource do: GPU fields only when num_gpu != 0, gpu_milli
// clamped to [0, 1000], gpu_spec's models as allowed models.
func TaskOf(p openb.Pod) gpushare.Task {
	t := gpushare.Task{MilliCPU: p.MilliCPU, Memory: p.MemoryMiB << 20}
	if p.NumGPU != 0 {
		t.GPUCount = int(p.NumGPU)
		t.MilliGPU = p.GPUMilliClamped()
		t.Models = p.GPUSpec
	}
	return t
}

// NewExperiment prepares nodes and pods: sorts both by name, converts the
// pods to tasks and learns the target workload from them.
func NewExperiment(nodes []openb.Node, pods []openb.Pod) (*Experiment, error) {
	if len(nodes) == 0 || len(pods) == 0 {
		return nil, fmt.Errorf("fgdlab: %d nodes and %d pods, want both > 0", len(nodes), len(pods))
	}
	e := &Experiment{nodes: slices.Clone(nodes)}
	slices.SortFunc(e.nodes, func(a, b openb.Node) int { return cmp.Compare(a.Name, b.Name) })
	for _, n := range e.nodes {
		if n.GPUs > gpushare.MaxDevices {
			return nil, fmt.Errorf("fgdlab: node %s has %d GPUs, want at most %d", n.Name, n.GPUs, gpushare.MaxDevices)
		}
		e.totalGPU += n.GPUs * gpushare.MilliPerDevice
		e.gpus += int(n.GPUs)
	}
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b openb.Pod) int { return cmp.Compare(a.Name, b.Name) })
	type key struct {
		cpu, mem, milli int64
		count           int
		models          string
	}
	ids := map[key]int32{}
	for _, p := range sorted {
		t := TaskOf(p)
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("fgdlab: pod %s: %w", p.Name, err)
		}
		k := key{t.MilliCPU, t.Memory, t.MilliGPU, t.GPUCount, strings.Join(t.Models, "|")}
		id, ok := ids[k]
		if !ok {
			id = int32(len(ids))
			ids[k] = id
		}
		e.tasks = append(e.tasks, t)
		e.shapeOf = append(e.shapeOf, id)
		e.podTotal += t.TotalMilliGPU()
	}
	e.shapes = len(ids)
	w, err := gpushare.WorkloadFromTasks(e.tasks, PopularityPercent)
	if err != nil {
		return nil, err
	}
	e.workload = w
	return e, nil
}

// Workload returns the target workload learned from the trace.
func (e *Experiment) Workload() *gpushare.Workload { return e.workload }

// GPUs returns the number of GPUs of the cluster.
func (e *Experiment) GPUs() int { return e.gpus }

// Arrivals returns the order in which the simulator submits pods for a seed
// (indexes into the name-sorted pods; a pod index may repeat) and each node's
// tie-break rank (rank[i] for the i-th node in name order; lower wins).
//
// It replays the simulator's use of Go's global math/rand after
// rand.Seed(seed): one Int (a log argument), Shuffle of the name-sorted pods,
// the tune-up draws (Intn over the name-sorted pods until the next pod's
// per-GPU milli would pass TuneRatio × capacity; the clones go after the
// shuffled pods), the ten reflector Float64 draws, and Perm over the
// name-sorted nodes (the "%04d-" prefix that decides ties).
func (e *Experiment) Arrivals(seed int64) (order []int32, rank []int) {
	r := rand.New(rand.NewSource(seed))
	r.Int()
	n := len(e.tasks)
	order = make([]int32, n, n+n/2)
	for i := range order {
		order[i] = int32(i)
	}
	r.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	total := e.podTotal
	target := TuneRatio * float64(e.totalGPU)
	switch {
	case float64(total) < target:
		for {
			idx := r.Intn(n)
			t := &e.tasks[idx]
			if float64(total+t.MilliGPU) > target {
				break
			}
			total += t.TotalMilliGPU()
			order = append(order, int32(idx))
		}
	case float64(total) > target:
		for float64(total) > target && len(order) > 0 {
			idx := r.Intn(len(order))
			total -= e.tasks[order[idx]].TotalMilliGPU()
			order = append(order[:idx], order[idx+1:]...)
		}
	}
	for range reflectorDraws {
		r.Float64()
	}
	return order, r.Perm(len(e.nodes))
}
