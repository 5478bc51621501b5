package score_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
)

func TestTetris(t *testing.T) {
	tests := []struct {
		resourceCase
		spread bool
	}{
		{resourceCase: resourceCase{
			// half: p = 2/8, 4/16 = 0.25 each; free 0.5 each; a = (0.125+0.125)/2 = 0.125 → 100×0.875 = 87.
			// empty: free 1 → a = 0.25 → 75. Packing prefers the fuller node.
			name:     "pack (FGD direction)",
			pod:      pod("", req("cpu", "2", "memory", "4Gi")),
			nodes:    []*v1.Node{node("half", "cpu", "8", "memory", "16Gi"), node("empty", "cpu", "8", "memory", "16Gi")},
			existing: []*v1.Pod{pod("half", req("cpu", "4", "memory", "8Gi"))},
			want:     []int64{87, 75},
		}},
		{resourceCase: resourceCase{
			// Same alignments, Tetris direction: 100×0.125 = 12, 100×0.25 = 25.
			name:     "spread (Tetris direction)",
			pod:      pod("", req("cpu", "2", "memory", "4Gi")),
			nodes:    []*v1.Node{node("half", "cpu", "8", "memory", "16Gi"), node("empty", "cpu", "8", "memory", "16Gi")},
			existing: []*v1.Pod{pod("half", req("cpu", "4", "memory", "8Gi"))},
			want:     []int64{12, 25},
		}, spread: true},
		{resourceCase: resourceCase{
			// GPU unrequested, left out: a = 0.25 on both → 75.
			name:      "pod requesting no GPU on GPU and GPU-less nodes",
			pod:       pod("", req("cpu", "2", "memory", "4Gi")),
			nodes:     gpuAndCPUOnlyNodes(),
			resources: withGPU,
			want:      []int64{75, 75},
		}},
		{resourceCase: resourceCase{
			// Over-size request: p capped at 1; cpu free 0 → term 0, memory 4/16×1 = 0.25: a = 0.125 → 87.
			name:     "no free cpu",
			pod:      pod("", req("cpu", "16", "memory", "4Gi")),
			nodes:    []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			existing: []*v1.Pod{pod("n", req("cpu", "8"))},
			want:     []int64{87},
		}},
	}
	for _, tc := range tests {
		runResourceCases(t, []resourceCase{tc.resourceCase}, func(t *testing.T, rs []score.ResourceSpec) score.Scorer {
			s, err := score.Config{Scorer: score.TetrisName, Resources: rs, Spread: tc.spread}.Build()
			require.NoError(t, err)
			return s
		})
	}
}
