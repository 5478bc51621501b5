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

// oneDevice is a DeviceDecoder of a made-up schema: a node labelled
// example.com/gpu has one device of 500 milli-GPU; a pod labelled
// example.com/gpu asks for 200 of it and records device 0.
type oneDevice struct{}

func (oneDevice) NodeDevices(node *v1.Node, _ *snapshot.Vector) []snapshot.Device {
	if node.Labels["example.com/gpu"] == "" {
		return nil
	}
	return []snapshot.Device{{Model: "X", CapacityMilliGPU: 500, FreeMilliGPU: 500}}
}

func (oneDevice) PodDevices(pod *v1.Pod, _ *snapshot.Vector) (snapshot.GPURequest, snapshot.DeviceSet, bool, error) {
	if pod.Labels["example.com/gpu"] == "" {
		return snapshot.GPURequest{}, 0, false, nil
	}
	return snapshot.GPURequest{Count: 1, MilliGPU: 200}, snapshot.DeviceSet(0).With(0), true, nil
}

// TestDeviceDecoder: the snapshot knows no trace schema; a Cache reads
// devices with the decoder it is made with, and its snapshots and forks
// (Fork.AddNode, Fork.AddPod) with the same one. The default decodes
// nvidia.com/gpu only: the openb annotations are no demand there.
func TestDeviceDecoder(t *testing.T) {
	node := st.MakeNode("n").Capacity("cpu", "8", "alibabacloud.com/gpu-count", "2").Label("example.com/gpu", "yes").Obj()
	pod := st.MakePod("p").Req("cpu", "1").Label("example.com/gpu", "yes").
		Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, "300").Node("n").Obj()

	def := st.Snapshot(t, []*v1.Node{node}, pod)
	assert.Equal(t, snapshot.NvidiaDevices, def.DeviceDecoder())
	assert.Nil(t, def.Get("n").Devices(), "no nvidia.com/gpu: no devices by default")
	assert.Zero(t, snapshot.MustPodInfo(pod).GPU().Count, "the openb annotations are no demand by default")

	ob := st.SnapshotWithDevices(t, openb.Devices, []*v1.Node{node}, pod)
	assert.Equal(t, []int64{1000, 1000}, free(ob.Get("n")), "openb: a pod without gpu-index is charged to no device")
	assert.Equal(t, 1, openb.MustPodInfo(pod).GPU().Count)

	c := snapshot.NewCacheWithDevices(oneDevice{})
	require.NoError(t, c.AddNode(node))
	require.NoError(t, c.AddPod(pod))
	snap := c.Snapshot()
	assert.Equal(t, oneDevice{}, snap.DeviceDecoder())
	assert.Equal(t, []int64{300}, free(snap.Get("n")), "Cache: 500 - 200")

	f := snap.Fork()
	assert.Equal(t, oneDevice{}, f.DeviceDecoder())
	n2 := node.DeepCopy()
	n2.Name = "n2"
	require.NoError(t, f.AddNode(n2, st.MakePod("q").Label("example.com/gpu", "yes").Obj()))
	assert.Equal(t, []int64{300}, free(f.Get("n2")), "Fork.AddNode decodes node and pods")
	require.NoError(t, f.AddPod(st.MakePod("r").Label("example.com/gpu", "yes").Obj(), "n2"))
	assert.Equal(t, []int64{100}, free(f.Get("n2")), "Fork.AddPod decodes the pod")
	assert.Equal(t, oneDevice{}, f.Snapshot().DeviceDecoder())
}

// TestRecordedDeviceBeyondNode: a bound pod recording a device its node
// does not have (gpu-index 7 on a 2-GPU node) is an error naming the pod,
// the device and the node, through the Cache, and changes nothing;
// before, its 700 milli-GPU was charged to no device.
func TestRecordedDeviceBeyondNode(t *testing.T) {
	c := snapshot.NewCacheWithDevices(openb.Devices)
	require.NoError(t, c.AddNode(st.MakeNode("g1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110",
		string(openb.ResourceGPUCount), "2", string(openb.ResourceGPUMilli), "2000").Obj()))
	pod := func(index string) *v1.Pod {
		return st.MakePod("gi").Req("cpu", "1").Annotation(openb.AnnotationGPUCount, "1").
			Annotation(openb.AnnotationGPUMilli, "700").Annotation(openb.AnnotationGPUIndex, index).Node("g1").Obj()
	}
	before := c.Snapshot()
	err := c.AddPod(pod("7"))
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	assert.Equal(t, "pod default/gi: records GPU device 7, node g1 has 2: snapshot: invalid object", err.Error())
	after := c.Snapshot()
	assert.Equal(t, before.Node(0).Devices(), after.Node(0).Devices())
	assert.Zero(t, after.Node(0).NumPods(), "the pod is not counted")

	// A Fork, like the Cache after an UpdateNode that removes devices,
	// counts such a pod and charges none of the node's devices.
	f := after.Fork()
	require.NoError(t, f.AddPod(pod("7"), "g1"))
	assert.Equal(t, before.Node(0).Devices(), f.Node(0).Devices())
	assert.Error(t, snapshot.CheckRecordedDevices(f.Node(0).Pods()[0], f.Node(0)))

	require.NoError(t, c.AddPod(pod("1")))
	assert.Equal(t, int64(300), c.Snapshot().Node(0).Devices()[1].FreeMilliGPU, "device 1: 1000 - 700")
}
