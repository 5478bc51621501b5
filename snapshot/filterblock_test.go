package snapshot_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unique"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// wantFilterBlock recomputes a node's FilterBlock the plain way, from the
// other accessors.
func wantFilterBlock(t *testing.T, ni *snapshot.NodeInfo) layout.FilterBlock {
	t.Helper()
	var fb layout.FilterBlock
	fb.AllowedPods = int32(min(ni.Allocatable().AllowedPodNumber(), math.MaxInt32))
	fb.NumPods = int32(ni.NumPods())
	for i := range layout.InlineScalars {
		r := snapshot.Pods + 1 + snapshot.ResourceID(i)
		fb.ScalarAllocatable[i] = ni.Allocatable().Get(r)
		fb.ScalarRequested[i] = ni.Requested().Get(r)
	}
	var free []int64
	for _, d := range ni.Devices() {
		free = append(free, min(max(d.FreeMilliGPU, 0), 65535))
		id, ok := layout.GPUModelID(d.Model)
		if d.Model == "" {
			require.False(t, ok)
		} else {
			require.True(t, ok, "model %q registered", d.Model)
		}
		fb.GPUModel = id
	}
	slices.Sort(free)
	slices.Reverse(free)
	for i := range min(len(free), len(fb.GPUFree)) {
		fb.GPUFree[i] = uint16(free[i])
	}
	fb.NumDevices = uint8(len(ni.Devices()))
	if z, ok := ni.Node().Labels[v1.LabelTopologyZone]; ok {
		fb.Zone = unique.Make(z)
	}
	fb.Unschedulable = ni.Unschedulable()
	for _, tn := range ni.Taints() {
		if tn.Effect == v1.TaintEffectNoSchedule || tn.Effect == v1.TaintEffectNoExecute {
			fb.NoScheduleTaints = true
		}
	}
	return fb
}

func checkFilterBlocks(t *testing.T, f *snapshot.Fork, step int) {
	t.Helper()
	for i := range f.NumNodes() {
		ni := f.Node(i)
		require.Equal(t, wantFilterBlock(t, ni), *nodeview.FilterBlock(ni), "step %d node %s", step, ni.Name())
		// Labels are the node's, as handles, sorted by key.
		var keys []string
		for k := range ni.Node().Labels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var want, got [][2]string
		for _, k := range keys {
			want = append(want, [2]string{k, ni.Node().Labels[k]})
		}
		for _, l := range ni.Labels() {
			got = append(got, [2]string{l.Key.Value(), l.Value.Value()})
		}
		require.Equal(t, want, got, "step %d node %s", step, ni.Name())
	}
}

// filterBlockNode is a random node: 0-9 GPUs of a random model (or no
// model label), few allowed pods, and no taint, a PreferNoSchedule, a
// NoSchedule or a NoExecute taint, or spec.unschedulable.
func filterBlockNode(rng *rand.Rand, name string) *v1.Node {
	res := []string{"cpu", fmt.Sprint(1 + rng.IntN(32)), "memory", "64Gi", "pods", fmt.Sprint(rng.IntN(6)), "example.com/fb", fmt.Sprint(rng.IntN(3))}
	gpus := rng.IntN(10)
	if gpus > 0 {
		res = append(res, "alibabacloud.com/gpu-count", fmt.Sprint(gpus), "alibabacloud.com/gpu-milli", fmt.Sprint(gpus*(500+rng.IntN(2)*500)))
	}
	n := st.MakeNode(name).Capacity(res...).Obj()
	n.Labels = nil
	for _, k := range []string{v1.LabelTopologyZone, "rack", "kubernetes.io/hostname"}[:rng.IntN(4)] {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[k] = fmt.Sprint(k, rng.IntN(3))
	}
	if model := []string{"", "A10", "V100M16", "T4"}[rng.IntN(4)]; gpus > 0 && model != "" {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[openb.LabelGPUModel] = model
	}
	effects := []v1.TaintEffect{"", v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoSchedule, v1.TaintEffectNoExecute}
	if e := effects[rng.IntN(len(effects))]; e != "" {
		n.Spec.Taints = []v1.Taint{{Key: "k", Value: "v", Effect: e}}
	}
	n.Spec.Unschedulable = rng.IntN(5) == 0
	return n
}

// TestFilterBlockReference checks every node's FilterBlock against a plain
// recomputation after each random change in nested forks, and after
// Revert.
func TestFilterBlockReference(t *testing.T) {
	for seed := range uint64(30) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			var nodes []*v1.Node
			for i := range 8 {
				nodes = append(nodes, filterBlockNode(rng, fmt.Sprintf("n%d", i)))
			}
			f := st.SnapshotWithDevices(t, openb.Devices, nodes).Fork()
			checkFilterBlocks(t, f, 0)
			var added []snapshot.PodKey
			where := map[snapshot.PodKey]string{}
			for step := 1; step <= 300; step++ {
				switch k := rng.IntN(20); {
				case k == 0:
					f.Fork()
				case k == 1 && f.Depth() > 0:
					require.NoError(t, f.Revert())
					added = slices.DeleteFunc(added, func(pk snapshot.PodKey) bool { return !f.Get(where[pk]).HasPod(pk) })
				case k == 2:
					require.NoError(t, f.UpdateNode(filterBlockNode(rng, fmt.Sprintf("n%d", rng.IntN(8)))))
				case k <= 5 && len(added) > 0:
					i := rng.IntN(len(added))
					pk := added[i]
					require.NoError(t, f.RemovePod(pk, where[pk]))
					added = slices.Delete(added, i, i+1)
				default:
					name := fmt.Sprintf("p%d", step)
					node := fmt.Sprintf("n%d", rng.IntN(8))
					w := st.MakePod(name).Req("cpu", "100m", "example.com/fb", fmt.Sprint(rng.IntN(2)))
					// Devices are an input: the pod names them, among the
					// node's own (a device it lacks is an error; a later
					// UpdateNode may still shrink them).
					if k, n := 1+rng.IntN(2), len(f.Get(node).Devices()); rng.IntN(2) == 0 && n >= k {
						first := rng.IntN(n - k + 1)
						index := fmt.Sprint(first)
						if k == 2 {
							index += fmt.Sprintf("-%d", first+1)
						}
						w = w.Annotation(openb.AnnotationGPUCount, fmt.Sprint(k)).
							Annotation(openb.AnnotationGPUMilli, fmt.Sprint(1+rng.IntN(1000))).
							Annotation(openb.AnnotationGPUIndex, index)
					}
					pod := w.Obj()
					require.NoError(t, f.AddPod(pod, node))
					pk := snapshot.KeyOf(pod)
					added = append(added, pk)
					where[pk] = node
				}
				checkFilterBlocks(t, f, step)
			}
		})
	}
}

// TestGPUModelID: models are numbered from 1 once a node with them is
// parsed; "" and unknown names have none.
func TestGPUModelID(t *testing.T) {
	_, ok := layout.GPUModelID("never-seen-model")
	require.False(t, ok)
	_, ok = layout.GPUModelID("")
	require.False(t, ok)
	n := st.MakeNode("g").Capacity("cpu", "8", "alibabacloud.com/gpu-count", "2").Label(openb.LabelGPUModel, "FB-MODEL-X").Obj()
	ni := st.SnapshotWithDevices(t, openb.Devices, []*v1.Node{n}).Get("g")
	id, ok := layout.GPUModelID("FB-MODEL-X")
	require.True(t, ok)
	require.Positive(t, id)
	require.Equal(t, id, nodeview.FilterBlock(ni).GPUModel)
	require.Equal(t, [4]uint16{1000, 1000, 0, 0}, nodeview.FilterBlock(ni).GPUFree)
}
