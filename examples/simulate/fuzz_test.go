package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// FuzzPreparePod: for any GPU annotations the snapshot accepts, the pod
// prepared for scheduling (replay.NewInput) requests exactly its GPU demand as gpu-milli,
// and the pod a bind makes carries the chosen devices.
func FuzzPreparePod(f *testing.F) {
	f.Add("1", "470", "V100M16|V100M32", uint64(1))
	f.Add("2", "1000", "", uint64(0b101))
	f.Add("0", "0", "", uint64(0))
	f.Add("8", "", "T4", uint64(0xff))
	f.Add(" 3 ", "1001", "A10", uint64(0b111))
	f.Fuzz(func(t *testing.T, count, milli, models string, devs uint64) {
		pod := snapshottest.MakePod("p").Namespace("ns").Req("cpu", "1").Obj()
		pod.Annotations = map[string]string{openb.AnnotationGPUCount: count, openb.AnnotationGPUMilli: milli, openb.AnnotationGPUCardModel: models}
		pi, err := snapshot.DecodePodInfo(pod, openb.Devices)
		if err != nil {
			return
		}
		task := gpushare.TaskOf(pi)
		in, err := replay.NewInput(nil, []*v1.Pod{pod}, false, openb.Devices)
		require.NoError(t, err)
		prepared := in.Arrivals[0].Pod
		assert.Equal(t, task, gpushare.TaskOf(prepared))
		// gpu-milli is interned only once some pod requested it: in a fresh
		// process a pod without GPU demand leaves it unknown, and then it
		// requests none.
		if id, ok := snapshot.LookupResource(openb.ResourceGPUMilli); ok {
			assert.Equal(t, task.TotalMilliGPU(), prepared.Requested().Get(id))
		} else {
			assert.Zero(t, task.TotalMilliGPU(), "a pod with GPU demand requests gpu-milli, so it is interned")
		}
		set := gpushare.DeviceSet(devs)
		if !task.UsesGPU() || set.Len() != task.GPUCount {
			return
		}
		bound, err := snapshot.DecodePodInfo(boundPod(prepared.Pod(), "n", set), openb.Devices)
		require.NoError(t, err)
		got, ok := bound.Devices()
		assert.True(t, ok)
		assert.Equal(t, set, got)
	})
}

// FuzzSeeds: -shuffle values either fail or give seeds that print back
// to the same list.
func FuzzSeeds(f *testing.F) {
	for _, s := range []string{"42", "42-51", "1,5,9", "3-3", "9-3", "x", "1-1001", "18446744073709551615", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var seeds []uint64
		if err := (seedsFlag{&seeds}).Set(s); err != nil {
			return
		}
		require.NotEmpty(t, seeds)
		var again []uint64
		require.NoError(t, (seedsFlag{&again}).Set(seedsFlag{&seeds}.String()))
		assert.Equal(t, seeds, again)
	})
}
