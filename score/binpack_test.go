package score_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
)

func TestBinPack(t *testing.T) {
	gpuSet := []score.ResourceSpec{{Name: "cpu"}, {Name: "memory"}, {Name: "nvidia.com/gpu", Weight: 2}}
	tests := []resourceCase{
		{
			// cpu (2000+2000)×1/8000 = 0.5, memory (4Gi+4Gi)×1/16Gi = 0.5: (0.5+0.5)/2×100 = 50.
			// Empty node: cpu 0.25, memory 0.25 → 25. The fuller node wins.
			name:     "fuller node scores higher",
			pod:      pod("", req("cpu", "2", "memory", "4Gi")),
			nodes:    []*v1.Node{node("half", "cpu", "8", "memory", "16Gi"), node("empty", "cpu", "8", "memory", "16Gi")},
			existing: []*v1.Pod{pod("half", req("cpu", "2", "memory", "4Gi"))},
			want:     []int64{50, 25},
		},
		{
			// Volcano's example weights cpu 5, memory 1: cpu 4000×5/8000 = 2.5, memory 2Gi×1/16Gi = 0.125:
			// 2.625/6×100 = 43.75 → 43.
			name:      "per-resource weights",
			pod:       pod("", req("cpu", "4", "memory", "2Gi")),
			nodes:     []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			resources: []score.ResourceSpec{{Name: "cpu", Weight: 5}, {Name: "memory", Weight: 1}},
			want:      []int64{43},
		},
		{
			// cpu (7000+2000) > 8000 → 0 but its weight counts; memory (0+4Gi)/16Gi = 0.25: 0.25/2×100 = 12.
			name:     "a resource that does not fit scores 0 and keeps its weight",
			pod:      pod("", req("cpu", "2", "memory", "4Gi")),
			nodes:    []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			existing: []*v1.Pod{pod("n", req("cpu", "7"))},
			want:     []int64{12},
		},
		{
			// GPU not requested: left out. cpu 2/8 = 0.25, memory 4/16 = 0.25 → 25 on both.
			name:      "pod requesting no GPU on GPU and GPU-less nodes",
			pod:       pod("", req("cpu", "2", "memory", "4Gi")),
			nodes:     gpuAndCPUOnlyNodes(),
			resources: gpuSet,
			want:      []int64{25, 25},
		},
		{
			// GPU requested: gpu node 2×2/8 = 0.5 → (0.25+0.25+0.5)/4×100 = 25;
			// GPU-less node: gpu part 0, weight counted → (0.25+0.25)/4×100 = 12.
			name:      "pod requesting a GPU",
			pod:       pod("", req("cpu", "2", "memory", "4Gi", "nvidia.com/gpu", "2")),
			nodes:     gpuAndCPUOnlyNodes(),
			resources: gpuSet,
			want:      []int64{25, 12},
		},
		// Real requests: init 3000m → (1000+3000)/8000 = 0.5 → 50.
		initHeavy(50),
		{
			// Nothing requested: weight sum 0 → 0.
			name:  "pod requesting nothing",
			pod:   pod("", req()),
			nodes: []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			want:  []int64{0},
		},
	}
	runResourceCases(t, tests, func(t *testing.T, rs []score.ResourceSpec) score.Scorer {
		s, err := score.NewBinPack(rs...)
		require.NoError(t, err)
		return s
	})
}
