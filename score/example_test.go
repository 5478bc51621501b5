package score_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// exampleCluster is three nodes: an empty big one, a half-used one, and a
// tainted GPU node.
func exampleCluster() (*snapshot.Snapshot, []*snapshot.NodeInfo) {
	nodes := []*v1.Node{
		snapshottest.MakeNode("big").Capacity("cpu", "16", "memory", "64Gi").Obj(),
		snapshottest.MakeNode("busy").Capacity("cpu", "8", "memory", "32Gi").Obj(),
		snapshottest.MakeNode("gpu").Capacity("cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "4").
			Taint("gpu", "true", v1.TaintEffectPreferNoSchedule).Obj(),
	}
	busy := snapshottest.MakePod("web-0").Req("cpu", "4", "memory", "8Gi").Node("busy").Obj()
	c := snapshot.NewCache()
	for _, n := range nodes {
		if err := c.AddNode(n); err != nil {
			panic(err)
		}
	}
	if err := c.AddPod(busy); err != nil {
		panic(err)
	}
	snap := c.Snapshot()
	infos := make([]*snapshot.NodeInfo, 0, snap.NumNodes())
	for _, n := range nodes {
		infos = append(infos, snap.Get(n.Name))
	}
	return snap, infos
}

// gpuFree prefers nodes with more free GPUs; per-pod work happens once in
// Prepare, the loop touches only the nodes.
type gpuFree struct{}

func (gpuFree) Name() string { return "GPUFree" }

func (gpuFree) Prepare(_ *snapshot.PodInfo, _ score.Cluster) (score.PodScorer, error) {
	gpu, _ := snapshot.Intern("nvidia.com/gpu")
	return score.PodScorerFunc(func(nodes []*snapshot.NodeInfo, out []int64) {
		for i, n := range nodes {
			out[i] = min(score.MaxScore, 25*n.Free(gpu)) // 4 free GPUs = 100
		}
	}), nil
}

// A custom scorer in ten lines: a name, per-pod preparation, a batch loop.
func Example_customScorer() {
	snap, nodes := exampleCluster()
	pod := snapshot.MustPodInfo(snapshottest.MakePod("train").Req("cpu", "1", "nvidia.com/gpu", "1").Obj())

	prof := score.MustProfile(score.Weighted{Scorer: gpuFree{}, Weight: 2})
	totals := make([]int64, len(nodes))
	if err := prof.Score(pod, snap, nodes, totals); err != nil {
		panic(err)
	}
	for i, n := range nodes {
		fmt.Println(n.Name(), totals[i])
	}
	// Output:
	// big 0
	// busy 0
	// gpu 200
}

// The convenient path: a per-node function (an indirect call per node, no
// per-pod preparation).
func ExamplePerNode() {
	snap, nodes := exampleCluster()
	fewerPods := score.PerNode("FewerPods", func(_ *snapshot.PodInfo, n *snapshot.NodeInfo) int64 {
		return max(0, score.MaxScore-10*int64(n.NumPods()))
	})
	totals := make([]int64, len(nodes))
	pod := snapshot.MustPodInfo(snapshottest.MakePod("p").Obj())
	if err := score.MustProfile(score.Weighted{Scorer: fewerPods}).Score(pod, snap, nodes, totals); err != nil {
		panic(err)
	}
	fmt.Println(totals)
	// Output: [100 90 100]
}

// Why did the pod not go to the GPU node? The default profile's breakdown:
// big scores 300 (taint) + 90 (LeastAllocated (87+93)/2) + 73
// (BalancedAllocation), busy 300 + 43 + 72, gpu loses the taint term.
func ExampleProfile_Explain() {
	snap, nodes := exampleCluster()
	pod := snapshot.MustPodInfo(snapshottest.MakePod("api").Req("cpu", "2", "memory", "4Gi").Obj())

	prof := score.DefaultProfile()
	totals := make([]int64, len(nodes))
	if err := prof.Score(pod, snap, nodes, totals); err != nil {
		panic(err)
	}
	fmt.Println("totals:", totals)
	e, err := prof.Explain(pod, snap, nodes, 2)
	if err != nil {
		panic(err)
	}
	fmt.Print(e)
	// Output:
	// totals: [463 415 152]
	// node gpu: total 152
	// SCORER                             RAW  NORMALIZED  WEIGHT  CONTRIBUTION  DETAIL
	// TaintToleration                      1           0       3             0  untolerated PreferNoSchedule: gpu=true:PreferNoSchedule
	// NodeAffinity                         -           -       2             0  skipped
	// NodeResourcesFit                    81          81       1            81  LeastAllocated cpu (8000-2000)*100/8000=75 ×1; memory (34359738368-4294967296)*100/34359738368=87 ×1; 162/2=81
	// PodTopologySpread                    -           -       2             0  skipped
	// InterPodAffinity                     -           -       2             0  skipped
	// NodeResourcesBalancedAllocation     71          71       1            71  cpu 0→2000/8000; memory 0→4294967296/34359738368; balance 100→93; 50+(50+93-100)/2=71
	// ImageLocality                        0           0       1             0  sum 0 of 1 images; score 0
}
