package snapshot

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A node's pod pointers and key hashes lie in one allocation, the hashes
// right after the pointers (up to 256 pods), in nodes grown by addPod and
// in copies made by cloneInto; contents stay in step.
func TestPodSlicesShareAllocation(t *testing.T) {
	ni := &NodeInfo{name: "n"}
	for k := range 300 {
		pi, err := NewPodInfo(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", k)}})
		require.NoError(t, err)
		ni.addPod(pi)
		c := ni.clone(1)
		for _, x := range []*NodeInfo{ni, c} {
			require.Len(t, x.pods, k+1)
			require.Len(t, x.podHashes, k+1)
			for i, p := range x.pods {
				require.Equal(t, p.keyHash, x.podHashes[i])
			}
			if cap(x.pods) <= 256 {
				end := unsafe.Add(unsafe.Pointer(unsafe.SliceData(x.pods)), cap(x.pods)*8)
				require.Equal(t, end, unsafe.Pointer(unsafe.SliceData(x.podHashes)), "%d pods: hashes do not follow the pod pointers", k+1)
				require.Equal(t, cap(x.pods), cap(x.podHashes))
			}
		}
	}
}

// A node's podIndexes and its spread groups lie in one allocation, the
// groups right after the podIndexes: in a node whose first pod was
// added (room for 2 groups) and in copies made by cloneInto (fresh, as a
// Cache makes them, with room for one group more, up to 8).
func TestPodIndexesShareAllocation(t *testing.T) {
	ni := &NodeInfo{name: "n"}
	for k := range 7 {
		// A pod of a new class (its labels differ) each time: k+1 groups.
		ni.addPod(MustPodInfo(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", k),
			Labels: map[string]string{"app": fmt.Sprint("a", k)}}}))
		c := ni.clone(1)
		for _, x := range []*NodeInfo{ni, c} {
			require.NotNil(t, x.idx)
			require.Len(t, x.idx.spreadGroups, k+1)
			if x == ni && k >= 2 {
				continue // grown by append past the 2 groups of its first allocation
			}
			after := unsafe.Add(unsafe.Pointer(x.idx), unsafe.Sizeof(podIndexes{}))
			require.Equal(t, after, unsafe.Pointer(unsafe.SliceData(x.idx.spreadGroups)), "%d groups: groups do not follow the podIndexes", k+1)
		}
		require.Equal(t, ni.idx.spreadGroups, c.idx.spreadGroups)
	}
}

// Every chunk slot's idx hint is its node's podIndexes once the node
// has been changed after it had them: in a Cache, in its snapshots, and
// in a Fork's layers, whose chunk copies take the hints along (a copy
// that dropped them would leave mutable nothing to start fetching).
func TestChunkIdxHints(t *testing.T) {
	c := NewCache()
	const nodes = 150 // three chunks
	for i := range nodes {
		require.NoError(t, c.UpdateNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("n", i)}}))
		for k := range 2 {
			require.NoError(t, c.AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i, "-", k)},
				Spec: v1.PodSpec{NodeName: fmt.Sprint("n", i)}}))
		}
	}
	check := func(name string, s *state) {
		t.Helper()
		for i := range s.n {
			ch, j := s.chunkAt(i>>chunkShift), i&chunkMask
			require.NotNil(t, ch.nodes[j].idx, "%s: node %d", name, i)
			require.Same(t, ch.nodes[j].idx, ch.idx[j], "%s: node %d", name, i)
		}
		// The last chunk's slots past the last node keep no hint (of a
		// removed node's indexes, which it would keep alive).
		if s.n&chunkMask != 0 {
			ch := s.chunkAt(s.n >> chunkShift)
			for j := s.n & chunkMask; j < chunkSize; j++ {
				require.Nil(t, ch.nodes[j], "%s: slot %d", name, j)
				require.Nil(t, ch.idx[j], "%s: slot %d", name, j)
			}
		}
	}
	snap := c.Snapshot()
	check("snapshot", &snap.st)
	f := snap.Fork()
	f.Fork()
	for i := 0; i < nodes; i += 7 {
		require.NoError(t, f.AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("f", i)}}, fmt.Sprint("n", i)))
	}
	check("fork layer", &f.st)
	require.NoError(t, f.RemoveNode("n3"))
	check("fork layer after a removal", &f.st)
	require.NoError(t, f.Revert())
	check("reverted fork", &f.st)
	require.NoError(t, c.AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "late"}, Spec: v1.PodSpec{NodeName: "n5"}}))
	check("cache after a snapshot", &c.st)
}
