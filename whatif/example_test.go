package whatif_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
	"github.com/schedkit/schedkit/whatif"
)

// exampleCluster: three nodes of 4, 2 and 1 CPU.
func exampleCluster() *snapshot.Snapshot {
	cache := snapshot.NewCache()
	for _, n := range []*v1.Node{
		snapshottest.MakeNode("big").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj(),
		snapshottest.MakeNode("mid").Capacity("cpu", "2", "memory", "8Gi", "pods", "110").Obj(),
		snapshottest.MakeNode("tiny").Capacity("cpu", "1", "memory", "4Gi", "pods", "110").Obj(),
	} {
		_ = cache.AddNode(n)
	}
	return cache.Snapshot()
}

func ExampleFitCount() {
	f := exampleCluster().Fork()
	web := snapshottest.MakePod("web").Req("cpu", "1500m", "memory", "1Gi").Obj()
	res, err := whatif.FitCount(f, web, 10, framework.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Count, "copies fit")
	for _, p := range res.Placements {
		fmt.Println(p)
	}
	fmt.Println("next:", res.Next.Message())
	// big takes two (2 × 1.5 = 3 of 4 CPU), mid one (1.5 of 2), tiny
	// none (1 CPU): 3; the fourth copy finds 1, 0.5 and 1 CPU free.

	// Output:
	// 3 copies fit
	// default/web-0 -> big
	// default/web-1 -> big
	// default/web-2 -> mid
	// next: 0/3 nodes are available: 3 Insufficient cpu.
}

func ExamplePlaceGang() {
	f := exampleCluster().Fork()
	var workers []*v1.Pod
	for i := range 3 {
		workers = append(workers, snapshottest.MakePod(fmt.Sprintf("worker-%d", i)).Req("cpu", "2").Obj())
	}
	// big takes two 2-CPU workers and mid one: all three fit.
	res, _ := whatif.PlaceGang(f, whatif.Gang{Pods: workers, MinMember: 3}, framework.Config{Seed: 1})
	fmt.Println("placed:", res.Placed, "pods on big:", f.Get("big").NumPods())
	// Three more need 6 CPU; 1 is left (tiny): none is kept.
	for i := range workers {
		workers[i] = snapshottest.MakePod(fmt.Sprintf("more-%d", i)).Req("cpu", "2").Obj()
	}
	res, _ = whatif.PlaceGang(f, whatif.Gang{Pods: workers, MinMember: 2}, framework.Config{Seed: 1})
	fmt.Println("placed:", res.Placed, "-", res.Why)
	fmt.Println(res.Placements[0])
	// Output:
	// placed: true pods on big: 2
	// placed: false - 0/3 members placed, minMember 2
	// default/more-0: 0/3 nodes are available: 3 Insufficient cpu.
}

func ExampleScaleUp() {
	f := exampleCluster().Fork()
	var pending []*v1.Pod
	for i := range 6 {
		p := snapshottest.MakePod(fmt.Sprintf("job-%d", i)).Req("cpu", "3", "memory", "4Gi").Obj()
		pending = append(pending, owned(p, "ReplicaSet", "job"))
	}
	groups := []whatif.NodeGroup{
		{Name: "m5-xlarge", Template: snapshottest.MakeNode("t").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj(), MaxNodes: 10},
		{Name: "m5-4xlarge", Template: snapshottest.MakeNode("t").Capacity("cpu", "16", "memory", "64Gi", "pods", "110").Obj(), MaxNodes: 10},
	}
	res, _ := whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{Expander: whatif.ExpanderLeastWaste})
	fmt.Println("on existing nodes:", len(res.Existing))
	for _, g := range res.Groups {
		fmt.Printf("%s: nodes added %d, pods placed %d, pending %d, waste %.3f\n", g.Group, g.NodesAdded, len(g.Placed), len(g.Pending), g.Waste)
	}
	fmt.Println(res.Why)
	// big takes one job (3 of 4 CPU); five remain. m5-xlarge: one 3-CPU
	// job per 4-CPU node, 5 nodes; waste (20 − 15)/20 cpu + (80 − 20)/80
	// memory (GiB) = 0.25 + 0.75 = 1. m5-4xlarge: five jobs (15 CPU) on
	// one 16-CPU node; waste 1/16 + 44/64 = 0.0625 + 0.6875 = 0.75.

	// Output:
	// on existing nodes: 1
	// m5-xlarge: nodes added 5, pods placed 5, pending 0, waste 1.000
	// m5-4xlarge: nodes added 1, pods placed 5, pending 0, waste 0.750
	// least-waste: m5-4xlarge (waste 0.7500)
}

// pdbList is a PDBLister over a list.
type pdbList []*policyv1.PodDisruptionBudget

func (l pdbList) PodDisruptionBudgets(string) []*policyv1.PodDisruptionBudget { return l }

func ExampleRemovableNodes() {
	cache := snapshot.NewCache()
	for _, n := range []string{"a", "b", "c"} {
		_ = cache.AddNode(snapshottest.MakeNode(n).Capacity("cpu", "4", "pods", "110").Obj())
	}
	_ = cache.AddPod(owned(snapshottest.MakePod("api-1").Req("cpu", "2").Label("app", "api").Node("a").Obj(), "ReplicaSet", "api"))
	_ = cache.AddPod(owned(snapshottest.MakePod("api-2").Req("cpu", "2").Label("app", "api").Node("b").Obj(), "ReplicaSet", "api"))
	_ = cache.AddPod(snapshottest.MakePod("standalone").Req("cpu", "1").Node("c").Obj())
	// At most one api pod may be disrupted at a time.
	pdbs := pdbList{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "api"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1},
	}}
	res, _ := whatif.RemovableNodes(cache.Snapshot().Fork(), []string{"a", "b", "c"}, pdbs, framework.Config{Seed: 1})
	for _, d := range res {
		if d.Removable {
			fmt.Println(d.Node, "removable:", d.Moved)
		} else {
			fmt.Println(d.Node, "kept:", d.Block, "by", d.BlockingPod.Name)
		}
	}
	// a's api-1 (2 CPU) goes to c (1 of 4 CPU used; LeastAllocated
	// prefers it to b, 2 of 4) and uses the PDB's one disruption; b's
	// api-2 would need a second; c's standalone pod has no controller.

	// Output:
	// a removable: [default/api-1 -> c]
	// b kept: NotEnoughPdb by api-2
	// c kept: NotReplicated by standalone
}
