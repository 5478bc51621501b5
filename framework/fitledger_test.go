package framework

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestFitReasonsAgreeWithLedger pins the one fit check: on random nodes
// with bound pods, NodeResourcesFit (prepared filter and fused fast path)
// and the ledger's Fits report the same reasons, value for value — the
// ledger's converted as Scheduler.Schedule converts them — and the same
// verdict. Nodes include ones that admit no pod (Too many pods is never
// Unresolvable, as upstream's fitsRequest) and ones over-committed past
// their allocatable.
func TestFitReasonsAgreeWithLedger(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 3))
	pick := func(vs ...string) string { return vs[rng.IntN(len(vs))] }
	for round := range 40 {
		var nodes []*v1.Node
		var bound []*v1.Pod
		l := reserve.New()
		for i := range 6 {
			name := fmt.Sprintf("n%d", i)
			kv := []string{"cpu", pick("1", "2", "4"), "memory", pick("1Gi", "4Gi"), "pods", pick("0", "1", "2", "3", "110"),
				"ephemeral-storage", pick("0", "10Gi")}
			if rng.IntN(2) == 0 {
				kv = append(kv, "example.com/fpga", pick("0", "1", "2"))
			}
			n := snapshottest.MakeNode(name).Allocatable(kv...).Obj()
			nodes = append(nodes, n)
			require.NoError(t, l.AddNode(n))
			for j := range rng.IntN(4) {
				p := snapshottest.MakePod(fmt.Sprintf("b-%d-%d", i, j)).Node(name).
					Req("cpu", pick("100m", "1", "2"), "memory", pick("0", "512Mi", "2Gi")).Obj()
				bound = append(bound, p)
				require.NoError(t, l.AddPod(p))
			}
		}
		snap := snapshottest.Snapshot(t, nodes, bound...)
		for k := range 10 {
			kv := []string{"cpu", pick("0", "100m", "1500m", "3"), "memory", pick("0", "1Gi", "3Gi")}
			if rng.IntN(3) == 0 {
				kv = append(kv, "ephemeral-storage", pick("1Gi", "20Gi"))
			}
			if rng.IntN(3) == 0 {
				kv = append(kv, "example.com/fpga", pick("1", "3"))
			}
			pi := snapshot.MustPodInfo(snapshottest.MakePod(fmt.Sprintf("p-%d-%d", round, k)).Req(kv...).Obj())
			res, err := (&nodeResourcesFitPlugin{}).PreFilter(pi)
			require.NoError(t, err)
			ff := &fusedFilter{fit: res.Filter.(*fitFilter)}
			for _, ni := range snap.Nodes() {
				got := res.Filter.Filter(ni, nil)
				unfit, err := l.Fits(pi, ni.Name())
				require.NoError(t, err)
				var want []Reason
				for _, in := range unfit {
					want = append(want, insufficientReason(in))
				}
				require.Equal(t, want, got, "round %d pod %v node %s", round, kv, ni.Name())
				require.Equal(t, len(unfit) == 0, ff.fits(ni), "fused fits: round %d pod %v node %s", round, kv, ni.Name())
			}
		}
	}
}
