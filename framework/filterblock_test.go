package framework

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/internal/taints"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// The built-in filters read the node's CPUMemory and FilterBlock; these
// plain versions read the vectors, taints and device list instead (the
// filters as they were written first). They must agree reason for reason.

func refFit(pod *snapshot.PodInfo, ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	alloc, used, req := ni.Allocatable(), ni.Requested(), pod.Requested()
	if pods, allowed := int64(ni.NumPods()), alloc.AllowedPodNumber(); pods+1 > allowed {
		reasons = append(reasons, Reason{Code: CodeTooManyPods, Insufficient: snapshot.Insufficient{Resource: snapshot.Pods, Requested: 1, Used: pods, Capacity: allowed}})
	}
	for r := snapshot.CPU; int(r) < req.Len(); r++ {
		if r != snapshot.Pods {
			reasons = checkResource(reasons, r, req.Get(r), alloc.Get(r), used.Get(r))
		}
	}
	return reasons
}

func refTaints(pod *snapshot.PodInfo, ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	tols := pod.Pod().Spec.Tolerations
	for i := range ni.Taints() {
		t := &ni.Taints()[i]
		if (t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute) && !taints.Any(tols, t) {
			return append(reasons, Reason{Code: CodeUntoleratedTaint, Taint: t, Unresolvable: true})
		}
	}
	return reasons
}

func refUnschedulable(pod *snapshot.PodInfo, ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	if ni.Node().Spec.Unschedulable && !taints.Any(pod.Pod().Spec.Tolerations, &unschedulableTaint) {
		reasons = append(reasons, Reason{Code: CodeNodeUnschedulable, Unresolvable: true})
	}
	return reasons
}

func refGPU(pod *snapshot.PodInfo, ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	t := gpushare.TaskOf(pod)
	usable, anyModel := 0, false
	for _, d := range ni.Devices() {
		if !t.Allows(d.Model) {
			continue
		}
		anyModel = true
		if d.FreeMilliGPU >= t.MilliGPU {
			usable++
		}
	}
	if usable >= t.GPUCount {
		return reasons
	}
	text := "Insufficient GPU devices"
	if !anyModel {
		text = "node(s) had no GPU of an allowed model"
	}
	n := len(ni.Devices())
	return append(reasons, Reason{Plugin: GPUDevicesName, Node: ni.Name(), Code: CodeCustom, Text: text,
		Insufficient: snapshot.Insufficient{Requested: int64(t.GPUCount), Used: int64(n - usable), Capacity: int64(n)}, Unresolvable: n < t.GPUCount})
}

func fbNode(rng *rand.Rand, name string) *v1.Node {
	w := snapshottest.MakeNode(name)
	res := []string{"cpu", fmt.Sprint(1 + rng.IntN(16)), "memory", fmt.Sprintf("%dGi", 1+rng.IntN(64)), "pods", fmt.Sprint(rng.IntN(5)),
		"example.com/a", fmt.Sprint(rng.IntN(3)), "example.com/b", fmt.Sprint(rng.IntN(3)), "example.com/c", fmt.Sprint(rng.IntN(3)),
		"ephemeral-storage", fmt.Sprintf("%dGi", rng.IntN(3))}
	if gpus := rng.IntN(10); gpus > 0 {
		res = append(res, "alibabacloud.com/gpu-count", fmt.Sprint(gpus), "alibabacloud.com/gpu-milli", fmt.Sprint(gpus*[]int{500, 1000, 70000}[rng.IntN(3)]))
		if m := []string{"", "A10", "T4", "V100M16"}[rng.IntN(4)]; m != "" {
			w = w.Label(openb.LabelGPUModel, m)
		}
	}
	w = w.Capacity(res...)
	switch rng.IntN(6) {
	case 0:
		w = w.Unschedulable()
	case 1:
		w = w.Taint("soft", "", v1.TaintEffectPreferNoSchedule)
	case 2:
		w = w.Taint("soft", "", v1.TaintEffectPreferNoSchedule).Taint("hard", "x", v1.TaintEffectNoExecute)
	case 3:
		w = w.Taint("hard", []string{"x", "y"}[rng.IntN(2)], v1.TaintEffectNoSchedule)
	}
	return w.Obj()
}

func fbPod(rng *rand.Rand, name string) *v1.Pod {
	w := snapshottest.MakePod(name).Req("cpu", fmt.Sprintf("%dm", rng.IntN(4000)), "memory", fmt.Sprintf("%dMi", rng.IntN(8000)),
		[]string{"example.com/a", "example.com/b", "example.com/c", "ephemeral-storage"}[rng.IntN(4)], fmt.Sprint(rng.IntN(3)))
	if rng.IntN(2) == 0 {
		w = w.Annotation(openb.AnnotationGPUCount, fmt.Sprint(1+rng.IntN(9))).
			Annotation(openb.AnnotationGPUMilli, fmt.Sprint([]int{1, 250, 500, 999, 1000}[rng.IntN(5)]))
		if m := []string{"", "T4", "T4|V100M16", "|A10", "H100"}[rng.IntN(5)]; m != "" {
			w = w.Annotation(openb.AnnotationGPUModel, m)
		}
	}
	if rng.IntN(3) == 0 {
		w = w.Toleration("hard", v1.TolerationOpEqual, "x", v1.TaintEffectNoSchedule)
	}
	if rng.IntN(5) == 0 {
		w = w.Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule)
	}
	return w.Obj()
}

// fbCluster is a fork of 12 random nodes n0..n11 with 40 random pods
// bound; bound pods may over-commit (the cache accepts what the informer
// reports).
func fbCluster(t *testing.T, rng *rand.Rand) *snapshot.Fork {
	var nodes []*v1.Node
	for i := range 12 {
		nodes = append(nodes, fbNode(rng, fmt.Sprintf("n%d", i)))
	}
	f := snapshottest.SnapshotWithDevices(t, openb.Devices, nodes).Fork()
	for i := range 40 {
		_ = f.AddPod(fbPod(rng, fmt.Sprintf("b%d", i)), fmt.Sprintf("n%d", rng.IntN(12)))
	}
	return f
}

// TestFiltersAgainstPlainReference runs the built-in filters and their
// plain versions on random nodes with random pods bound (devices partly
// used, over-full nodes, taints, several scalar resources).
func TestFiltersAgainstPlainReference(t *testing.T) {
	type pair struct {
		f   Filter
		ref func(*snapshot.PodInfo, *snapshot.NodeInfo, []Reason) []Reason
	}
	pairs := []pair{{&nodeResourcesFitPlugin{}, refFit}, {taintTolerationPlugin{}, refTaints}, {nodeUnschedulablePlugin{}, refUnschedulable}, {gpuDevicesPlugin{}, refGPU}}
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 3))
		f := fbCluster(t, rng)
		for i := range 40 {
			pod := openb.MustPodInfo(fbPod(rng, fmt.Sprintf("p%d", i)))
			for _, p := range pairs {
				res, err := p.f.PreFilter(pod)
				require.NoError(t, err)
				for j := range f.NumNodes() {
					ni := f.Node(j)
					want := flatten(p.ref(pod, ni, nil))
					if res.Filter == nil {
						require.Empty(t, want, "seed %d pod %d %s node %s: skipped but the reference rejects", seed, i, p.f.Name(), ni.Name())
						continue
					}
					require.Equal(t, want, flatten(res.Filter.Filter(ni, nil)), "seed %d pod %d %s node %s", seed, i, p.f.Name(), ni.Name())
				}
			}
		}
	}
}

// renamedFit is NodeResourcesFit under another plugin name: its prepared
// filter is fused, and its reasons must carry the other name.
type renamedFit struct{ nodeResourcesFitPlugin }

func (renamedFit) Name() string { return "MyFit" }

// TestFusedFiltersAgree checks that fusing the prepared filters changes
// no node's outcome or reasons (plugin and node names included), for
// filter lists in upstream's order, shuffled (runs out of order are not
// fused, or fused in parts), with a renamed plugin and with a filter that
// cannot be fused in between.
func TestFusedFiltersAgree(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 5))
		f := fbCluster(t, rng)
		filters := append(DefaultFilters(), gpuDevicesPlugin{})
		switch seed % 4 {
		case 1:
			rng.Shuffle(len(filters), func(i, j int) { filters[i], filters[j] = filters[j], filters[i] })
		case 2:
			filters = []Filter{nodeUnschedulablePlugin{}, &renamedFit{}, gpuDevicesPlugin{}}
		case 3:
			filters = []Filter{nodeUnschedulablePlugin{}, taintTolerationPlugin{}, nodePortsPlugin{}, &nodeResourcesFitPlugin{}, gpuDevicesPlugin{}}
		}
		s := mustNew(t, Config{Filters: filters, NodeReasons: true})
		for i := range 40 {
			w := fbPod(rng, fmt.Sprintf("p%d", i))
			if i%3 == 0 {
				w.Spec.Containers[0].Ports = []v1.ContainerPort{{HostPort: 8080, ContainerPort: 80}}
			}
			pod := openb.MustPodInfo(w)
			preparedFilters(t, s, pod, f, false)
			plain := &Scheduler{pfs: slices.Clone(s.pfs), pfNames: slices.Clone(s.pfNames), nodeReasons: true}
			s.fuse()
			if (seed%4 == 0 && i%3 != 0) || seed%4 == 2 {
				require.Len(t, s.pfs, 1, "seed %d pod %d: one fused pass", seed, i)
			}
			for j := range f.NumNodes() {
				ni := f.Node(j)
				var w1, w2 worker
				ok1, ok2 := plain.filterNode(ni, &w1, 0), s.filterNode(ni, &w2, 0)
				require.Equal(t, ok1, ok2, "seed %d pod %d node %s", seed, i, ni.Name())
				require.Equal(t, w1.reasons, w2.reasons, "seed %d pod %d node %s", seed, i, ni.Name())
				require.Equal(t, w1.tally, w2.tally, "seed %d pod %d node %s", seed, i, ni.Name())
				require.Equal(t, len(w1.reasons) > 0, len(w1.tally) > 0, "seed %d pod %d node %s", seed, i, ni.Name())
				// A worker that has found a feasible node drops reasons.
				w3 := worker{feasible: []*snapshot.NodeInfo{ni}}
				require.Equal(t, ok1, s.filterNode(ni, &w3, 0), "seed %d pod %d node %s", seed, i, ni.Name())
				require.Empty(t, w3.reasons)
				require.Empty(t, w3.tally)
			}
		}
	}
}

// TestNodeSelectorAgainstLabelMap checks spec.nodeSelector by label
// handles against a plain look-up in the node's label map, on random
// labels and selectors (missing keys, other values, empty values).
func TestNodeSelectorAgainstLabelMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	vals := []string{"", "a", "b"}
	keys := []string{"zone", "rack", "example.com/pool", "kubernetes.io/hostname"}
	var nodes []*v1.Node
	for i := range 40 {
		n := snapshottest.MakeNode(fmt.Sprintf("n%d", i)).Obj()
		for _, k := range keys[:rng.IntN(len(keys)+1)] {
			n.Labels[k] = vals[rng.IntN(len(vals))]
		}
		nodes = append(nodes, n)
	}
	snap := snapshottest.SnapshotWithDevices(t, openb.Devices, nodes)
	for i := range 200 {
		sel := map[string]string{}
		for range 1 + rng.IntN(3) {
			sel[keys[rng.IntN(len(keys))]] = vals[rng.IntN(len(vals))]
		}
		if i%7 == 0 {
			sel["kubernetes.io/hostname"] = fmt.Sprintf("n%d", rng.IntN(40))
		}
		pod := snapshottest.MakePod(fmt.Sprintf("p%d", i)).Obj()
		pod.Spec.NodeSelector = sel
		res, err := (&nodeAffinityPlugin{}).PreFilter(openb.MustPodInfo(pod))
		require.NoError(t, err)
		for _, ni := range snap.Nodes() {
			match := true
			for k, v := range sel {
				if got, ok := ni.Node().Labels[k]; !ok || got != v {
					match = false
				}
			}
			require.Equal(t, match, len(res.Filter.Filter(ni, nil)) == 0, "selector %v node %v", sel, ni.Node().Labels)
		}
	}
}
