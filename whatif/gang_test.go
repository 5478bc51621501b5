package whatif_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
	"github.com/schedkit/schedkit/whatif"
)

// TestGangEqualsLoop: on random clusters, each member's node (or
// diagnosis) equals framework.Loop's for the same pods on the same
// cluster (members with mixed priorities, so the queue order matters);
// the gang is kept on the fork exactly when enough members found a node,
// and the fork is unchanged otherwise.
func TestGangEqualsLoop(t *testing.T) {
	kept, reverted := 0, 0
	for seed := range uint64(30) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			nodes, bound := randomCluster(r, 3+r.IntN(12))
			var members []*v1.Pod
			for i := range 2 + r.IntN(30) {
				members = append(members, snapshottest.MakePod(fmt.Sprintf("worker-%d", i)).
					Req("cpu", fmt.Sprintf("%dm", 500*(1+r.IntN(6))), "memory", "2Gi").
					Priority(int32(r.IntN(3))).Obj())
			}
			g := whatif.Gang{Pods: members, MinMember: r.IntN(len(members) + 1)}
			cfg := framework.Config{Seed: seed}
			f := forkOf(t, nodes, bound)
			before := contentOf(f)
			got, err := whatif.PlaceGang(f, g, cfg)
			require.NoError(t, err)
			node, diag := loopPlacements(t, cfg, nodes, bound, members)
			require.Len(t, got.Placements, len(members))
			scheduled := 0
			for _, p := range got.Placements {
				name := p.Pod.Key().Name
				assert.Equal(t, node[name], p.Node, name)
				if p.Node == "" {
					assert.Equal(t, diag[name], p.Diagnosis.Message(), name)
				} else {
					scheduled++
				}
			}
			assert.Equal(t, scheduled, got.Scheduled)
			minimum := g.MinMember
			if minimum == 0 {
				minimum = len(members)
			}
			assert.Equal(t, scheduled >= minimum, got.Placed)
			assert.Equal(t, 0, f.Depth())
			if got.Placed {
				kept++
				for _, p := range got.Placements {
					if p.Node != "" {
						assert.True(t, f.Get(p.Node).HasPod(p.Pod.Key()), "%s kept on %s", p.Pod.Key(), p.Node)
					}
				}
			} else {
				reverted++
				assert.Equal(t, before, contentOf(f), "a gang not placed changed the fork")
				assert.Contains(t, got.Why, fmt.Sprintf("minMember %d", minimum))
			}
		})
	}
	// The seeds exercise both outcomes.
	assert.Positive(t, kept)
	assert.Positive(t, reverted)
}

// TestGangAllOrNothing: two 4-CPU nodes, four 3-CPU members: one per
// node fits (3 + 3 > 4), so 2 of 4 are placed. minMember 4 reverts all;
// minMember 2 keeps the two.
func TestGangAllOrNothing(t *testing.T) {
	nodes := []*v1.Node{
		snapshottest.MakeNode("a").Capacity("cpu", "4", "pods", "110").Obj(),
		snapshottest.MakeNode("b").Capacity("cpu", "4", "pods", "110").Obj(),
	}
	var pods []*v1.Pod
	for i := range 4 {
		pods = append(pods, snapshottest.MakePod(fmt.Sprintf("m%d", i)).Req("cpu", "3").Obj())
	}
	f := forkOf(t, nodes, nil)
	got, err := whatif.PlaceGang(f, whatif.Gang{Pods: pods, MinMember: 4}, framework.Config{})
	require.NoError(t, err)
	assert.False(t, got.Placed)
	assert.Equal(t, 2, got.Scheduled)
	assert.Equal(t, "2/4 members placed, minMember 4", got.Why)
	assert.Equal(t, 0, f.Get("a").NumPods()+f.Get("b").NumPods())

	got, err = whatif.PlaceGang(f, whatif.Gang{Pods: pods, MinMember: 2}, framework.Config{})
	require.NoError(t, err)
	assert.True(t, got.Placed)
	assert.Equal(t, 2, f.Get("a").NumPods()+f.Get("b").NumPods())
}

// TestGangOf reads upstream's v1.37 PodGroup: members by
// spec.schedulingGroup.podGroupName in the namespace, minCount from the
// gang policy; bad policies are errors naming the field.
func TestGangOf(t *testing.T) {
	name := func(s string) *v1.PodSchedulingGroup { return &v1.PodSchedulingGroup{PodGroupName: &s} }
	p1 := snapshottest.MakePod("p1").Obj()
	p1.Spec.SchedulingGroup = name("train")
	p2 := snapshottest.MakePod("p2").Obj()
	p2.Spec.SchedulingGroup = name("other")
	p3 := snapshottest.MakePod("p3").Namespace("elsewhere").Obj()
	p3.Spec.SchedulingGroup = name("train")
	p4 := snapshottest.MakePod("p4").Obj()
	p4.Spec.SchedulingGroup = name("train")
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train"},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2},
		}},
	}
	g, err := whatif.GangOf(pg, []*v1.Pod{p1, p2, p3, nil, p4})
	require.NoError(t, err)
	assert.Equal(t, 2, g.MinMember)
	assert.Equal(t, []*v1.Pod{p1, p4}, g.Pods)

	pg.Spec.SchedulingPolicy.Gang.MinCount = 0
	_, err = whatif.GangOf(pg, nil)
	assert.ErrorContains(t, err, "PodGroup default/train: spec.schedulingPolicy.gang.minCount 0 is below 1")
	assert.ErrorIs(t, err, whatif.ErrInvalidInput)
	pg.Spec.SchedulingPolicy = schedulingv1beta1.PodGroupSchedulingPolicy{}
	_, err = whatif.GangOf(pg, nil)
	assert.ErrorContains(t, err, "sets neither gang nor basic")
	pg.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
	g, err = whatif.GangOf(pg, []*v1.Pod{p1})
	require.NoError(t, err)
	assert.Equal(t, 1, g.MinMember)
}

func TestPlaceGangErrors(t *testing.T) {
	f := forkOf(t, []*v1.Node{snapshottest.MakeNode("n").Capacity("cpu", "8", "pods", "110").Obj()}, nil)
	before := contentOf(f)
	p := snapshottest.MakePod("p").Req("cpu", "1").Obj()
	for name, g := range map[string]whatif.Gang{
		"negative min":    {Pods: []*v1.Pod{p}, MinMember: -1},
		"nil member":      {Pods: []*v1.Pod{p, nil}},
		"repeated member": {Pods: []*v1.Pod{p, p}},
		"invalid member":  {Pods: []*v1.Pod{snapshottest.MakePod("bad").Req("cpu", "-1").Obj()}},
	} {
		_, err := whatif.PlaceGang(f, g, framework.Config{})
		assert.ErrorIs(t, err, whatif.ErrInvalidInput, name)
	}
	_, err := whatif.PlaceGang(nil, whatif.Gang{Pods: []*v1.Pod{p}}, framework.Config{})
	assert.ErrorIs(t, err, whatif.ErrInvalidInput)
	// More members asked for than exist (not created yet): not placed,
	// not an error; the one member would fit.
	g, err := whatif.PlaceGang(f, whatif.Gang{Pods: []*v1.Pod{p}, MinMember: 2}, framework.Config{})
	require.NoError(t, err)
	assert.False(t, g.Placed)
	assert.Equal(t, "n", g.Placements[0].Node)
	assert.Equal(t, "1/1 members placed, minMember 2", g.Why)
	assert.Equal(t, before, contentOf(f))
	assert.Equal(t, 0, f.Depth())
}
