package framework_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

func gpuNode(name, model, gpus string) *v1.Node {
	return st.MakeNode(name).Capacity("cpu", "64", "memory", "256Gi", "pods", "110",
		"alibabacloud.com/gpu-count", gpus, "alibabacloud.com/gpu-milli", gpus+"000").
		Label(openb.LabelGPUModel, model).Obj()
}

func gpuPod(name, count, milli string) *st.PodWrapper {
	return st.MakePod(name).Req("cpu", "2", "memory", "4Gi").
		Annotation(openb.AnnotationGPUCount, count).Annotation(openb.AnnotationGPUMilli, milli)
}

func TestGPUDevicesFilter(t *testing.T) {
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNode("t4", "T4", "2"), gpuNode("v100", "V100M16", "1")},
		gpuPod("used", "1", "800").Annotation(openb.AnnotationGPUIndex, "0").Node("v100").Obj())
	snap := c.Snapshot()
	filters := append(framework.DefaultFilters(), framework.NewGPUDevices())
	s, err := framework.New(framework.Config{Filters: filters, Seed: 1, DeviceChooser: gpushare.BestFit{}, NodeReasons: true})
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want string // node, or "" for unschedulable
		msg  string
	}{
		// two whole GPUs: only t4 has two idle devices.
		{"two whole", gpuPod("a", "2", "1000").Obj(), "t4", ""},
		// model constraint V100M16: v100 has 200 free, 300 does not fit.
		{"model and share", gpuPod("b", "1", "300").Annotation(openb.AnnotationGPUModel, "V100M16").Obj(), "",
			"0/2 nodes are available: 1 Insufficient GPU devices, 1 node(s) had no GPU of an allowed model."},
		// three GPUs fit nowhere.
		{"too many", gpuPod("c", "3", "1000").Obj(), "", "0/2 nodes are available: 2 Insufficient GPU devices."},
		// no device demand: the filter skips.
		{"cpu only", st.MakePod("d").Req("cpu", "1").Obj(), "any", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := s.SchedulePod(snap, openb.MustPodInfo(tc.pod))
			require.NoError(t, err)
			switch tc.want {
			case "":
				require.NotNil(t, d.Diagnosis)
				assert.Equal(t, tc.msg, d.Diagnosis.Message())
				for _, r := range d.Diagnosis.Reasons {
					if r.Plugin == framework.GPUDevicesName && r.Text == "Insufficient GPU devices" {
						// The shortfall counts devices, and names the device-count resource (it named cpu, the zero value).
						assert.Equal(t, openb.ResourceGPUCount, r.Resource.Name(), "%s", r)
						assert.Equal(t, tc.pod.Annotations[openb.AnnotationGPUCount], strconv.FormatInt(r.Requested, 10), "%s", r)
					}
				}
			case "any":
				assert.True(t, d.Scheduled())
			default:
				assert.Equal(t, tc.want, d.Node)
				devs, ok := d.Pod.Devices()
				assert.True(t, ok, "decision records the devices")
				assert.Equal(t, 2, devs.Len())
			}
		})
	}
}

// Under FGD a 0.5 share goes on the partly used GPU rather than an idle
// one when that lowers fragmentation: the workload is made of 0.5-GPU
// tasks, so splitting the idle GPU would leave it half-usable while the
// partly used GPU's 500 free would otherwise be stranded only if tasks
// were larger. The device choice travels with the decision.
func TestFGDDeviceChoice(t *testing.T) {
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNode("n", "T4", "2")},
		gpuPod("half", "1", "500").Annotation(openb.AnnotationGPUIndex, "0").Node("n").Obj())
	w, err := gpushare.NewWorkload([]gpushare.Task{{MilliCPU: 2000, GPUCount: 1, MilliGPU: 500}, {MilliCPU: 2000, GPUCount: 1, MilliGPU: 1000}}, []float64{1, 1})
	require.NoError(t, err)
	p, err := score.NewProfile(score.Weighted{Scorer: gpushare.NewScorer(gpushare.NewFGD(w)), Weight: 1})
	require.NoError(t, err)
	s, err := framework.New(framework.Config{Filters: append(framework.DefaultFilters(), framework.NewGPUDevices()), Profile: p, Seed: 1})
	require.NoError(t, err)
	d, err := s.SchedulePod(c.Snapshot(), openb.MustPodInfo(gpuPod("new", "1", "500").Obj()))
	require.NoError(t, err)
	require.True(t, d.Scheduled())
	devs, ok := d.Pod.Devices()
	require.True(t, ok)
	assert.True(t, devs.Has(0), "0.5 share packed onto device 0 (500 free), keeping device 1 whole for 1.0 tasks; got %b", devs)
}

// lastDevice is a scorer whose device choice is the highest-index device
// with room, unlike the best-fit default.
type lastDevice struct{}

func (lastDevice) Name() string { return "LastDevice" }
func (lastDevice) Prepare(*snapshot.PodInfo, score.Cluster) (score.PodScorer, error) {
	return score.PodScorerFunc(func(nodes []*snapshot.NodeInfo, out []int64) {
		for i := range nodes {
			out[i] = 50
		}
	}), nil
}
func (lastDevice) ChooseDevices(pod *snapshot.PodInfo, node *snapshot.NodeInfo) (gpushare.DeviceSet, bool) {
	devs := node.Devices()
	for i := len(devs) - 1; i >= 0; i-- {
		if devs[i].FreeMilliGPU >= pod.GPU().MilliGPU {
			return gpushare.DeviceSet(0).With(i), true
		}
	}
	return 0, false
}

func TestDeviceChooserDecides(t *testing.T) {
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNode("n", "T4", "4")})
	flat := score.PerNode("flat", func(*snapshot.PodInfo, *snapshot.NodeInfo) int64 { return 1 })
	for _, tc := range []struct {
		name    string
		scorer  score.Scorer
		devices snapshot.DeviceChooser
		wantDev int
	}{
		{"Config.DeviceChooser best fit", flat, gpushare.BestFit{}, 0},
		{"Config.DeviceChooser last", flat, lastDevice{}, 3},
		{"scorer's choice", lastDevice{}, nil, 3},
		{"scorer's choice before Config's", lastDevice{}, gpushare.BestFit{}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := score.NewProfile(score.Weighted{Scorer: tc.scorer})
			require.NoError(t, err)
			s, err := framework.New(framework.Config{Filters: append(framework.DefaultFilters(), framework.NewGPUDevices()), Profile: p, DeviceChooser: tc.devices})
			require.NoError(t, err)
			d, err := s.SchedulePod(c.Snapshot(), openb.MustPodInfo(gpuPod("p", "1", "250").Obj()))
			require.NoError(t, err)
			devs, ok := d.Pod.Devices()
			require.True(t, ok)
			assert.True(t, devs.Has(tc.wantDev), "devices %b, want device %d", devs, tc.wantDev)
		})
	}
}

// TestNoDeviceChooser: the framework makes no device choice of its own: a
// GPU pod placed on a node with devices, with no chooser in the profile or
// the Config, is a configuration error naming the pod, the node and the
// fix; a pod asking for no device, or a node without devices, needs none.
func TestNoDeviceChooser(t *testing.T) {
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNode("n", "T4", "4"), st.MakeNode("cpu").Capacity("cpu", "8", "memory", "8Gi", "pods", "10").Obj()})
	s, err := framework.New(framework.Config{Filters: append(framework.DefaultFilters(), framework.NewGPUDevices())})
	require.NoError(t, err)
	_, err = s.SchedulePod(c.Snapshot(), openb.MustPodInfo(gpuPod("p", "1", "250").Obj()))
	require.ErrorIs(t, err, framework.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "pod default/p asks for GPU devices on node n")
	assert.Contains(t, err.Error(), "Config.DeviceChooser")
	d, err := s.SchedulePod(c.Snapshot(), openb.MustPodInfo(st.MakePod("cpu-only").Req("cpu", "1").Obj()))
	require.NoError(t, err)
	assert.True(t, d.Scheduled())
}

// TestZeroGPUMilliNode: a node reporting gpu-count 2 and gpu-milli 0 has no
// usable share; a 500m share pod is not placed there (issue 17, item 4).
func TestZeroGPUMilliNode(t *testing.T) {
	zero := st.MakeNode("zero").Capacity("cpu", "64", "memory", "256Gi", "pods", "110",
		"alibabacloud.com/gpu-count", "2", "alibabacloud.com/gpu-milli", "0").Label(openb.LabelGPUModel, "T4").Obj()
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{zero})
	s, err := framework.New(framework.Config{Filters: append(framework.DefaultFilters(), framework.NewGPUDevices()), Seed: 1})
	require.NoError(t, err)
	d, err := s.SchedulePod(c.Snapshot(), openb.MustPodInfo(gpuPod("share", "1", "500").Obj()))
	require.NoError(t, err)
	require.False(t, d.Scheduled(), "placed on %s", d.Node)
	assert.Equal(t, "0/1 nodes are available: 1 Insufficient GPU devices.", d.Diagnosis.Message())
}

// TestManyNvidiaGPUsSchedule: a GPU time-slicing node advertising 128
// nvidia.com/gpu (beyond the 64 devices the model holds) is counted as the
// extended resource, as upstream counts it: a 65-GPU pod and a 4-GPU pod
// are placed there with the GPUDevices filter on, a pod asking for more
// than is left is not, and a model the node's label does not name is
// refused (issue 17, item 5).
func TestManyNvidiaGPUsSchedule(t *testing.T) {
	node := st.MakeNode("ts").Capacity("cpu", "64", "memory", "256Gi", "pods", "110", "nvidia.com/gpu", "128").
		Label(snapshot.LabelNvidiaGPUModel, "A100").Obj()
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{node}, st.MakePod("used").Req("cpu", "1", "nvidia.com/gpu", "65").Node("ts").Obj())
	snap := c.Snapshot()
	fgd, err := gpushare.NewWorkload([]gpushare.Task{{MilliCPU: 1000, GPUCount: 1, MilliGPU: 1000}}, []float64{1})
	require.NoError(t, err)
	for _, prof := range []struct {
		name    string
		profile *score.Profile
	}{{"default profile", nil}, {"FGD", must(score.NewProfile(score.Weighted{Scorer: gpushare.NewScorer(gpushare.NewFGD(fgd)), Weight: 1}))}} {
		t.Run(prof.name, func(t *testing.T) {
			s, err := framework.New(framework.Config{Filters: append(framework.DefaultFilters(), framework.NewGPUDevices()), Profile: prof.profile, Seed: 1})
			require.NoError(t, err)
			for _, tc := range []struct {
				name string
				pod  *v1.Pod
				msg  string // "" for placed on ts
			}{
				{"four", st.MakePod("four").Req("cpu", "1", "nvidia.com/gpu", "4").Obj(), ""},
				// 128 - 65 = 63 left.
				{"sixty-three", st.MakePod("63").Req("cpu", "1", "nvidia.com/gpu", "63").Obj(), ""},
				{"sixty-four", st.MakePod("64").Req("cpu", "1", "nvidia.com/gpu", "64").Obj(), "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."},
				{"allowed model", st.MakePod("a").Req("cpu", "1", "nvidia.com/gpu", "2").Annotation(openb.AnnotationGPUModel, "A100").Obj(), ""},
				{"other model", st.MakePod("h").Req("cpu", "1", "nvidia.com/gpu", "2").Annotation(openb.AnnotationGPUModel, "H100").Obj(),
					"0/1 nodes are available: 1 node(s) had no GPU of an allowed model."},
			} {
				t.Run(tc.name, func(t *testing.T) {
					pi, err := snapshot.DecodePodInfo(tc.pod, openb.Devices)
					require.NoError(t, err)
					d, err := s.SchedulePod(snap, pi)
					require.NoError(t, err)
					if tc.msg == "" {
						require.True(t, d.Scheduled(), "%v", d.Diagnosis)
						assert.Equal(t, "ts", d.Node)
						return
					}
					require.False(t, d.Scheduled())
					assert.Equal(t, tc.msg, d.Diagnosis.Message())
				})
			}
		})
	}
	big, err := snapshot.NewPodInfo(st.MakePod("big").Req("cpu", "1", "nvidia.com/gpu", "65").Obj())
	require.NoError(t, err)
	s, err := framework.New(framework.Config{Filters: append(framework.DefaultFilters(), framework.NewGPUDevices()), Seed: 1})
	require.NoError(t, err)
	fresh := st.CacheWithDevices(t, openb.Devices, []*v1.Node{node}).Snapshot()
	d, err := s.SchedulePod(fresh, big)
	require.NoError(t, err)
	assert.Equal(t, "ts", d.Node, "a 65-GPU pod on an empty 128-GPU node")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// badChooser answers with fixed devices, whatever the pod and node.
type badChooser struct {
	devs snapshot.DeviceSet
	ok   bool
}

func (c badChooser) ChooseDevices(*snapshot.PodInfo, *snapshot.NodeInfo) (snapshot.DeviceSet, bool) {
	return c.devs, c.ok
}

// TestDeviceChoiceErrors: when the chooser finds no devices on the chosen
// node (the profile lacks the GPUDevices filter) or breaks its contract
// (wrong count, an index beyond the node's devices), Schedule returns an
// error wrapping ErrInvalidConfig and a decision that names no node;
// before, the decision named the node (Scheduled() true) and a wrong
// answer was charged silently.
func TestDeviceChoiceErrors(t *testing.T) {
	c := st.CacheWithDevices(t, openb.Devices, []*v1.Node{gpuNode("n", "T4", "2")})
	one := snapshot.DeviceSet(0).With(0)
	for _, tc := range []struct {
		name string
		dc   snapshot.DeviceChooser
		pod  *v1.Pod
		msg  string
	}{
		{"no devices without the filter", gpushare.BestFit{}, gpuPod("four", "4", "1000").Obj(), "add the GPUDevices filter"},
		{"too many devices", badChooser{one.With(1), true}, gpuPod("p", "1", "500").Obj(), "chose devices [0 1] for pod default/p on node n, which has 2 devices; the pod asks for 1"},
		{"index beyond the node", badChooser{snapshot.DeviceSet(0).With(5), true}, gpuPod("q", "1", "500").Obj(), "chose devices [5]"},
		{"no devices at all", badChooser{0, true}, gpuPod("r", "1", "500").Obj(), "chose devices []"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := framework.New(framework.Config{DeviceChooser: tc.dc, Seed: 1})
			require.NoError(t, err)
			d, err := s.SchedulePod(c.Snapshot(), openb.MustPodInfo(tc.pod))
			require.ErrorIs(t, err, framework.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.msg)
			assert.False(t, d.Scheduled(), "the decision names node %q", d.Node)
		})
	}
}
