package schedkit_test

import (
	"fmt"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// How the pieces fit: informer events go into a reserve.Ledger (which
// keeps the snapshot.Cache-style state), a framework.Scheduler filters and
// scores a snapshot with the ledger's holds and reserves the chosen node;
// the caller binds and confirms.
func Example() {
	ledger := reserve.New()
	_ = ledger.AddNode(st.MakeNode("small").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj())
	_ = ledger.AddNode(st.MakeNode("large").Capacity("cpu", "16", "memory", "64Gi", "pods", "110").Obj())
	_ = ledger.AddPod(st.MakePod("db").Req("cpu", "3", "memory", "8Gi").Node("small").Obj())

	sched, err := framework.New(framework.Config{Seed: 1}) // upstream's default filters and score profile
	if err != nil {
		panic(err)
	}
	pod := snapshot.MustPodInfo(st.MakePod("web").Req("cpu", "2", "memory", "4Gi").Obj())
	d, err := sched.Schedule(ledger, pod) // filter → score → select → reserve
	if err != nil {
		panic(err)
	}
	fmt.Println("web ->", d.Node, "score", d.Total)
	// ... bind through the API server, then:
	_ = ledger.Confirm(pod.Key())

	big := snapshot.MustPodInfo(st.MakePod("batch").Req("cpu", "32").Obj())
	d, _ = sched.Schedule(ledger, big)
	fmt.Println("batch:", d.Diagnosis.Message())
	// Output:
	// web -> large score 463
	// batch: 0/2 nodes are available: 2 Insufficient cpu.
}
