package reserve_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// AddPodInfo turns a hold into a bound pod exactly once and keeps the
// devices the PodInfo records.
func TestAddPodInfo(t *testing.T) {
	l := reserve.New()
	require.NoError(t, l.AddNode(st.MakeNode("g").Capacity("cpu", "8", "memory", "16Gi", "pods", "10",
		"alibabacloud.com/gpu-count", "2", "alibabacloud.com/gpu-milli", "2000").Obj()))
	pi := snapshot.MustPodInfo(st.MakePod("p").Req("cpu", "2").
		Annotation(snapshot.AnnotationGPUCount, "1").Annotation(snapshot.AnnotationGPUMilli, "400").Obj()).
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
