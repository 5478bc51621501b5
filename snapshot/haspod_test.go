package snapshot_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// HasPod, and AddPod's duplicate check, agree with a plain set through
// random adds and removes on one node (the NodeInfo skips its pod scan
// with a two-bit filter per key, rebuilt on every remove).
func TestHasPodMatchesSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := snapshot.NewCache()
	require.NoError(t, c.AddNode(st.MakeNode("n").Capacity("cpu", "1000", "memory", "1Ti", "pods", "100000").Obj()))
	f := c.Snapshot().Fork()
	pods := make([]*snapshot.PodInfo, 300)
	for i := range pods {
		pods[i] = snapshot.MustPodInfo(st.MakePod(fmt.Sprintf("p-%d", i)).Req("cpu", "1m").Obj())
	}
	on := map[snapshot.PodKey]bool{}
	for step := range 20000 {
		p := pods[rng.IntN(len(pods))]
		k := p.Key()
		if rng.IntN(2) == 0 {
			err := f.AddPodInfo(p, "n")
			if on[k] {
				require.ErrorIs(t, err, snapshot.ErrPodExists, "step %d: add of %s twice", step, k)
			} else {
				require.NoError(t, err, "step %d", step)
				on[k] = true
			}
		} else {
			err := f.RemovePod(k, "n")
			if on[k] {
				require.NoError(t, err, "step %d", step)
				delete(on, k)
			} else {
				require.ErrorIs(t, err, snapshot.ErrPodNotFound, "step %d", step)
			}
		}
		if step%97 == 0 {
			ni := f.Get("n")
			require.Equal(t, len(on), ni.NumPods())
			for _, q := range pods {
				require.Equal(t, on[q.Key()], ni.HasPod(q.Key()), "step %d: HasPod(%s)", step, q.Key())
			}
		}
	}
}
