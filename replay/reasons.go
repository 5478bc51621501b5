package replay

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
)

// mainReason is the reason most nodes gave for rejecting the pod (the
// PreFilter's message when one rejected it outright), from the
// diagnosis's counts per message (Diagnosis.Histogram: O(kinds of
// reasons), not O(nodes)); ties go to the smaller message. The nodes a
// PreFilter left out of the candidates (Diagnosis.NotCandidates: all but
// its own node for a DaemonSet's pod) count only when no candidate was
// filtered: a pod that does not fit the one node it may run on is
// "Insufficient cpu", not "node(s) didn't satisfy plugin(s)
// [NodeAffinity]" of every other node.
func mainReason(d *framework.Diagnosis) string {
	if d == nil {
		return ""
	}
	if d.PreFilterMsg != "" {
		return d.PreFilterMsg
	}
	h := d.Histogram()
	if len(h) == 0 {
		return d.Message()
	}
	if d.NotCandidates > 0 && len(h) > 1 {
		nc := d.NotCandidate.Message()
		h = slices.DeleteFunc(h, func(c framework.ReasonCount) bool { return c.Message == nc && c.Count == d.NotCandidates })
	}
	best := h[0]
	for _, c := range h[1:] {
		if c.Count > best.Count || (c.Count == best.Count && c.Message < best.Message) {
			best = c
		}
	}
	return best.Message
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
		if pre[i], err = framework.RunPreFilter(f, pi, snap); err != nil {
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
