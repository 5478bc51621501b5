package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

func gpuNode(name string, gpus string) *v1.Node {
	return st.MakeNode(name).Capacity("cpu", "96", "memory", "384Gi", "pods", "1001",
		"alibabacloud.com/gpu-count", gpus, "alibabacloud.com/gpu-milli", gpus+"000").
		Label(openb.LabelGPUModel, "V100M16").Obj()
}

func gpuPod(name, count, milli string) *st.PodWrapper {
	return st.MakePod(name).Req("cpu", "4", "memory", "8Gi").
		Annotation(openb.AnnotationGPUCount, count).Annotation(openb.AnnotationGPUMilli, milli)
}

func free(ni *snapshot.NodeInfo) []int64 {
	var out []int64
	for _, d := range ni.Devices() {
		out = append(out, d.FreeMilliGPU)
	}
	return out
}

func TestDeviceAccounting(t *testing.T) {
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNode("g1", "2")})
	ni := c.Snapshot().Get("g1")
	require.Len(t, ni.Devices(), 2)
	assert.Equal(t, "V100M16", ni.Devices()[0].Model)
	assert.Equal(t, []int64{1000, 1000}, free(ni))

	// The snapshot makes no device choice: a bound pod charges the
	// devices its gpu-index annotation names; without one it is counted
	// in the node's requests but charged to no device.
	idx := func(w *st.PodWrapper, i string) *st.PodWrapper { return w.Annotation(openb.AnnotationGPUIndex, i) }
	require.NoError(t, c.AddPod(idx(gpuPod("a", "1", "500"), "0").Node("g1").Obj()))
	require.NoError(t, c.AddPod(idx(gpuPod("b", "1", "500"), "0").Node("g1").Obj()))
	require.NoError(t, c.AddPod(idx(gpuPod("c", "1", "600"), "1").Node("g1").Obj()))
	s1 := c.Snapshot()
	assert.Equal(t, []int64{0, 400}, free(s1.Get("g1")))
	assert.Equal(t, int64(96000-12000), s1.Get("g1").Free(snapshot.CPU))
	require.NoError(t, c.AddPod(gpuPod("u", "1", "300").Node("g1").Obj()))
	u := c.Snapshot().Get("g1")
	assert.Equal(t, []int64{0, 400}, free(u), "no devices recorded: charged to none")
	assert.Equal(t, int64(96000-16000), u.Free(snapshot.CPU), "but its requests count")
	_, known := u.Pods()[len(u.Pods())-1].Devices()
	assert.False(t, known)
	c.RemovePod(snapshot.PodKey{Namespace: "default", Name: "u"})

	// Removing b frees its 500 on device 0.
	c.RemovePod(snapshot.PodKey{Namespace: "default", Name: "b"})
	assert.Equal(t, []int64{500, 400}, free(c.Snapshot().Get("g1")))
	assert.Equal(t, []int64{0, 400}, free(s1.Get("g1")), "old snapshot unchanged")

	// An update of the node keeps every charge.
	require.NoError(t, c.AddPod(idx(gpuPod("d", "1", "300"), "1").Node("g1").Obj()))
	require.NoError(t, c.UpdateNode(gpuNode("g1", "2")))
	assert.Equal(t, []int64{500, 100}, free(c.Snapshot().Get("g1")))
}

func TestDeviceForkRevert(t *testing.T) {
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNode("g1", "4")}, gpuPod("a", "2", "1000").Annotation(openb.AnnotationGPUIndex, "0-1").Node("g1").Obj())
	snap := c.Snapshot()
	assert.Equal(t, []int64{0, 0, 1000, 1000}, free(snap.Get("g1")))
	f := snap.Fork()
	f.Fork()
	pi := openb.MustPodInfo(gpuPod("b", "1", "250").Obj()).WithDevices(snapshot.DeviceSet(0).With(3))
	require.NoError(t, f.AddPodInfo(pi, "g1"))
	assert.Equal(t, []int64{0, 0, 1000, 750}, free(f.Get("g1")))
	require.NoError(t, f.Revert())
	assert.Equal(t, []int64{0, 0, 1000, 1000}, free(f.Get("g1")))
	assert.Equal(t, []int64{0, 0, 1000, 1000}, free(snap.Get("g1")))
}

func TestDeviceBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, key, val, want string
	}{
		{"count not a number", openb.AnnotationGPUCount, "two", "metadata.annotations[alibabacloud.com/gpu-count]"},
		{"negative milli", openb.AnnotationGPUMilli, "-5", "metadata.annotations[alibabacloud.com/gpu-milli]"},
		{"index count mismatch", openb.AnnotationGPUIndex, "0-1", "names 2 devices, the pod asks for 1"},
		{"index out of range", openb.AnnotationGPUIndex, "99", "metadata.annotations[alibabacloud.com/gpu-index]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := st.MakePod("p").Req("cpu", "1").Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, "500")
			_, err := snapshot.DecodePodInfo(w.Annotation(tc.key, tc.val).Obj(), openb.Devices)
			require.ErrorIs(t, err, snapshot.ErrInvalidObject)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "default/p")
		})
	}
}

// TestNvidiaWholeGPUs: the default decoder (snapshot.NvidiaDevices) reads
// nvidia.com/gpu as whole devices, and openb.Devices falls back to it,
// naming its own milli-GPU resource for the ledger's reasons.
func TestNvidiaWholeGPUs(t *testing.T) {
	n := st.MakeNode("n").Capacity("cpu", "32", "nvidia.com/gpu", "4").Label(snapshot.LabelNvidiaGPUModel, "A100").Obj()
	c := st.Cache(t, []*v1.Node{n})
	pod := st.MakePod("p").Req("cpu", "1", "nvidia.com/gpu", "3").Obj()
	pi := snapshot.MustPodInfo(pod)
	assert.Equal(t, snapshot.GPURequest{Count: 3, MilliGPU: 1000, Whole: true, CountResource: snapshot.ResourceNvidiaGPU}, *pi.GPU())
	assert.Equal(t, snapshot.GPURequest{Count: 3, MilliGPU: 1000, Whole: true, CountResource: snapshot.ResourceNvidiaGPU, MilliResource: openb.ResourceGPUMilli},
		*openb.MustPodInfo(pod).GPU())
	assert.Equal(t, free(st.CacheWithDevices(t, openb.Devices, []*v1.Node{n}).Snapshot().Get("n")), free(c.Snapshot().Get("n")), "openb falls back to nvidia.com/gpu on nodes")
	f := c.Snapshot().Fork()
	require.NoError(t, f.AddPodInfo(pi.WithDevices(snapshot.DeviceSet(0).With(0).With(1).With(2)), "n"))
	ni := f.Get("n")
	assert.Equal(t, []int64{0, 0, 0, 1000}, free(ni))
	assert.Equal(t, "A100", ni.Devices()[3].Model)
}

// TestZeroGPUMilli: a node reporting gpu-milli: 0 has devices of zero
// capacity (an explicit 0 is not an absent value, which would mean 1000
// per device); a share pod bound there charges nothing usable (issue 17,
// item 4).
func TestZeroGPUMilli(t *testing.T) {
	zero := st.MakeNode("z").Capacity("cpu", "32", "memory", "64Gi", "pods", "110",
		"alibabacloud.com/gpu-count", "2", "alibabacloud.com/gpu-milli", "0").Obj()
	absent := st.MakeNode("a").Capacity("cpu", "32", "memory", "64Gi", "pods", "110",
		"alibabacloud.com/gpu-count", "2").Obj()
	// 1 milli-GPU over 2 devices rounds down to 0 per device.
	tiny := st.MakeNode("t").Capacity("cpu", "32", "memory", "64Gi", "pods", "110",
		"alibabacloud.com/gpu-count", "2", "alibabacloud.com/gpu-milli", "1").Obj()
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{zero, absent, tiny})
	snap := c.Snapshot()
	for _, tc := range []struct {
		node string
		want []int64
	}{{"z", []int64{0, 0}}, {"a", []int64{1000, 1000}}, {"t", []int64{0, 0}}} {
		ni := snap.Get(tc.node)
		assert.Equal(t, tc.want, free(ni), "free milli-GPU of %s", tc.node)
		var caps []int64
		for _, d := range ni.Devices() {
			caps = append(caps, d.CapacityMilliGPU)
		}
		assert.Equal(t, tc.want, caps, "capacity of %s", tc.node)
	}
	for _, d := range snap.Get("z").Devices() {
		assert.Less(t, d.FreeMilliGPU, int64(500), "a 500m share fits no device of z")
	}
}

// TestManyNvidiaGPUs: more nvidia.com/gpu than the device model holds (64)
// is API-valid and falls back to scalar accounting: a 128-GPU node loads
// without devices, a 65-GPU pod loads without device demand and is
// counted as the extended resource (issue 17, item 5).
func TestManyNvidiaGPUs(t *testing.T) {
	n := st.MakeNode("ts").Capacity("cpu", "64", "memory", "256Gi", "pods", "110", "nvidia.com/gpu", "128").
		Label(snapshot.LabelNvidiaGPUModel, "A100").Obj()
	big := st.MakePod("big").Req("cpu", "1", "nvidia.com/gpu", "65").Obj()
	pi, err := snapshot.DecodePodInfo(big, openb.Devices)
	require.NoError(t, err)
	assert.Zero(t, pi.GPU().Count, "no device demand beyond 64")
	gpu, ok := snapshot.LookupResource(snapshot.ResourceNvidiaGPU)
	require.True(t, ok)
	assert.Equal(t, int64(65), pi.Requested().Get(gpu))

	c := snapshot.NewCacheWithDevices(openb.Devices)
	require.NoError(t, c.AddNode(n))
	bound := big.DeepCopy()
	bound.Spec.NodeName = "ts"
	require.NoError(t, c.AddPod(bound))
	small := st.MakePod("small").Req("cpu", "1", "nvidia.com/gpu", "4").Node("ts").Obj()
	require.NoError(t, c.AddPod(small))
	ni := c.Snapshot().Get("ts")
	assert.Empty(t, ni.Devices(), "128 GPUs: scalar accounting, no devices")
	assert.Equal(t, int64(128), ni.Allocatable().Get(gpu))
	assert.Equal(t, int64(69), ni.Requested().Get(gpu))
	assert.Equal(t, int64(59), ni.Free(gpu))

	// A whole-GPU demand may go there by scalar accounting, of an allowed
	// model or with none named; an annotated demand may not.
	sp := openb.MustPodInfo(st.MakePod("s").Req("nvidia.com/gpu", "4").Obj())
	assert.True(t, ni.ScalarGPUDemand(sp.GPU()))
	a100 := openb.MustPodInfo(st.MakePod("s").Req("nvidia.com/gpu", "4").Annotation(openb.AnnotationGPUModel, "H100|A100").Obj())
	assert.True(t, ni.ScalarGPUDemand(a100.GPU()))
	h100 := openb.MustPodInfo(st.MakePod("s").Req("nvidia.com/gpu", "4").Annotation(openb.AnnotationGPUModel, "H100").Obj())
	assert.False(t, ni.ScalarGPUDemand(h100.GPU()))
	assert.False(t, ni.ScalarGPUDemand(openb.MustPodInfo(gpuPod("share", "1", "500").Obj()).GPU()))
	// A node the device model holds is not scalar-accounted.
	small4 := st.CacheWithDevices(t, openb.Devices, []*v1.Node{st.MakeNode("n4").Capacity("cpu", "8", "nvidia.com/gpu", "4").Obj()}).Snapshot().Get("n4")
	assert.False(t, small4.ScalarGPUDemand(sp.GPU()))

	// Alibaba gpu-count beyond 64: no devices either.
	ali := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNode("ali", "100")}).Snapshot().Get("ali")
	assert.Empty(t, ali.Devices())
}
