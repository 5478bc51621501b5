package whatif

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
)

// Gang is a set of pods placed all-or-nothing.
type Gang struct {
	// Pods are the members. They are tried in framework.Loop's queue
	// order: higher spec.priority first, then in this order.
	Pods []*v1.Pod
	// MinMember is how many members must be placed for the gang to be
	// kept, >= 0; 0 means all of them. Above len(Pods) (members not
	// created yet) the gang is never placed. It is the
	// scheduler-plugins PodGroup's spec.minMember and upstream's
	// PodGroup spec.schedulingPolicy.gang.minCount ([GangOf]).
	MinMember int
}

// GangOf is the gang of upstream's PodGroup (scheduling.k8s.io/v1beta1,
// Kubernetes v1.37; k8s.io/api v0.37 has it): the pods of pods in pg's
// namespace whose spec.schedulingGroup.podGroupName is pg's name, in
// the given order, with MinMember from spec.schedulingPolicy.gang.minCount.
// A PodGroup with the basic policy (no gang) gets MinMember 1: its pods
// are placed one by one as far as they fit, with no all-or-nothing
// (upstream's basic policy); a gang asking for more members than exist
// is not placed ([PlaceGang] says so). O(len(pods)).
// Errors: a nil pg, a policy that sets neither gang nor basic, or a
// minCount below 1, naming the PodGroup and field.
func GangOf(pg *schedulingv1beta1.PodGroup, pods []*v1.Pod) (Gang, error) {
	if pg == nil {
		return Gang{}, fmt.Errorf("PodGroup is nil: %w", ErrInvalidInput)
	}
	pol := pg.Spec.SchedulingPolicy
	var g Gang
	switch {
	case pol.Gang != nil:
		if pol.Gang.MinCount < 1 {
			return Gang{}, fmt.Errorf("PodGroup %s/%s: spec.schedulingPolicy.gang.minCount %d is below 1: %w", pg.Namespace, pg.Name, pol.Gang.MinCount, ErrInvalidInput)
		}
		g.MinMember = int(pol.Gang.MinCount)
	case pol.Basic != nil:
		g.MinMember = 1
	default:
		return Gang{}, fmt.Errorf("PodGroup %s/%s: spec.schedulingPolicy sets neither gang nor basic: %w", pg.Namespace, pg.Name, ErrInvalidInput)
	}
	for _, p := range pods {
		if p != nil && p.Namespace == pg.Namespace && p.Spec.SchedulingGroup != nil &&
			p.Spec.SchedulingGroup.PodGroupName != nil && *p.Spec.SchedulingGroup.PodGroupName == pg.Name {
			g.Pods = append(g.Pods, p)
		}
	}
	if pol.Basic != nil && len(g.Pods) == 0 {
		g.MinMember = 0
	}
	return g, nil
}

// GangResult answers [PlaceGang].
type GangResult struct {
	// Placed reports that at least MinMember members were placed and the
	// placements were kept on the fork.
	Placed bool
	// Scheduled is how many members found a node in the attempt (kept
	// only when Placed).
	Scheduled int
	// Placements has one entry per member, in the order tried: its node
	// (which, when Placed is false, says where it would have gone) or its
	// diagnosis.
	Placements []Placement
	// Why explains a gang not placed: "3/4 members placed, minMember 4".
	Why string
}

// PlaceGang places g's members one by one as the scheduler configured by
// cfg would (each member sees the earlier ones in place), on a layer
// opened on f: when at least g.MinMember members (all when 0) found a
// node, the layer is committed and the members stay on f (placed
// members only: a member that fits nowhere stays pending, as with
// coscheduling's minMember); otherwise it is reverted and f is as before.
// Every member is tried even after the gang is known to fail, so the
// answer says where each member would go. Deterministic for cfg.Seed.
//
// Cost: len(g.Pods) scheduling cycles and one PodInfo per member.
// Errors (f unchanged): a nil fork, an empty g.Pods, a nil or invalid member, a repeated
// member, a negative MinMember (wrapping [ErrInvalidInput]), an invalid
// cfg.
func PlaceGang(f *snapshot.Fork, g Gang, cfg framework.Config) (GangResult, error) {
	if len(g.Pods) == 0 {
		return GangResult{}, fmt.Errorf("gang: Pods is empty: %w", ErrInvalidInput)
	}
	if g.MinMember < 0 {
		return GangResult{}, fmt.Errorf("gang: MinMember %d is negative: %w", g.MinMember, ErrInvalidInput)
	}
	pis := make([]*snapshot.PodInfo, len(g.Pods))
	seen := make(map[snapshot.PodKey]bool, len(g.Pods))
	for i, p := range g.Pods {
		if p == nil {
			return GangResult{}, fmt.Errorf("gang: Pods[%d] is nil: %w", i, ErrInvalidInput)
		}
		pi, err := snapshot.DecodePodInfo(p, decoderOf(f))
		if err != nil {
			return GangResult{}, fmt.Errorf("gang: Pods[%d]: %w: %w", i, err, ErrInvalidInput)
		}
		if seen[pi.Key()] {
			return GangResult{}, fmt.Errorf("gang: Pods[%d]: pod %s repeats: %w", i, pi.Key(), ErrInvalidInput)
		}
		seen[pi.Key()] = true
		pis[i] = pi
	}
	queueOrder(pis)
	s, err := framework.New(cfg)
	if err != nil {
		return GangResult{}, err
	}
	if err := open(f); err != nil {
		return GangResult{}, err
	}
	need := g.MinMember
	if need == 0 {
		need = len(pis)
	}
	var res GangResult
	for _, pi := range pis {
		p, err := place(s, f, pi)
		if err != nil {
			_ = f.Revert()
			return GangResult{}, err
		}
		if p.Node != "" {
			res.Scheduled++
		}
		res.Placements = append(res.Placements, p)
	}
	if res.Scheduled >= need {
		res.Placed = true
		return res, f.Commit()
	}
	res.Why = fmt.Sprintf("%d/%d members placed, minMember %d", res.Scheduled, len(pis), need)
	return res, f.Revert()
}
