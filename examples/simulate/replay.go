package main

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/reserve"
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
}

// event is an arrival or a departure of arrivals[pod]. At the same
// instant departures (kind 0) go before arrivals (kind 1), so freed
// capacity is there for the newcomers, except the departure of a pod that
// leaves the instant it arrives (kind 2).
type event struct {
	at     time.Duration
	kind   uint8
	pod    int32
	depart bool
}

// placement is where one arrival went.
type placement struct {
	Pod     string `json:"pod"`
	Node    string `json:"node,omitempty"` // "" when unschedulable
	Devices []int  `json:"devices,omitempty"`
	Bound   bool   `json:"prebound,omitempty"` // bound in the input, not scheduled
}

// usage is requested and allocatable amounts summed over all nodes, in
// Unit (milliCPU, bytes or milliGPU, as capacityMilli is in milli-units),
// and their ratio (0-1).
type usage struct {
	Requested   int64   `json:"requested"`
	Allocatable int64   `json:"allocatable"`
	Unit        string  `json:"unit"`
	Ratio       float64 `json:"ratio"`
}

func newUsage(req, alloc int64, unit string) usage { return usage{req, alloc, unit, ratio(req, alloc)} }

// sample is the state after one arrival: demand arrived and allocated
// along the demand axis (milli-GPU, or milli-CPU without GPUs).
type sample struct{ arrived, allocated int64 }

// explained is the decision for the pod named by -explain.
type explained struct {
	Pod       string `json:"pod"`
	Node      string `json:"node,omitempty"`
	Devices   []int  `json:"devices,omitempty"`
	Total     int64  `json:"total"`
	Feasible  int    `json:"feasible"`
	Evaluated int    `json:"evaluated"`
	Breakdown string `json:"breakdown,omitempty"`
	Diagnosis string `json:"diagnosis,omitempty"`
	Arrival   int    `json:"arrival"` // 1-based position in the arrivals
	// Filtered says why the nodes that cannot run the pod were filtered,
	// over every node of the cluster as the pod's cycle saw it (the cycle
	// itself may stop filtering once it found enough feasible nodes:
	// Evaluated), e.g. "1480 of 1500 nodes filtered out: 1200 Insufficient
	// nvidia.com/gpu, 280 Insufficient cpu".
	Filtered string `json:"filtered,omitempty"`
}

// runResult is the outcome of one replay.
type runResult struct {
	Policy        string         `json:"policy"`
	Seed          uint64         `json:"seed"`
	Percentage    int32          `json:"percentageOfNodesToScore"`
	Arrived       int            `json:"arrived"`
	Placed        int            `json:"placed"`
	Unschedulable int            `json:"unschedulable"`
	Departed      int            `json:"departed"`
	Reasons       map[string]int `json:"reasons,omitempty"` // pods by the reason most nodes gave
	FirstFailure  string         `json:"firstFailure,omitempty"`
	CPU           usage          `json:"cpu"`
	Memory        usage          `json:"memory"`
	GPU           usage          `json:"gpu"`
	GPUFragRatio  float64        `json:"gpuFragmentationRatio"`
	NodesUsed     int            `json:"nodesUsed"`
	// TimeWeighted: with departures, CPU, Memory, GPU and NodesUsed are
	// means over the trace time from the first to the last arrival (the
	// fragmentation ratio stays the state at the last arrival).
	TimeWeighted bool          `json:"timeWeighted,omitempty"`
	Nodes        int           `json:"nodes"`
	Wall         time.Duration `json:"-"`
	Explain      *explained    `json:"explain,omitempty"`
	// Curve is the run's allocation curve (see summary.Curve).
	Curve []*float64 `json:"curve"`

	samples    []sample
	capacity   int64
	placements []placement
	final      *snapshot.Snapshot
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
		total += c.demand(pi.Task())
	}
	for n := 0; float64(total) < target; n++ {
		src := c.pods[r.IntN(len(c.pods))]
		d := c.demand(src.Task())
		if float64(total+d) > target {
			break
		}
		p := *src.Pod()
		p.Name = src.Pod().Name + "-clone-" + strconv.Itoa(n)
		pi, err := snapshot.NewPodInfo(&p)
		if err != nil {
			return nil, err
		}
		order = append(order, pi)
		total += d
	}
	for float64(total) > target && len(order) > 0 {
		i := r.IntN(len(order))
		total -= c.demand(order[i].Task())
		order = slices.Delete(order, i, i+1)
	}
	return order, nil
}

// events returns the arrival (and with departures, departure) events of
// order, sorted by trace time when departures are on (stable: arrivals at
// one instant keep their order).
func (c *cluster) events(order []*snapshot.PodInfo, departures bool) []event {
	ev := make([]event, 0, len(order)*2)
	for i, pi := range order {
		idx, orig := c.index[pi]
		if !departures || !orig {
			ev = append(ev, event{pod: int32(i), kind: 1})
			continue
		}
		ev = append(ev, event{at: c.creation[idx], kind: 1, pod: int32(i)})
		if c.hasDeletion[idx] {
			d := event{at: c.deletion[idx], pod: int32(i), depart: true}
			if d.at <= c.creation[idx] {
				d.at, d.kind = c.creation[idx], 2
			}
			ev = append(ev, d)
		}
	}
	if departures {
		slices.SortStableFunc(ev, func(a, b event) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.kind, b.kind))
		})
	}
	return ev
}

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

	res := &runResult{Policy: spec.policy.name, Seed: spec.seed, Percentage: spec.percentage, Nodes: len(c.nodes),
		Reasons: map[string]int{}, capacity: c.capacity()}
	ledger := reserve.New()
	for _, n := range c.nodes {
		if err := ledger.AddNode(n); err != nil {
			return nil, inputErr("%v", err)
		}
	}
	// Bound pods without a gpu-index annotation get the snapshot's
	// best-fit devices; the placement records what they got.
	for _, p := range c.bound {
		if err := ledger.AddPod(p); err != nil {
			return nil, inputErr("%v", err)
		}
	}
	snap := ledger.Snapshot()
	for _, p := range c.bound {
		pl := placement{Pod: snapshot.KeyOf(p).String(), Node: p.Spec.NodeName, Bound: true}
		for _, pi := range snap.Get(p.Spec.NodeName).Pods() {
			if pi.Key() == snapshot.KeyOf(p) {
				devs, _ := pi.Devices()
				pl.Devices = indexes(devs)
			}
		}
		res.placements = append(res.placements, pl)
	}

	filters := append(framework.DefaultFilters(), framework.GPUDevices{})
	sched, err := framework.New(framework.Config{
		Filters:                  filters,
		Profile:                  profile,
		PercentageOfNodesToScore: spec.percentage,
		Seed:                     spec.seed,
		Breakdown:                spec.explain != "",
	})
	if err != nil {
		return nil, err
	}

	// Bind: report the pod bound with the devices the cycle chose
	// (Decision.Pod records them), as the informer would; the ledger turns
	// the hold into the bound pod. The parsed pod is reported as it is
	// (reserve.Ledger.AddPodInfo): the same bound pod as the object with
	// spec.nodeName and the gpu-index annotation (boundPod) would give,
	// without copying and re-parsing it.
	var lastDevs gpushare.DeviceSet
	bind := func(_ context.Context, d framework.Decision) error {
		lastDevs, _ = d.Pod.Devices()
		return ledger.AddPodInfo(d.Pod, d.Node)
	}
	loop := framework.NewLoop(sched, ledger, bind)

	events := c.events(order, spec.departures)
	lastArrival := -1
	for i, e := range events {
		if !e.depart {
			lastArrival = i
		}
	}
	events = events[:lastArrival+1]                  // state is measured at the last arrival
	prog.total.Add(int64(len(events) - len(c.pods))) // simulate counted len(c.pods) per run
	placedOn := make([]string, len(order))           // by arrival, for departures (one pod per cycle there)
	var arrived, allocated int64
	tl := newTimeline(ledger.Snapshot(), spec.departures)
	start := time.Now()
	for i := 0; i < len(events); i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e := events[i]
		tl.advance(e.at)
		if e.depart {
			if node := placedOn[e.pod]; node != "" && ledger.RemovePod(order[e.pod].Key()) {
				placedOn[e.pod] = ""
				t := order[e.pod].Task()
				allocated -= c.demand(t)
				tl.remove(t, node)
				res.Departed++
			}
			prog.done.Add(1)
			continue
		}
		if err := loop.AddPodInfo(order[e.pod]); err != nil {
			return nil, err
		}
		// A batch (objects) queues every pod first; the queue then orders
		// them by priority.
		if c.batch && i+1 < len(events) {
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
			pi := a.Pod
			t := pi.Task()
			arrived += c.demand(t)
			res.Arrived++
			pl := placement{Pod: pi.Key().String()}
			if a.Bound() {
				res.Placed++
				allocated += c.demand(t)
				pl.Node, pl.Devices = a.Node, indexes(lastDevs)
				if !c.batch {
					placedOn[e.pod] = a.Node
				}
				tl.add(t, a.Node)
			} else {
				res.Unschedulable++
				res.Reasons[mainReason(a.Diagnosis)]++
				if res.FirstFailure == "" {
					res.FirstFailure = pi.Key().String() + ": " + a.Diagnosis.Message()
				}
			}
			res.placements = append(res.placements, pl)
			res.samples = append(res.samples, sample{arrived, allocated})
			if spec.explain != "" && matches(spec.explain, pi) {
				res.Explain = explainOf(a.Decision, lastDevs, res.Arrived)
				if res.Explain.Filtered, err = filteredOut(filters, pi, ledger.Snapshot(), a.Node); err != nil {
					return nil, err
				}
			}
			prog.done.Add(1)
		}
	}
	res.Wall = time.Since(start)
	res.final = ledger.Snapshot()
	c.measure(res, res.final)
	tl.result(res)
	res.Curve = res.curve()
	return res, nil
}

// measure fills the end-of-run totals from the final snapshot.
func (c *cluster) measure(res *runResult, snap *snapshot.Snapshot) {
	var cpu, cpuA, mem, memA, gpu, gpuA int64
	states := make([]gpushare.NodeState, 0, snap.NumNodes())
	for _, ni := range snap.Nodes() {
		alloc, req := ni.Allocatable(), ni.Requested()
		cpu, cpuA = cpu+req.MilliCPU(), cpuA+alloc.MilliCPU()
		mem, memA = mem+req.Memory(), memA+alloc.Memory()
		for _, d := range ni.Devices() {
			gpu, gpuA = gpu+d.CapacityMilliGPU-d.FreeMilliGPU, gpuA+d.CapacityMilliGPU
		}
		if ni.NumPods() > 0 {
			res.NodesUsed++
		}
		states = append(states, ni.GPUState(nil))
	}
	res.CPU, res.Memory, res.GPU = newUsage(cpu, cpuA, "milliCPU"), newUsage(mem, memA, "bytes"), newUsage(gpu, gpuA, "milliGPU")
	if gpuA > 0 {
		res.GPUFragRatio = c.workload.FragmentationRatio(states)
	}
}

// mainReason is the reason most nodes gave for rejecting the pod (the
// PreFilter's message when one rejected it outright). It counts reasons by
// identity (code, resource, text) in a short list rather than through
// Diagnosis.Histogram, which formats and hashes every reason: a trace
// replay diagnoses hundreds of pods, each with a reason per node.
func mainReason(d *framework.Diagnosis) string {
	if d == nil {
		return ""
	}
	if d.PreFilterMsg != "" {
		return d.PreFilterMsg
	}
	type count struct {
		r *framework.Reason
		n int
	}
	var counts []count
	add := func(r *framework.Reason, n int) {
		for i := range counts {
			c := counts[i].r
			if c.Code == r.Code && c.Resource == r.Resource && c.Text == r.Text {
				counts[i].n += n
				return
			}
		}
		counts = append(counts, count{r, n})
	}
	for i := range d.Reasons {
		add(&d.Reasons[i], 1)
	}
	if d.NotCandidates > 0 {
		add(&d.NotCandidate, d.NotCandidates)
	}
	best := -1
	for i, c := range counts {
		if best < 0 || c.n > counts[best].n || (c.n == counts[best].n && c.r.Message() < counts[best].r.Message()) {
			best = i
		}
	}
	if best < 0 {
		return d.Message()
	}
	return counts[best].r.Message()
}

// matches reports whether name ("ns/name" or "name") names pi.
func matches(name string, pi *snapshot.PodInfo) bool {
	k := pi.Key()
	return name == k.Name || name == k.String()
}

func explainOf(d framework.Decision, devs gpushare.DeviceSet, arrival int) *explained {
	e := &explained{Pod: d.Pod.Key().String(), Node: d.Node, Total: d.Total, Feasible: d.Feasible, Evaluated: d.Evaluated, Arrival: arrival}
	if d.Scheduled() {
		e.Devices = indexes(devs)
		if d.Breakdown != nil {
			e.Breakdown = d.Breakdown.String()
		}
	}
	if d.Diagnosis != nil {
		e.Diagnosis = d.Diagnosis.Message()
	}
	return e
}

// timeline integrates requested CPU, memory, GPU and the nodes in use over
// trace time, for -departures.
type timeline struct {
	on                 bool
	cpu, mem, gpu      int64
	nodes              int
	podsOn             map[string]int
	areaCPU, areaMem   float64
	areaGPU, areaNodes float64
	first, last        time.Duration
	started            bool
}

func newTimeline(snap *snapshot.Snapshot, on bool) *timeline {
	tl := &timeline{on: on, podsOn: map[string]int{}}
	if !on {
		return tl
	}
	for _, ni := range snap.Nodes() {
		req := ni.Requested()
		tl.cpu += req.MilliCPU()
		tl.mem += req.Memory()
		for _, d := range ni.Devices() {
			tl.gpu += d.CapacityMilliGPU - d.FreeMilliGPU
		}
		if n := ni.NumPods(); n > 0 {
			tl.podsOn[ni.Name()] = n
			tl.nodes++
		}
	}
	return tl
}

// advance accounts for the state held from the previous event until at.
func (tl *timeline) advance(at time.Duration) {
	if !tl.on {
		return
	}
	if !tl.started {
		tl.first, tl.last, tl.started = at, at, true
	}
	dt := float64(at - tl.last)
	tl.areaCPU += float64(tl.cpu) * dt
	tl.areaMem += float64(tl.mem) * dt
	tl.areaGPU += float64(tl.gpu) * dt
	tl.areaNodes += float64(tl.nodes) * dt
	tl.last = at
}

func (tl *timeline) add(t gpushare.Task, node string) {
	if !tl.on {
		return
	}
	tl.cpu, tl.mem, tl.gpu = tl.cpu+t.MilliCPU, tl.mem+t.Memory, tl.gpu+t.TotalMilliGPU()
	if tl.podsOn[node]++; tl.podsOn[node] == 1 {
		tl.nodes++
	}
}

func (tl *timeline) remove(t gpushare.Task, node string) {
	if !tl.on {
		return
	}
	tl.cpu, tl.mem, tl.gpu = tl.cpu-t.MilliCPU, tl.mem-t.Memory, tl.gpu-t.TotalMilliGPU()
	if tl.podsOn[node]--; tl.podsOn[node] == 0 {
		tl.nodes--
	}
}

// result replaces the end-state ratios with the time-weighted means.
func (tl *timeline) result(res *runResult) {
	span := float64(tl.last - tl.first)
	if !tl.on || span <= 0 {
		return
	}
	mean := func(area float64, u usage) usage {
		req := int64(area / span)
		return newUsage(req, u.Allocatable, u.Unit)
	}
	res.CPU, res.Memory, res.GPU = mean(tl.areaCPU, res.CPU), mean(tl.areaMem, res.Memory), mean(tl.areaGPU, res.GPU)
	res.NodesUsed = int(tl.areaNodes/span + 0.5)
	res.TimeWeighted = true
}

// filteredOut runs filters for pi on every node of snap without the pod
// (snap holds it on node when it was placed) and counts the reasons of
// the nodes that fail, each from the first filter it fails as in the
// cycle, most frequent first: "K of N nodes filtered out: n1 reason1,
// n2 reason2", or "none of N nodes filtered out".
func filteredOut(filters []framework.Filter, pi *snapshot.PodInfo, snap *snapshot.Snapshot, node string) (string, error) {
	if node != "" {
		f := snap.Fork()
		if err := f.RemovePod(pi.Key(), node); err != nil {
			return "", err
		}
		snap = f.Snapshot()
	}
	total, out := 0, 0
	counts := map[string]int{}
	pre := make([]framework.PreFilterResult, len(filters))
	for i, f := range filters {
		var err error
		if pre[i], err = f.PreFilter(pi); err != nil {
			return "", err
		}
	}
	var reasons []framework.Reason
	for _, n := range snap.Nodes() {
		total++
		for i := range filters {
			p := pre[i]
			if p.Reject != "" {
				counts[p.Reject]++
				out++
				break
			}
			if p.NodeNames != nil && !slices.Contains(p.NodeNames, n.Name()) {
				counts["node(s) not among the candidates of "+filters[i].Name()]++
				out++
				break
			}
			if p.Filter == nil {
				continue
			}
			if reasons = p.Filter.Filter(n, reasons[:0]); len(reasons) > 0 {
				for j := range reasons {
					counts[reasons[j].Message()]++
				}
				out++
				break
			}
		}
	}
	if out == 0 {
		return fmt.Sprintf("none of %d nodes filtered out", total), nil
	}
	msgs := make([]string, 0, len(counts))
	for m := range counts {
		msgs = append(msgs, m)
	}
	slices.SortFunc(msgs, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for i, m := range msgs {
		msgs[i] = fmt.Sprintf("%d %s", counts[m], m)
	}
	return fmt.Sprintf("%d of %d nodes filtered out: %s", out, total, strings.Join(msgs, ", ")), nil
}
