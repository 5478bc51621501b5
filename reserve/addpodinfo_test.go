package reserve_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// AddPodInfo turns a hold into a bound pod exactly once and keeps the
// devices the PodInfo records.
func TestAddPodInfo(t *testing.T) {
	l := reserve.New(reserve.WithDeviceDecoder(openb.Devices))
	require.NoError(t, l.AddNode(st.MakeNode("g").Capacity("cpu", "8", "memory", "16Gi", "pods", "10",
		"alibabacloud.com/gpu-count", "2", "alibabacloud.com/gpu-milli", "2000").Obj()))
	pi := openb.MustPodInfo(st.MakePod("p").Req("cpu", "2").
		Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, "400").Obj()).
		WithDevices(gpushare.DeviceSet(0).With(1))
	unfit, err := l.Reserve(pi, "g")
	require.NoError(t, err)
	require.Nil(t, unfit)
	require.NoError(t, l.Confirm(pi.Key()))
	require.NoError(t, l.AddPodInfo(pi, "g"))
	require.NoError(t, l.AddPodInfo(pi, "g")) // reported twice: still once

	phase, node, ok := l.PodPhase(pi.Key())
	require.True(t, ok)
	assert.Equal(t, reserve.Bound, phase)
	assert.Equal(t, "g", node)
	u, _ := l.Usage("g")
	assert.Equal(t, int64(2000), u.Bound.MilliCPU(), "counted once")
	assert.Empty(t, l.Holds())
	ni := l.Snapshot().Get("g")
	assert.Equal(t, int64(1000), ni.Devices()[0].FreeMilliGPU)
	assert.Equal(t, int64(600), ni.Devices()[1].FreeMilliGPU, "device 1 as recorded")

	require.ErrorIs(t, l.AddPodInfo(nil, "g"), reserve.ErrInvalid)
	require.ErrorIs(t, l.AddPodInfo(pi, ""), reserve.ErrInvalid)
}

// Reserve checks devices: two holds racing for the same GPU share cannot
// both land, and a recorded device must have room.
func TestReserveChecksDevices(t *testing.T) {
	l := reserve.New(reserve.WithDeviceDecoder(openb.Devices), reserve.WithDeviceChooser(gpushare.BestFit{}))
	require.NoError(t, l.AddNode(st.MakeNode("g").Capacity("cpu", "32", "memory", "64Gi", "pods", "10",
		"alibabacloud.com/gpu-count", "2", "alibabacloud.com/gpu-milli", "2000").Label(openb.LabelGPUModel, "T4").Obj()))
	share := func(name, milli string) *st.PodWrapper {
		return st.MakePod(name).Req("cpu", "1").Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, milli)
	}
	on := func(pi *snapshot.PodInfo, dev int) *snapshot.PodInfo {
		return pi.WithDevices(gpushare.DeviceSet(0).With(dev))
	}

	// 700 on device 0, then 400 on device 0 does not fit (300 left) ...
	unfit, err := l.Reserve(on(openb.MustPodInfo(share("a", "700").Obj()), 0), "g")
	require.NoError(t, err)
	require.Nil(t, unfit)
	unfit, err = l.Reserve(on(openb.MustPodInfo(share("b", "400").Obj()), 0), "g")
	require.NoError(t, err)
	require.Len(t, unfit, 1)
	assert.Equal(t, openb.ResourceGPUMilli, unfit[0].Resource.Name())
	assert.Equal(t, int64(400), unfit[0].Requested)
	assert.Equal(t, int64(700), unfit[0].Used)
	assert.Equal(t, int64(2000), unfit[0].Capacity)
	// ... but does on device 1, and without a recorded device the
	// ledger's chooser (best fit) finds room; two whole GPUs then do not
	// fit.
	unfit, err = l.Reserve(on(openb.MustPodInfo(share("b", "400").Obj()), 1), "g")
	require.NoError(t, err)
	require.Nil(t, unfit)
	unfit, err = l.Reserve(openb.MustPodInfo(share("c", "300").Obj()), "g")
	require.NoError(t, err)
	require.Nil(t, unfit)
	unfit, err = l.Reserve(openb.MustPodInfo(st.MakePod("d").Req("cpu", "1").Annotation(openb.AnnotationGPUCount, "2").Obj()), "g")
	require.NoError(t, err)
	require.Len(t, unfit, 1, "two whole GPUs on a node with 1000 and 600 free")
	// A model the node lacks never fits.
	unfit, err = l.Reserve(openb.MustPodInfo(share("e", "100").Annotation(openb.AnnotationGPUModel, "A100").Obj()), "g")
	require.NoError(t, err)
	require.Len(t, unfit, 1)
	// Unreserve frees the device share for the next reserver: c went on
	// device 0 (best fit: 300 free there against 600 on device 1), so
	// device 0 has 1000 - 300 = 700 free once a's 700 is released.
	l.Unreserve(snapshot.PodKey{Namespace: "default", Name: "a"})
	unfit, err = l.Reserve(on(openb.MustPodInfo(share("f", "800").Obj()), 0), "g")
	require.NoError(t, err)
	require.Len(t, unfit, 1)
	unfit, err = l.Reserve(on(openb.MustPodInfo(share("f", "700").Obj()), 0), "g")
	require.NoError(t, err)
	require.Nil(t, unfit)
}
