package parity

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
)

// preemptObjects serves a case's PriorityClasses and PDBs to schedkit.
type preemptObjects struct {
	classes map[string]*schedulingv1.PriorityClass
	pdbs    []*policy.PodDisruptionBudget
}

func (o preemptObjects) PriorityClass(name string) *schedulingv1.PriorityClass {
	return o.classes[name]
}
func (o preemptObjects) PodDisruptionBudgets(ns string) []*policy.PodDisruptionBudget {
	var out []*policy.PodDisruptionBudget
	for _, d := range o.pdbs {
		if d.Namespace == ns {
			out = append(out, d)
		}
	}
	return out
}

// ours strips spec.priority from the ClassOnly pods (schedkit resolves
// their priorityClassName).
func (c *PreemptCase) ours(p *v1.Pod) *v1.Pod {
	if !c.ClassOnly[p.Name] {
		return p
	}
	q := p.DeepCopy()
	q.Spec.Priority = nil
	return q
}

// preemptOutcome is what one case gave on both sides.
type preemptOutcome struct {
	fits, found, unique bool
}

// checkPreemptCase runs one case through upstream and schedkit and
// requires the same outcome: the same "fits somewhere" (nominated pods
// held), the same error-ness, the same message when no node is chosen,
// the same node when upstream's choice is unique (else a node among
// upstream's tied best), and the same victims (in order) and PDB
// violations on the chosen node.
func checkPreemptCase(t *testing.T, ctx context.Context, u *PreemptUpstream, c PreemptCase, label string) preemptOutcome {
	t.Helper()
	// upstream: PDBs in name order (schedkit's order; upstream's lister
	// order is unspecified).
	pdbs := append([]*policy.PodDisruptionBudget(nil), c.PDBs...)
	sort.Slice(pdbs, func(i, j int) bool { return pdbs[i].Name < pdbs[j].Name })
	var nominatedOthers []*v1.Pod
	for _, p := range c.Nominated {
		nominatedOthers = append(nominatedOthers, p)
	}
	require.NoError(t, u.Load(c.Nodes, c.Bound, nominatedOthers), label)
	up := u.Preempt(ctx, c.Pod, pdbs)

	cache := snapshot.NewCache()
	for _, n := range c.Nodes {
		require.NoError(t, cache.AddNode(n), label)
	}
	for _, p := range c.Bound {
		require.NoError(t, cache.AddPod(c.ours(p)), label)
	}
	s, err := framework.New(framework.Config{Filters: framework.DefaultFilters()})
	require.NoError(t, err)
	objs := preemptObjects{classes: c.Classes, pdbs: c.PDBs}
	for _, p := range c.Nominated {
		s.Nominate(snapshot.MustPodInfo(c.ours(p)), *p.Spec.Priority, p.Status.NominatedNodeName)
	}
	pod := c.ours(c.Pod)
	pi := snapshot.MustPodInfo(pod)
	sn := cache.Snapshot()
	if c.ClassOnly[pod.Name] {
		// the cycle reads spec.priority (admission's output): give it
		// what PodPriority resolves, as the Loop does.
		prio, err := framework.PodPriority(pod, objs)
		require.NoError(t, err)
		q := pod.DeepCopy()
		q.Spec.Priority = &prio
		pi = snapshot.MustPodInfo(q)
	}
	d, err := s.SchedulePod(sn, pi)
	require.NoError(t, err, label)
	require.Equal(t, up.Fits, d.Scheduled(), "%s: fits somewhere (upstream %v, schedkit node %q)", label, up.Fits, d.Node)
	if up.Fits {
		return preemptOutcome{fits: true}
	}
	res, err := s.Preempt(sn, pi, framework.PreemptOptions{Objects: objs})
	if up.Err != nil {
		require.Error(t, err, "%s: upstream error %v", label, up.Err)
		return preemptOutcome{}
	}
	require.NoError(t, err, label)
	if up.Node == "" {
		require.Equal(t, "", res.Node, "%s: upstream: %s", label, up.Message)
		require.Equal(t, up.Message, res.Message, label)
		return preemptOutcome{}
	}
	require.NotEqual(t, "", res.Node, "%s: upstream chose %s (%v); schedkit: %s", label, up.Node, up.Victims, res.Message)
	if up.Unique {
		require.Equal(t, up.Node, res.Node, "%s: chosen node (candidates %v)", label, up.Candidates)
	} else {
		require.Contains(t, up.Tied, res.Node, "%s: node among upstream's tied best", label)
	}
	var victims []string
	for _, v := range res.Victims {
		victims = append(victims, v.Key().Name)
	}
	require.Equal(t, up.Candidates[res.Node], victims, "%s: victims on %s", label, res.Node)
	if up.Unique {
		require.Equal(t, up.NumPDBViolations, int64(res.NumPDBViolations), label)
	}
	return preemptOutcome{found: true, unique: up.Unique}
}

// TestPreemptParity: 12,000 random clusters, fixed seeds.
func TestPreemptParity(t *testing.T) {
	ctx := context.Background()
	u, err := NewPreemptUpstream(ctx)
	require.NoError(t, err)
	n := 12000
	if testing.Short() {
		n = 1000
	}
	var fits, found, unique, none int
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed, 0x9e3779b9))
		o := checkPreemptCase(t, ctx, u, GenPreemptCase(r), "seed "+itoa(seed))
		switch {
		case o.fits:
			fits++
		case o.found:
			found++
			if o.unique {
				unique++
			}
		default:
			none++
		}
	}
	t.Logf("%d cases: %d fit without preemption, %d preempt (%d unique choices), %d no candidate or ineligible", n, fits, found, unique, none)
	require.Greater(t, unique, n/10, "enough cases exercise victim choice")
}

func FuzzPreemptParity(f *testing.F) {
	for _, s := range []uint64{0, 1, 7, 42, 1234, 99999} {
		f.Add(s)
	}
	ctx := context.Background()
	u, err := NewPreemptUpstream(ctx)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkPreemptCase(t, ctx, u, GenPreemptCase(rand.New(rand.NewPCG(seed, 0x9e3779b9))), "fuzz seed "+itoa(seed))
	})
}

func itoa(u uint64) string {
	b := []byte{}
	if u == 0 {
		return "0"
	}
	for u > 0 {
		b = append([]byte{byte('0' + u%10)}, b...)
		u /= 10
	}
	return string(b)
}
