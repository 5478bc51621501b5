package whatif_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// randomCluster is a seeded cluster of n nodes of mixed shapes (some
// tainted, some labelled by zone) with pods bound to them.
func randomCluster(r *rand.Rand, n int) (nodes []*v1.Node, pods []*v1.Pod) {
	zones := []string{"a", "b", "c"}
	for i := range n {
		w := snapshottest.MakeNode(fmt.Sprintf("node-%d", i)).
			Capacity("cpu", fmt.Sprint(2+2*r.IntN(8)), "memory", fmt.Sprintf("%dGi", 4+4*r.IntN(16)), "pods", "110").
			Label("topology.kubernetes.io/zone", zones[r.IntN(len(zones))])
		if r.IntN(10) == 0 {
			w = w.Taint("dedicated", "gpu", v1.TaintEffectNoSchedule)
		}
		nodes = append(nodes, w.Obj())
		for j := range r.IntN(4) {
			pods = append(pods, snapshottest.MakePod(fmt.Sprintf("bound-%d-%d", i, j)).
				Req("cpu", fmt.Sprintf("%dm", 100*(1+r.IntN(10))), "memory", fmt.Sprintf("%dMi", 128*(1+r.IntN(8)))).
				Node(nodes[i].Name).Obj())
		}
	}
	return nodes, pods
}

// forkOf is a Fork of a snapshot holding nodes and pods, added in order.
func forkOf(t testing.TB, nodes []*v1.Node, pods []*v1.Pod) *snapshot.Fork {
	t.Helper()
	return snapshottest.Snapshot(t, nodes, pods...).Fork()
}

// loopPlacements is the reference: framework.Loop with a ledger fed the
// same nodes and pods, given pending pods in order; it returns each pod's
// node ("" when unschedulable) and diagnosis message, by pod name.
func loopPlacements(t testing.TB, cfg framework.Config, nodes []*v1.Node, bound, pending []*v1.Pod) (node, diag map[string]string) {
	t.Helper()
	ledger := reserve.New()
	for _, n := range nodes {
		require.NoError(t, ledger.AddNode(n))
	}
	for _, p := range bound {
		require.NoError(t, ledger.AddPod(p))
	}
	s, err := framework.New(cfg)
	require.NoError(t, err)
	loop := framework.NewLoop(s, ledger, func(context.Context, framework.Decision) error { return nil })
	for _, p := range pending {
		require.NoError(t, loop.Add(p))
	}
	attempts, err := loop.ScheduleAll(context.Background())
	require.NoError(t, err)
	node, diag = map[string]string{}, map[string]string{}
	for _, a := range attempts {
		node[a.Pod.Key().Name] = a.Node
		if a.Diagnosis != nil {
			diag[a.Pod.Key().Name] = a.Diagnosis.Message()
		}
	}
	return node, diag
}

// contentOf renders a fork's content (nodes in index order with their
// pods and requested vectors) for before/after comparisons.
func contentOf(f *snapshot.Fork) string {
	s := ""
	for i := range f.NumNodes() {
		n := f.Node(i)
		s += n.Name() + fmt.Sprint(n.Requested(), n.Node().Spec.Taints) + "["
		for _, p := range n.Pods() {
			s += p.Key().String() + ","
		}
		s += "]\n"
	}
	return s
}

// owned sets a controller owner on p.
func owned(p *v1.Pod, kind, name string) *v1.Pod {
	t := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(kind + "/" + name), Controller: &t}}
	return p
}
