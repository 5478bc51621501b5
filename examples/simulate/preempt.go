package main

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/replay"
)

// Preemption in the simulator: -preemption turns on kube-scheduler's
// DefaultPreemption in every run (replay.Config.Preemption, through
// framework.Loop.SetPreemption, every node examined): a pod that fits
// nowhere evicts lower-priority pods from the node preemption chooses and
// is scheduled again; the victims leave the cluster. Priorities come
// from the input: spec.priority, or spec.priorityClassName resolved
// through the PriorityClasses of -objects (PodDisruptionBudgets there
// protect their pods as upstream's do); a trace has none of its own, so
// -priority-map gives one per qos class.

// preemptionFlags registers -preemption and -priority-map.
func preemptionFlags(fs *flag.FlagSet, o *options) {
	fs.BoolVar(&o.preemption, "preemption", false, "a pod that fits nowhere evicts lower-priority pods (kube-scheduler's DefaultPreemption, every node examined); priorities from spec.priority, PriorityClasses of -objects, or -priority-map; PodDisruptionBudgets protect pods by status.disruptionsAllowed, as kube-scheduler (a PDB without status allows 0 disruptions); the report counts preemptions and evicted pods by priority")
	fs.Var(&o.priorityMap, "priority-map", "with -preemption and a trace: pod priority per qos class, `CLASS=PRIORITY,...` (classes "+strings.Join(traceClasses, ", ")+"; classes not listed get 0), e.g. LS=1000,Guaranteed=1000,Burstable=500,BE=0")
}

// traceClasses are the openb trace's qos classes.
var traceClasses = []string{string(openb.QoSLS), string(openb.QoSBE), string(openb.QoSBurstable), string(openb.QoSGuaranteed)}

// priorityMap is -priority-map: a trace pod's priority by its qos class.
// nil when the flag is not given.
type priorityMap map[openb.QoS]int32

// String lists the classes in name order ("BE=0,LS=1000").
func (m *priorityMap) String() string {
	if m == nil || *m == nil {
		return ""
	}
	parts := make([]string, 0, len(*m))
	for c, p := range *m {
		parts = append(parts, string(c)+"="+strconv.FormatInt(int64(p), 10))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// Set parses CLASS=PRIORITY pairs, comma-separated; a repeated flag
// adds to the map, and an empty value is no pair (as if the flag were
// not given). Errors name the pair: an empty pair ("LS=1,,BE=0", a
// trailing comma), an unknown class, a priority that is not a 32-bit
// integer, a class given twice; on error the map is as before the call.
func (m *priorityMap) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	add := priorityMap{}
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return fmt.Errorf("%q: pair %d is empty, want CLASS=PRIORITY,...", s, i+1)
		}
		class, value, ok := strings.Cut(part, "=")
		class, value = strings.TrimSpace(class), strings.TrimSpace(value)
		if !ok {
			return fmt.Errorf("%q: want CLASS=PRIORITY", part)
		}
		if !slices.Contains(traceClasses, class) {
			return fmt.Errorf("%q: class %q is not a trace qos class (%s)", part, class, strings.Join(traceClasses, ", "))
		}
		p, err := strconv.ParseInt(value, 10, 32)
		if err != nil {
			return fmt.Errorf("%q: priority %q is not an integer in [%d, %d]", part, value, math.MinInt32, math.MaxInt32)
		}
		_, dup := (*m)[openb.QoS(class)]
		if _, dup2 := add[openb.QoS(class)]; dup || dup2 {
			return fmt.Errorf("%q: class %s given twice", part, class)
		}
		add[openb.QoS(class)] = int32(p)
	}
	if *m == nil {
		*m = priorityMap{}
	}
	maps.Copy(*m, add)
	return nil
}

// apply sets spec.priority of objs[i] (pods[i]'s object) from pods[i]'s
// qos class; classes the map does not list, and every pod when m is nil,
// keep no priority (0).
func (m priorityMap) apply(objs []*v1.Pod, pods []openb.Pod) {
	if m == nil {
		return
	}
	for i := range pods {
		if p, ok := m[pods[i].QoS]; ok {
			objs[i].Spec.Priority = &p
		}
	}
}

// preemptOptions is replay.Config.Preemption for the run: every node
// examined (framework.PreemptOptions' zero value: upstream's answer
// whenever upstream examines every potential node), PriorityClasses and
// PDBs read from the run's ledger; nil without -preemption.
func (s *runSpec) preemptOptions() *framework.PreemptOptions {
	if !s.preemption {
		return nil
	}
	return &framework.PreemptOptions{}
}

// priorityCount is a number of pods (a mean over runs) of one priority.
type priorityCount struct {
	Priority int32   `json:"priority"`
	Pods     float64 `json:"pods"`
}

// preemptionSummary is a policy's preemptions, means over its runs:
// preemptions by the preemptor's priority, evicted pods by their own,
// highest priority first. Empty without -preemption.
type preemptionSummary struct {
	Preemptions           float64         `json:"preemptions,omitempty"`
	Evicted               float64         `json:"evicted,omitempty"`
	PreemptionsByPriority []priorityCount `json:"preemptionsByPriority,omitempty"`
	EvictedByPriority     []priorityCount `json:"evictedByPriority,omitempty"`
}

// addPreemptions adds one run's counts.
func (s *preemptionSummary) addPreemptions(r *replay.Report) {
	s.Preemptions += float64(r.Preemptions)
	s.Evicted += float64(r.Evicted)
	s.PreemptionsByPriority = addCounts(s.PreemptionsByPriority, r.PreemptionsByPriority)
	s.EvictedByPriority = addCounts(s.EvictedByPriority, r.EvictedByPriority)
}

// meanPreemptions divides the sums by n runs.
func (s *preemptionSummary) meanPreemptions(n float64) {
	s.Preemptions /= n
	s.Evicted /= n
	for _, l := range [][]priorityCount{s.PreemptionsByPriority, s.EvictedByPriority} {
		for i := range l {
			l[i].Pods /= n
		}
	}
}

// addCounts adds m's counts to l, kept in descending priority.
func addCounts(l []priorityCount, m map[int32]int) []priorityCount {
	for p, n := range m {
		i, found := slices.BinarySearchFunc(l, p, func(c priorityCount, p int32) int { return cmp.Compare(p, c.Priority) })
		if !found {
			l = slices.Insert(l, i, priorityCount{Priority: p})
		}
		l[i].Pods += float64(n)
	}
	return l
}

// writePreemptions prints each policy's preemptions and evictions:
// "default  12 preemptions (priority 1000: 12); 30 evicted (priority 0: 30)".
func writePreemptions(b *strings.Builder, sums []*summary) {
	b.WriteString("\npreemptions by the preemptor's priority, evicted pods by their own (mean per run):\n")
	for _, s := range sums {
		fmt.Fprintf(b, "  %-13s %s preemptions%s; %s evicted%s\n", s.Policy, num(s.Preemptions), countsLine(s.PreemptionsByPriority),
			num(s.Evicted), countsLine(s.EvictedByPriority))
	}
}

// countsLine is " (priority 1000: 12, priority 0: 3)", "" for none.
func countsLine(l []priorityCount) string {
	if len(l) == 0 {
		return ""
	}
	parts := make([]string, len(l))
	for i, c := range l {
		parts[i] = fmt.Sprintf("priority %d: %s", c.Priority, num(c.Pods))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
