package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/snapshot"
)

// runSpec is one replay: a policy over the cluster with one seed.
type runSpec struct {
	policy *policyDef
	// seed drives the cycle's tie-break and the random policy; with
	// shuffled it also shuffles the arrivals (and draws -inflate clones).
	seed       uint64
	shuffled   bool
	inflate    float64 // 0: none
	departures bool
	percentage int32  // percentageOfNodesToScore
	tieBreak   string // tieRandom or tieOrder
	explain    string
	preemption bool
}

// usage is replay.Usage (the JSON of a run's cpu, memory and gpu).
type usage = replay.Usage

// runResult is the outcome of one replay: the engine's report and the
// policy, seed and curve the simulator adds.
type runResult struct {
	Policy     string `json:"policy"`
	Seed       uint64 `json:"seed"`
	Percentage int32  `json:"percentageOfNodesToScore"`
	replay.Report
	// Running is replay.Report.Running (-preemption only, nil without).
	Running *int `json:"running,omitempty"`
	// Curve is the run's allocation curve (see summary.Curve).
	Curve []*float64 `json:"curve"`
	// Skew is how evenly the run left its workloads spread (objects
	// input only; see keySkew).
	Skew []keySkew `json:"skew,omitempty"`
}

// arrivals returns the pods in arrival order for spec: the input order,
// or shuffled with the seed; then inflated with clones drawn with the
// seed until the demand reaches spec.inflate × capacity (FGD paper's
// -tune: the draw that would pass the target stops it), or trimmed by
// random removals when the demand already exceeds it.
func (c *cluster) arrivals(spec *runSpec) ([]*snapshot.PodInfo, error) {
	order := slices.Clone(c.pods)
	r := rand.New(rand.NewPCG(spec.seed, 0xa11ce))
	if spec.shuffled {
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	if spec.inflate <= 0 || len(c.pods) == 0 {
		return order, nil
	}
	target := spec.inflate * float64(c.capacity())
	var total int64
	for _, pi := range order {
		total += c.demand(gpushare.TaskOf(pi))
	}
	for n := 0; float64(total) < target; n++ {
		src := c.pods[r.IntN(len(c.pods))]
		d := c.demand(gpushare.TaskOf(src))
		if float64(total+d) > target {
			break
		}
		p := *src.Pod()
		p.Name = src.Key().Name + "-clone-" + strconv.Itoa(n)
		pi, err := snapshot.DecodePodInfo(&p, openb.Devices)
		if err != nil {
			return nil, err
		}
		order = append(order, pi.Lean())
		total += d
	}
	for float64(total) > target && len(order) > 0 {
		i := r.IntN(len(order))
		total -= c.demand(gpushare.TaskOf(order[i]))
		order = slices.Delete(order, i, i+1)
	}
	return order, nil
}

// classBudget is how many per-node entries (classes × nodes, each 8
// bytes plus 8 per normalising scorer, 16 with -policy default, and 2
// more for a class that diagnosed a pod) the cycle's equivalence cache
// may hold in a replay: sixteen times framework's default, so that the
// built-in workload's classes (1,167 at -scale 100, most of its pods in a
// few hundred of them) stay cached up to 57,000 nodes and the 447 most
// recently used at 150,000 (-scale 100), where an evicted class's next
// pod costs a full cycle (filtering about 10,000 to 30,000 nodes); at
// most about 1.2 GB with -policy default.
const classBudget = 1 << 26

// equivalenceClasses is replay.Config.EquivalenceClasses for n nodes:
// classBudget's share, at least 64 (framework's minimum).
func equivalenceClasses(n int) int { return max(64, classBudget/max(n, 1)) }

// replay runs spec over c and returns its result; prog counts the events
// processed.
func (c *cluster) replay(ctx context.Context, spec *runSpec, prog *progress) (*runResult, error) {
	order, err := c.arrivals(spec)
	if err != nil {
		return nil, err
	}
	profile, err := spec.policy.profile(&policyEnv{c: c, seed: spec.seed})
	if err == nil && spec.tieBreak == tieOrder {
		profile, err = withRankTieBreak(profile, c.nodes, spec.seed)
	}
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", spec.policy.name, err)
	}
	in := &replay.Input{Devices: openb.Devices, Nodes: c.nodes, Bound: c.bound, Batch: c.batch, Objects: c.objects, Arrivals: make([]replay.Arrival, len(order))}
	for i, pi := range order {
		in.Arrivals[i].Pod = pi
		// Clones drawn by -inflate have no trace times (and -inflate
		// excludes -departures).
		if idx, orig := c.index[pi]; orig && spec.departures {
			in.Arrivals[i].At, in.Arrivals[i].Leave, in.Arrivals[i].Leaves = c.creation[idx], c.deletion[idx], c.hasDeletion[idx]
		}
	}
	rep, err := replay.Run(ctx, in, replay.Config{
		Filters:                  append(framework.DefaultFilters(), framework.NewGPUDevices()),
		Profile:                  profile,
		PercentageOfNodesToScore: spec.percentage,
		Seed:                     spec.seed,
		Departures:               spec.departures,
		Explain:                  spec.explain,
		Workload:                 c.workload,
		LeanPods:                 true,
		EquivalenceClasses:       equivalenceClasses(len(c.nodes)),
		Preemption:               spec.preemptOptions(),
		Progress: func(done, total int) {
			if done == 1 {
				prog.total.Add(int64(total - len(c.pods))) // simulate counted len(c.pods) per run
			}
			prog.done.Add(1)
		},
	})
	if err != nil {
		return nil, fromReplay(err)
	}
	res := &runResult{Policy: spec.policy.name, Seed: spec.seed, Percentage: spec.percentage, Report: *rep}
	if spec.preemption {
		n := rep.Running()
		res.Running = &n
	}
	res.Curve = res.curve()
	if c.objectsInput {
		res.Skew = workloadSkew(rep.Final)
	}
	return res, nil
}
