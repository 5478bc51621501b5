package replay_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestRunSkipsDeletingPod: an arrival with metadata.deletionTimestamp set
// took the node's 2 CPU and left the next pod unschedulable (trial s8).
// Upstream skips a pod being deleted without a cycle: it is counted in
// Skipped, not Arrived, and "normal" is placed. Lean records keep the
// deletion timestamp.
func TestRunSkipsDeletingPod(t *testing.T) {
	for _, lean := range []bool{false, true} {
		deleting := snapshottest.MakePod("deleting").Req("cpu", "2").Obj()
		now := metav1.Now()
		deleting.DeletionTimestamp = &now
		in := &replay.Input{
			Nodes:    []*v1.Node{snapshottest.MakeNode("n0").Capacity("cpu", "2", "memory", "8Gi", "pods", "110").Obj()},
			Arrivals: []replay.Arrival{arrival(t, deleting), arrival(t, snapshottest.MakePod("normal").Req("cpu", "1").Obj())},
		}
		rep, err := replay.Run(context.Background(), in, replay.Config{LeanPods: lean})
		require.NoError(t, err)
		require.Equal(t, 1, rep.Skipped, "lean=%v", lean)
		require.Equal(t, 1, rep.Arrived)
		require.Equal(t, 1, rep.Placed)
		require.Zero(t, rep.Unschedulable)
		require.Equal(t, []replay.Placement{{Pod: "default/normal", Node: "n0"}}, rep.Placements)
	}
}
