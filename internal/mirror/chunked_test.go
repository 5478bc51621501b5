package mirror

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
)

// syncBytes returns the bytes a Sync allocates, averaged over rounds, when
// one node of an n-node list gained a pod since the last Sync (upstream's
// cycle after a pod was assumed).
func syncBytes(t *testing.T, n, rounds int) float64 {
	list := make([]*fakeNode, n)
	for i := range list {
		list[i] = newNode(fmt.Sprintf("n%d", i), "64", 1)
	}
	m := New(src, nil)
	_, err := m.Sync(list)
	require.NoError(t, err)
	pods := make([]*v1.Pod, rounds)
	for r := range rounds {
		pods[r] = pod(fmt.Sprintf("p%d", r), "10m")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for r := range rounds {
		list[(r*7919)%n].addPod(pods[r])
		if _, err := m.Sync(list); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(rounds)
}

// A Sync after one node changed in place allocates the same at 16,000
// nodes as at 1,000: the view it publishes shares the unchanged chunks of
// the position→entry array with the previous view instead of copying the
// whole array (it allocated 16 bytes per listed node before).
func TestSyncOneChangeAllocatesIndependentOfListLength(t *testing.T) {
	small, large := syncBytes(t, 1000, 40), syncBytes(t, 16000, 40)
	t.Logf("bytes per Sync: %.0f at 1,000 nodes, %.0f at 16,000", small, large)
	require.Less(t, large, 1.5*small+4096, "bytes per Sync grow with the list: %.0f at 1,000 nodes, %.0f at 16,000", small, large)
}

// Over random in-place changes to a list spanning several chunks (and
// occasional adds and removals), every entry the mirror looks up is the
// node a mirror synced from scratch with the same list holds, with the
// same pods: patched views agree with full rebuilds.
func TestPatchedViewsMatchFullRebuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 12))
	list := make([]*fakeNode, 3*256+17) // four chunks of 1<<chunkBits
	for i := range list {
		list[i] = newNode(fmt.Sprintf("n%d", i), "64", 1)
	}
	m := New(src, nil)
	next := len(list)
	for step := range 200 {
		switch k := rng.IntN(20); {
		case k == 0: // a node added: positions move
			list = append(list, newNode(fmt.Sprintf("n%d", next), "64", 1))
			next++
		case k == 1 && len(list) > 1: // a node removed
			i := rng.IntN(len(list))
			list = append(list[:i], list[i+1:]...)
		default: // pods added or removed on a few nodes, in place
			for range 1 + rng.IntN(4) {
				n := list[rng.IntN(len(list))]
				if len(n.pods) > 0 && rng.IntN(3) == 0 {
					n.pods = n.pods[1:]
					n.gen++
				} else {
					n.addPod(pod(fmt.Sprintf("p%d-%d", step, rng.Uint32()), "10m"))
				}
			}
		}
		got, err := m.Sync(list)
		require.NoError(t, err)
		fresh := New(src, nil)
		want, err := fresh.Sync(list)
		require.NoError(t, err)
		require.Equal(t, want.NumNodes(), got.NumNodes(), "step %d", step)
		for p, n := range list {
			ours, pos := m.lookup(n)
			require.NotNil(t, ours, "step %d: %s", step, n.node.Name)
			require.Equal(t, p, pos, "step %d: %s", step, n.node.Name)
			require.Same(t, got.Get(n.node.Name), ours, "step %d: %s", step, n.node.Name)
			w := fresh.Lookup(n)
			require.Equal(t, w.Requested(), ours.Requested(), "step %d: %s", step, n.node.Name)
			require.Equal(t, w.NumPods(), ours.NumPods(), "step %d: %s", step, n.node.Name)
		}
	}
}
