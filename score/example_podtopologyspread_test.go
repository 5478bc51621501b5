package score_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// A Deployment's replica without topology spread constraints is spread
// by upstream's system defaults (hostname maxSkew 3, zone maxSkew 5) over
// the selector of its ReplicaSet, which the caller lists in Workloads.
func ExampleNewPodTopologySpread() {
	owned := func(name, node string) *v1.Pod {
		p := snapshottest.MakePod(name).Label("app", "web").Node(node).Obj()
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", Controller: new(true)}}
		return p
	}
	c := snapshot.NewCache()
	for _, n := range []struct{ name, zone string }{{"a1", "a"}, {"a2", "a"}, {"b1", "b"}} {
		if err := c.AddNode(snapshottest.MakeNode(n.name).Label(v1.LabelHostname, n.name).Label(v1.LabelTopologyZone, n.zone).Obj()); err != nil {
			panic(err)
		}
	}
	for _, p := range []*v1.Pod{owned("web-1-x", "a1"), owned("web-1-y", "a2")} {
		if err := c.AddPod(p); err != nil {
			panic(err)
		}
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	wl, err := snapshot.NewWorkloadIndex(snapshot.WorkloadObjects{ReplicaSets: []*appsv1.ReplicaSet{rs}})
	if err != nil {
		panic(err)
	}
	spread, err := score.NewPodTopologySpread(score.PodTopologySpreadArgs{Workloads: wl})
	if err != nil {
		panic(err)
	}
	snap := c.Snapshot()
	nodes := []*snapshot.NodeInfo{snap.Get("a1"), snap.Get("a2"), snap.Get("b1")}
	totals := make([]int64, len(nodes))
	p := score.MustProfile(score.Weighted{Scorer: spread, Weight: 2})
	if err := p.Score(snapshot.MustPodInfo(owned("web-1-z", "")), snap, nodes, totals); err != nil {
		panic(err)
	}
	for i, n := range nodes {
		fmt.Println(n.Name(), totals[i])
	}
	// Raw: a1 = round(1×ln 5 + 2 + 2×ln 4 + 4) = 10 (1 replica on the
	// node, 2 in zone a), a2 likewise, b1 = round(0 + 2 + 0 + 4) = 6;
	// normalised 100 × (10 + 6 − raw) / 10: 60, 60, 100; weight 2.

	// Output:
	// a1 120
	// a2 120
	// b1 200
}
