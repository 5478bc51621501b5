package reserve_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// A ledger made WithLeanPods keeps lean records of bound pods (informer
// reports and AddPodInfo), counts them as a full ledger does, keeps holds
// as reserved, and refuses what needs the pod objects with an error
// naming the option; the state is unchanged by the refusals.
func TestLedgerWithLeanPods(t *testing.T) {
	full, lean := reserve.New(), reserve.New(reserve.WithLeanPods())
	for _, l := range []*reserve.Ledger{full, lean} {
		for i := range 2 {
			require.NoError(t, l.AddNode(st.MakeNode(fmt.Sprintf("n%d", i)).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
		}
		require.NoError(t, l.AddPod(st.MakePod("a").Label("app", "web").Req("cpu", "1").Node("n0").Obj()))
		require.NoError(t, l.AddPodInfo(pod("b", "500m"), "n1"))
		_, err := l.Reserve(pod("c", "2"), "n0")
		require.NoError(t, err)
	}
	for _, n := range []string{"n0", "n1"} {
		fu, _ := full.Usage(n)
		lu, _ := lean.Usage(n)
		assert.Equal(t, fu, lu, n)
	}
	for _, ni := range lean.BoundSnapshot().Nodes() {
		for _, p := range ni.Pods() {
			assert.False(t, p.Retained(), "bound pod %s is lean", p.Key())
		}
	}
	h, ok := lean.Hold(snapshot.PodKey{Namespace: "default", Name: "c"})
	require.True(t, ok)
	assert.True(t, h.Pod.Retained(), "a hold keeps the record reserved")

	var buf bytes.Buffer
	require.NoError(t, full.Export(&buf))
	require.NoError(t, full.SetJournal(&bytes.Buffer{}))
	buf.Reset()
	err := lean.Export(&buf)
	require.ErrorIs(t, err, reserve.ErrInvalid)
	assert.Contains(t, err.Error(), "reserve.WithLeanPods")
	assert.Contains(t, err.Error(), "Export: pod default/")
	assert.Zero(t, buf.Len(), "nothing written")
	err = lean.SetJournal(&buf)
	require.ErrorIs(t, err, reserve.ErrInvalid)
	assert.Contains(t, err.Error(), "SetJournal: pod default/")
	assert.Zero(t, buf.Len(), "nothing written")
	require.NoError(t, lean.JournalErr(), "no journal attached")

	// A full ledger with a journal refuses to journal a hold of a lean
	// record, and holds nothing.
	_, err = full.Reserve(pod("d", "1").Lean(), "n1")
	require.ErrorIs(t, err, reserve.ErrInvalid)
	assert.Contains(t, err.Error(), "journaling a hold: pod default/d is a lean record")
	_, held := full.Hold(snapshot.PodKey{Namespace: "default", Name: "d"})
	assert.False(t, held)
	u, _ := full.Usage("n1")
	assert.Equal(t, int64(0), u.Held.MilliCPU())
}
