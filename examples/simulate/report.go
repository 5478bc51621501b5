package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schedkit/schedkit/snapshot/load"
)

// summary is one policy's result: the mean over its runs (one per
// shuffle seed) and the runs themselves.
type summary struct {
	Policy  string  `json:"policy"`
	Doc     string  `json:"description"`
	Runs    int     `json:"runs"`
	Arrived float64 `json:"arrived"`
	Placed  float64 `json:"placed"`
	// Running (-preemption only, nil without) is the pods placed and
	// still running after the last arrival: Placed minus the placed pods
	// evicted (and departed; replay.Report.Running).
	Running       *float64 `json:"running,omitempty"`
	Unschedulable float64  `json:"unschedulable"`
	// Skipped is the pods being deleted (metadata.deletionTimestamp set)
	// dropped without a cycle, as upstream's skipPodSchedule drops them
	// (replay.Report.Skipped); not in Arrived.
	Skipped      float64 `json:"skippedDeleting,omitempty"`
	CPURatio     float64 `json:"cpuAllocationRatio"`
	MemoryRatio  float64 `json:"memoryAllocationRatio"`
	GPURatio     float64 `json:"gpuAllocationRatio"`
	GPUFragRatio float64 `json:"gpuFragmentationRatio"`
	NodesUsed    float64 `json:"nodesUsed"`
	// WallSeconds and PodsPerSecond are omitted with -timing=false.
	WallSeconds   *float64 `json:"wallSeconds,omitempty"`
	PodsPerSecond *float64 `json:"podsPerSecond,omitempty"`
	// Curve[x] is the allocation ratio (0-1, as every ratio of the
	// report) when x % of the capacity has arrived (mean of the arrivals
	// whose arrived demand rounds to x), null where no arrival fell; the
	// mean over runs.
	Curve   []*float64   `json:"curve"`
	Reasons []reasonPods `json:"unschedulableReasons,omitempty"`
	// Skew is the runs' mean workload skew per topology key (objects
	// input; see keySkew).
	Skew []keySkew `json:"skew,omitempty"`
	// Preemptions and evictions (-preemption; see preemptionSummary).
	preemptionSummary
	Results []*runResult `json:"runDetails"`
}

type reasonPods struct {
	Reason string  `json:"reason"`
	Pods   float64 `json:"pods"`
}

// report is the whole output.
type report struct {
	Input    string   `json:"input"`
	Nodes    int      `json:"nodes"`
	Bound    int      `json:"boundPods"`
	Pods     int      `json:"pods"`
	Order    string   `json:"arrivals"`
	Axis     string   `json:"demandAxis"` // "GPU" or "CPU"
	Capacity int64    `json:"capacityMilli"`
	Skipped  []string `json:"skippedRows,omitempty"`
	// OtherScheduler counts the pending pods left unscheduled because
	// their spec.schedulerName is not in SchedulerNames (-scheduler-name).
	OtherScheduler int `json:"otherSchedulerPods,omitempty"`
	// Terminal counts the input's pods in phase Succeeded or Failed, left
	// out (no scheduler takes them; they hold no capacity).
	Terminal       int      `json:"terminalPods,omitempty"`
	SchedulerNames []string `json:"schedulerNames,omitempty"`
	// Expanded counts, by kind, the workloads of an objects input
	// expanded into the pods their controllers would create, and those
	// pods (load.Objects.Expanded); they are among Pods.
	Expanded map[string]expansion `json:"expanded,omitempty"`
	// Warnings are the input's problems the run went on past (the
	// stderr warning lines without "warning: "): fields k8s.io/api does
	// not know, objects the program does not read, Deployments left
	// unscaled (load.ErrNotExpanded).
	Warnings  []string   `json:"warnings,omitempty"`
	Summaries []*summary `json:"policies"`
	// Preemption: -preemption was on.
	Preemption bool `json:"preemption,omitempty"`
	timing     bool
}

// summarize averages the runs of each policy, in the order given.
// With preemption each summary has Running.
func summarize(order []*policyDef, results []*runResult, timing, preemption bool) []*summary {
	var out []*summary
	for _, p := range order {
		s := &summary{Policy: p.name, Doc: p.doc}
		reasons := map[string]float64{}
		var wall time.Duration
		var curves [][]*float64
		var skews [][]keySkew
		var running float64
		for _, r := range results {
			if r.Policy != p.name {
				continue
			}
			s.Results = append(s.Results, r)
			s.Arrived += float64(r.Arrived)
			s.Placed += float64(r.Placed)
			running += float64(r.Report.Running())
			s.Unschedulable += float64(r.Unschedulable)
			s.Skipped += float64(r.Report.Skipped)
			s.CPURatio += r.CPU.Ratio
			s.MemoryRatio += r.Memory.Ratio
			s.GPURatio += r.GPU.Ratio
			s.GPUFragRatio += r.GPUFragmentationRatio
			s.NodesUsed += float64(r.NodesUsed)
			wall += r.Wall
			for k, v := range r.Reasons {
				reasons[k] += float64(v)
			}
			s.addPreemptions(&r.Report)
			curves = append(curves, r.Curve)
			if r.Skew != nil {
				skews = append(skews, r.Skew)
			}
		}
		n := float64(len(s.Results))
		if n == 0 {
			continue
		}
		s.Runs = len(s.Results)
		for _, f := range []*float64{&s.Arrived, &s.Placed, &s.Unschedulable, &s.Skipped, &s.CPURatio, &s.MemoryRatio, &s.GPURatio, &s.GPUFragRatio, &s.NodesUsed} {
			*f /= n
		}
		for k, v := range reasons {
			s.Reasons = append(s.Reasons, reasonPods{k, v / n})
		}
		slices.SortFunc(s.Reasons, func(a, b reasonPods) int {
			return cmp.Or(-cmp.Compare(a.Pods, b.Pods), cmp.Compare(a.Reason, b.Reason))
		})
		s.meanPreemptions(n)
		if preemption {
			running /= n
			s.Running = &running
		}
		s.Curve = meanCurve(curves)
		s.Skew = meanSkew(skews)
		if timing {
			w := wall.Seconds() / n
			s.WallSeconds = &w
			if wall > 0 {
				pps := s.Arrived * n / wall.Seconds()
				s.PodsPerSecond = &pps
			}
		}
		out = append(out, s)
	}
	return out
}

// maxCurvePercent bounds the x axis of the allocation curve.
const maxCurvePercent = 1000

// curve bins the run's samples by arrived demand in whole percent of the
// capacity (rounded) and returns each bin's mean allocation ratio (0-1),
// nil for empty bins.
func (r *runResult) curve() []*float64 {
	if r.Capacity <= 0 || len(r.Samples) == 0 {
		return nil
	}
	pct := func(v int64) float64 { return float64(v) * 100 / float64(r.Capacity) }
	// Arrived demand can exceed the capacity by any factor (a pod asking
	// for 1e1000 cpu): the curve stops at maxCurvePercent, later samples
	// fall into its last bin.
	// The bounds also keep a wrapped (negative) figure from sizing the
	// bins; Capacity > 0, so no figure is NaN.
	maxX := int(max(min(math.Round(pct(r.Samples[len(r.Samples)-1].Arrived)), maxCurvePercent), 0))
	sum := make([]float64, maxX+1)
	cnt := make([]int, maxX+1)
	for _, s := range r.Samples {
		x := int(max(min(math.Round(pct(s.Arrived)), float64(maxX)), 0))
		sum[x] += float64(s.Allocated) / float64(r.Capacity)
		cnt[x]++
	}
	out := make([]*float64, maxX+1)
	for x := range out {
		if cnt[x] > 0 {
			v := sum[x] / float64(cnt[x])
			out[x] = &v
		}
	}
	return out
}

// meanCurve averages curves point by point over the runs that have the
// point.
func meanCurve(curves [][]*float64) []*float64 {
	n := 0
	for _, c := range curves {
		n = max(n, len(c))
	}
	out := make([]*float64, n)
	for x := range out {
		var sum float64
		k := 0
		for _, c := range curves {
			if x < len(c) && c[x] != nil {
				sum += *c[x]
				k++
			}
		}
		if k > 0 {
			v := sum / float64(k)
			out[x] = &v
		}
	}
	return out
}

// writeTable prints the human report.
func (r *report) writeTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "schedkit simulate: %s\n", r.Input)
	fmt.Fprintf(&b, "%s, %s to schedule (%s), %d bound before; demand axis %s, capacity %s\n",
		count(r.Nodes, "node"), count(r.Pods, "pod"), r.Order, r.Bound, r.Axis, milli(r.Capacity, r.Axis))
	if r.Pods == 0 && r.Bound > 0 {
		b.WriteString("nothing to schedule: every pod the run takes has spec.nodeName and was bound where it is; -unbind schedules them anew (static and mirror pods stay)\n")
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(&b, "%d malformed rows skipped (listed on stderr)\n", len(r.Skipped))
	}
	if len(r.Expanded) > 0 {
		fmt.Fprintf(&b, "workloads expanded into the pods their controllers would create: %s\n", expandedLine(r.Expanded))
	}
	if r.Terminal > 0 {
		fmt.Fprintf(&b, "%s in phase Succeeded or Failed left out (no scheduler takes them; they hold no capacity)\n", count(r.Terminal, "pod"))
	}
	if r.OtherScheduler > 0 {
		fmt.Fprintf(&b, "%s of other schedulers left unscheduled (spec.schedulerName not %s; -scheduler-name chooses)\n", count(r.OtherScheduler, "pending pod"), strings.Join(r.SchedulerNames, " or "))
	}
	if len(r.Summaries) > 0 && r.Summaries[0].Skipped > 0 {
		pods := " pods"
		if r.Summaries[0].Skipped == 1 {
			pods = " pod"
		}
		fmt.Fprintf(&b, "%s%s being deleted (metadata.deletionTimestamp set) skipped without a cycle, as kube-scheduler skips them; not in ARRIVED\n", num(r.Summaries[0].Skipped), pods)
	}
	if len(r.Summaries) > 0 && len(r.Summaries[0].Results) > 0 && r.Summaries[0].Results[0].TimeWeighted {
		b.WriteString("with departures: CPU%, MEM%, GPU% and NODES are means over trace time, first to last arrival; GPU-FRAG% is at the last arrival\n")
	} else {
		b.WriteString("CPU%, MEM%, GPU%, GPU-FRAG% and NODES: the cluster after the last arrival\n")
	}
	if r.Preemption {
		b.WriteString("with preemption: PLACED counts the pods later evicted too; RUNNING is the placed pods still running after the last arrival (PLACED minus the placed pods evicted or departed)\n")
	}
	if r.Axis == "GPU" {
		b.WriteString("GPU-FRAG%: share of the free GPU capacity that pods shaped like the arrivals cannot use (FGD paper, section 4)\n")
	}
	b.WriteByte('\n')
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "POLICY\tRUNS\tARRIVED\tPLACED\t"
	if r.Preemption {
		head += "RUNNING\t"
	}
	head += "UNSCHED\tCPU%\tMEM%\tGPU%\tGPU-FRAG%\tNODES\t"
	if r.timing {
		head += "WALL\tPODS/S\t"
	}
	fmt.Fprintln(tw, head)
	for _, s := range r.Summaries {
		line := fmt.Sprintf("%s\t%d\t%s\t%s\t", s.Policy, s.Runs, num(s.Arrived), num(s.Placed))
		if r.Preemption && s.Running != nil {
			line += num(*s.Running) + "\t"
		}
		line += fmt.Sprintf("%s\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t", num(s.Unschedulable),
			100*s.CPURatio, 100*s.MemoryRatio, 100*s.GPURatio, 100*s.GPUFragRatio, num(s.NodesUsed))
		if r.timing && s.WallSeconds != nil {
			pps := 0.0
			if s.PodsPerSecond != nil {
				pps = *s.PodsPerSecond
			}
			line += fmt.Sprintf("%s\t%.0f\t", (time.Duration(*s.WallSeconds * float64(time.Second))).Round(time.Millisecond), pps)
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	first := true
	for _, s := range r.Summaries {
		if len(s.Reasons) == 0 {
			continue
		}
		if first {
			b.WriteString("\nunschedulable pods by the reason most nodes gave:\n")
			first = false
		}
		var parts []string
		for i, rp := range s.Reasons {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("%d more reasons", len(s.Reasons)-3))
				break
			}
			parts = append(parts, fmt.Sprintf("%s %s", num(rp.Pods), rp.Reason))
		}
		fmt.Fprintf(&b, "  %-13s %s\n", s.Policy, strings.Join(parts, "; "))
	}
	if r.Preemption {
		writePreemptions(&b, r.Summaries)
	}
	first = true
	for _, s := range r.Summaries {
		if len(s.Skew) == 0 {
			continue
		}
		if first {
			b.WriteString("\nworkload skew per topology key (pods of one controller or Service: most minus fewest per domain, as PodTopologySpread counts: only the domains of nodes passing the workload's nodeSelector and required node affinity, and its tolerations where its constraint says nodeTaintsPolicy: Honor):\n")
			first = false
		}
		fmt.Fprintf(&b, "  %-13s %s\n", s.Policy, skewLine(s.Skew))
	}
	for _, s := range r.Summaries {
		for _, res := range s.Results {
			if e := res.Explain; e != nil {
				fmt.Fprintf(&b, "\nexplain %s under %s (seed %d, arrival %d): ", e.Pod, s.Policy, res.Seed, e.Arrival)
				if e.Node == "" {
					fmt.Fprintf(&b, "unschedulable\n  %s\n", e.Diagnosis)
					continue
				}
				fmt.Fprintf(&b, "node %s", e.Node)
				if len(e.Devices) > 0 {
					fmt.Fprintf(&b, ", GPUs %v", e.Devices)
				}
				// The cycle may stop filtering once it has enough feasible
				// nodes (Evaluated); Filtered counts every node.
				fmt.Fprintf(&b, "; %d feasible of the %d nodes the cycle filtered", e.Feasible, e.Evaluated)
				partial := e.Evaluated < r.Nodes
				if partial {
					b.WriteString(" (it stops once it has enough)")
				}
				b.WriteString("\n")
				if e.Filtered != "" {
					if partial {
						b.WriteString("  over all nodes: ")
					} else {
						b.WriteString("  ")
					}
					fmt.Fprintf(&b, "%s\n", e.Filtered)
				}
				for _, l := range strings.Split(strings.TrimRight(e.Breakdown, "\n"), "\n") {
					fmt.Fprintf(&b, "  %s\n", l)
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeJSON prints the report as indented JSON.
func (r *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ratio is used/total, 0 for an empty total.
func ratio(used, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(used) / float64(total)
}

// num prints a count, with one decimal when it is a mean of several runs.
func num(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// milli prints a capacity in whole GPUs or CPUs.
func milli(v int64, axis string) string {
	return fmt.Sprintf("%s %ss", num(float64(v)/1000), axis)
}

// expansion is one kind's load.Expansion in the report.
type expansion struct {
	Workloads int `json:"workloads"`
	Pods      int `json:"pods"`
}

// expansions converts load's counts for the report; nil for none.
func expansions(in map[string]load.Expansion) map[string]expansion {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]expansion, len(in))
	for kind, x := range in {
		out[kind] = expansion{x.Workloads, x.Pods}
	}
	return out
}

// expandedLine lists the expansions by kind: "1 Deployment into 4 pods,
// 2 StatefulSets into 6 pods".
func expandedLine(ex map[string]expansion) string {
	kinds := slices.Sorted(maps.Keys(ex))
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		x := ex[k]
		kind := k
		if x.Workloads != 1 {
			kind += "s"
		}
		pods := "pods"
		if x.Pods == 1 {
			pods = "pod"
		}
		parts = append(parts, fmt.Sprintf("%d %s into %d %s", x.Workloads, kind, x.Pods, pods))
	}
	return strings.Join(parts, ", ")
}

// count is n and noun, plural unless n is 1: "1 node", "3 nodes".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
