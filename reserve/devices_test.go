package reserve_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestReserveZeroGPUMilli: a node with gpu-count 2 and gpu-milli 0 has no
// usable share; a 500m share pod does not fit it (issue 17, item 4).
func TestReserveZeroGPUMilli(t *testing.T) {
	l := newLedger(t, st.MakeNode("zero").Capacity("cpu", "8", "memory", "16Gi", "pods", "10",
		"alibabacloud.com/gpu-count", "2", "alibabacloud.com/gpu-milli", "0").Obj())
	pod := openb.MustPodInfo(st.MakePod("share").Req("cpu", "1").
		Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, "500").Obj())
	milli, _ := snapshot.Intern(openb.ResourceGPUMilli)
	reasons, err := l.Reserve(pod, "zero")
	require.NoError(t, err)
	// requested 1 x 500; two devices of capacity 0.
	require.Len(t, reasons, 1)
	assert.Equal(t, milli, reasons[0].Resource)
	assert.Equal(t, int64(500), reasons[0].Requested)
	assert.Equal(t, int64(0), reasons[0].Capacity)
}

// TestReserveManyNvidiaGPUs: a 128-GPU time-slicing node and a 65-GPU pod
// load and are counted as the extended resource (issue 17, item 5).
func TestReserveManyNvidiaGPUs(t *testing.T) {
	l := newLedger(t, st.MakeNode("ts").Capacity("cpu", "64", "memory", "256Gi", "pods", "110", "nvidia.com/gpu", "128").Obj())
	require.NoError(t, l.AddPod(st.MakePod("big").Req("cpu", "1", "nvidia.com/gpu", "65").Node("ts").Obj()))
	gpu, ok := snapshot.LookupResource(snapshot.ResourceNvidiaGPU)
	require.True(t, ok)
	four := openb.MustPodInfo(st.MakePod("four").Req("cpu", "1", "nvidia.com/gpu", "4").Obj())
	reasons, err := l.Reserve(four, "ts")
	require.NoError(t, err)
	assert.Empty(t, reasons, "4 of the 63 left")
	// 128 - 65 - 4 = 59 left.
	reasons, err = l.Fits(openb.MustPodInfo(st.MakePod("sixty").Req("nvidia.com/gpu", "60").Obj()), "ts")
	require.NoError(t, err)
	require.Len(t, reasons, 1)
	assert.Equal(t, gpu, reasons[0].Resource)
	assert.Equal(t, int64(69), reasons[0].Used)
	assert.Equal(t, int64(128), reasons[0].Capacity)
}

// TestLedgerMakesNoDeviceChoice: without a chooser the ledger chooses no
// device. An annotated share without recorded devices cannot be held on
// a node with devices (an error, nothing held); a whole-GPU nvidia.com/gpu
// demand is held on no device (the kubelet's device plugin picks; the
// extended resource is counted); a bound pod reported without devices is
// charged to none. With WithDeviceChooser the chooser's devices are held
// and recorded, for holds and for bound pods alike.
func TestLedgerMakesNoDeviceChoice(t *testing.T) {
	gpuNode := st.MakeNode("g").Capacity("cpu", "32", "memory", "64Gi", "pods", "10",
		"alibabacloud.com/gpu-count", "2", "alibabacloud.com/gpu-milli", "2000").Label(openb.LabelGPUModel, "T4").Obj()
	nvidia := st.MakeNode("nv").Capacity("cpu", "32", "memory", "64Gi", "pods", "10", "nvidia.com/gpu", "2").Obj()
	share := func(name, milli string) *st.PodWrapper {
		return st.MakePod(name).Req("cpu", "1").Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, milli)
	}
	free := func(l *reserve.Ledger, node string) []int64 {
		var out []int64
		for _, d := range l.Snapshot().Get(node).Devices() {
			out = append(out, d.FreeMilliGPU)
		}
		return out
	}

	l := newLedger(t, gpuNode, nvidia)
	_, err := l.Reserve(openb.MustPodInfo(share("a", "300").Obj()), "g")
	require.ErrorIs(t, err, reserve.ErrInvalid)
	assert.Contains(t, err.Error(), "pod default/a asks for GPU devices on node g and records none")
	assert.Empty(t, l.Holds(), "nothing held")
	unfit, err := l.Reserve(openb.MustPodInfo(st.MakePod("w").Req("cpu", "1", "nvidia.com/gpu", "2").Obj()), "nv")
	require.NoError(t, err)
	require.Nil(t, unfit)
	assert.Equal(t, []int64{1000, 1000}, free(l, "nv"), "whole GPUs: held on no device")
	unfit, err = l.Reserve(openb.MustPodInfo(st.MakePod("w2").Req("cpu", "1", "nvidia.com/gpu", "1").Obj()), "nv")
	require.NoError(t, err)
	require.Len(t, unfit, 1, "the extended resource is counted")
	require.NoError(t, l.AddPod(share("b", "300").Node("g").Obj()))
	assert.Equal(t, []int64{1000, 1000}, free(l, "g"), "bound without devices: charged to none")

	// With a chooser: best fit, for holds and bound pods.
	l = reserve.New(reserve.WithDeviceDecoder(openb.Devices), reserve.WithDeviceChooser(gpushare.BestFit{}))
	require.NoError(t, l.AddNode(gpuNode))
	require.NoError(t, l.AddPod(share("b", "300").Node("g").Obj()))
	assert.Equal(t, []int64{700, 1000}, free(l, "g"), "bound pod on the chooser's device 0")
	pi := openb.MustPodInfo(share("a", "600").Obj())
	unfit, err = l.Reserve(pi, "g")
	require.NoError(t, err)
	require.Nil(t, unfit)
	// best fit: device 0 has 700 free (< 1000) and takes 600.
	assert.Equal(t, []int64{100, 1000}, free(l, "g"))
	held := l.Holds()
	require.Len(t, held, 1)
	devs, ok := held[0].Pod.Devices()
	require.True(t, ok, "the hold records the chooser's devices")
	assert.Equal(t, snapshot.DeviceSet(0).With(0), devs)
	// A bound pod reported before its node is placed when the node comes.
	l = reserve.New(reserve.WithDeviceDecoder(openb.Devices), reserve.WithDeviceChooser(gpushare.BestFit{}))
	require.NoError(t, l.AddPod(share("early", "400").Node("g").Obj()))
	require.NoError(t, l.AddNode(gpuNode))
	assert.Equal(t, []int64{600, 1000}, free(l, "g"))
}

// TestJournalKeepsDevices: a hold's devices chosen outside the pod object
// (the framework's or the ledger's choice) survive a journal replay, so a
// replayed ledger charges the same devices.
func TestJournalKeepsDevices(t *testing.T) {
	node := st.MakeNode("g").Capacity("cpu", "32", "memory", "64Gi", "pods", "10",
		"alibabacloud.com/gpu-count", "4", "alibabacloud.com/gpu-milli", "4000").Obj()
	l := newLedger(t, node)
	var buf bytes.Buffer
	require.NoError(t, l.SetJournal(&buf))
	pi := openb.MustPodInfo(st.MakePod("p").Req("cpu", "1").
		Annotation(openb.AnnotationGPUCount, "2").Annotation(openb.AnnotationGPUMilli, "500").Obj()).
		WithDevices(snapshot.DeviceSet(0).With(1).With(3))
	unfit, err := l.Reserve(pi, "g")
	require.NoError(t, err)
	require.Nil(t, unfit)

	r := newLedger(t, node)
	_, err = r.Replay(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	var free []int64
	for _, d := range r.Snapshot().Get("g").Devices() {
		free = append(free, d.FreeMilliGPU)
	}
	assert.Equal(t, []int64{1000, 500, 1000, 500}, free)
	assert.Contains(t, buf.String(), `"devices":[1,3]`)
}
