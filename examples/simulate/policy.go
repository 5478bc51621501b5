package main

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/score"
)

// policyDef is a scheduling policy the simulator knows by name. Every
// policy is a score.Profile over the same filters (upstream's default
// filters plus the GPU device filter); the GPU policies add the device
// choice of their gpushare scorer.
type policyDef struct {
	name string
	doc  string
	gpu  bool // a GPU policy: scores all nodes, chooses devices itself
	// tie is the default tie-break (tieRandom or tieOrder); fixed marks
	// a policy whose tie-break is the policy itself (random).
	tie   string
	fixed bool
	// profile builds the policy's profile for one run. A GPU policy's
	// first scorer also chooses the devices (snapshot.DeviceChooser); the
	// others leave them to the framework's best fit.
	profile func(env *policyEnv) (*score.Profile, error)
}

// policyEnv is what a policy needs to build its scorers for one run.
type policyEnv struct {
	c    *cluster
	seed uint64
}

// gpuResource is the resource the resource scorers weigh GPUs by.
var gpuResource = score.ResourceSpec{Name: openb.ResourceGPUMilli, Weight: 1}

func cpuMem() []score.ResourceSpec {
	return []score.ResourceSpec{{Name: v1.ResourceCPU, Weight: 1}, {Name: v1.ResourceMemory, Weight: 1}}
}

func cpuMemGPU() []score.ResourceSpec { return append(cpuMem(), gpuResource) }

// one wraps a single scorer in a profile.
func one(s score.Scorer, err error) (*score.Profile, error) {
	if err != nil {
		return nil, err
	}
	return score.NewProfile(score.Weighted{Scorer: s, Weight: 1})
}

// gpuPolicy builds the profile of a gpushare policy (gpushare.NewScorer).
func gpuPolicy(mk func(env *policyEnv) gpushare.NodeScorer) func(env *policyEnv) (*score.Profile, error) {
	return func(env *policyEnv) (*score.Profile, error) {
		return score.NewProfile(score.Weighted{Scorer: newExplainedGPU(mk(env)), Weight: 1})
	}
}

// policies lists every policy, Kubernetes ones first.
var policies = []policyDef{
	{name: "default", tie: tieRandom, doc: "kube-scheduler's default scoring (score.DefaultProfile): TaintToleration, NodeAffinity, LeastAllocated, PodTopologySpread, InterPodAffinity, BalancedAllocation, ImageLocality",
		profile: func(*policyEnv) (*score.Profile, error) { return score.DefaultProfile(), nil }},
	{name: "least", tie: tieRandom, doc: "NodeResourcesFit LeastAllocated on cpu, memory (spread)",
		profile: func(*policyEnv) (*score.Profile, error) { return one(score.NewLeastAllocated(cpuMem()...)) }},
	{name: "most", tie: tieRandom, doc: "NodeResourcesFit MostAllocated on cpu, memory, GPU (pack)",
		profile: func(*policyEnv) (*score.Profile, error) { return one(score.NewMostAllocated(cpuMemGPU()...)) }},
	{name: "balanced", tie: tieRandom, doc: "NodeResourcesBalancedAllocation on cpu, memory, GPU",
		profile: func(*policyEnv) (*score.Profile, error) {
			return one(score.NewBalancedAllocation(v1.ResourceCPU, v1.ResourceMemory, openb.ResourceGPUMilli))
		}},
	{name: "binpack", tie: tieRandom, doc: "Volcano binpack on cpu, memory, GPU",
		profile: func(*policyEnv) (*score.Profile, error) { return one(score.NewBinPack(cpuMemGPU()...)) }},
	{name: "drf", tie: tieRandom, doc: "dominant-resource share packing on cpu, memory, GPU",
		profile: func(*policyEnv) (*score.Profile, error) {
			return one(score.NewDominantResource(cpuMemGPU()...))
		}},
	{name: "tetris", tie: tieRandom, doc: "Tetris dot-product alignment on cpu, memory, GPU (score.DotProduct)",
		profile: func(*policyEnv) (*score.Profile, error) { return one(score.NewTetris(cpuMemGPU()...)) }},
	{name: "fgd", gpu: true, tie: tieOrder, doc: "Fragmentation Gradient Descent (Weng et al., ATC'23), target workload learned from the pods",
		profile: gpuPolicy(func(env *policyEnv) gpushare.NodeScorer { return gpushare.NewFGD(env.c.workload) })},
	{name: "bestfit", gpu: true, tie: tieOrder, doc: "FGD paper's BestFit baseline (least free CPU and GPU left)",
		profile: gpuPolicy(func(*policyEnv) gpushare.NodeScorer { return gpushare.BestFit{} })},
	{name: "dotprod", gpu: true, tie: tieOrder, doc: "FGD paper's DotProduct baseline (cpu, GPU)",
		profile: gpuPolicy(func(*policyEnv) gpushare.NodeScorer { return gpushare.DotProduct{} })},
	{name: "gpupacking", gpu: true, tie: tieOrder, doc: "FGD paper's GpuPacking baseline (partly used GPUs first)",
		profile: gpuPolicy(func(*policyEnv) gpushare.NodeScorer { return gpushare.GPUPacking{} })},
	{name: "gpuclustering", gpu: true, tie: tieOrder, doc: "FGD paper's GpuClustering baseline (same-class tasks together)",
		profile: gpuPolicy(func(*policyEnv) gpushare.NodeScorer { return gpushare.GPUClustering{} })},
	{name: "random", gpu: true, tie: tieRandom, fixed: true, doc: "FGD paper's Random baseline: uniform among feasible nodes and devices",
		profile: func(env *policyEnv) (*score.Profile, error) {
			return score.NewProfile(score.Weighted{Scorer: newRandomGPU(env.seed), Weight: 1})
		}},
}

// lookupPolicies resolves a comma-separated list ("all" for every policy).
// An empty element ("default,,least", a leading or trailing comma) is an
// error naming its position; an unknown name or a name listed twice is an
// error naming it.
func lookupPolicies(list string) ([]*policyDef, error) {
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("no policy given")
	}
	var out []*policyDef
	pos := 0
	for name := range strings.SplitSeq(list, ",") {
		pos++
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			return nil, fmt.Errorf("%q: element %d is empty, want comma-separated policy names, or all", list, pos)
		}
		if name == "all" {
			for i := range policies {
				out = append(out, &policies[i])
			}
			continue
		}
		i := slices.IndexFunc(policies, func(p policyDef) bool { return p.name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown policy %q (want %s, or all)", name, strings.Join(policyNames(), ", "))
		}
		if slices.Contains(out, &policies[i]) {
			return nil, fmt.Errorf("policy %q listed twice", name)
		}
		out = append(out, &policies[i])
	}
	return out, nil
}

func policyNames() []string {
	names := make([]string, len(policies))
	for i, p := range policies {
		names[i] = p.name
	}
	return names
}
