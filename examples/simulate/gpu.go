package main

import (
	"fmt"
	"sync"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// GPU sharing in the simulator.
//
// The library does it: the snapshot keeps device-level state as counted
// data (snapshot.NodeInfo.Devices; snapshot.PodInfo.GPU, Devices) in the
// Kubernetes mapping of the openb trace — a node advertises
// alibabacloud.com/gpu-count and gpu-milli and a model label; a pod states
// its GPU demand in annotations (gpu-count, gpu-milli per GPU,
// gpu-card-model) and, once bound, the devices it uses (gpu-index, "0-1");
// framework.GPUDevices filters, gpushare.NewScorer runs the gpushare
// policies (gpushare.NodeStateOf and TaskOf read the snapshot for them) and
// chooses devices, and the cycle's Decision carries the devices chosen;
// policies that choose no devices get replay's default chooser
// (gpushare.BestFit). What the simulator
// adds, the first two through package replay:
//
//   - every pod whose GPU demand is in annotations also requests
//     alibabacloud.com/gpu-milli = count × milli (replay.NewInput), so
//     that NodeResourcesFit checks the node's GPU total and the resource
//     scorers (most, binpack, drf, tetris, balanced) can weigh GPUs;
//   - a bind reports the pod bound with the devices the cycle chose
//     (replay.Run, through reserve.Ledger.AddPodInfo), as the GPU-sharing
//     scheduler of the trace does by writing them into the gpu-index
//     annotation;
//   - an explanation of the GPU policies' scores for -explain, and the
//     FGD paper's random device choice for the random policy.

// explainedGPU is gpushare.NewScorer with an explanation of its raw
// score: the devices the policy would use and, for FGD, how the node's
// fragmentation changes. The device choice (snapshot.DeviceChooser) and
// the name are the gpushare.Scorer's.
type explainedGPU struct {
	*gpushare.Scorer
	policy gpushare.NodeScorer
}

func newExplainedGPU(policy gpushare.NodeScorer) *explainedGPU {
	return &explainedGPU{Scorer: gpushare.NewScorer(policy), policy: policy}
}

var (
	_ score.Scorer           = (*explainedGPU)(nil)
	_ snapshot.DeviceChooser = (*explainedGPU)(nil)
)

func (e *explainedGPU) Prepare(pod *snapshot.PodInfo, c score.Cluster) (score.PodScorer, error) {
	ps, err := e.Scorer.Prepare(pod, c)
	if err != nil || ps == nil {
		return ps, err
	}
	return &explainedPod{PodScorer: ps, e: e, t: gpushare.TaskOf(pod)}, nil
}

type explainedPod struct {
	score.PodScorer
	e *explainedGPU
	t gpushare.Task
}

var _ score.Explainer = (*explainedPod)(nil)

// Explain is called by score.Profile.Explain only (-explain), never on the
// hot path.
func (p *explainedPod) Explain(ni *snapshot.NodeInfo) string {
	ns := gpushare.NodeStateOf(ni, nil)
	_, devs := p.e.policy.Score(&ns, p.t)
	detail := "devices " + fmt.Sprint(indexes(devs))
	if fgd, ok := p.e.policy.(*gpushare.FGD); ok && p.t.UsesGPU() {
		w := fgd.Workload()
		before := w.Fragmentation(&ns)
		after := before
		if ns.Place(p.t, devs) == nil {
			after = w.Fragmentation(&ns)
		}
		detail += fmt.Sprintf(", fragmentation %.1f -> %.1f milli-GPU", before, after)
	}
	return detail
}

// randomGPU is gpushare.RandomScorer (a uniformly random feasible node)
// with the FGD paper's random device choice for shared pods
// (gpushare.Random on the chosen node) instead of replay's best-fit
// default.
type randomGPU struct {
	gpushare.RandomScorer
	mu  sync.Mutex
	r   *gpushare.Random
	one []gpushare.NodeState
}

func newRandomGPU(seed uint64) *randomGPU {
	return &randomGPU{RandomScorer: gpushare.RandomScorer{Seed: seed}, r: gpushare.NewRandom(seed), one: make([]gpushare.NodeState, 1)}
}

var _ snapshot.DeviceChooser = (*randomGPU)(nil)

func (r *randomGPU) ChooseDevices(pod *snapshot.PodInfo, node *snapshot.NodeInfo) (gpushare.DeviceSet, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.one[0] = gpushare.NodeStateOf(node, r.one[0].Devices)
	d := r.r.Choose(r.one, gpushare.TaskOf(pod))
	return d.Devices, d.Node == 0
}

// indexes lists a device set, nil when empty.
func indexes(devs gpushare.DeviceSet) []int {
	if devs.Len() == 0 {
		return nil
	}
	return devs.AppendIndexes(nil)
}
