package snapshot

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A node's podIndexes and its spread groups lie in one allocation, the
// groups right after the podIndexes: in a node whose first pod was
// added (room for 2 groups) and in copies made by cloneInto (fresh, as a
// Cache makes them, with room for one group more, up to 8).
func TestPodIndexesShareAllocation(t *testing.T) {
	ni := &NodeInfo{name: "n"}
	for k := range 7 {
		// A pod of a new class (its labels differ) each time: k+1 groups.
		pi, err := NewPodInfo(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", k),
			Labels: map[string]string{"app": fmt.Sprint("a", k)}}})
		require.NoError(t, err)
		ni.addPod(pi)
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

// label reads the value NodeInfo.labels holds for a key: the node
// object's label, and none for a key the node lacks.
func TestNodeLabel(t *testing.T) {
	labels := map[string]string{v1.LabelHostname: "n1", v1.LabelTopologyZone: "z1", "a": "", "b/c": "d"}
	ni, err := newNodeInfo(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels}}, NvidiaDevices)
	require.NoError(t, err)
	for k, want := range labels {
		got, ok := ni.label(k)
		require.True(t, ok, k)
		require.Equal(t, want, got, k)
	}
	for _, k := range []string{"", "zone", "b", v1.LabelHostname + "x"} {
		_, ok := ni.label(k)
		require.False(t, ok, k)
	}
	empty, err := newNodeInfo(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, NvidiaDevices)
	require.NoError(t, err)
	_, ok := empty.label(v1.LabelHostname)
	require.False(t, ok)
}
