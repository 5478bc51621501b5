package replay_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// maintenance is a user's filter: nodes labelled maintenance=true take no
// new pods.
type maintenance struct{}

func (maintenance) Name() string { return "Maintenance" }

func (maintenance) PreFilter(*snapshot.PodInfo) (framework.PreFilterResult, error) {
	return framework.PreFilterResult{Filter: framework.PodFilterFunc(
		func(ni *snapshot.NodeInfo, reasons []framework.Reason) []framework.Reason {
			if ni.Node().Labels["maintenance"] == "true" {
				reasons = append(reasons, framework.Reason{Code: framework.CodeCustom, Text: "node(s) under maintenance"})
			}
			return reasons
		})}, nil
}

// preference is a user's scorer: a node's score is its "preference"
// label (0-100), 0 without one.
type preference struct{}

func (preference) Name() string { return "Preference" }

func (preference) Prepare(*snapshot.PodInfo, score.Cluster) (score.PodScorer, error) {
	return score.PodScorerFunc(func(nodes []*snapshot.NodeInfo, out []int64) {
		for i, ni := range nodes {
			v, _ := strconv.ParseInt(ni.Node().Labels["preference"], 10, 64)
			out[i] = min(max(v, 0), score.MaxScore)
		}
	}), nil
}

// Three 4-CPU nodes, the third under maintenance; five 2-CPU pods arrive
// one after another. The scorer fills node-a (preference 90) first, then
// node-b (10); the fifth pod finds node-a and node-b full and node-c
// refused by the user's filter.
func Example() {
	nodes := []*snapshottest.NodeWrapper{
		snapshottest.MakeNode("node-a").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Label("preference", "90"),
		snapshottest.MakeNode("node-b").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Label("preference", "10"),
		snapshottest.MakeNode("node-c").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Label("maintenance", "true"),
	}
	in := &replay.Input{}
	for _, n := range nodes {
		in.Nodes = append(in.Nodes, n.Obj())
	}
	for i := 1; i <= 5; i++ {
		pi, err := snapshot.NewPodInfo(snapshottest.MakePod(fmt.Sprintf("job-%d", i)).Req("cpu", "2", "memory", "1Gi").Obj())
		if err != nil {
			panic(err)
		}
		in.Arrivals = append(in.Arrivals, replay.Arrival{Pod: pi})
	}
	profile, err := score.NewProfile(score.Weighted{Scorer: preference{}, Weight: 1})
	if err != nil {
		panic(err)
	}
	rep, err := replay.Run(context.Background(), in, replay.Config{
		Filters: append(framework.DefaultFilters(), maintenance{}),
		Profile: profile,
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("placed %d, unschedulable %d, nodes used %d of %d\n", rep.Placed, rep.Unschedulable, rep.NodesUsed, rep.Nodes)
	fmt.Printf("cpu %d/%d %s (%.1f%%)\n", rep.CPU.Requested, rep.CPU.Allocatable, rep.CPU.Unit, 100*rep.CPU.Ratio)
	for _, p := range rep.Placements {
		fmt.Printf("%s -> %q\n", p.Pod, p.Node)
	}
	fmt.Println(rep.Reasons)
	fmt.Println(rep.FirstFailure)
	// Output:
	// placed 4, unschedulable 1, nodes used 2 of 3
	// cpu 8000/12000 milliCPU (66.7%)
	// default/job-1 -> "node-a"
	// default/job-2 -> "node-a"
	// default/job-3 -> "node-b"
	// default/job-4 -> "node-b"
	// default/job-5 -> ""
	// map[Insufficient cpu:1]
	// default/job-5: 0/3 nodes are available: 1 node(s) under maintenance, 2 Insufficient cpu.
}
