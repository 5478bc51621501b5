package framework

import (
	"fmt"

	"github.com/schedkit/schedkit/score"
)

// Host selection: the last step of a cycle that found feasible nodes,
// cached or not.

// finish picks the host among s.feasible by s.totals (the cycle's
// totals, one per feasible node), chooses GPU devices and explains. It
// drops the cycle's nodes. Errors: the device choice's, or the profile's
// Explain's (wrapped).
func (s *Scheduler) finish(d Decision, cluster score.Cluster) (Decision, error) {
	defer clear(s.feasible)
	if d.Diagnosis != nil { // no feasible node (diagnoseClass)
		return d, nil
	}
	pod := d.Pod
	totals := s.totals[:len(s.feasible)]
	best := s.selectHost(totals)
	d.Node, d.Total = s.feasible[best].Name(), totals[best]
	if pod.GPU().Count > 0 {
		withDevs, err := chooseDevices(s.devices, pod, s.feasible[best])
		if err != nil {
			// Not placed: the decision names no node.
			d.Node, d.Total = "", 0
			return d, err
		}
		d.Pod = withDevs
	}
	if s.breakdown {
		e, err := s.profile.Explain(pod, cluster, s.feasible, best)
		if err != nil {
			// Not placed, as above: with an error no Decision is Scheduled.
			d.Node, d.Total, d.Pod = "", 0, pod
			return d, fmt.Errorf("framework: explaining pod %s: %w", pod.Key(), err)
		}
		d.Breakdown = e
	}
	return d, nil
}

// selectHost returns the index of a highest total, chosen uniformly among
// ties with one draw from the seeded source (the distribution of
// upstream's former reservoir sampling, selectHost before v1.33): the
// k-th tie in order for k drawn from [0, ties), no draw for a single
// best. O(n) in three short passes with few unpredictable branches (max,
// count, locate).
func (s *Scheduler) selectHost(totals []int64) int {
	// Four running maxima: one would make a chain of dependent compares.
	m := [4]int64{totals[0], totals[0], totals[0], totals[0]}
	i := 0
	for ; i+4 <= len(totals); i += 4 {
		q := totals[i : i+4 : i+4]
		m[0], m[1], m[2], m[3] = max(m[0], q[0]), max(m[1], q[1]), max(m[2], q[2]), max(m[3], q[3])
	}
	top := max(m[0], m[1], m[2], m[3])
	for _, t := range totals[i:] {
		top = max(top, t)
	}
	ties := 0
	for _, t := range totals {
		if t == top {
			ties++
		}
	}
	k := 0
	if ties > 1 {
		k = s.rng.IntN(ties)
	}
	for i, t := range totals {
		if t == top {
			if k == 0 {
				return i
			}
			k--
		}
	}
	panic("unreachable")
}
