package fgdlab

import (
	"fmt"

	"github.com/schedkit/schedkit/gpushare"
)

// Run is the outcome of one replay.
type Run struct {
	Policy  string
	Seed    int64
	Pods    int   // pods submitted
	Failed  int   // pods that fit no node
	Arrived int64 // milli-GPU submitted
	Used    int64 // milli-GPU placed
	Curve   Curve
}

// scorerOf returns the gpushare scorer for a policy name (nil for Random).
func (e *Experiment) scorerOf(policy string) (gpushare.NodeScorer, error) {
	switch policy {
	case "Random":
		return nil, nil
	case "DotProd":
		return gpushare.DotProduct{}, nil
	case "GpuClustering":
		return gpushare.GPUClustering{}, nil
	case "GpuPacking":
		return gpushare.GPUPacking{}, nil
	case "BestFit":
		return gpushare.BestFit{}, nil
	case "FGD":
		return gpushare.NewFGD(e.workload), nil
	}
	return nil, fmt.Errorf("fgdlab: unknown policy %q, want one of %v", policy, Policies)
}

// cached is a score of one task shape on one node, valid while the node's
// version equals stamp-1.
type cached struct {
	stamp uint32
	fits  bool
	score int64
	devs  gpushare.DeviceSet
}

// Replay runs the experiment with a policy and seed: pods arrive in the
// order of Arrivals, each is placed by the policy (ties to the lowest rank)
// or fails, and the allocation ratio is sampled after every pod.
//
// Scores are cached per node and task shape and recomputed only when the
// node changed, which is exact because every gpushare scorer is a pure
// function of (node, task).
func (e *Experiment) Replay(policy string, seed int64) (*Run, error) {
	scorer, err := e.scorerOf(policy)
	if err != nil {
		return nil, err
	}
	order, rank := e.Arrivals(seed)
	nodes := e.cluster(rank)
	run := &Run{Policy: policy, Seed: seed, Pods: len(order)}
	cb := newCurveBuilder(e.gpus)

	var random *gpushare.Random
	var cache []cached
	var version []uint32
	if scorer == nil {
		random = gpushare.NewRandom(uint64(seed))
	} else {
		cache = make([]cached, len(nodes)*e.shapes)
		version = make([]uint32, len(nodes))
	}
	for _, p := range order {
		t := e.tasks[p]
		run.Arrived += t.TotalMilliGPU()
		var d gpushare.Decision
		if random != nil {
			d = random.Choose(nodes, t)
		} else {
			d = e.choose(scorer, nodes, t, cache[int(e.shapeOf[p]):], version)
		}
		if d.Node < 0 {
			run.Failed++
		} else {
			if err := nodes[d.Node].Place(t, d.Devices); err != nil {
				return nil, fmt.Errorf("fgdlab: %s seed %d: %w", policy, seed, err)
			}
			if version != nil {
				version[d.Node]++
			}
			run.Used += t.TotalMilliGPU()
		}
		cb.add(run.Arrived, run.Used)
	}
	run.Curve = cb.curve()
	return run, nil
}

// choose is gpushare.Choose over the cache: cache[i*e.shapes] is node i's
// entry for the task's shape.
func (e *Experiment) choose(s gpushare.NodeScorer, nodes []gpushare.NodeState, t gpushare.Task, cache []cached, version []uint32) gpushare.Decision {
	best := gpushare.Decision{Node: -1}
	for i := range nodes {
		c := &cache[i*e.shapes]
		if c.stamp != version[i]+1 {
			c.stamp = version[i] + 1
			c.fits = gpushare.Fits(&nodes[i], t)
			c.score, c.devs = 0, 0
			if c.fits {
				c.score, c.devs = s.Score(&nodes[i], t)
			}
		}
		if c.fits && (best.Node < 0 || c.score > best.Score) {
			best = gpushare.Decision{Node: i, Devices: c.devs, Score: c.score}
		}
	}
	return best
}

// cluster returns the empty cluster with node i (in name order) at index
// rank[i], so that the lowest index is the simulator's tie winner.
func (e *Experiment) cluster(rank []int) []gpushare.NodeState {
	nodes := make([]gpushare.NodeState, len(e.nodes))
	devs := make([]gpushare.Device, e.gpus)
	for i, n := range e.nodes {
		d := devs[:n.GPUs:n.GPUs]
		devs = devs[n.GPUs:]
		for k := range d {
			d[k] = gpushare.Device{Model: n.Model, CapacityMilliGPU: gpushare.MilliPerDevice, FreeMilliGPU: gpushare.MilliPerDevice}
		}
		nodes[rank[i]] = gpushare.NodeState{FreeMilliCPU: n.MilliCPU, FreeMemory: n.MemoryMiB << 20, Devices: d}
	}
	return nodes
}
