package snapshottest_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// Replicas that refuse to share a node (required anti-affinity by
// hostname) and spread over zones with maxSkew 1, scheduled one by one
// onto a cluster of zone-a (a1, a2) and zone-b (b1) where web-0 runs on
// a1: web-1 avoids a1 (anti-affinity) and a2 (a second replica in zone-a
// against none in zone-b is a skew of 2), web-2 takes a2, the last node
// without a replica (skew 1), and web-3 fits nowhere.
func Example_affinityAndSpread() {
	cache := snapshot.NewCache()
	for _, n := range []struct{ name, zone string }{{"a1", "zone-a"}, {"a2", "zone-a"}, {"b1", "zone-b"}} {
		_ = cache.AddNode(snapshottest.MakeNode(n.name).Capacity("cpu", "8", "pods", "110").Label(v1.LabelTopologyZone, n.zone).Obj())
	}
	web := func(name string) *snapshottest.PodWrapper {
		return snapshottest.MakePod(name).Label("app", "web").Req("cpu", "1").
			PodAntiAffinityIn("app", v1.LabelHostname, []string{"web"}, snapshottest.PodAntiAffinityWithRequiredReq).
			SpreadConstraint(1, v1.LabelTopologyZone, v1.DoNotSchedule, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, nil, nil, nil, nil)
	}
	_ = cache.AddPod(web("web-0").Node("a1").Obj())

	sched, _ := framework.New(framework.Config{Seed: 1})
	f := cache.Snapshot().Fork()
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		d, _ := sched.SchedulePod(f, snapshot.MustPodInfo(web(name).Obj()))
		if !d.Scheduled() {
			fmt.Println(name, d.Diagnosis.Message())
			continue
		}
		fmt.Println(name, "->", d.Node)
		_ = f.AddPodInfo(d.Pod, d.Node)
	}
	// Output:
	// web-1 -> b1
	// web-2 -> a2
	// web-3 0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 2 node(s) didn't match pod topology spread constraints.
}
