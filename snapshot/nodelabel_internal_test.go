package snapshot

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
