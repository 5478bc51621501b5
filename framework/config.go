package framework

import (
	"fmt"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// A Scheduler's configuration and a cycle's outcome.

// Upstream's bounds on how many feasible nodes a cycle looks for
// (kube-scheduler v1.37 pkg/scheduler/schedule_one.go).
const (
	// minFeasibleNodesToFind: clusters below this many nodes are always
	// searched whole, and no search stops before this many feasible nodes.
	minFeasibleNodesToFind = 100
	// minFeasibleNodesPercentageToFind is the floor of the adaptive
	// percentage.
	minFeasibleNodesPercentageToFind = 5
)

// numFeasibleNodesToFind is how many feasible nodes a cycle looks for
// among numAllNodes candidates before it stops filtering and scores them —
// upstream's numFeasibleNodesToFind (kube-scheduler v1.37
// schedule_one.go): all of them below minFeasibleNodesToFind; otherwise
// numAllNodes × percentage / 100 but at least MinFeasibleNodesToFind, where
// percentage 0 means adaptive: 50 − numAllNodes/125, floored at
// minFeasibleNodesPercentageToFind (5000 nodes: 10 %, 15000 nodes: 5 %).
// O(1).
func numFeasibleNodesToFind(percentage int32, numAllNodes int) int {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	p := int(percentage)
	if p == 0 {
		p = max(50-numAllNodes/125, minFeasibleNodesPercentageToFind)
	}
	return max(numAllNodes*p/100, minFeasibleNodesToFind)
}

// Config configures a [Scheduler]. The zero Config is upstream's default
// profile as far as schedkit implements it: [DefaultFilters],
// [score.DefaultProfile], the adaptive percentage of nodes to score,
// sequential filtering, seed 0.
type Config struct {
	// Filters run in order; a node's reasons come from the first filter it
	// fails. nil means DefaultFilters(); an empty non-nil slice filters
	// nothing.
	Filters []Filter
	// Profile scores the feasible nodes. nil means score.DefaultProfile();
	// a profile with no scorers means no scoring (upstream then stops at
	// the first feasible node).
	Profile *score.Profile
	// PercentageOfNodesToScore is upstream's percentageOfNodesToScore in
	// [0, 100]: 0 is adaptive, 100 filters and scores every node. A cycle
	// stops filtering after this many feasible nodes (upstream's
	// numFeasibleNodesToFind, kube-scheduler v1.37 schedule_one.go): all
	// of them below 100 nodes; otherwise nodes × percentage / 100 but at
	// least 100, where 0 means adaptive: 50 − nodes/125, floored at 5
	// (5000 nodes: 10 %, 15000 nodes: 5 %).
	PercentageOfNodesToScore int32
	// Parallelism is the number of goroutines that filter nodes; 0 or 1
	// filters in the calling goroutine. The workers exist only during a
	// call. Results do not depend on it. Only filtering is split: scoring,
	// with the default profile about as costly as filtering, runs in the
	// calling goroutine, and a filtered node costs more CPU on two
	// goroutines than on one. With the built-in filters Parallelism 2
	// therefore saves little wall time for more CPU per pod: leave it at
	// 0 unless a custom filter is expensive per node (then up to
	// runtime.GOMAXPROCS). Preempt's dry run and the equivalence cache's
	// served cycles do not use it. BenchmarkParallelismInterleaved
	// measures both costs in one process, BenchmarkScheduleParallelism
	// the curve at 5,000 and 15,000 nodes.
	Parallelism int
	// Seed seeds the tie-breaking among nodes with the same highest total.
	// The same seed, snapshot and pods give the same decisions.
	Seed uint64
	// NodeReasons fills [Diagnosis.Reasons] with every rejected node's
	// reasons, node by node, for an unschedulable pod. It costs one
	// Reason (88 bytes) per rejected node; without it a Diagnosis
	// allocates nothing per node ([Diagnosis.Counts] tallies the
	// reasons, and gives upstream's message alike).
	NodeReasons bool
	// Breakdown fills [Decision.Breakdown] with the chosen node's
	// per-scorer scores ([score.Profile.Explain]); it costs one more pass
	// of the normalising scorers per pod.
	Breakdown bool
	// EquivalenceClasses is how many pod classes (pods with equal specs,
	// derived requests and GPU requests: see the package doc) the
	// equivalence cache keeps per-node filter verdicts and scores for: a
	// positive number is the capacity; 0 means as many as fit in a budget
	// of 4,194,304 per-node entries (classes × nodes), at least 64 (838
	// classes at 5,000 nodes, 279 at 15,000, 64 from 65,536 nodes up); a
	// negative number turns the cache off. The cache changes no decision,
	// nor any error (a cached cycle that fails gives way to the full
	// cycle); it is used when no PreFilter narrows the candidates to named
	// nodes, the cluster is a *snapshot.Snapshot or *snapshot.Fork (not a
	// type embedding one), the profile has scorers, and every filter and
	// scorer is node-local, or node-local for the pod (see the package
	// doc). While the cache has room, a class gets an entry the first time
	// it is seen; once it is full, a class gets one (evicting the least
	// recently used) the second time it is seen, unless a class seen in
	// between took its slot in a 1,024-slot table of classes seen once.
	// Memory: 8 + 8 × (normalising scorers that do not skip the pod)
	// bytes and one bit per node and class, 8 more when every node is
	// scored (the ranked totals), 2 more once a pod of the class was
	// diagnosed from it, no pointers (the cache keeps no NodeInfo alive);
	// with the default profile (TaintToleration normalises, NodeAffinity
	// too for pods with preferred terms) 16–34 bytes, so the default
	// budget holds at most 67–143 MB. When every node is scored
	// (percentage 100, or fewer than 100 nodes) without Breakdown and
	// every filter and scorer the pod is prepared with is a built-in one
	// other than GPUDevices (see equivalence_shape.go), a class instead shares per-node results with the classes of equal
	// static part (tolerations, node selector, node affinity, images: 1
	// byte per node) and of equal requests and host ports (8 bytes per
	// node), at most as many of each as classes. Cost per pod served from
	// the cache: O(spec size) to find the class, the filters and scorers
	// run on the nodes changed since the class last saw them (one node per
	// pod placed since), then O(nodes) passes over cached int64s — or,
	// when every node is scored without Breakdown and the normalising
	// scorers are the built-in ones, O(blocks of 64 nodes) plus O(64) per
	// changed block; on the shared path, the nodes changed since the
	// class's request shape last looked (about one per request shape in
	// use), then three passes over a byte and an int64 per node;
	// [Scheduler.EquivalenceStats] counts how cycles were served. Every
	// class shares one table of capacities per 64-node block and per node
	// (free cpu, memory and pod slots, free devices, device models: 56
	// bytes per node, once per Scheduler), so that a class skips, without
	// filtering them, the blocks and changed nodes where NodeUnschedulable,
	// NodeResourcesFit or GPUDevices fails for it; a class's first look at
	// a full block costs a few comparisons.
	EquivalenceClasses int
	// DeviceChooser picks the GPU devices of a pod asking for some, on the
	// node chosen for it, when no scorer of the profile is a
	// [snapshot.DeviceChooser] (gpushare's policy scorers are: FGD then
	// chooses the device that lowers fragmentation most). nil leaves such
	// pods to the profile; with no chooser there, a whole-GPU
	// nvidia.com/gpu demand gets no devices (the kubelet's device plugin
	// picks them; NodeResourcesFit counts the extended resource) and
	// placing any other demand (a share schema's, e.g. the openb
	// annotations) on a node
	// with devices is an error wrapping [ErrInvalidConfig].
	// gpushare.BestFit{} is the FGD simulator's default choice.
	DeviceChooser snapshot.DeviceChooser
}

// Validate reports a percentage outside [0, 100], a negative
// parallelism, a nil filter, or invalid filter arguments (filters with a
// Validate() error method are asked), wrapping [ErrInvalidConfig].
func (c *Config) Validate() error {
	if c.PercentageOfNodesToScore < 0 || c.PercentageOfNodesToScore > 100 {
		return fmt.Errorf("framework: percentageOfNodesToScore %d: want [0, 100]: %w", c.PercentageOfNodesToScore, ErrInvalidConfig)
	}
	if c.Parallelism < 0 {
		return fmt.Errorf("framework: parallelism %d is negative: %w", c.Parallelism, ErrInvalidConfig)
	}
	for i, f := range c.Filters {
		if f == nil {
			return fmt.Errorf("framework: filters[%d] is nil: %w", i, ErrInvalidConfig)
		}
		if v, ok := f.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return fmt.Errorf("framework: filters[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// Decision is the outcome of one scheduling cycle for one pod: the chosen
// node, or a [Diagnosis] saying why there is none.
type Decision struct {
	// Pod is the pod scheduled. For a pod asking for GPU devices that was
	// placed on a node with devices, it is a copy recording the devices
	// chosen (PodInfo.Devices): the profile's first snapshot.DeviceChooser
	// decides, else Config.DeviceChooser. Reserve and bind this one.
	Pod *snapshot.PodInfo
	// Node is the chosen node's name; "" when the pod is unschedulable.
	Node string
	// Total is the chosen node's weighted total score.
	Total int64
	// Breakdown is the chosen node's per-scorer scores when
	// Config.Breakdown is set, else nil.
	Breakdown *score.Explanation
	// Feasible is the number of nodes that passed the filters and were
	// scored; Evaluated the number of nodes filtered (upstream's
	// FeasibleNodes and EvaluatedNodes).
	Feasible, Evaluated int
	// Diagnosis is non-nil exactly when the pod fits no node.
	Diagnosis *Diagnosis
}

// Scheduled reports whether a node was chosen.
func (d *Decision) Scheduled() bool { return d.Diagnosis == nil && d.Node != "" }
