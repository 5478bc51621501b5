package main

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// GPU sharing in the simulator.
//
// The library does it: the snapshot keeps device-level state
// (snapshot.NodeInfo.Devices, GPUState; snapshot.PodInfo.GPU, Task,
// Devices) in the Kubernetes mapping of the openb trace — a node advertises
// alibabacloud.com/gpu-count and gpu-milli and a model label; a pod states
// its GPU demand in annotations (gpu-count, gpu-milli per GPU,
// gpu-card-model) and, once bound, the devices it uses (gpu-index, "0-1");
// framework.GPUDevices filters, score.GPUShare runs the gpushare policies,
// and the cycle's Decision carries the devices chosen. What the simulator
// adds:
//
//   - every pending pod whose GPU demand is in annotations also requests
//     alibabacloud.com/gpu-milli = count × milli, so that NodeResourcesFit
//     checks the node's GPU total and the resource scorers (most, binpack,
//     drf, tetris, balanced) can weigh GPUs;
//   - a bind reports the pod bound with the devices the cycle chose
//     (reserve.Ledger.AddPodInfo), as the GPU-sharing scheduler of the trace
//     does by writing them into the gpu-index annotation;
//   - an explanation of the GPU policies' scores for -explain, and the
//     FGD paper's random device choice for the random policy.

// preparePod returns pod with its annotated GPU demand also requested as
// alibabacloud.com/gpu-milli (on the first container), or pod itself for a
// pod without the annotation, without GPU demand, or requesting it already.
func preparePod(pod *v1.Pod, t gpushare.Task) *v1.Pod {
	if _, ok := pod.Annotations[snapshot.AnnotationGPUCount]; !ok || !t.UsesGPU() || len(pod.Spec.Containers) == 0 {
		return pod
	}
	if _, ok := pod.Spec.Containers[0].Resources.Requests[snapshot.ResourceGPUMilli]; ok {
		return pod
	}
	c := *pod
	c.Spec.Containers = append([]v1.Container(nil), pod.Spec.Containers...)
	ctr := &c.Spec.Containers[0]
	req := make(v1.ResourceList, len(ctr.Resources.Requests)+1)
	for k, v := range ctr.Resources.Requests {
		req[k] = v
	}
	req[snapshot.ResourceGPUMilli] = *resource.NewQuantity(t.TotalMilliGPU(), resource.DecimalSI)
	ctr.Resources.Requests = req
	return &c
}

// explainedGPU is score.GPUShare with an explanation of its raw score:
// the devices the policy would use and, for FGD, how the node's
// fragmentation changes. The device choice (score.DeviceChooser) and the
// name are GPUShare's.
type explainedGPU struct {
	*score.GPUShareScorer
	policy gpushare.Scorer
}

func newExplainedGPU(policy gpushare.Scorer) *explainedGPU {
	return &explainedGPU{GPUShareScorer: score.GPUShare(policy), policy: policy}
}

var (
	_ score.Scorer        = (*explainedGPU)(nil)
	_ score.DeviceChooser = (*explainedGPU)(nil)
)

func (e *explainedGPU) Prepare(pod *snapshot.PodInfo, c score.Cluster) (score.PodScorer, error) {
	ps, err := e.GPUShareScorer.Prepare(pod, c)
	if err != nil || ps == nil {
		return ps, err
	}
	return &explainedPod{PodScorer: ps, e: e, t: pod.Task()}, nil
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
	ns := ni.GPUState(nil)
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

// randomGPU is score.RandomGPU (a uniformly random feasible node) with the
// FGD paper's random device choice for shared pods (gpushare.Random on the
// chosen node) instead of the framework's best-fit default.
type randomGPU struct {
	score.RandomGPU
	mu  sync.Mutex
	r   *gpushare.Random
	one []gpushare.NodeState
}

func newRandomGPU(seed uint64) *randomGPU {
	return &randomGPU{RandomGPU: score.RandomGPU{Seed: seed}, r: gpushare.NewRandom(seed), one: make([]gpushare.NodeState, 1)}
}

var _ score.DeviceChooser = (*randomGPU)(nil)

func (r *randomGPU) ChooseDevices(pod *snapshot.PodInfo, node *snapshot.NodeInfo) (gpushare.DeviceSet, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.one[0] = node.GPUState(r.one[0].Devices)
	d := r.r.Choose(r.one, pod.Task())
	return d.Devices, d.Node == 0
}

// indexes lists a device set, nil when empty.
func indexes(devs gpushare.DeviceSet) []int {
	if devs.Len() == 0 {
		return nil
	}
	return devs.AppendIndexes(nil)
}
