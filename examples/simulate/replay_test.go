package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot/load"
)

// TestOwnMainGetsTheSameReport: a program of its own that reads the same
// objects with snapshot/load, builds the input with replay.NewInput and
// replays it with the default policy's filters, profile and seed gets the
// numbers simulate prints for -policy default (every pod of
// openshift-new-pods scheduled anew on the GPU cluster of gpu-cluster).
func TestOwnMainGetsTheSameReport(t *testing.T) {
	paths := []string{"testdata/gpu-cluster.yaml", "testdata/openshift-new-pods.yaml"}
	rep, _ := jsonReport(t, "-objects", paths[0]+","+paths[1], "-unbind", "-policy", "default", "-timing=false")
	require.Len(t, rep.Summaries, 1)
	require.Len(t, rep.Summaries[0].Results, 1)
	want := rep.Summaries[0].Results[0]

	objs, err := load.Files(paths...)
	require.NoError(t, err)
	in, err := replay.NewInput(objs.Nodes, objs.Pods, true, openb.Devices)
	require.NoError(t, err)
	var tasks []gpushare.Task
	for _, a := range in.Arrivals {
		tasks = append(tasks, gpushare.TaskOf(a.Pod))
	}
	w, err := gpushare.WorkloadFromTasks(tasks, 95)
	require.NoError(t, err)
	got, err := replay.Run(context.Background(), in, replay.Config{
		Filters:  append(framework.DefaultFilters(), framework.NewGPUDevices()),
		Profile:  score.DefaultProfile(),
		Seed:     1,
		Workload: w,
	})
	require.NoError(t, err)

	assert.Positive(t, got.Placed)
	assert.Positive(t, got.Unschedulable)
	assert.Equal(t, want.Arrived, got.Arrived)
	assert.Equal(t, want.Placed, got.Placed)
	assert.Equal(t, want.Unschedulable, got.Unschedulable)
	assert.Equal(t, want.Reasons, got.Reasons)
	assert.Equal(t, want.FirstFailure, got.FirstFailure)
	assert.Equal(t, want.CPU, got.CPU)
	assert.Equal(t, want.Memory, got.Memory)
	assert.Equal(t, want.GPU, got.GPU)
	assert.Equal(t, want.GPUFragmentationRatio, got.GPUFragmentationRatio)
	assert.Equal(t, want.NodesUsed, got.NodesUsed)
	assert.Equal(t, want.Nodes, got.Nodes)
}
