package reserve_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestReserveZeroGPUMilli: a node with gpu-count 2 and gpu-milli 0 has no
// usable share; a 500m share pod does not fit it (issue 17, item 4).
func TestReserveZeroGPUMilli(t *testing.T) {
	l := newLedger(t, st.MakeNode("zero").Capacity("cpu", "8", "memory", "16Gi", "pods", "10",
		"alibabacloud.com/gpu-count", "2", "alibabacloud.com/gpu-milli", "0").Obj())
	pod := snapshot.MustPodInfo(st.MakePod("share").Req("cpu", "1").
		Annotation(snapshot.AnnotationGPUCount, "1").Annotation(snapshot.AnnotationGPUMilli, "500").Obj())
	milli, _ := snapshot.Intern(snapshot.ResourceGPUMilli)
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
	four := snapshot.MustPodInfo(st.MakePod("four").Req("cpu", "1", "nvidia.com/gpu", "4").Obj())
	reasons, err := l.Reserve(four, "ts")
	require.NoError(t, err)
	assert.Empty(t, reasons, "4 of the 63 left")
	// 128 - 65 - 4 = 59 left.
	reasons, err = l.Fits(snapshot.MustPodInfo(st.MakePod("sixty").Req("nvidia.com/gpu", "60").Obj()), "ts")
	require.NoError(t, err)
	require.Len(t, reasons, 1)
	assert.Equal(t, gpu, reasons[0].Resource)
	assert.Equal(t, int64(69), reasons[0].Used)
	assert.Equal(t, int64(128), reasons[0].Capacity)
}
