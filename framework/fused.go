package framework

import (
	"github.com/schedkit/schedkit/snapshot"

	"github.com/schedkit/schedkit/internal/nodeview"
)

// Filter fusion. After PreFilter, a run of consecutive prepared built-in
// filters among NodeUnschedulable, TaintToleration, NodeResourcesFit and
// GPUDevices, in that order (DefaultFilters' order, GPUDevices appended),
// is replaced by one fusedFilter: one call per node instead of one per
// filter, the checks in the same order reading the node's FilterBlock
// and CPUMemory (two cache lines), the same reasons from the same first
// failing filter.

// Ranks of the fusable filters, in the order a run must follow.
const (
	fuseUnschedulable = iota
	fuseTaints
	fuseFit
	fuseGPU
	numFusable
)

// fusedFilter is a run of prepared built-in filters. It labels the
// reasons it appends with the plugin name itself.
type fusedFilter struct {
	unschedulable bool
	taints        taintFilter // nil: not in the run (or nothing to check)
	hasTaints     bool
	fit           *fitFilter
	gpu           *gpuFilter
	names         [numFusable]string
}

// fusableRank returns the rank of a prepared built-in filter, or -1.
func fusableRank(pf PodFilter) int {
	switch pf.(type) {
	case unschedulableFilter:
		return fuseUnschedulable
	case taintFilter:
		return fuseTaints
	case *fitFilter:
		return fuseFit
	case *gpuFilter:
		return fuseGPU
	}
	return -1
}

// fuse replaces runs of two or more fusable filters in s.pfs (names in
// s.pfNames) by fusedFilters from s.fused, reused between cycles; the
// fused entries' names are "" (they label their reasons themselves).
// O(filters); allocates only when s.fused is too short.
func (s *Scheduler) fuse() {
	if cap(s.fused) < len(s.pfs)/2 {
		s.fused = make([]fusedFilter, 0, len(s.pfs)/2)
	}
	s.fused = s.fused[:0]
	out := 0
	for i := 0; i < len(s.pfs); {
		j, last := i, -1
		for j < len(s.pfs) {
			r := fusableRank(s.pfs[j])
			if r <= last {
				break
			}
			last = r
			j++
		}
		if j-i < 2 {
			s.pfs[out], s.pfNames[out] = s.pfs[i], s.pfNames[i]
			out++
			i++
			continue
		}
		s.fused = append(s.fused, fusedFilter{})
		ff := &s.fused[len(s.fused)-1]
		for k := i; k < j; k++ {
			r := fusableRank(s.pfs[k])
			ff.names[r] = s.pfNames[k]
			switch pf := s.pfs[k].(type) {
			case unschedulableFilter:
				ff.unschedulable = true
			case taintFilter:
				ff.taints, ff.hasTaints = pf, true
			case *fitFilter:
				ff.fit = pf
			case *gpuFilter:
				ff.gpu = pf
			}
		}
		s.pfs[out], s.pfNames[out] = ff, ""
		out++
		i = j
	}
	clear(s.pfs[out:])
	s.pfs, s.pfNames = s.pfs[:out], s.pfNames[:out]
}

// Filter runs the run's checks in order and stops at the first that
// fails; allocates nothing.
func (f *fusedFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	n0 := len(reasons)
	fb := nodeview.FilterBlock(ni)
	if f.unschedulable && fb.Unschedulable {
		return append(reasons, Reason{Plugin: f.names[fuseUnschedulable], Code: CodeNodeUnschedulable, Unresolvable: true})
	}
	if f.hasTaints && fb.NoScheduleTaints {
		if reasons = f.taints.Filter(ni, reasons); len(reasons) > n0 {
			return label(reasons, n0, f.names[fuseTaints])
		}
	}
	if f.fit != nil {
		if reasons = f.fit.Filter(ni, reasons); len(reasons) > n0 {
			return label(reasons, n0, f.names[fuseFit])
		}
	}
	if f.gpu != nil {
		if reasons = f.gpu.Filter(ni, reasons); len(reasons) > n0 {
			return label(reasons, n0, f.names[fuseGPU])
		}
	}
	return reasons
}

// fits reports whether ni passes every check of the run: Filter
// appending nothing, with the checks in another order (FilterBlock-only
// ones first, then CPUMemory, then the rest), for a cycle that has a
// feasible node and needs no reasons. Allocates nothing.
func (f *fusedFilter) fits(ni *snapshot.NodeInfo) bool {
	fb := nodeview.FilterBlock(ni)
	if f.unschedulable && fb.Unschedulable {
		return false
	}
	if f.fit != nil && !f.fit.fitsBlock(fb) {
		return false
	}
	if f.gpu != nil && !f.gpu.fits(ni) {
		return false
	}
	if f.fit != nil && !f.fit.fitsRest(ni) {
		return false
	}
	return !f.hasTaints || f.taints.untolerated(ni) == nil
}

func label(reasons []Reason, n0 int, plugin string) []Reason {
	for k := n0; k < len(reasons); k++ {
		reasons[k].Plugin = plugin
	}
	return reasons
}
