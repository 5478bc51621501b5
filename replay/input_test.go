package replay_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// gpuPod asks for count GPUs of milli each in the Alibaba annotations.
func gpuPod(name, count, milli string) *v1.Pod {
	return snapshottest.MakePod(name).Req("cpu", "1", "memory", "1Gi").
		Annotation(openb.AnnotationGPUCount, count).Annotation(openb.AnnotationGPUMilli, milli).Obj()
}

func keys(in *replay.Input) (bound, arrivals []string) {
	for _, p := range in.Bound {
		bound = append(bound, snapshot.KeyOf(p).String())
	}
	for _, a := range in.Arrivals {
		arrivals = append(arrivals, a.Pod.Key().String())
	}
	return bound, arrivals
}

func TestNewInputSplit(t *testing.T) {
	nodes := []*v1.Node{node("node-a"), node("node-b")}
	mirror := snapshottest.MakePod("mirror").Node("node-a").Annotation("kubernetes.io/config.mirror", "x").Obj()
	static := snapshottest.MakePod("static").Node("node-a").Annotation("kubernetes.io/config.source", "file").Obj()
	api := snapshottest.MakePod("api").Node("node-b").Annotation("kubernetes.io/config.source", "api").Obj()
	running := snapshottest.MakePod("running").Node("node-b").Obj()
	pending := snapshottest.MakePod("pending").Obj()
	pods := []*v1.Pod{pending, mirror, api, static, running}

	in, err := replay.NewInput(nodes, pods, false, openb.Devices)
	require.NoError(t, err)
	bound, arrivals := keys(in)
	assert.Equal(t, []string{"default/mirror", "default/api", "default/static", "default/running"}, bound)
	assert.Equal(t, []string{"default/pending"}, arrivals)
	assert.True(t, in.Batch)
	assert.Equal(t, nodes, in.Nodes)

	// unbind: only the static and mirror pods stay; the others are
	// scheduled anew, after the pending pods in input order.
	in, err = replay.NewInput(nodes, pods, true, openb.Devices)
	require.NoError(t, err)
	bound, arrivals = keys(in)
	assert.Equal(t, []string{"default/mirror", "default/static"}, bound)
	assert.Equal(t, []string{"default/pending", "default/api", "default/running"}, arrivals)
	assert.Equal(t, "", in.Arrivals[2].Pod.Pod().Spec.NodeName)
	assert.Equal(t, "node-b", running.Spec.NodeName, "the input pod is not modified")
}

// Annotated GPU demand is also requested as gpu-milli, in a copy; other
// pods are shared as they are.
func TestNewInputGPURequest(t *testing.T) {
	share := gpuPod("share", "1", "470")
	multi := gpuPod("multi", "4", "1000")
	cpu := snapshottest.MakePod("cpu").Req("cpu", "1").Obj()
	nvidia := snapshottest.MakePod("nv").Req("cpu", "1", "nvidia.com/gpu", "2").Obj()
	boundShare := gpuPod("bound-share", "1", "500")
	boundShare.Spec.NodeName = "node-a"
	in, err := replay.NewInput([]*v1.Node{node("node-a")}, []*v1.Pod{share, multi, cpu, nvidia, boundShare}, false, openb.Devices)
	require.NoError(t, err)
	require.Len(t, in.Arrivals, 4)
	id, ok := snapshot.LookupResource(openb.ResourceGPUMilli)
	require.True(t, ok)
	// share: 1 × 470; multi: 4 × 1000.
	assert.Equal(t, int64(470), in.Arrivals[0].Pod.Requested().Get(id))
	assert.Equal(t, gpushare.Task{MilliCPU: 1000, Memory: 1 << 30, GPUCount: 1, MilliGPU: 470}, gpushare.TaskOf(in.Arrivals[0].Pod))
	assert.Equal(t, int64(4000), in.Arrivals[1].Pod.Requested().Get(id))
	assert.NotContains(t, share.Spec.Containers[0].Resources.Requests, openb.ResourceGPUMilli, "the input pod is not modified")
	assert.Same(t, cpu, in.Arrivals[2].Pod.Pod())
	assert.Same(t, nvidia, in.Arrivals[3].Pod.Pod(), "nvidia.com/gpu is a request already")
	require.Len(t, in.Bound, 1)
	q := in.Bound[0].Spec.Containers[0].Resources.Requests[openb.ResourceGPUMilli]
	assert.Equal(t, int64(500), q.Value())
	assert.NotContains(t, boundShare.Spec.Containers[0].Resources.Requests, openb.ResourceGPUMilli)

	// The request is what NodeResourcesFit checks: node-a has no GPUs, so
	// share and multi are refused for gpu-milli (and nv for nvidia.com/gpu);
	// cpu alone is placed.
	rep, err := replay.Run(context.Background(), in, replay.Config{Filters: append(framework.DefaultFilters(), framework.NewGPUDevices())})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Placed)
	assert.Equal(t, map[string]int{"Insufficient alibabacloud.com/gpu-milli": 2, "Insufficient nvidia.com/gpu": 1}, rep.Reasons)
}

func TestNewInputErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []*v1.Node
		pods  []*v1.Pod
		want  string
	}{
		{"node twice", []*v1.Node{node("node-a"), node("node-a")}, nil, "node node-a: listed twice"},
		{"nil node", []*v1.Node{nil}, nil, "nodes[0]: nil node"},
		{"nil pod", nil, []*v1.Pod{nil}, "pods[0]: nil pod"},
		{"no such node", []*v1.Node{node("node-a")}, []*v1.Pod{snapshottest.MakePod("p").Node("node-z").Obj()},
			`pod default/p: spec.nodeName "node-z": no such node in the input`},
		{"pod twice", nil, []*v1.Pod{snapshottest.MakePod("p").Obj(), snapshottest.MakePod("p").Obj()}, "pod default/p: listed twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := replay.NewInput(tc.nodes, tc.pods, false, openb.Devices)
			require.ErrorIs(t, err, replay.ErrInput)
			assert.EqualError(t, err, "replay: bad input: "+tc.want)
		})
	}
}
