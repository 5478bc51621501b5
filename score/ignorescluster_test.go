package score_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// scoresOver returns s's final scores of nodes for pod, prepared over
// cluster; nil when s skips the pod.
func scoresOver(t *testing.T, s score.Scorer, pod *snapshot.PodInfo, cluster score.Cluster, nodes []*snapshot.NodeInfo) []int64 {
	ps, err := s.Prepare(pod, cluster)
	require.NoError(t, err)
	if ps == nil {
		return nil
	}
	out := make([]int64, len(nodes))
	ps.Score(nodes, out)
	if n, ok := ps.(score.Normalizer); ok {
		require.NoError(t, n.Normalize(nodes, out))
	}
	return out
}

// A scorer IgnoresCluster claims — the kube-scheduler adapter then keeps
// its mirror current only in the nodes it scores — gives the same scores
// over any cluster: the nodes' own, an empty one, or another cluster
// altogether. ImageLocality, which counts nodes per image, is not one,
// and the test sees it differ.
func TestIgnoresClusterMeansClusterFree(t *testing.T) {
	imageDiffers := false
	for _, name := range score.ScorerNames() {
		c := score.Config{Scorer: name}
		if name == "RequestedToCapacityRatio" {
			c.Shape = []score.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
		}
		s, err := c.Build()
		require.NoError(t, err)
		ignores := score.IgnoresCluster(s)
		assert.Equal(t, name != "ImageLocality", ignores, name)
		for seed := range uint64(40) {
			r := rand.New(rand.NewPCG(seed, 7))
			snap, nodes, pod := randomCluster(t, r, 2+r.IntN(30))
			other, _, _ := randomCluster(t, r, 1+r.IntN(30))
			want := scoresOver(t, s, pod, snap, nodes)
			for _, c := range []score.Cluster{snapshot.Empty(), other} {
				got := scoresOver(t, s, pod, c, nodes)
				if ignores {
					require.Equal(t, want, got, "%s seed %d", name, seed)
				} else if name == "ImageLocality" && !assert.ObjectsAreEqual(want, got) {
					imageDiffers = true
				}
			}
		}
	}
	assert.True(t, imageDiffers, "ImageLocality's scores depend on the cluster")

	p := score.DefaultProfile()
	assert.False(t, score.IgnoresCluster(p), "the default profile has ImageLocality and the spreading scorers")
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	ba, err := score.NewBalancedAllocation()
	require.NoError(t, err)
	pair, err := score.NewProfile(score.Weighted{Scorer: la, Weight: 1}, score.Weighted{Scorer: ba, Weight: 1})
	require.NoError(t, err)
	assert.True(t, score.IgnoresCluster(pair))
	assert.False(t, score.IgnoresCluster(score.NewImageLocality()))
}
