package replay_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// FuzzNewInputGPU: for any GPU annotations the snapshot accepts, NewInput
// keeps the pod's task, requests exactly its GPU demand as gpu-milli and
// leaves the input pod as it was; annotations the snapshot refuses are an
// ErrInput.
func FuzzNewInputGPU(f *testing.F) {
	f.Add("1", "470", "V100M16|V100M32")
	f.Add("2", "1000", "")
	f.Add("0", "0", "")
	f.Add("8", "", "T4")
	f.Add(" 3 ", "1001", "A10")
	f.Add("-1", "x", "")
	f.Fuzz(func(t *testing.T, count, milli, models string) {
		pod := snapshottest.MakePod("p").Namespace("ns").Req("cpu", "1").Obj()
		pod.Annotations = map[string]string{openb.AnnotationGPUCount: count, openb.AnnotationGPUMilli: milli, openb.AnnotationGPUModel: models}
		before := pod.DeepCopy()
		pi, perr := snapshot.DecodePodInfo(pod, openb.Devices)
		in, err := replay.NewInput(nil, []*v1.Pod{pod}, false, openb.Devices)
		assert.Equal(t, before, pod, "the input pod is not modified")
		if perr != nil {
			require.ErrorIs(t, err, replay.ErrInput)
			return
		}
		require.NoError(t, err)
		require.Len(t, in.Arrivals, 1)
		prepared := in.Arrivals[0].Pod
		task := gpushare.TaskOf(pi)
		assert.Equal(t, task, gpushare.TaskOf(prepared))
		// gpu-milli is interned only once some pod requested it: in a fresh
		// process a pod without GPU demand leaves it unknown, and then it
		// requests none.
		if id, ok := snapshot.LookupResource(openb.ResourceGPUMilli); ok {
			assert.Equal(t, task.TotalMilliGPU(), prepared.Requested().Get(id))
		} else {
			assert.Zero(t, task.TotalMilliGPU(), "a pod with GPU demand requests gpu-milli, so it is interned")
		}
	})
}
