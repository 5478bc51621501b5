package replay

import (
	"time"

	"github.com/schedkit/schedkit/snapshot"
)

// Report is the outcome of one [Run]. Counts are pods; amounts are in the
// unit their [Usage] names. The JSON names are the ones
// examples/simulate prints for a run.
type Report struct {
	// Arrived counts the pods that went through a scheduling cycle;
	// Placed + Unschedulable = Arrived. Placed includes the pods that
	// were later evicted (Config.Preemption) or departed; [Report.Running]
	// is the ones still running after the last arrival.
	Arrived       int `json:"arrived"`
	Placed        int `json:"placed"`
	Unschedulable int `json:"unschedulable"`
	// Skipped counts the arrivals dropped without a cycle because they
	// were being deleted (metadata.deletionTimestamp set; framework's
	// Attempt.Skipped, as upstream's skipPodSchedule): not in Arrived,
	// not placed, not unschedulable.
	Skipped int `json:"skipped,omitempty"`
	// Departed counts the placed pods that left (Config.Departures).
	Departed int `json:"departed"`
	// Preemptions counts the preemptions (Config.Preemption): a pod that
	// fit nowhere had Evicted pods evicted and went through another
	// cycle. PreemptionsByPriority splits them by the preemptor's
	// priority, EvictedByPriority the evicted pods by their own. Empty
	// without Config.Preemption.
	Preemptions int `json:"preemptions,omitempty"`
	Evicted     int `json:"evicted,omitempty"`
	// EvictedPlaced counts the evicted pods that were arrivals placed by
	// the run; the other Evicted - EvictedPlaced were bound in the input
	// (Input.Bound).
	EvictedPlaced         int           `json:"evictedPlaced,omitempty"`
	PreemptionsByPriority map[int32]int `json:"preemptionsByPriority,omitempty"`
	EvictedByPriority     map[int32]int `json:"evictedByPriority,omitempty"`
	// Reasons counts the unschedulable pods by the reason most nodes gave
	// (the PreFilter's message when one rejected the pod outright), in
	// upstream's words: "Insufficient cpu", "node(s) had untolerated
	// taint {k: v}".
	Reasons map[string]int `json:"reasons,omitempty"`
	// FirstFailure is "namespace/name: <message>" of the first
	// unschedulable pod, "" when every pod was placed; the message is
	// upstream's FitError (framework.Attempt.FailureMessage: the filter
	// diagnosis, then the preemption message when preemption ran).
	FirstFailure string `json:"firstFailure,omitempty"`
	// CPU, Memory and GPU are the requested and allocatable amounts
	// summed over the nodes after the last arrival (time-weighted means
	// with Config.Departures: TimeWeighted).
	CPU    Usage `json:"cpu"`
	Memory Usage `json:"memory"`
	GPU    Usage `json:"gpu"`
	// GPUFragmentationRatio (0-1) is the share of the free GPU capacity
	// that pods shaped like Config.Workload cannot use (FGD paper,
	// section 4; gpushare.Workload.FragmentationRatio), after the last
	// arrival; 0 without GPUs or without a Workload.
	GPUFragmentationRatio float64 `json:"gpuFragmentationRatio"`
	// NodesUsed counts the nodes running at least one pod (bound pods
	// included).
	NodesUsed int `json:"nodesUsed"`
	// TimeWeighted: with Config.Departures, CPU, Memory, GPU and
	// NodesUsed are means over the trace time from the first to the last
	// arrival (the fragmentation ratio stays the state at the last
	// arrival).
	TimeWeighted bool `json:"timeWeighted,omitempty"`
	// Nodes is the number of nodes of the cluster.
	Nodes int `json:"nodes"`
	// Wall is the time the scheduling loop took (input preparation
	// excluded); see [Report.PodsPerSecond].
	Wall time.Duration `json:"-"`
	// Explain is the decision for the pod Config.Explain names, nil when
	// none was asked for or the pod never arrived.
	Explain *Explanation `json:"explain,omitempty"`

	// Placements lists where every pod went: the bound pods of the
	// input first, then one entry per arrival in the order they were
	// scheduled.
	Placements []Placement `json:"-"`
	// Samples has one entry per arrival, in the order they were
	// scheduled: the demand arrived and allocated so far along the demand
	// axis (DemandAxis, Capacity).
	Samples []Sample `json:"-"`
	// DemandAxis is "GPU" for a cluster with GPU devices, "CPU"
	// otherwise; Capacity is the cluster's allocatable amount along it,
	// in milli-GPU or milli-CPU.
	DemandAxis string `json:"-"`
	Capacity   int64  `json:"-"`
	// Final is the cluster after the last arrival (departures after it
	// are not replayed). The caller owns it; it is immutable.
	Final *snapshot.Snapshot `json:"-"`
}

// Running is the number of arrivals on a node after the last arrival:
// Placed - EvictedPlaced - Departed (equal to Placed without
// Config.Preemption and Config.Departures). O(1).
func (r *Report) Running() int {
	return r.Placed - r.EvictedPlaced - r.Departed
}

// PodsPerSecond is Arrived / Wall in pods per second, 0 when Wall is 0.
func (r *Report) PodsPerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Arrived) / r.Wall.Seconds()
}

// Usage is a requested and an allocatable amount summed over the nodes,
// in Unit ("milliCPU", "bytes" or "milliGPU"), and their ratio
// Requested / Allocatable (0 when Allocatable is 0).
type Usage struct {
	Requested   int64   `json:"requested"`
	Allocatable int64   `json:"allocatable"`
	Unit        string  `json:"unit"`
	Ratio       float64 `json:"ratio"`
}

func newUsage(req, alloc int64, unit string) Usage {
	u := Usage{Requested: req, Allocatable: alloc, Unit: unit}
	if alloc > 0 {
		u.Ratio = float64(req) / float64(alloc)
	}
	return u
}

// Placement is where one pod went.
type Placement struct {
	// Pod is "namespace/name".
	Pod string `json:"pod"`
	// Node is "" when the pod was unschedulable.
	Node string `json:"node,omitempty"`
	// Devices are the GPU indexes the pod holds on Node (none for a pod
	// without GPUs).
	Devices []int `json:"devices,omitempty"`
	// Bound marks a pod bound in the input (Input.Bound), not scheduled.
	Bound bool `json:"prebound,omitempty"`
}

// Sample is the state after one arrival, along the demand axis
// (Report.DemandAxis), in milli-units: the demand of every pod arrived
// so far, and the demand of the pods placed and not departed.
type Sample struct {
	Arrived, Allocated int64
}

// Explanation is the scheduling decision of the pod Config.Explain names.
type Explanation struct {
	// Pod is "namespace/name"; Node is "" when it was unschedulable.
	Pod     string `json:"pod"`
	Node    string `json:"node,omitempty"`
	Devices []int  `json:"devices,omitempty"`
	// Total is the winning node's weighted score total; Feasible and
	// Evaluated are the nodes that passed the filters and the nodes the
	// cycle filtered (framework.Decision).
	Total     int64 `json:"total"`
	Feasible  int   `json:"feasible"`
	Evaluated int   `json:"evaluated"`
	// Breakdown is the score table of the chosen node
	// (score.Breakdown.String); Diagnosis is upstream's FitError message
	// for an unschedulable pod ("0/3 nodes are available: ...", then the
	// preemption message when preemption ran;
	// framework.Attempt.FailureMessage).
	Breakdown string `json:"breakdown,omitempty"`
	Diagnosis string `json:"diagnosis,omitempty"`
	// Arrival is the pod's 1-based position among the arrivals.
	Arrival int `json:"arrival"`
	// Filtered says why the nodes that cannot run the pod were filtered,
	// over every node of the cluster as the pod's cycle saw it (the cycle
	// itself may stop filtering once it found enough feasible nodes:
	// Evaluated), e.g. "1480 of 1500 nodes filtered out: 1200 Insufficient
	// nvidia.com/gpu, 280 Insufficient cpu".
	Filtered string `json:"filtered,omitempty"`
}
