package score_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
)

func TestDominantResource(t *testing.T) {
	build := func(t *testing.T, rs []score.ResourceSpec) score.Scorer {
		s, err := score.NewDominantResource(rs...)
		require.NoError(t, err)
		return s
	}
	tests := []resourceCase{
		{
			// balanced: cpu 1/4 = 0.25, memory 2Gi/8Gi = 0.25: D = 0.25, 100×0.5/(0.25×2) = 100.
			// memory-rich: cpu 1/4 = 0.25, memory 2/32 = 0.0625: 100×0.3125/0.5 = 62.
			name:  "matching shares leave nothing stranded",
			pod:   pod("", req("cpu", "1", "memory", "2Gi")),
			nodes: []*v1.Node{node("balanced", "cpu", "4", "memory", "8Gi"), node("memory-rich", "cpu", "4", "memory", "32Gi")},
			want:  []int64{100, 62},
		},
		{
			// Shares of what is left: cpu 1/(8-4) = 0.25, memory 2/(16-8) = 0.25 → 100.
			name:     "shares are of the free capacity",
			pod:      pod("", req("cpu", "1", "memory", "2Gi")),
			nodes:    []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			existing: []*v1.Pod{pod("n", req("cpu", "4", "memory", "8Gi"))},
			want:     []int64{100},
		},
		{
			// cpu nothing left → share 1 = D; memory 2/16 = 0.125: 100×1.125/2 = 56.
			name:     "exhausted resource is the dominant one",
			pod:      pod("", req("cpu", "1", "memory", "2Gi")),
			nodes:    []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			existing: []*v1.Pod{pod("n", req("cpu", "8"))},
			want:     []int64{56},
		},
		{
			// Weights cpu 3, memory 1: shares 0.25, 0.0625: 100×(0.75+0.0625)/(0.25×4) = 81.
			name:      "weights",
			pod:       pod("", req("cpu", "1", "memory", "2Gi")),
			nodes:     []*v1.Node{node("n", "cpu", "4", "memory", "32Gi")},
			resources: []score.ResourceSpec{{Name: "cpu", Weight: 3}, {Name: "memory", Weight: 1}},
			want:      []int64{81},
		},
		{
			// GPU unrequested, ignored: cpu 2/8, memory 4/16 → 100 on both.
			name:      "pod requesting no GPU on GPU and GPU-less nodes",
			pod:       pod("", req("cpu", "2", "memory", "4Gi")),
			nodes:     gpuAndCPUOnlyNodes(),
			resources: withGPU,
			want:      []int64{100, 100},
		},
		{
			// The node has none of the requested resources: 0.
			name:      "no requested resource on the node",
			pod:       pod("", req("nvidia.com/gpu", "1")),
			nodes:     []*v1.Node{node("cpu-only", "cpu", "8", "memory", "16Gi")},
			resources: withGPU,
			want:      []int64{0},
		},
	}
	runResourceCases(t, tests, build)

	t.Run("pod requesting nothing is skipped", func(t *testing.T) {
		snap, nodes := cluster(t, []*v1.Node{node("n", "cpu", "1")})
		_, skipped := final(t, build(t, nil), pod("", req()), snap, nodes)
		require.True(t, skipped)
	})
}
