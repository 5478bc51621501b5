package replay_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// Pods in phase Succeeded or Failed are left out, bound or not, with or
// without unbind (upstream's informer never lists them); a new-user trial
// saw them scheduled as arrivals with unbind.
func TestNewInputSkipsTerminal(t *testing.T) {
	nodes := []*v1.Node{node("n1")}
	done := snapshottest.MakePod("done").Req("cpu", "1").Node("n1").Obj()
	done.Status.Phase = v1.PodSucceeded
	failed := snapshottest.MakePod("failed").Req("cpu", "1").Node("n1").Obj()
	failed.Status.Phase = v1.PodFailed
	gone := snapshottest.MakePod("gone").Req("cpu", "1").Obj()
	gone.Status.Phase = v1.PodFailed
	running := snapshottest.MakePod("running").Req("cpu", "1").Node("n1").Obj()
	running.Status.Phase = v1.PodRunning
	pending := snapshottest.MakePod("pending").Req("cpu", "1").Obj()
	pods := []*v1.Pod{done, failed, gone, running, pending}

	for _, unbind := range []bool{false, true} {
		in, err := replay.NewInput(nodes, pods, unbind, nil)
		require.NoError(t, err)
		bound, arrivals := keys(in)
		if unbind {
			assert.Empty(t, bound)
			assert.Equal(t, []string{"default/running", "default/pending"}, arrivals)
		} else {
			assert.Equal(t, []string{"default/running"}, bound)
			assert.Equal(t, []string{"default/pending"}, arrivals)
		}
		assert.Equal(t, 3, in.Terminal, "unbind %v", unbind)

		b, err := replay.NewInputBuilder(nodes, nil, replay.BuildOptions{Unbind: unbind})
		require.NoError(t, err)
		for _, p := range pods {
			require.NoError(t, b.Add(p))
		}
		bound2, arrivals2 := keys(b.Input())
		assert.Equal(t, bound, bound2)
		assert.Equal(t, arrivals, arrivals2)
		assert.Equal(t, 3, b.Input().Terminal)
	}
}
