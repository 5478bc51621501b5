package reserve_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// A pod is held while its bind is in flight, so a second pod cannot take
// the same capacity; the bind's success (or the informer's report,
// whichever comes first) turns the hold into a bound pod, counted once.
func ExampleLedger_Reserve() {
	l := reserve.New()
	_ = l.AddNode(st.MakeNode("node-1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj())

	web := st.MakePod("web").Req("cpu", "3", "memory", "1Gi").Obj()
	reasons, err := l.Reserve(snapshot.MustPodInfo(web), "node-1")
	fmt.Println("web:", reasons, err)

	// While web's bind hangs, batch does not fit.
	batch := snapshot.MustPodInfo(st.MakePod("batch").Req("cpu", "3").Obj())
	reasons, _ = l.Reserve(batch, "node-1")
	fmt.Println("batch:", reasons)

	// The bind succeeded; later the informer reports the pod bound.
	_ = l.Confirm(snapshot.KeyOf(web))
	web.Spec.NodeName = "node-1"
	_ = l.AddPod(web)

	u, _ := l.Usage("node-1")
	fmt.Printf("bound %dm, held %dm, pods %d\n", u.Bound.MilliCPU(), u.Held.MilliCPU(), u.Bound.AllowedPodNumber())
	fmt.Println("snapshot requested:", l.Snapshot().Get("node-1").Requested().MilliCPU())
	// Output:
	// web: [] <nil>
	// batch: [Insufficient cpu (requested 3000, used 3000, capacity 4000)]
	// bound 3000m, held 0m, pods 1
	// snapshot requested: 3000
}

// A gang lands on its nodes all together or not at all.
func ExampleLedger_ReserveGang() {
	l := reserve.New()
	for _, n := range []string{"node-1", "node-2"} {
		_ = l.AddNode(st.MakeNode(n).Capacity("cpu", "8", "nvidia.com/gpu", "4", "pods", "110").Obj())
	}
	worker := func(name string) *snapshot.PodInfo {
		return snapshot.MustPodInfo(st.MakePod(name).Req("cpu", "2", "nvidia.com/gpu", "2").Obj())
	}

	// Three workers, two on node-2: 2 + 2 GPUs fit in 4.
	unfit, err := l.ReserveGang([]reserve.GangMember{
		{Pod: worker("w0"), Node: "node-1"},
		{Pod: worker("w1"), Node: "node-2"},
		{Pod: worker("w2"), Node: "node-2"},
	}, time.Time{})
	fmt.Println("first gang:", unfit, err, len(l.Holds()), "holds")

	// A second gang needs 3 × 2 GPUs on node-1, which has 2 left: member 1
	// fails, and member 0's hold is rolled back.
	unfit, err = l.ReserveGang([]reserve.GangMember{
		{Pod: worker("v0"), Node: "node-1"},
		{Pod: worker("v1"), Node: "node-1"},
		{Pod: worker("v2"), Node: "node-1"},
	}, time.Time{})
	fmt.Println("second gang: member", unfit.Member, unfit.Reasons, err)
	fmt.Println(len(l.Holds()), "holds")
	// Output:
	// first gang: <nil> <nil> 3 holds
	// second gang: member 1 [Insufficient nvidia.com/gpu (requested 2, used 4, capacity 4)] <nil>
	// 3 holds
}

// A named reservation keeps 4 cpu on a node for the pods of one app; its
// pods draw on it, other pods cannot use it, and a failed bind returns the
// share.
func ExampleLedger_AddReservation() {
	l := reserve.New()
	_ = l.AddNode(st.MakeNode("node-1").Capacity("cpu", "6", "pods", "110").Obj())
	reasons, err := l.AddReservation(reserve.Reservation{
		Name:     "web-capacity",
		Node:     "node-1",
		Capacity: st.List("cpu", "4"),
		Owner:    reserve.Owner{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	})
	fmt.Println("add:", reasons, err)

	// Another app's pod sees only the 2 cpu outside the reservation.
	other := snapshot.MustPodInfo(st.MakePod("db").Req("cpu", "3").Obj())
	reasons, _ = l.Reserve(other, "node-1")
	fmt.Println("db:", reasons)

	// A web pod draws 3 of the 4 reserved cpu.
	web := snapshot.MustPodInfo(st.MakePod("web-1").Label("app", "web").Req("cpu", "3").Obj())
	_, _ = l.Reserve(web, "node-1")
	r, _ := l.Reservation("web-capacity")
	fmt.Printf("allocated %dm to %v\n", r.Allocated.MilliCPU(), r.Pods)

	// The bind fails: the share goes back to the reservation.
	l.Unreserve(web.Key())
	r, _ = l.Reservation("web-capacity")
	fmt.Printf("allocated %dm to %v\n", r.Allocated.MilliCPU(), r.Pods)
	// Output:
	// add: [] <nil>
	// db: [Insufficient cpu (requested 3000, used 4000, capacity 6000)]
	// allocated 3000m to [default/web-1]
	// allocated 0m to []
}
