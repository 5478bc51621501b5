package whatif_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
	"github.com/schedkit/schedkit/whatif"
)

// TestFitCountEqualsLoop: on random clusters, FitCount's placements are
// those of framework.Loop scheduling the same copies pod by pod on a
// ledger holding the same cluster, and the copy after the last placed is
// unschedulable there with the same diagnosis.
func TestFitCountEqualsLoop(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			nodes, bound := randomCluster(r, 5+r.IntN(40))
			tmpl := snapshottest.MakePod("web").Req("cpu", fmt.Sprintf("%dm", 250*(1+r.IntN(8))), "memory", "1Gi").Obj()
			if seed%3 == 0 {
				tmpl = snapshottest.MakePod("web").Req("cpu", "500m").
					Toleration("dedicated", v1.TolerationOpEqual, "gpu", v1.TaintEffectNoSchedule).
					PreferredNodeAffinity(10, "topology.kubernetes.io/zone", v1.NodeSelectorOpIn, "b").Obj()
			}
			cfg := framework.Config{Seed: seed}
			if seed%4 == 1 {
				// Spread copies over zones, at most 1 apart, filtered and
				// scored by PodTopologySpread: the count stops at the
				// skew (see the diagnoses), not only at capacity.
				tmpl.Labels = map[string]string{"app": "web"}
				tmpl.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
					MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: v1.DoNotSchedule,
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				}}
				cfg = spreadConfig(t, seed)
			}
			limit := 200
			f := forkOf(t, nodes, bound)
			before := contentOf(f)
			got, err := whatif.FitCount(f, tmpl, limit, cfg)
			require.NoError(t, err)
			require.Equal(t, before, contentOf(f), "the caller's fork changed")

			var copies []*v1.Pod
			for i := range min(got.Count+1, limit) {
				c := tmpl.DeepCopy()
				c.Name = fmt.Sprintf("web-%d", i)
				copies = append(copies, c)
			}
			node, diag := loopPlacements(t, cfg, nodes, bound, copies)
			require.Len(t, got.Placements, got.Count)
			for i, p := range got.Placements {
				assert.Equal(t, node[p.Pod.Key().Name], p.Node, "copy %d", i)
			}
			if got.Count < limit {
				require.NotNil(t, got.Next)
				next := fmt.Sprintf("web-%d", got.Count)
				assert.Equal(t, "", node[next], "the loop placed %s", next)
				assert.Equal(t, diag[next], got.Next.Message())
			} else {
				assert.Nil(t, got.Next)
			}
		})
	}
}

// spreadConfig is the default filters plus PodTopologySpread, scored by
// LeastAllocated, BalancedAllocation and PodTopologySpread (weight 2).
func spreadConfig(t *testing.T, seed uint64) framework.Config {
	f, err := framework.NewPodTopologySpread(score.PodTopologySpreadArgs{})
	require.NoError(t, err)
	s, err := score.NewPodTopologySpread(score.PodTopologySpreadArgs{})
	require.NoError(t, err)
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	ba, err := score.NewBalancedAllocation()
	require.NoError(t, err)
	return framework.Config{
		Seed:    seed,
		Filters: append(framework.DefaultFilters(), f),
		Profile: score.MustProfile(score.Weighted{Scorer: la}, score.Weighted{Scorer: ba}, score.Weighted{Scorer: s, Weight: 2}),
	}
}

// TestFitCountArithmetic: three nodes of 4, 2 and 1 CPU, a 1-CPU
// template: 4 + 2 + 1 = 7 copies fit; the 8th fails on cpu everywhere.
// A limit of 5 stops at 5 with no diagnosis.
func TestFitCountArithmetic(t *testing.T) {
	nodes := []*v1.Node{
		snapshottest.MakeNode("n4").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj(),
		snapshottest.MakeNode("n2").Capacity("cpu", "2", "memory", "8Gi", "pods", "110").Obj(),
		snapshottest.MakeNode("n1").Capacity("cpu", "1", "memory", "8Gi", "pods", "110").Obj(),
	}
	tmpl := snapshottest.MakePod("p").Req("cpu", "1").Obj()
	f := forkOf(t, nodes, nil)
	got, err := whatif.FitCount(f, tmpl, 100, framework.Config{})
	require.NoError(t, err)
	assert.Equal(t, 7, got.Count)
	require.NotNil(t, got.Next)
	assert.Equal(t, "0/3 nodes are available: 3 Insufficient cpu.", got.Next.Message())
	perNode := map[string]int{}
	for _, p := range got.Placements {
		perNode[p.Node]++
	}
	assert.Equal(t, map[string]int{"n4": 4, "n2": 2, "n1": 1}, perNode)

	got, err = whatif.FitCount(f, tmpl, 5, framework.Config{})
	require.NoError(t, err)
	assert.Equal(t, 5, got.Count)
	assert.Nil(t, got.Next)
	assert.Equal(t, 0, f.Depth())
}

func TestFitCountErrors(t *testing.T) {
	f := forkOf(t, []*v1.Node{snapshottest.MakeNode("n").Capacity("cpu", "1").Obj()}, nil)
	before := contentOf(f)
	tmpl := snapshottest.MakePod("p").Req("cpu", "1").Obj()
	bad := snapshottest.MakePod("bad").Req("cpu", "-1").Obj()
	for name, call := range map[string]func() error{
		"nil fork":       func() error { _, err := whatif.FitCount(nil, tmpl, 1, framework.Config{}); return err },
		"nil template":   func() error { _, err := whatif.FitCount(f, nil, 1, framework.Config{}); return err },
		"negative limit": func() error { _, err := whatif.FitCount(f, tmpl, -1, framework.Config{}); return err },
		"bad template":   func() error { _, err := whatif.FitCount(f, bad, 1, framework.Config{}); return err },
	} {
		err := call()
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, whatif.ErrInvalidInput), "%s: %v", name, err)
	}
	_, err := whatif.FitCount(f, tmpl, 1, framework.Config{PercentageOfNodesToScore: 101})
	assert.ErrorIs(t, err, framework.ErrInvalidConfig)
	assert.Equal(t, before, contentOf(f))
	assert.Equal(t, 0, f.Depth())
}

// A template with spec.nodeName set is refused with an error naming the
// field (it was cleared silently); an empty gang is refused naming Pods
// (it returned nil, no error). The fork is unchanged.
func TestFitCountPinnedTemplateAndEmptyGang(t *testing.T) {
	f := forkOf(t, []*v1.Node{snapshottest.MakeNode("n").Capacity("cpu", "4").Obj()}, nil)
	before := contentOf(f)
	pinned := snapshottest.MakePod("p").Req("cpu", "1").Obj()
	pinned.Spec.NodeName = "n"
	_, err := whatif.FitCount(f, pinned, 3, framework.Config{})
	require.ErrorIs(t, err, whatif.ErrInvalidInput)
	assert.Contains(t, err.Error(), `spec.nodeName is "n"`)
	_, err = whatif.PlaceGang(f, whatif.Gang{}, framework.Config{})
	require.ErrorIs(t, err, whatif.ErrInvalidInput)
	assert.Contains(t, err.Error(), "Pods is empty")
	assert.Equal(t, before, contentOf(f))
	assert.Equal(t, 0, f.Depth())
}
