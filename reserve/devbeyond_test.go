package reserve_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestLedgerRecordedDeviceBeyondNode: a bound pod recording a GPU device
// its node does not have is an error naming it, the ledger unchanged
// (the snapshot rejects it; the ledger must not panic on its view).
func TestLedgerRecordedDeviceBeyondNode(t *testing.T) {
	l := reserve.New(reserve.WithDeviceDecoder(openb.Devices))
	require.NoError(t, l.AddNode(snapshottest.MakeNode("g1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110",
		string(openb.ResourceGPUCount), "2", string(openb.ResourceGPUMilli), "2000").Obj()))
	pod := func(index string) *v1.Pod {
		return snapshottest.MakePod("gi").Req("cpu", "1").Annotation(openb.AnnotationGPUCount, "1").
			Annotation(openb.AnnotationGPUMilli, "700").Annotation(openb.AnnotationGPUIndex, index).Node("g1").Obj()
	}
	err := l.AddPod(pod("7"))
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	require.Contains(t, err.Error(), "records GPU device 7, node g1 has 2")
	_, _, ok := l.PodPhase(snapshot.KeyOf(pod("7")))
	require.False(t, ok, "not recorded")
	require.NoError(t, l.AddPod(pod("1")))
}
