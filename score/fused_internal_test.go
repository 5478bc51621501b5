package score

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// kernelNodes is n nodes whose cpu and memory allocatable are each absent,
// zero, tiny or realistic (about one node in four lacks one of them, as
// the parity generator's realistic nodes), with 0–4 bound pods, some
// without requests, some over-committing the node; huge adds nodes with
// an allocatable of 2^56 or more.
func kernelNodes(t *testing.T, r *rand.Rand, n int, huge bool) []*snapshot.NodeInfo {
	c := snapshot.NewCache()
	pick := func(id snapshot.ResourceID, real int64) (apiresource.Quantity, bool) {
		q := func(x int64) apiresource.Quantity {
			if id == snapshot.CPU {
				return *apiresource.NewMilliQuantity(x, apiresource.DecimalSI)
			}
			return *apiresource.NewQuantity(x, apiresource.BinarySI)
		}
		switch r.IntN(8) {
		case 0:
			return apiresource.Quantity{}, false
		case 1:
			return q(0), true
		case 2:
			return q(1 + r.Int64N(4)), true
		case 3:
			if huge {
				return q(fastMax + r.Int64N(fastMax)), true
			}
		}
		return q(1 + r.Int64N(real)), true
	}
	for i := range n {
		alloc := v1.ResourceList{}
		if q, ok := pick(snapshot.CPU, 96000); ok {
			alloc[v1.ResourceCPU] = q
		}
		if q, ok := pick(snapshot.Memory, 512<<30); ok {
			alloc[v1.ResourceMemory] = q
		}
		node := snapshottest.MakeNode(fmt.Sprintf("n%03d", i)).Obj()
		node.Status.Allocatable = alloc
		require.NoError(t, c.AddNode(node))
		for j := range r.IntN(5) {
			b := snapshottest.MakePod(fmt.Sprintf("p%d-%d", i, j)).Node(node.Name)
			if r.IntN(4) > 0 {
				b.Req("cpu", fmt.Sprintf("%dm", r.Int64N(16000)), "memory", fmt.Sprint(r.Int64N(64<<30)))
			}
			require.NoError(t, c.AddPod(b.Obj()))
		}
	}
	var nodes []*snapshot.NodeInfo
	for _, ni := range c.Snapshot().Nodes() {
		nodes = append(nodes, ni)
	}
	return nodes
}

// The fused pair's branch-free kernels (unitWeights, weighted) and
// cpuMemTotals give every node what the general per-node methods give
// (leastPod.node, balancedPod.node: upstream's rules, checked against its
// vectors elsewhere), nodes without cpu or memory allocatable included:
// the kernels divide by 1 there and mask what upstream leaves out.
func TestFusedKernelsMatchGeneralPath(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 30 {
		huge := round%3 == 2
		nodes := kernelNodes(t, r, 1+r.IntN(200), huge)
		la := &leastPod{fast: true, cpu: r.Int64N(4000), mem: r.Int64N(8 << 30), wc: 1, wm: 1}
		ba := &balancedPod{fast: true, cpu: la.cpu, mem: la.mem}
		if r.IntN(2) == 0 {
			la.wc, la.wm = 1+r.Int64N(100), 1+r.Int64N(100)
		}
		wLA, wBA := int64(1), int64(1)
		if r.IntN(2) == 0 {
			wLA, wBA = 1+r.Int64N(10), 1+r.Int64N(10)
		}
		want := make([]int64, len(nodes))
		for i, n := range nodes {
			cm := nodeview.CPUMemory(n)
			want[i] = wLA*la.node(cm) + wBA*ba.node(cm)
		}
		desc := fmt.Sprintf("round %d: pod %d/%d weights %d,%d × %d,%d", round, la.cpu, la.mem, la.wc, la.wm, wLA, wBA)
		got := make([]int64, len(nodes))
		lines := nodeview.CPUMemories(nodes)
		cpuMemTotals(lines, la, ba, wLA, wBA, got)
		require.Equal(t, want, got, "cpuMemTotals, %s", desc)
		if huge {
			continue // the kernels require allocatable < fastMax
		}
		k := newCPUMemPod(la, ba, wLA, wBA)
		clear(got)
		k.weighted(lines, got)
		require.Equal(t, want, got, "weighted, %s", desc)
		if la.wc == 1 && la.wm == 1 && wLA == 1 && wBA == 1 {
			clear(got)
			k.unitWeights(lines, got)
			require.Equal(t, want, got, "unitWeights, %s", desc)
		}
	}
}
