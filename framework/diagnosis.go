package framework

import (
	"slices"
	"strconv"
	"strings"
)

// Diagnosis says why a pod fits no node: upstream's framework.Diagnosis and
// FitError as values. It is produced by a scheduling cycle that found no
// feasible node and belongs to the caller.
type Diagnosis struct {
	// NumAllNodes is the number of nodes in the snapshot (the X of
	// "0/X nodes are available").
	NumAllNodes int
	// PreFilterMsg is set when a PreFilter rejected the pod outright
	// ("pod affinity terms conflict", "node(s) didn't satisfy plugin(s)
	// [NodeAffinity NodeName] simultaneously"); no node was filtered then
	// and Reasons is empty.
	PreFilterMsg string
	// UnschedulablePlugins are the filters that rejected the pod somewhere
	// (including PreFilters that narrowed or rejected), sorted.
	UnschedulablePlugins []string
	// Counts tallies why the filtered nodes failed: one entry per kind of
	// reason (same Plugin, Code, Resource, Text and Unresolvable; amounts
	// and taints may differ), in the order the nodes were filtered, with
	// the number of nodes that gave it, its Message, and the first such
	// node's Reason (Node set). A node with several reasons (one per
	// insufficient resource, from the first filter it failed) counts in
	// each. A scheduling cycle always fills it: O(kinds of reasons), not
	// O(nodes). Empty after a PreFilter rejection.
	Counts []ReasonCount
	// Reasons lists why each filtered node failed, node by node in the
	// order they were filtered, with Plugin and Node set. A cycle fills
	// it only with Config.NodeReasons (it costs one Reason per rejected
	// node); otherwise nil. A Diagnosis made by hand with Reasons and no
	// Counts is counted from Reasons.
	Reasons []Reason
	// NotCandidates counts the nodes a PreFilter excluded without
	// filtering them (node affinity matchFields, spec.nodeName); each
	// counts once under NotCandidate.
	NotCandidates int
	// NotCandidate is the reason given to those nodes ([CodeNotCandidate],
	// "node(s) didn't satisfy plugin(s) [NodeAffinity]").
	NotCandidate Reason
}

// ReasonCount is one entry of [Diagnosis.Counts] or of a
// [Diagnosis.Histogram].
type ReasonCount struct {
	// Message is upstream's reason string ("Insufficient cpu").
	Message string
	// Count is the number of nodes that gave it.
	Count int
	// Reason is the first such node's reason, in visiting order (in a
	// Histogram: of the first entry merged into this message).
	Reason Reason
}

// tally is the diagnosis's counts: Counts, or Reasons counted when
// Counts is nil (a Diagnosis made by hand). O(reasons × kinds).
func (d *Diagnosis) tally() []ReasonCount {
	if d.Counts != nil || len(d.Reasons) == 0 {
		return d.Counts
	}
	var t []ReasonCount
	for i := range d.Reasons {
		t = tallyReason(t, 0, &d.Reasons[i], 1, nil)
	}
	return t
}

// Histogram counts nodes per reason message, in upstream's order: the
// strings "<count> <message>" sorted lexicographically (so "10 …" sorts
// before "9 …", as in upstream's FitError.Error). Entries of Counts with
// one message (reasons of other plugins or resolvability, a custom
// filter reusing an upstream string) merge, as upstream's map does, and
// so do the NotCandidates. O(k log k) for k kinds of reasons (a
// Diagnosis made by hand with Reasons only: O(reasons × k));
// allocates O(k).
func (d *Diagnosis) Histogram() []ReasonCount {
	var out []ReasonCount
	add := func(rc ReasonCount) {
		if rc.Message == "" {
			rc.Message = rc.Reason.Message()
		}
		for i := range out {
			if out[i].Message == rc.Message {
				out[i].Count += rc.Count
				return
			}
		}
		out = append(out, rc)
	}
	for _, rc := range d.tally() {
		add(rc)
	}
	if d.NotCandidates > 0 {
		add(ReasonCount{Count: d.NotCandidates, Reason: d.NotCandidate})
	}
	slices.SortFunc(out, func(a, b ReasonCount) int {
		return strings.Compare(strconv.Itoa(a.Count)+" "+a.Message, strconv.Itoa(b.Count)+" "+b.Message)
	})
	return out
}

// Message is upstream's FitError.Error() for this diagnosis, byte for byte:
//
//	0/5000 nodes are available: 800 node(s) had untolerated taint(s), 4200 Insufficient cpu.
//	0/3 nodes are available: pod affinity terms conflict.
//
// For an empty cluster it is upstream's "no nodes available to schedule
// pods". A nil Diagnosis (a bound pod's [Attempt.Diagnosis]) gives "". Allocates.
func (d *Diagnosis) Message() string {
	if d == nil { // a bound pod's (Attempt.Diagnosis is nil): no failure
		return ""
	}
	if d.NumAllNodes == 0 {
		return msgNoNodesAvailable
	}
	var b strings.Builder
	b.WriteString(noNodeAvailablePrefix)
	b.WriteString(strconv.Itoa(d.NumAllNodes))
	b.WriteString(noNodeAvailableSuffix)
	if d.PreFilterMsg != "" {
		b.WriteString(" ")
		b.WriteString(d.PreFilterMsg)
		b.WriteString(".")
		return b.String()
	}
	h := d.Histogram()
	for i, rc := range h {
		if i == 0 {
			b.WriteString(" ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(rc.Count))
		b.WriteString(" ")
		b.WriteString(rc.Message)
	}
	if len(h) > 0 {
		b.WriteString(".")
	}
	return b.String()
}

// String returns Message().
func (d *Diagnosis) String() string { return d.Message() }
