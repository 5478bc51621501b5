package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

func gpuNode(name string, gpus string) *v1.Node {
	return st.MakeNode(name).Capacity("cpu", "96", "memory", "384Gi", "pods", "1001",
		"alibabacloud.com/gpu-count", gpus, "alibabacloud.com/gpu-milli", gpus+"000").
		Label(snapshot.LabelGPUModel, "V100M16").Obj()
}

func gpuPod(name, count, milli string) *st.PodWrapper {
	return st.MakePod(name).Req("cpu", "4", "memory", "8Gi").
		Annotation(snapshot.AnnotationGPUCount, count).Annotation(snapshot.AnnotationGPUMilli, milli)
}

func free(ni *snapshot.NodeInfo) []int64 {
	var out []int64
	for _, d := range ni.Devices() {
		out = append(out, d.FreeMilliGPU)
	}
	return out
}

func TestDeviceAccounting(t *testing.T) {
	c := st.Cache(t, []*v1.Node{gpuNode("g1", "2")})
	ni := c.Snapshot().Get("g1")
	require.Len(t, ni.Devices(), 2)
	assert.Equal(t, "V100M16", ni.Devices()[0].Model)
	assert.Equal(t, []int64{1000, 1000}, free(ni))

	// Without a gpu-index annotation a bound pod gets the best-fit device:
	// 500 on device 0 (both idle, lowest index); the next 500 goes on the
	// device with the least free milli-GPU that fits: device 0 again
	// (500 free < 1000); 600 then only fits device 1.
	require.NoError(t, c.AddPod(gpuPod("a", "1", "500").Node("g1").Obj()))
	require.NoError(t, c.AddPod(gpuPod("b", "1", "500").Node("g1").Obj()))
	require.NoError(t, c.AddPod(gpuPod("c", "1", "600").Node("g1").Obj()))
	s1 := c.Snapshot()
	assert.Equal(t, []int64{0, 400}, free(s1.Get("g1")))
	gs := s1.Get("g1").GPUState(nil)
	assert.True(t, gs.ResidentClasses.Has(0), "shared class present")
	assert.Equal(t, int64(96000-12000), gs.FreeMilliCPU)

	// Removing b frees its 500 on device 0.
	c.RemovePod(snapshot.PodKey{Namespace: "default", Name: "b"})
	assert.Equal(t, []int64{500, 400}, free(c.Snapshot().Get("g1")))
	assert.Equal(t, []int64{0, 400}, free(s1.Get("g1")), "old snapshot unchanged")

	// An explicit gpu-index is honoured; an update of the node keeps every
	// charge.
	require.NoError(t, c.AddPod(gpuPod("d", "1", "300").Annotation(snapshot.AnnotationGPUIndex, "1").Node("g1").Obj()))
	require.NoError(t, c.UpdateNode(gpuNode("g1", "2")))
	assert.Equal(t, []int64{500, 100}, free(c.Snapshot().Get("g1")))
}

func TestDeviceForkRevert(t *testing.T) {
	c := st.Cache(t, []*v1.Node{gpuNode("g1", "4")}, gpuPod("a", "2", "1000").Node("g1").Obj())
	snap := c.Snapshot()
	assert.Equal(t, []int64{0, 0, 1000, 1000}, free(snap.Get("g1")))
	f := snap.Fork()
	f.Fork()
	pi := snapshot.MustPodInfo(gpuPod("b", "1", "250").Obj()).WithDevices(gpushare.DeviceSet(0).With(3))
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
		{"count not a number", snapshot.AnnotationGPUCount, "two", "metadata.annotations[alibabacloud.com/gpu-count]"},
		{"negative milli", snapshot.AnnotationGPUMilli, "-5", "metadata.annotations[alibabacloud.com/gpu-milli]"},
		{"index count mismatch", snapshot.AnnotationGPUIndex, "0-1", "names 2 devices, the pod asks for 1"},
		{"index out of range", snapshot.AnnotationGPUIndex, "99", "metadata.annotations[alibabacloud.com/gpu-index]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := st.MakePod("p").Req("cpu", "1").Annotation(snapshot.AnnotationGPUCount, "1").Annotation(snapshot.AnnotationGPUMilli, "500")
			_, err := snapshot.NewPodInfo(w.Annotation(tc.key, tc.val).Obj())
			require.ErrorIs(t, err, snapshot.ErrInvalidObject)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "default/p")
		})
	}
}

func TestNvidiaWholeGPUs(t *testing.T) {
	n := st.MakeNode("n").Capacity("cpu", "32", "nvidia.com/gpu", "4").Label(snapshot.LabelNvidiaGPUModel, "A100").Obj()
	c := st.Cache(t, []*v1.Node{n}, st.MakePod("p").Req("cpu", "1", "nvidia.com/gpu", "3").Node("n").Obj())
	ni := c.Snapshot().Get("n")
	assert.Equal(t, []int64{0, 0, 0, 1000}, free(ni))
	assert.Equal(t, "A100", ni.Devices()[3].Model)
	task := ni.Pods()[0].Task()
	assert.Equal(t, 3, task.GPUCount)
}
