package replay_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// leanWorkload is a random GPU cluster (2- and 4-GPU nodes, some with a
// preferred-schedule taint) and pods that take CPU only, whole GPUs or
// GPU shares, a few tolerating the taint, enough to leave some
// unschedulable.
func leanWorkload(seed uint64) (nodes []*v1.Node, pods []*v1.Pod) {
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range 40 {
		gpus := []string{"2", "4"}[r.IntN(2)]
		w := snapshottest.MakeNode(fmt.Sprintf("n%02d", i)).Capacity("cpu", "32", "memory", "64Gi", "pods", "110",
			"alibabacloud.com/gpu-count", gpus, "alibabacloud.com/gpu-milli", gpus+"000")
		if r.IntN(4) == 0 {
			w = w.Taint("spot", "true", v1.TaintEffectPreferNoSchedule)
		}
		nodes = append(nodes, w.Obj())
	}
	for i := range 400 {
		w := snapshottest.MakePod(fmt.Sprintf("p%03d", i)).Req("cpu", fmt.Sprint(1+r.IntN(4)), "memory", "1Gi")
		switch r.IntN(3) {
		case 1:
			w = w.Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, "1000")
		case 2:
			w = w.Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, fmt.Sprint(100*(1+r.IntN(9))))
		}
		if r.IntN(5) == 0 {
			w = w.Toleration("spot", v1.TolerationOpExists, "", "")
		}
		pods = append(pods, w.Obj())
	}
	return nodes, pods
}

// TestRunLeanEqualsFull: an Input built with lean arrivals, replayed over
// a lean ledger, gives the report of the full Input over the default
// ledger — placements and devices, reasons, the allocation curve, the
// end state — while holding no pod object: the arrivals and the final
// snapshot's pods are lean records.
func TestRunLeanEqualsFull(t *testing.T) {
	for seed := range uint64(4) {
		nodes, pods := leanWorkload(seed)
		in, err := replay.NewInput(nodes, pods, false, openb.Devices)
		require.NoError(t, err)
		b, err := replay.NewInputBuilder(nodes, openb.Devices, replay.BuildOptions{Lean: true})
		require.NoError(t, err)
		require.NoError(t, b.AddAll(pods))
		lean := b.Input()
		require.Len(t, lean.Arrivals, len(in.Arrivals))
		for i, a := range lean.Arrivals {
			require.False(t, a.Pod.Retained(), "arrival %d keeps its pod object", i)
			require.Equal(t, in.Arrivals[i].Pod.Key(), a.Pod.Key())
		}
		for _, batch := range []bool{false, true} {
			in.Batch, lean.Batch = batch, batch
			want, err := replay.Run(context.Background(), in, replay.Config{Seed: seed})
			require.NoError(t, err)
			got, err := replay.Run(context.Background(), lean, replay.Config{Seed: seed, LeanPods: true})
			require.NoError(t, err)
			require.Positive(t, want.Unschedulable, "the workload leaves pods out")
			assert.Equal(t, want.Placements, got.Placements, "seed %d batch %v", seed, batch)
			assert.Equal(t, want.Reasons, got.Reasons)
			assert.Equal(t, want.FirstFailure, got.FirstFailure)
			assert.Equal(t, want.Samples, got.Samples)
			assert.Equal(t, want.GPU, got.GPU)
			assert.Equal(t, want.CPU, got.CPU)
			var retained, leanPods int
			for _, ni := range got.Final.Nodes() {
				for _, pi := range ni.Pods() {
					if pi.Retained() {
						retained++
					} else {
						leanPods++
					}
				}
			}
			assert.Zero(t, retained, "pods kept as objects by the lean ledger")
			assert.Equal(t, want.Placed, leanPods)
		}
	}
}

// TestInputBuilderAdd: pods added one by one give NewInput's Input
// (bound pods, arrivals, GPU share requested as gpu-milli), and errors
// name the pod and change nothing.
func TestInputBuilderAdd(t *testing.T) {
	nodes, pods := leanWorkload(9)
	pods[3].Spec.NodeName = "n01"
	want, err := replay.NewInput(nodes, pods, false, openb.Devices)
	require.NoError(t, err)
	b, err := replay.NewInputBuilder(nodes, openb.Devices, replay.BuildOptions{})
	require.NoError(t, err)
	for _, p := range pods {
		require.NoError(t, b.Add(p))
	}
	got := b.Input()
	assert.Equal(t, want.Bound, got.Bound)
	require.Len(t, got.Arrivals, len(want.Arrivals))
	for i := range want.Arrivals {
		assert.Equal(t, want.Arrivals[i].Pod.Pod(), got.Arrivals[i].Pod.Pod())
	}
	assert.Equal(t, 40, b.Nodes().NumNodes())

	err = b.Add(pods[10])
	require.ErrorIs(t, err, replay.ErrInput)
	assert.Contains(t, err.Error(), "pod default/p010: listed twice")
	lost := snapshottest.MakePod("lost").Node("nowhere").Obj()
	err = b.Add(lost)
	require.ErrorIs(t, err, replay.ErrInput)
	assert.Contains(t, err.Error(), `pod default/lost: spec.nodeName "nowhere"`)
	require.ErrorIs(t, b.Add(nil), replay.ErrInput)
	assert.Len(t, got.Arrivals, len(want.Arrivals))
	assert.Len(t, got.Bound, 1)
}

// TestRunLeanResizedArrival: a lean arrival whose requests come from
// status a lean record drops (a pod resized in place: its
// status.containerStatuses[].allocatedResources) is scheduled with those
// requests, as the full record is, not with the smaller ones its rebuilt
// pod would give.
func TestRunLeanResizedArrival(t *testing.T) {
	nd := snapshottest.MakeNode("n").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()
	mk := func(name string) *v1.Pod {
		p := snapshottest.MakePod(name).Req("cpu", "1").Obj()
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
			AllocatedResources: v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")}}}
		return p
	}
	full := openb.MustPodInfo(mk("big"))
	rebuilt, err := snapshot.DecodePodInfo(full.Lean().Pod(), openb.Devices)
	require.NoError(t, err)
	require.NotEqual(t, full.Requested().MilliCPU(), rebuilt.Requested().MilliCPU(), "precondition: the lean record's pod lost the resize")

	in := &replay.Input{Devices: openb.Devices, Nodes: []*v1.Node{nd}}
	lean := &replay.Input{Devices: openb.Devices, Nodes: []*v1.Node{nd}}
	for _, name := range []string{"a", "b"} {
		pi := openb.MustPodInfo(mk(name))
		in.Arrivals = append(in.Arrivals, replay.Arrival{Pod: pi})
		lean.Arrivals = append(lean.Arrivals, replay.Arrival{Pod: pi.Lean()})
	}
	want, err := replay.Run(context.Background(), in, replay.Config{})
	require.NoError(t, err)
	got, err := replay.Run(context.Background(), lean, replay.Config{LeanPods: true})
	require.NoError(t, err)
	assert.Equal(t, 2, want.Placed, "a pending pod fits by its spec")
	assert.Equal(t, int64(6000), want.CPU.Requested, "placed, each counts its allocated 3 CPUs")
	assert.Equal(t, want.Placements, got.Placements)
	assert.Equal(t, want.CPU, got.CPU)
	assert.Equal(t, want.Samples, got.Samples)
}
