package snapshot_test

import (
	"fmt"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// A Cache is fed informer-style events; each Snapshot is an immutable view.
func ExampleCache() {
	c := snapshot.NewCache()
	_ = c.AddNode(st.MakeNode("node-a").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj())
	_ = c.AddPod(st.MakePod("web-1").Req("cpu", "1500m", "memory", "2Gi").Node("node-a").Obj())
	// A sidecar (restartable init container) runs beside the main container.
	_ = c.AddPod(st.MakePod("web-2").Sidecar("cpu", "500m").Req("cpu", "1000m").Node("node-a").Obj())

	snap := c.Snapshot()
	ni := snap.Get("node-a")
	fmt.Println("pods:", ni.NumPods())
	fmt.Println("requested cpu (milli):", ni.Requested().MilliCPU())
	fmt.Println("free cpu (milli):", ni.Free(snapshot.CPU))
	// Output:
	// pods: 2
	// requested cpu (milli): 3000
	// free cpu (milli): 1000
}

// Iterating a Snapshot allocates nothing.
func ExampleSnapshot() {
	c := snapshot.NewCache()
	for _, name := range []string{"n1", "n2", "n3"} {
		_ = c.AddNode(st.MakeNode(name).Capacity("cpu", "8", "memory", "32Gi").Obj())
	}
	_ = c.AddPod(st.MakePod("p").Req("cpu", "2").Node("n2").Obj())
	snap := c.Snapshot()
	for i, ni := range snap.Nodes() {
		fmt.Printf("%d %s free=%dm\n", i, ni.Name(), ni.Free(snapshot.CPU))
	}
	// Output:
	// 0 n1 free=8000m
	// 1 n2 free=6000m
	// 2 n3 free=8000m
}

// A Fork answers "what if": add a node and pods, look, then Revert.
func ExampleFork() {
	c := snapshot.NewCache()
	_ = c.AddNode(st.MakeNode("n1").Capacity("cpu", "4").Obj())
	snap := c.Snapshot()

	f := snap.Fork()
	f.Fork() // open a layer we may throw away
	_ = f.AddNode(st.MakeNode("scale-up-1").Capacity("cpu", "16").Obj())
	_ = f.AddPod(st.MakePod("batch").Req("cpu", "12").Obj(), "scale-up-1")
	fmt.Println("in the fork:", f.NumNodes(), "nodes;", f.Get("scale-up-1").Free(snapshot.CPU), "m free on scale-up-1")
	_ = f.Revert()
	fmt.Println("after Revert:", f.NumNodes(), "node")
	fmt.Println("the snapshot never changed:", snap.NumNodes(), "node")
	// Output:
	// in the fork: 2 nodes; 4000 m free on scale-up-1
	// after Revert: 1 node
	// the snapshot never changed: 1 node
}
