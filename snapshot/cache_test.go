package snapshot_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

func TestCacheEvents(t *testing.T) {
	c := snapshot.NewCache()
	// A pod may arrive before its node: it waits outside snapshots.
	require.NoError(t, c.AddPod(st.MakePod("early").Req("cpu", "500m").Node("n1").Obj()))
	assert.Equal(t, 0, c.Snapshot().NumNodes())
	require.NoError(t, c.AddNode(st.MakeNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "10").Obj()))
	require.NoError(t, c.AddNode(st.MakeNode("n2").Capacity("cpu", "4", "memory", "8Gi", "pods", "10").Obj()))
	s1 := c.Snapshot()
	require.Equal(t, 2, s1.NumNodes())
	assert.Equal(t, int64(500), s1.Get("n1").Requested().MilliCPU(), "early pod joined n1")

	// An update may move a pod created again (a new uid): 500m leaves n1,
	// 700m lands on n2.
	again := st.MakePod("early").Req("cpu", "700m").Node("n2").Obj()
	again.UID += "-2"
	require.NoError(t, c.UpdatePod(again))
	s2 := c.Snapshot()
	assert.Equal(t, int64(0), s2.Get("n1").Requested().MilliCPU())
	assert.Equal(t, int64(700), s2.Get("n2").Requested().MilliCPU())
	// The earlier snapshot is unchanged.
	assert.Equal(t, int64(500), s1.Get("n1").Requested().MilliCPU())
	assert.Equal(t, int64(0), s1.Get("n2").Requested().MilliCPU())

	// Removing an unknown pod is a no-op.
	assert.False(t, c.RemovePod(snapshot.PodKey{Namespace: "default", Name: "ghost"}))

	// Removing a node with pods keeps the pods until the node returns.
	require.NoError(t, c.RemoveNode("n2"))
	assert.Nil(t, c.Snapshot().Get("n2"))
	assert.Equal(t, 1, c.NumPods())
	require.NoError(t, c.AddNode(st.MakeNode("n2").Capacity("cpu", "8").Obj()))
	assert.Equal(t, int64(700), c.Snapshot().Get("n2").Requested().MilliCPU())

	require.ErrorIs(t, c.RemoveNode("nope"), snapshot.ErrNodeNotFound)
	// An unbound pod is the scheduling queue's, not the cache's: ignored.
	require.NoError(t, c.AddPod(st.MakePod("unbound").Obj()))
	assert.Equal(t, 1, c.NumPods())
	// An unbound report of a bound pod is an error: spec.nodeName cannot
	// be cleared.
	err := c.UpdatePod(st.MakePod("early").Req("cpu", "700m").Obj())
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	assert.Contains(t, err.Error(), "default/early: spec.nodeName is empty, but the pod is bound to node n2")
	// A pod that terminated is gone.
	done := st.MakePod("early").Req("cpu", "700m").Node("n2").Obj()
	done.Status.Phase = v1.PodSucceeded
	require.NoError(t, c.UpdatePod(done))
	assert.Equal(t, 0, c.NumPods())
	assert.Equal(t, int64(0), c.Snapshot().Get("n2").Requested().MilliCPU())
}

func TestCacheBadInputChangesNothing(t *testing.T) {
	c := st.Cache(t, []*v1.Node{st.MakeNode("n1").Capacity("cpu", "4").Obj()},
		st.MakePod("a").Req("cpu", "1").Node("n1").Obj())
	before := viewOf(t, c.Snapshot())

	err := c.AddPod(st.MakePod("a").Req("cpu", "-2").Node("n1").Obj())
	require.ErrorIs(t, err, snapshot.ErrNegativeQuantity)
	assert.Contains(t, err.Error(), "default/a")

	bad := st.MakeNode("n1").Obj()
	bad.Status.Allocatable = st.List("memory", "-1Gi")
	err = c.UpdateNode(bad)
	require.ErrorIs(t, err, snapshot.ErrNegativeQuantity)
	assert.Contains(t, err.Error(), "node n1: status.allocatable")

	require.ErrorIs(t, c.AddNode(&v1.Node{}), snapshot.ErrInvalidObject)
	assert.Equal(t, before, viewOf(t, c.Snapshot()))
}

func TestAllocatableShrinksBelowRequested(t *testing.T) {
	// 8000m node with 6000m of running pods; the kubelet shrinks
	// allocatable to 4000m. Requested stays 6000m; Free reads 0, not -2000.
	c := st.Cache(t, []*v1.Node{st.MakeNode("n1").Capacity("cpu", "8000m").Obj()},
		st.MakePod("a").Req("cpu", "3000m").Node("n1").Obj(),
		st.MakePod("b").Req("cpu", "3000m").Node("n1").Obj())
	require.NoError(t, c.UpdateNode(st.MakeNode("n1").Capacity("cpu", "4000m").Obj()))
	ni := c.Snapshot().Get("n1")
	assert.Equal(t, int64(4000), ni.Allocatable().MilliCPU())
	assert.Equal(t, int64(6000), ni.Requested().MilliCPU())
	assert.Equal(t, int64(0), ni.Free(snapshot.CPU))
	assert.Equal(t, 2, ni.NumPods())
}

func TestHugeRequestSaturatesAndDoesNotFit(t *testing.T) {
	// 50E bytes saturates to MaxInt64; it cannot fit the 8Gi node and the
	// node's totals stay at MaxInt64 instead of wrapping negative.
	c := st.Cache(t, []*v1.Node{st.MakeNode("n1").Capacity("memory", "8Gi").Obj()},
		st.MakePod("huge").Req("memory", "50E").Node("n1").Obj(),
		st.MakePod("huge2").Req("memory", "50E").Node("n1").Obj())
	ni := c.Snapshot().Get("n1")
	assert.Equal(t, int64(math.MaxInt64), ni.Requested().Memory())
	assert.Greater(t, ni.Requested().Memory(), ni.Allocatable().Memory())
	assert.Equal(t, int64(0), ni.Free(snapshot.Memory))
}

func TestImageNumNodes(t *testing.T) {
	c := st.Cache(t, []*v1.Node{
		st.MakeNode("n1").Image(300<<20, "nginx:1.27", "docker.io/library/nginx:1.27").Obj(),
		st.MakeNode("n2").Image(300<<20, "nginx:1.27").Obj(),
		st.MakeNode("n3").Obj(),
	})
	s := c.Snapshot()
	assert.Equal(t, 2, s.ImageNumNodes("nginx:1.27"))
	assert.Equal(t, 1, s.ImageNumNodes("docker.io/library/nginx:1.27"))
	size, ok := s.Get("n1").ImageSize("nginx:1.27")
	assert.True(t, ok)
	assert.Equal(t, int64(300<<20), size)
	require.NoError(t, c.RemoveNode("n1"))
	assert.Equal(t, 1, c.Snapshot().ImageNumNodes("nginx:1.27"))
	assert.Equal(t, 2, s.ImageNumNodes("nginx:1.27"), "old snapshot unchanged")
}

func TestHostPorts(t *testing.T) {
	c := st.Cache(t, []*v1.Node{st.MakeNode("n1").Obj()},
		st.MakePod("a").HostPort("", 8080).Node("n1").Obj(),
		st.MakePod("b").HostPort("10.0.0.1", 9090).Node("n1").Obj())
	ni := c.Snapshot().Get("n1")
	tcp := v1.ProtocolTCP
	assert.True(t, ni.PortConflict(snapshot.HostPort{IP: "10.0.0.2", Protocol: tcp, Port: 8080}), "0.0.0.0 conflicts with any IP")
	assert.True(t, ni.PortConflict(snapshot.HostPort{IP: "0.0.0.0", Protocol: tcp, Port: 9090}))
	assert.False(t, ni.PortConflict(snapshot.HostPort{IP: "10.0.0.2", Protocol: tcp, Port: 9090}))
	assert.False(t, ni.PortConflict(snapshot.HostPort{IP: "0.0.0.0", Protocol: v1.ProtocolUDP, Port: 8080}))
}

// TestCacheRefusesSamePodOnAnotherNode: a bound pod reported on another
// node with the same metadata.uid moved silently; spec.nodeName cannot
// change (upstream's scheduler cache, cacheImpl.UpdatePod, takes it as
// corruption and exits), so it is an error naming the pod, spec.nodeName
// and both nodes, and the cache is unchanged — through AddPod, UpdatePod
// and AddPodInfo, with full and lean records, for a pod counted on its
// node and one kept for an absent node. The pod created again (a new
// uid: a delete and an add merged into one update) moves.
func TestCacheRefusesSamePodOnAnotherNode(t *testing.T) {
	for _, lean := range []bool{false, true} {
		var opts []snapshot.CacheOption
		if lean {
			opts = append(opts, snapshot.LeanPods())
		}
		c := snapshot.NewCache(opts...)
		for _, n := range []string{"n1", "n2"} {
			require.NoError(t, c.AddNode(st.MakeNode(n).Capacity("cpu", "4", "memory", "8Gi", "pods", "10").Obj()))
		}
		require.NoError(t, c.AddPod(st.MakePod("p").Req("cpu", "500m").Node("n1").Obj()))
		require.NoError(t, c.AddPod(st.MakePod("early").Req("cpu", "1").Node("n3").Obj())) // n3 not yet known
		before := c.Snapshot()
		for name, report := range map[string]func() error{
			"UpdatePod":  func() error { return c.UpdatePod(st.MakePod("p").Req("cpu", "500m").Node("n2").Obj()) },
			"AddPod":     func() error { return c.AddPod(st.MakePod("p").Req("cpu", "700m").Node("n2").Obj()) },
			"AddPodInfo": func() error { return c.AddPodInfo(snapshot.MustPodInfo(st.MakePod("p").Node("n2").Obj())) },
			"kept pod":   func() error { return c.UpdatePod(st.MakePod("early").Req("cpu", "1").Node("n1").Obj()) },
		} {
			err := report()
			require.ErrorIs(t, err, snapshot.ErrInvalidObject, "%s lean=%v", name, lean)
			assert.Contains(t, err.Error(), "spec.nodeName", name)
			if name == "kept pod" {
				assert.Contains(t, err.Error(), "pod default/early (uid pod-early): spec.nodeName: reported on node n1, but the pod is bound to node n3", name)
			} else {
				assert.Contains(t, err.Error(), "pod default/p (uid pod-p): spec.nodeName: reported on node n2, but the pod is bound to node n1", name)
			}
			after := c.Snapshot()
			assert.Equal(t, int64(500), after.Get("n1").Requested().MilliCPU(), "%s lean=%v: unchanged", name, lean)
			assert.Equal(t, int64(0), after.Get("n2").Requested().MilliCPU(), "%s lean=%v: unchanged", name, lean)
			assert.Equal(t, before.NumNodes(), after.NumNodes())
			at, ok := c.PodNode(snapshot.PodKey{Namespace: "default", Name: "p"})
			assert.True(t, ok)
			assert.Equal(t, "n1", at, name)
		}
		// The same node, the same uid: an update.
		require.NoError(t, c.UpdatePod(st.MakePod("p").Req("cpu", "600m").Node("n1").Obj()))
		assert.Equal(t, int64(600), c.Snapshot().Get("n1").Requested().MilliCPU())
		// Created again: a new uid moves it.
		again := st.MakePod("p").Req("cpu", "700m").Node("n2").Obj()
		again.UID = "pod-p-2"
		require.NoError(t, c.UpdatePod(again))
		s := c.Snapshot()
		assert.Equal(t, int64(0), s.Get("n1").Requested().MilliCPU())
		assert.Equal(t, int64(700), s.Get("n2").Requested().MilliCPU())
		// Deleted first, it may come back anywhere.
		require.True(t, c.RemovePod(snapshot.PodKey{Namespace: "default", Name: "p"}))
		require.NoError(t, c.AddPod(st.MakePod("p").Req("cpu", "500m").Node("n1").Obj()))
	}
}
