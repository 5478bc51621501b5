package whatif_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
	"github.com/schedkit/schedkit/whatif"
)

// BenchmarkFitCount: copies of a 250m/512Mi pod on 5,000 random nodes
// (2–16 CPU, 0–3 bound pods), up to 10,000 copies, default profile.
func BenchmarkFitCount(b *testing.B) {
	b.Run("nodes=5000", func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 1))
		nodes, bound := randomCluster(r, 5000)
		f := forkOf(b, nodes, bound)
		tmpl := snapshottest.MakePod("small").Req("cpu", "250m", "memory", "512Mi").Obj()
		b.ReportAllocs()
		var n int
		for b.Loop() {
			res, err := whatif.FitCount(f, tmpl, 10000, framework.Config{Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			n = res.Count
		}
		b.ReportMetric(float64(n), "copies")
	})
}

// scaleUpInput: 10,000 pending pods of 40 ReplicaSets (100m–4 CPU,
// 128Mi–8Gi) and 10 node groups (2–64 CPU, 4–256Gi, 1,000 nodes each)
// over 100 full existing nodes.
func scaleUpInput() ([]*v1.Node, []*v1.Pod, []*v1.Pod, []whatif.NodeGroup) {
	r := rand.New(rand.NewPCG(2, 2))
	var nodes []*v1.Node
	var bound []*v1.Pod
	for i := range 100 {
		n := snapshottest.MakeNode(fmt.Sprint("old-", i)).Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj()
		nodes = append(nodes, n)
		bound = append(bound, snapshottest.MakePod(fmt.Sprint("full-", i)).Req("cpu", "4").Node(n.Name).Obj())
	}
	type shape struct{ cpu, mem string }
	var shapes []shape
	for range 40 {
		shapes = append(shapes, shape{fmt.Sprintf("%dm", 100*(1+r.IntN(40))), fmt.Sprintf("%dMi", 128*(1+r.IntN(64)))})
	}
	var pending []*v1.Pod
	for i := range 10000 {
		k := r.IntN(len(shapes))
		pending = append(pending, owned(snapshottest.MakePod(fmt.Sprint("p-", i)).Req("cpu", shapes[k].cpu, "memory", shapes[k].mem).Obj(), "ReplicaSet", fmt.Sprint("rs-", k)))
	}
	var groups []whatif.NodeGroup
	for i, c := range []int{2, 4, 8, 16, 32, 48, 64, 8, 16, 32} {
		groups = append(groups, whatif.NodeGroup{
			Name:     fmt.Sprint("g", i),
			Template: snapshottest.MakeNode("t").Capacity("cpu", fmt.Sprint(c), "memory", fmt.Sprintf("%dGi", c*(2+i%3)), "pods", "110").Obj(),
			MaxNodes: 1000,
		})
	}
	return nodes, bound, pending, groups
}

// BenchmarkScaleUp: 10,000 pending pods over 10 node groups.
func BenchmarkScaleUp(b *testing.B) {
	b.Run("pods=10000/groups=10", func(b *testing.B) {
		nodes, bound, pending, groups := scaleUpInput()
		f := forkOf(b, nodes, bound)
		b.ReportAllocs()
		var added int
		for b.Loop() {
			res, err := whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{Scheduler: framework.Config{Seed: 1}})
			if err != nil {
				b.Fatal(err)
			}
			added = res.Groups[res.Chosen].NodesAdded
		}
		b.ReportMetric(float64(added), "nodes-chosen")
	})
}

// drainInput: 1,000 nodes (2–16 CPU) each running 0–3 ReplicaSet pods.
func drainInput() ([]*v1.Node, []*v1.Pod, []string) {
	r := rand.New(rand.NewPCG(3, 3))
	nodes, bound := randomCluster(r, 1000)
	for i, p := range bound {
		bound[i] = owned(p, "ReplicaSet", fmt.Sprint("rs-", i%50))
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	return nodes, bound, names
}

// BenchmarkDrain: every node of a 1,000-node cluster, each alone
// (Drain), and the greedy removable subset of the same nodes
// (RemovableNodes).
func BenchmarkDrain(b *testing.B) {
	nodes, bound, names := drainInput()
	for _, q := range []struct {
		name string
		ask  func(*snapshot.Fork, []string, whatif.PDBLister, framework.Config) ([]whatif.NodeDrain, error)
	}{{"each", whatif.Drain}, {"greedy", whatif.RemovableNodes}} {
		b.Run("nodes=1000/"+q.name, func(b *testing.B) {
			f := forkOf(b, nodes, bound)
			b.ReportAllocs()
			var ok int
			for b.Loop() {
				res, err := q.ask(f, names, nil, framework.Config{Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				ok = 0
				for _, d := range res {
					if d.Removable {
						ok++
					}
				}
			}
			b.ReportMetric(float64(ok), "removable")
		})
	}
}
