package framework_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

func ExampleScheduler_SchedulePod() {
	cache := snapshot.NewCache()
	for _, n := range []*v1.Node{
		snapshottest.MakeNode("small").Capacity("cpu", "2", "memory", "4Gi", "pods", "110").Obj(),
		snapshottest.MakeNode("large").Capacity("cpu", "16", "memory", "64Gi", "pods", "110").Obj(),
	} {
		_ = cache.AddNode(n)
	}
	sched, _ := framework.New(framework.Config{Seed: 1})
	f := cache.Snapshot().Fork() // what-if: place pods without touching the cache
	for i := range 3 {
		pod := snapshot.MustPodInfo(snapshottest.MakePod(fmt.Sprintf("p%d", i)).Req("cpu", "4", "memory", "8Gi").Obj())
		d, _ := sched.SchedulePod(f, pod)
		if !d.Scheduled() {
			fmt.Println(pod.Key().Name, d.Diagnosis.Message())
			continue
		}
		fmt.Println(pod.Key().Name, "->", d.Node)
		_ = f.AddPodInfo(pod, d.Node)
	}
	big := snapshot.MustPodInfo(snapshottest.MakePod("big").Req("cpu", "8").Obj())
	d, _ := sched.SchedulePod(f, big)
	fmt.Println(d.Diagnosis.Message())
	// Output:
	// p0 -> large
	// p1 -> large
	// p2 -> large
	// 0/2 nodes are available: 2 Insufficient cpu.
}

func ExampleDiagnosis() {
	cache := snapshot.NewCache()
	for _, name := range []string{"a", "b", "c"} {
		_ = cache.AddNode(snapshottest.MakeNode(name).Capacity("cpu", "4", "pods", "110").Obj())
	}
	sched, _ := framework.New(framework.Config{})
	// Required node affinity naming a node that does not exist.
	pod := snapshot.MustPodInfo(snapshottest.MakePod("p").RequiredNodeName("z").Obj())
	d, _ := sched.SchedulePod(cache.Snapshot(), pod)
	fmt.Println(d.Scheduled())
	fmt.Println(d.Diagnosis.Message())
	fmt.Println(d.Diagnosis.UnschedulablePlugins)
	// Output:
	// false
	// 0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity].
	// [NodeAffinity]
}

func ExampleLoop() {
	ledger := reserve.New()
	_ = ledger.AddNode(snapshottest.MakeNode("n1").Capacity("cpu", "4", "pods", "110").Obj())
	sched, _ := framework.New(framework.Config{})
	loop := framework.NewLoop(sched, ledger, func(_ context.Context, d framework.Decision) error {
		fmt.Println("bind", d.Pod.Key().Name, "to", d.Node)
		return nil
	})
	_ = loop.Add(snapshottest.MakePod("low").Req("cpu", "3").Obj())
	_ = loop.Add(snapshottest.MakePod("high").Req("cpu", "3").Priority(100).Obj())
	attempts, _ := loop.ScheduleAll(context.Background())
	for _, a := range attempts {
		if !a.Bound() {
			fmt.Println(a.Pod.Key().Name, a.Diagnosis.Message())
		}
	}
	phase, node, _ := ledger.PodPhase(snapshot.PodKey{Namespace: "default", Name: "high"})
	fmt.Println("high is", phase, "on", node)
	// Output:
	// bind high to n1
	// low 0/1 nodes are available: 1 Insufficient cpu.
	// high is Confirmed on n1
}
