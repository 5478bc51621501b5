package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

func affinityNames(ni *snapshot.NodeInfo) []string {
	var out []string
	for _, p := range ni.PodsWithAffinity() {
		out = append(out, p.Key().Name)
	}
	return out
}

func antiPod(name, node string) *v1.Pod {
	p := snapshottest.MakePod(name).Label("app", name).Node(node).Obj()
	p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{}}
	return p
}

// TestPodsWithAffinity: the per-node list holds exactly the pods with pod
// (anti-)affinity (node affinity does not count), through Cache
// add/remove, and two Forks of one snapshot adding to the same node do
// not see each other's pods (the list's backing array is shared, never
// written in place); Revert restores, Commit keeps.
func TestPodsWithAffinity(t *testing.T) {
	plain := snapshottest.MakePod("plain").Node("n1").RequiredNodeAffinity("k", v1.NodeSelectorOpExists).Obj()
	// Three pods: an append-grown list would have spare capacity.
	snap := snapshottest.Snapshot(t, []*v1.Node{snapshottest.MakeNode("n1").Obj()}, antiPod("b0", "n1"), antiPod("c0", "n1"), antiPod("a0", "n1"), plain)
	require.Equal(t, []string{"b0", "c0", "a0"}, affinityNames(snap.Get("n1")))

	f1, f2 := snap.Fork(), snap.Fork()
	require.NoError(t, f1.AddPod(antiPod("a1", "n1"), "n1"))
	require.NoError(t, f2.AddPod(antiPod("a2", "n1"), "n1"))
	assert.Equal(t, []string{"b0", "c0", "a0", "a1"}, affinityNames(f1.Get("n1")))
	assert.Equal(t, []string{"b0", "c0", "a0", "a2"}, affinityNames(f2.Get("n1")))
	assert.Equal(t, []string{"b0", "c0", "a0"}, affinityNames(snap.Get("n1")))

	f1.Fork()
	require.NoError(t, f1.RemovePod(snapshot.PodKey{Namespace: "default", Name: "a0"}, "n1"))
	assert.Equal(t, []string{"b0", "c0", "a1"}, affinityNames(f1.Get("n1")))
	assert.Equal(t, []string{"b0", "c0", "a0", "a2"}, affinityNames(f2.Get("n1")))
	require.NoError(t, f1.Revert())
	assert.Equal(t, []string{"b0", "c0", "a0", "a1"}, affinityNames(f1.Get("n1")))
	require.NoError(t, f1.RemovePod(snapshot.PodKey{Namespace: "default", Name: "plain"}, "n1"))
	assert.Equal(t, []string{"b0", "c0", "a0", "a1"}, affinityNames(f1.Get("n1")))
	assert.Equal(t, []string{"b0", "c0", "a0"}, affinityNames(snap.Get("n1")))

	c := snapshot.NewCache()
	require.NoError(t, c.AddNode(snapshottest.MakeNode("n1").Obj()))
	require.NoError(t, c.AddPod(antiPod("a0", "n1")))
	require.NoError(t, c.AddPod(antiPod("a1", "n1")))
	require.True(t, c.RemovePod(snapshot.PodKey{Namespace: "default", Name: "a0"}))
	assert.Equal(t, []string{"a1"}, affinityNames(c.Snapshot().Get("n1")))
}
