package framework

import (
	"slices"
	"strconv"
	"strings"

	"github.com/schedkit/schedkit/snapshot"
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
	// Reasons lists why each filtered node failed, node by node in the
	// order they were filtered; a node may have several reasons (one per
	// insufficient resource) from the first filter it failed.
	Reasons []Reason
	// NotCandidates counts the nodes a PreFilter excluded without
	// filtering them (node affinity matchFields, spec.nodeName); each
	// counts once under NotCandidate.
	NotCandidates int
	// NotCandidate is the reason given to those nodes ([CodeNotCandidate],
	// "node(s) didn't satisfy plugin(s) [NodeAffinity]").
	NotCandidate Reason
}

// ReasonCount is one entry of a [Diagnosis] histogram.
type ReasonCount struct {
	// Message is upstream's reason string ("Insufficient cpu").
	Message string
	// Count is the number of nodes that gave it.
	Count int
}

// Histogram counts nodes per reason message, in upstream's order: the
// strings "<count> <message>" sorted lexicographically (so "10 …" sorts
// before "9 …", as in upstream's FitError.Error). O(reasons); allocates.
func (d *Diagnosis) Histogram() []ReasonCount {
	type key struct {
		code Code
		id   int32
		text string
	}
	counts := map[key]int{}
	var order []key
	add := func(r *Reason, n int) {
		k := key{code: r.Code, text: r.Text}
		if r.Code == CodeInsufficientResource {
			k.id = int32(r.Resource)
		}
		if _, ok := counts[k]; !ok {
			order = append(order, k)
		}
		counts[k] += n
	}
	for i := range d.Reasons {
		add(&d.Reasons[i], 1)
	}
	if d.NotCandidates > 0 {
		add(&d.NotCandidate, d.NotCandidates)
	}
	// Reasons with different codes can share a message (a custom filter
	// reusing an upstream string); merge them as upstream's map does.
	byMsg := map[string]int{}
	var out []ReasonCount
	for _, k := range order {
		r := Reason{Code: k.code, Text: k.text}
		if k.code == CodeInsufficientResource {
			r.Resource = snapshot.ResourceID(k.id)
		}
		msg := r.Message()
		if i, ok := byMsg[msg]; ok {
			out[i].Count += counts[k]
			continue
		}
		byMsg[msg] = len(out)
		out = append(out, ReasonCount{Message: msg, Count: counts[k]})
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
