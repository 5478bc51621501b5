package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// ErrInput marks a node or bound pod of the [Input] that cannot be
// replayed: a nil object, a node listed twice, a bound pod whose
// spec.nodeName is not among the nodes, or an object the ledger refuses
// (invalid quantities; that error, naming the object and field, is
// wrapped too).
var ErrInput = errors.New("replay: bad input")

// Input is a cluster and a stream of pods. Run reads it and changes
// nothing in it; one Input may serve several Runs at once.
type Input struct {
	// Nodes is the cluster, in the order the cycle visits them.
	Nodes []*v1.Node
	// Bound are pods already running (spec.nodeName set): they are added
	// to the cluster before the first arrival and never move.
	Bound []*v1.Pod
	// Arrivals are the pods to schedule, in arrival order.
	Arrivals []Arrival
	// Objects are the cluster's other objects (Namespaces, Services,
	// ReplicaSets, ... as snapshot.Cache.AddObject takes them), fed to
	// the ledger before the first arrival: PodTopologySpread's system
	// defaults find a Deployment's ReplicaSet there.
	Objects []runtime.Object
	// Devices reads the devices of Nodes and of the pods (NewInput's
	// decoder); nil means snapshot.NvidiaDevices. The ledger Run
	// schedules over decodes with it.
	Devices snapshot.DeviceDecoder
	// Batch queues every arrival at once and lets the scheduling queue
	// order them (priority, then arrival order), as for a set of objects
	// read from a cluster; otherwise each pod is scheduled as it arrives.
	Batch bool
	// Terminal counts the pods NewInput and InputBuilder left out because
	// their status.phase is Succeeded or Failed: upstream's scheduler
	// never sees them (its pod informer's field selector is
	// status.phase!=Succeeded,status.phase!=Failed, v1.37 scheduler.go),
	// so they are neither Bound nor Arrivals, with or without unbind.
	Terminal int
}

// Arrival is a pod to schedule and, for Config.Departures, its trace
// times.
type Arrival struct {
	// Pod is the parsed pod (snapshot.DecodePodInfo with Input.Devices),
	// without spec.nodeName.
	Pod *snapshot.PodInfo
	// At is the arrival time on the trace clock (any origin); Leave is
	// the departure time, meaningful when Leaves is set. Both are read
	// only with Config.Departures; a pod leaving no later than it arrives
	// leaves right after its own cycle.
	At, Leave time.Duration
	Leaves    bool
}

// Config is one replay's scheduler: the user's filters and score profile
// and the cycle's settings.
type Config struct {
	// Filters run in order for every pod; a node's reasons come from the
	// first filter it fails. nil means framework.DefaultFilters() and
	// framework.GPUDevices (GPU sharing); a list of the user's own must
	// name GPUDevices too when pods share GPUs.
	Filters []framework.Filter
	// Profile scores the feasible nodes; nil means score.DefaultProfile().
	Profile *score.Profile
	// PercentageOfNodesToScore is upstream's setting (0: adaptive;
	// 1-100: that share of the nodes); see framework.Config.
	PercentageOfNodesToScore int32
	// Seed drives the cycle's tie-break among equal totals.
	Seed uint64
	// Departures replays Arrival.At and Arrival.Leave: events are sorted
	// by time (departures before arrivals at the same instant) and a
	// placed pod leaves the cluster at its Leave time. Usage and
	// NodesUsed are then time-weighted (Report.TimeWeighted).
	Departures bool
	// Explain names a pod ("name" or "namespace/name") whose decision
	// the report explains (Report.Explain); "" for none. It turns on the
	// cycle's score breakdown, which costs a table per pod.
	Explain string
	// Workload is the target workload of the GPU fragmentation measure
	// (Report.GPUFragmentationRatio); nil leaves it 0. examples/simulate
	// learns it from the arrivals: gpushare.WorkloadFromTasks(their
	// tasks, 95).
	Workload *gpushare.Workload
	// DeviceChooser picks the GPU devices of pods that need a choice:
	// bound pods without a gpu-index annotation (the ledger's
	// reserve.WithDeviceChooser) and placed pods when no scorer of the
	// profile chooses (framework.Config.DeviceChooser). nil means
	// gpushare.BestFit{}, the FGD simulator's default device choice. A
	// bound pod it finds no devices for (the input over-commits the node's
	// devices) is charged to the node's lowest-index devices, as many as
	// it asks for: the input says it runs there.
	DeviceChooser snapshot.DeviceChooser
	// Preemption, when set, turns on upstream's DefaultPreemption with
	// these options (framework.Loop.SetPreemption): a pod that fits
	// nowhere evicts lower-priority pods from the node Scheduler.Preempt
	// chooses (PriorityClasses and PodDisruptionBudgets among
	// Input.Objects count), is nominated there and scheduled again. The
	// victims leave the cluster for good (no controller recreates them);
	// Report.Preemptions and Report.Evicted count them. nil: off.
	Preemption *framework.PreemptOptions
	// LeanPods keeps every pod the replay binds as a lean record
	// (reserve.WithLeanPods): the ledger then holds what scheduling reads
	// of each pod, not its object, so that a replay of millions of pods
	// fits in memory. Decisions and the report are the same. A lean
	// arrival (InputBuilder's BuildOptions.Lean) is scheduled as the
	// full record parsed from its PodInfo.Pod, whatever this setting.
	LeanPods bool
	// EquivalenceClasses is framework.Config.EquivalenceClasses: how
	// many pod classes the cycle's equivalence cache keeps (0: its
	// default budget). It changes no decision, only the cost.
	EquivalenceClasses int
	// Progress, when set, is called after each event (an arrival
	// scheduled or a departure) with the events done and the run's
	// total; it must be cheap and, for concurrent Runs, safe for
	// concurrent use.
	Progress func(done, total int)
}

// event is an arrival or a departure of Arrivals[pod]. At the same
// instant departures (kind 0) go before arrivals (kind 1), so freed
// capacity is there for the newcomers, except the departure of a pod that
// leaves the instant it arrives (kind 2).
type event struct {
	at     time.Duration
	kind   uint8
	pod    int32
	depart bool
}

// events returns the arrival (and with departures, departure) events of
// in, sorted by trace time when departures are on (stable: arrivals at
// one instant keep their order), up to the last arrival: the state is
// measured there.
func events(in *Input, departures bool) []event {
	ev := make([]event, 0, len(in.Arrivals)*2)
	for i, a := range in.Arrivals {
		if !departures {
			ev = append(ev, event{pod: int32(i), kind: 1})
			continue
		}
		ev = append(ev, event{at: a.At, kind: 1, pod: int32(i)})
		if a.Leaves {
			d := event{at: a.Leave, pod: int32(i), depart: true}
			if d.at <= a.At {
				d.at, d.kind = a.At, 2
			}
			ev = append(ev, d)
		}
	}
	if departures {
		slices.SortStableFunc(ev, func(a, b event) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.kind, b.kind))
		})
	}
	last := -1
	for i, e := range ev {
		if !e.depart {
			last = i
		}
	}
	return ev[:last+1]
}

// Run replays in through a framework.Loop over a reserve.Ledger with
// cfg's filters and profile and returns the report: the bound pods are
// added to the cluster, then each arrival is queued and scheduled (all at
// once with Input.Batch), a placed pod is bound with the devices its
// cycle chose as an informer would report it, and with Config.Departures
// placed pods leave at their times.
//
// Errors: a framework.Config cfg makes that fails Validate; a node or
// bound pod the ledger refuses (wrapping [ErrInput]); a filter's or
// scorer's error; ctx's error when it is done (checked before each
// event). Nothing in in is changed.
//
// Cost: the cycles' cost (framework.Scheduler.Schedule) per arrival plus
// O(nodes) to set up and measure; memory O(nodes + pods + bound pods).
// With Config.Explain, O(nodes × filters) more for the explained pod.
func Run(ctx context.Context, in *Input, cfg Config) (*Report, error) {
	for i, a := range in.Arrivals {
		if a.Pod == nil {
			return nil, fmt.Errorf("%w: Arrivals[%d]: nil Pod", ErrInput, i)
		}
	}
	if cfg.DeviceChooser == nil {
		cfg.DeviceChooser = gpushare.BestFit{}
	}
	opts := []reserve.Option{reserve.WithDeviceDecoder(in.Devices), reserve.WithDeviceChooser(reportedChooser{cfg.DeviceChooser})}
	if cfg.LeanPods {
		opts = append(opts, reserve.WithLeanPods())
	}
	ledger := reserve.New(opts...)
	names := make(map[string]bool, len(in.Nodes))
	for _, n := range in.Nodes {
		if n == nil {
			return nil, fmt.Errorf("%w: Nodes: nil node", ErrInput)
		}
		if names[n.Name] {
			return nil, fmt.Errorf("%w: node %s: listed twice", ErrInput, n.Name)
		}
		names[n.Name] = true
		if err := ledger.AddNode(n); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
	}
	for _, o := range in.Objects {
		if err := ledger.AddObject(o); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
	}
	snap := ledger.Snapshot()
	rep := &Report{Nodes: len(in.Nodes), Reasons: map[string]int{}, DemandAxis: "CPU"}
	var milliCPU, milliGPU int64
	for _, ni := range snap.Nodes() {
		// Saturating sums: nodes of huge allocatable (each valid) must
		// not wrap the cluster's total negative.
		milliCPU = arith.Add(milliCPU, ni.Allocatable().MilliCPU())
		for _, d := range ni.Devices() {
			milliGPU = arith.Add(milliGPU, d.CapacityMilliGPU)
		}
	}
	// demand is a pod's amount along the demand axis: milli-GPU, or
	// milli-CPU for a cluster without GPUs.
	demand := func(t gpushare.Task) int64 { return t.MilliCPU }
	rep.Capacity = milliCPU
	if milliGPU > 0 {
		demand = func(t gpushare.Task) int64 { return t.TotalMilliGPU() }
		rep.DemandAxis, rep.Capacity = "GPU", milliGPU
	}

	// Bound pods without a gpu-index annotation get cfg.DeviceChooser's
	// devices (the ledger's chooser); the placement records what they got.
	for _, p := range in.Bound {
		if p == nil {
			return nil, fmt.Errorf("%w: Bound: nil pod", ErrInput)
		}
		if !names[p.Spec.NodeName] {
			return nil, fmt.Errorf("%w: pod %s/%s: spec.nodeName %q: no such node in the input", ErrInput, p.Namespace, p.Name, p.Spec.NodeName)
		}
		if err := ledger.AddPod(p); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
	}
	snap = ledger.Snapshot()
	for _, p := range in.Bound {
		pl := Placement{Pod: snapshot.KeyOf(p).String(), Node: p.Spec.NodeName, Bound: true}
		for _, pi := range snap.Get(p.Spec.NodeName).Pods() {
			if pi.Key() == snapshot.KeyOf(p) {
				devs, _ := pi.Devices()
				pl.Devices = indexes(devs)
			}
		}
		rep.Placements = append(rep.Placements, pl)
	}

	if cfg.Filters == nil {
		// With the default device chooser the device filter goes too: it
		// skips pods that ask for no device.
		cfg.Filters = append(framework.DefaultFilters(), framework.NewGPUDevices())
	}
	sched, err := framework.New(framework.Config{
		Filters:                  cfg.Filters,
		Profile:                  cfg.Profile,
		PercentageOfNodesToScore: cfg.PercentageOfNodesToScore,
		Seed:                     cfg.Seed,
		Breakdown:                cfg.Explain != "",
		DeviceChooser:            cfg.DeviceChooser,
		EquivalenceClasses:       cfg.EquivalenceClasses,
	})
	if err != nil {
		return nil, err
	}

	// Bind: report the pod bound with the devices the cycle chose
	// (Decision.Pod records them), as the informer would; the ledger turns
	// the hold into the bound pod. The parsed pod is reported as it is
	// (reserve.Ledger.AddPodInfo): the same bound pod as the object with
	// spec.nodeName and the gpu-index annotation would give, without
	// copying and re-parsing it.
	//
	// A lean arrival scheduled as a full record (full) is bound as its
	// lean record with the chosen devices when the ledger is lean: the
	// ledger would otherwise make a lean record of the full one, at the
	// cost of encoding its template.
	var lastDevs gpushare.DeviceSet
	leanOf := map[snapshot.PodKey]*snapshot.PodInfo{} // queued full records of lean arrivals
	bind := func(_ context.Context, d framework.Decision) error {
		var assigned bool
		lastDevs, assigned = d.Pod.Devices()
		p := d.Pod
		if l := leanOf[p.Key()]; l != nil {
			delete(leanOf, p.Key())
			if cfg.LeanPods {
				if p = l; assigned {
					p = l.WithDevices(lastDevs)
				}
			}
		}
		return ledger.AddPodInfo(p, d.Node)
	}
	loop := framework.NewLoop(sched, ledger, bind)

	evs := events(in, cfg.Departures)
	placedOn := make([]string, len(in.Arrivals)) // by arrival, for departures (one pod per cycle there)
	var arrived, allocated int64
	tl := newTimeline(ledger.Snapshot(), cfg.Departures)
	if cfg.Preemption != nil {
		loop.SetPreemption(*cfg.Preemption, preemptionEvicter(in, ledger, rep, tl, placedOn, func(t gpushare.Task) { allocated -= demand(t) }))
	}
	done := 0
	step := func() {
		done++
		if cfg.Progress != nil {
			cfg.Progress(done, len(evs))
		}
	}
	start := time.Now()
	for i, e := range evs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tl.advance(e.at)
		if e.depart {
			pi := in.Arrivals[e.pod].Pod
			if node := placedOn[e.pod]; node != "" && ledger.RemovePod(pi.Key()) {
				placedOn[e.pod] = ""
				t := gpushare.TaskOf(pi)
				allocated -= demand(t)
				tl.remove(t, node)
				rep.Departed++
			}
			step()
			continue
		}
		pi, err := full(in.Arrivals[e.pod].Pod, in.Devices)
		if err != nil {
			return nil, err
		}
		if pi != in.Arrivals[e.pod].Pod {
			leanOf[pi.Key()] = in.Arrivals[e.pod].Pod
		}
		if err := loop.AddPodInfo(pi); err != nil {
			return nil, err
		}
		// A batch queues every pod first; the queue then orders them by
		// priority.
		if in.Batch && i+1 < len(evs) {
			continue
		}
		for loop.Len() > 0 {
			a, ok, err := loop.ScheduleOne(ctx)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			if a.BindErr != nil {
				return nil, a.BindErr
			}
			if a.Skipped != nil {
				// Being deleted: no cycle, as upstream (errors.Is
				// framework.ErrPodDeleting; the ledger holds no arrival
				// before its cycle, so ErrAlreadyPlaced does not occur).
				rep.Skipped++
				step()
				continue
			}
			if p := a.Preemption; p != nil && p.Found() {
				// Victims evicted, the pod requeued: its next cycle counts.
				rep.Preemptions++
				rep.PreemptionsByPriority[p.Priority]++
				continue
			}
			pi := a.Pod
			t := gpushare.TaskOf(pi)
			arrived = arith.Add(arrived, demand(t)) // saturating, as the capacity
			rep.Arrived++
			pl := Placement{Pod: pi.Key().String()}
			if a.Bound() {
				rep.Placed++
				allocated += demand(t)
				pl.Node, pl.Devices = a.Node, indexes(lastDevs)
				if !in.Batch {
					placedOn[e.pod] = a.Node
				}
				tl.add(t, a.Node)
			} else {
				rep.Unschedulable++
				rep.Reasons[mainReason(a.Diagnosis)]++
				if rep.FirstFailure == "" {
					rep.FirstFailure = pi.Key().String() + ": " + a.FailureMessage()
				}
			}
			rep.Placements = append(rep.Placements, pl)
			rep.Samples = append(rep.Samples, Sample{arrived, allocated})
			if cfg.Explain != "" && matches(cfg.Explain, pi) {
				rep.Explain = explainOf(&a, lastDevs, rep.Arrived)
				if rep.Explain.Filtered, err = filteredOut(cfg.Filters, pi, ledger.Snapshot(), a.Node); err != nil {
					return nil, err
				}
			}
			step()
		}
	}
	rep.Wall = time.Since(start)
	rep.Final = ledger.Snapshot()
	measure(rep, rep.Final, cfg.Workload)
	tl.result(rep)
	return rep, nil
}

// full returns pi, or for a lean record the full record parsed from its
// pod (the cycle's plugins read the pod object; a lean record would
// rebuild it at each read). A lean record's requests may come from status
// it dropped (a pod resized in place): if the parsed record's differ, pi
// itself is returned. O(size of the pod) for a lean record.
func full(pi *snapshot.PodInfo, dec snapshot.DeviceDecoder) (*snapshot.PodInfo, error) {
	if pi.Retained() {
		return pi, nil
	}
	f, err := snapshot.DecodePodInfo(pi.Pod(), dec)
	if err != nil {
		return nil, fmt.Errorf("replay: pod %s: %w", pi.Key(), err)
	}
	a, b := pi.Requests(), f.Requests()
	if a.NonZeroMilliCPU != b.NonZeroMilliCPU || a.NonZeroMemory != b.NonZeroMemory || !sameVector(&a.Requested, &b.Requested) ||
		!sameVector(&a.Pending, &b.Pending) || !sameVector(&a.Scoring, &b.Scoring) {
		return pi, nil
	}
	return f, nil
}

// sameVector reports whether a and b hold the same amounts.
func sameVector(a, b *snapshot.Vector) bool {
	for r := range max(a.Len(), b.Len()) {
		if a.Get(snapshot.ResourceID(r)) != b.Get(snapshot.ResourceID(r)) {
			return false
		}
	}
	return true
}

// measure fills the end-of-run totals from the final snapshot.
func measure(rep *Report, snap *snapshot.Snapshot, w *gpushare.Workload) {
	var cpu, cpuA, mem, memA, gpu, gpuA int64
	states := make([]gpushare.NodeState, 0, snap.NumNodes())
	for _, ni := range snap.Nodes() {
		alloc, req := ni.Allocatable(), ni.Requested()
		// Saturating, like the node totals they sum.
		cpu, cpuA = arith.Add(cpu, req.MilliCPU()), arith.Add(cpuA, alloc.MilliCPU())
		mem, memA = arith.Add(mem, req.Memory()), arith.Add(memA, alloc.Memory())
		for _, d := range ni.Devices() {
			gpu, gpuA = arith.Add(gpu, d.CapacityMilliGPU-d.FreeMilliGPU), arith.Add(gpuA, d.CapacityMilliGPU)
		}
		if ni.NumPods() > 0 {
			rep.NodesUsed++
		}
		if w != nil {
			states = append(states, gpushare.NodeStateOf(ni, nil))
		}
	}
	rep.CPU, rep.Memory, rep.GPU = newUsage(cpu, cpuA, "milliCPU"), newUsage(mem, memA, "bytes"), newUsage(gpu, gpuA, "milliGPU")
	if gpuA > 0 && w != nil {
		rep.GPUFragmentationRatio = w.FragmentationRatio(states)
	}
}

// indexes lists the device indexes of devs, nil for none.
func indexes(devs gpushare.DeviceSet) []int {
	if devs.Len() == 0 {
		return nil
	}
	return devs.AppendIndexes(nil)
}

// matches reports whether name ("ns/name" or "name") names pi.
func matches(name string, pi *snapshot.PodInfo) bool {
	k := pi.Key()
	return name == k.Name || name == k.String()
}

func explainOf(a *framework.Attempt, devs gpushare.DeviceSet, arrival int) *Explanation {
	d := a.Decision
	e := &Explanation{Pod: d.Pod.Key().String(), Node: d.Node, Total: d.Total, Feasible: d.Feasible, Evaluated: d.Evaluated, Arrival: arrival}
	if d.Scheduled() {
		e.Devices = indexes(devs)
		if d.Breakdown != nil {
			e.Breakdown = d.Breakdown.String()
		}
	}
	if d.Diagnosis != nil {
		e.Diagnosis = a.FailureMessage()
	}
	return e
}

// reportedChooser is the ledger's chooser in a replay: dc, and for a
// bound pod dc cannot place (the input over-commits the node's devices)
// the lowest-index devices, GPU().Count of them, so that the input's
// pods are charged somewhere (the ledger checks the room of holds before
// asking, so holds never get the fallback).
type reportedChooser struct{ dc snapshot.DeviceChooser }

func (r reportedChooser) ChooseDevices(pod *snapshot.PodInfo, node *snapshot.NodeInfo) (snapshot.DeviceSet, bool) {
	if devs, ok := r.dc.ChooseDevices(pod, node); ok {
		return devs, true
	}
	var devs snapshot.DeviceSet
	for i := 0; i < len(node.Devices()) && devs.Len() < pod.GPU().Count; i++ {
		devs = devs.With(i)
	}
	return devs, true
}
