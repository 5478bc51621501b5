package score

import (
	"fmt"
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
)

// BalancedAllocationName is upstream's plugin name.
const BalancedAllocationName = "NodeResourcesBalancedAllocation"

// balancedAllocation is the scorer [NewBalancedAllocation] returns.
type balancedAllocation struct {
	res []resource
}

var _ Scorer = (*balancedAllocation)(nil)

// NewBalancedAllocation returns the scorer for the named resources (none:
// cpu and memory). A repeated or empty name is an error wrapping
// [ErrInvalidConfig] (upstream requires every weight to be 1, so weights
// are not configurable).
//
// BalancedAllocation favours placements that improve the balance of a
// node's resource use: upstream NodeResourcesBalancedAllocation as of
// kube-scheduler v1.37 (noderesources/balanced_allocation.go):
//
//	f_r      = min(1, requested_r / allocatable_r)        (float64)
//	std      = |f_1 − f_2| / 2 for two resources; the population standard
//	           deviation for more; 0 for fewer
//	s        = int64((1 − std) × 100)
//	score    = 50 + (50 + s_with − s_without) / 2          (integer division)
//
// where s_with uses the node's requests plus the pod's and s_without the
// node's requests alone. Both sides use real requests (no 100m / 200 MiB
// defaults). Resources with zero allocatable on the node, and scalar
// resources the pod does not request, are left out. A pod whose request
// for every configured resource is 0 (best effort) is skipped: Prepare
// returns nil, as upstream's PreScore returns Skip, so the scorer adds
// nothing for that pod. The float64 operations are upstream's, in
// upstream's order, so the integer result is identical.
//
// O(resources) per node (four float divisions for cpu+memory), allocates
// nothing; safe for concurrent use.
func NewBalancedAllocation(resources ...v1.ResourceName) (Scorer, error) {
	var specs []ResourceSpec
	for _, r := range resources {
		specs = append(specs, ResourceSpec{Name: r, Weight: 1})
	}
	rs, err := compileResources("BalancedAllocation", specs, true)
	if err != nil {
		return nil, err
	}
	return &balancedAllocation{res: rs}, nil
}

// Name returns [BalancedAllocationName].
func (s *balancedAllocation) Name() string { return BalancedAllocationName }

func (s *balancedAllocation) resources() []resource { return s.res }

// Prepare reads the pod's requests once and returns nil for a best-effort
// pod. It never fails.
func (s *balancedAllocation) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	rs, bestEffort := prepareResources(s.res, pod, false)
	if bestEffort {
		return nil, nil
	}
	p := &balancedPod{res: rs}
	if c, m, ok := isCPUMem(rs); ok {
		p.fast, p.cpu, p.mem = true, c.podReq, m.podReq
	}
	return p, nil
}

type balancedPod struct {
	res      []podRes
	fast     bool
	cpu, mem int64
}

func balancedScore(with, without int64) int64 {
	return MaxScore/2 + (MaxScore/2+with-without)/2
}

func (p *balancedPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	if p.fast {
		for i, n := range nodes {
			out[i] = p.node(nodeview.CPUMemory(n))
		}
		return
	}
	for i, n := range nodes {
		out[i] = balancedScore(p.balance(n, true), p.balance(n, false))
	}
}

// score2 is the cpu+memory score with both allocatable > 0 and the node's
// requests uc, um, as balancedPod.node computes it (for tests).
func (p *balancedPod) score2(uc, um, c, m int64) int64 {
	with := arith.Balance2(arith.Fraction(arith.Add(uc, p.cpu), c), arith.Fraction(arith.Add(um, p.mem), m))
	without := arith.Balance2(arith.Fraction(uc, c), arith.Fraction(um, m))
	return balancedScore(with, without)
}

// balance is upstream's balancedResourceScore for node n, with or without
// the pod's requests. It walks the resources twice instead of collecting
// the fractions, so it allocates nothing; the fractions are recomputed
// bit for bit.
func (p *balancedPod) balance(n *snapshot.NodeInfo, withPod bool) int64 {
	frac := func(r *podRes) (float64, bool) {
		alloc, used := nodeAmounts(n, r)
		if alloc <= 0 {
			return 0, false
		}
		if withPod {
			used = arith.Add(used, r.podReq)
		}
		return arith.Fraction(used, alloc), true
	}
	var total float64
	var count int
	var first, second float64
	for j := range p.res {
		f, ok := frac(&p.res[j])
		if !ok {
			continue
		}
		switch count {
		case 0:
			first = f
		case 1:
			second = f
		}
		total += f
		count++
	}
	std := 0.0
	switch {
	case count == 2:
		std = math.Abs((first - second) / 2)
	case count > 2:
		mean := total / float64(count)
		var sum float64
		for j := range p.res {
			f, ok := frac(&p.res[j])
			if !ok {
				continue
			}
			sum = sum + (f-mean)*(f-mean)
		}
		std = math.Sqrt(sum / float64(count))
	}
	return int64((1 - std) * float64(MaxScore))
}

// Explain shows the fractions with and without the pod.
func (p *balancedPod) Explain(n *snapshot.NodeInfo) string {
	var b strings.Builder
	for j := range p.res {
		r := &p.res[j]
		alloc, used := nodeAmounts(n, r)
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		if alloc <= 0 {
			fmt.Fprintf(&b, "%s skipped (allocatable 0)", resourceLabel(r.id))
			continue
		}
		fmt.Fprintf(&b, "%s %d→%d/%d", resourceLabel(r.id), used, arith.Add(used, r.podReq), alloc)
	}
	with, without := p.balance(n, true), p.balance(n, false)
	return fmt.Sprintf("%s; balance %d→%d; 50+(50+%d-%d)/2=%d", b.String(), without, with, with, without, balancedScore(with, without))
}
