package reserve_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestLedgerOverheadOnce: a bound pod whose pod-level status maps already
// hold its overhead (container 1000m + overhead 250m, reported 1250m) is
// charged 1250m, not upstream's 1500m, so 2750m are left of 4000m
// (issue 17, item 3).
func TestLedgerOverheadOnce(t *testing.T) {
	l := newLedger(t, st.MakeNode("n").Capacity("cpu", "4", "memory", "8Gi", "pods", "10").Obj())
	bound := st.MakePod("bound").Req("cpu", "1").Overhead("cpu", "250m").Node("n").Obj()
	total := st.List("cpu", "1250m")
	bound.Status.AllocatedResources = total
	bound.Status.Resources = &v1.ResourceRequirements{Requests: total}
	require.NoError(t, l.AddPod(bound))
	reasons, err := l.Fits(snapshot.MustPodInfo(st.MakePod("fits").Req("cpu", "2750m").Obj()), "n")
	require.NoError(t, err)
	assert.Empty(t, reasons, "4000 - 1250 = 2750 left")
	reasons, err = l.Fits(snapshot.MustPodInfo(st.MakePod("over").Req("cpu", "2751m").Obj()), "n")
	require.NoError(t, err)
	require.Len(t, reasons, 1)
	assert.Equal(t, int64(1250), reasons[0].Used)
}
