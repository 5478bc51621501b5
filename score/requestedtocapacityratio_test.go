package score_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
)

func rtcr(t *testing.T, rs []score.ResourceSpec, shape ...score.UtilizationShapePoint) score.Scorer {
	t.Helper()
	s, err := score.NewRequestedToCapacityRatio(score.RequestedToCapacityRatioArgs{Resources: rs, Shape: shape})
	require.NoError(t, err)
	return s
}

// Upstream's published vectors: kube-scheduler v1.37.2
// noderesources/requested_to_capacity_ratio_test.go
// TestRequestedToCapacityRatioScoringStrategy, TestResourceBinPackingSingleExtended,
// TestResourceBinPackingMultipleExtended.
func TestRequestedToCapacityRatioUpstreamVectors(t *testing.T) {
	leastShape := []score.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
	packShape := []score.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 1}}
	strategy := []resourceCase{
		{
			// Utilisation 0 → f = 100 for cpu and memory: round(200/2) = 100.
			name:     "nothing scheduled, nothing requested",
			pod:      pod(""),
			nodes:    []*v1.Node{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "4000", "memory", "10000")},
			existing: []*v1.Pod{pod("node1"), pod("node1")},
			want:     []int64{100, 100},
		},
		{
			// node1: cpu 3000*100/4000 = 75 → f = 100-75 = 25, memory 50 → 50; round(75/2) = 38.
			// node2: cpu 50 → 50, memory 50 → 50; 50.
			name:     "nothing scheduled, resources requested, differently sized nodes",
			pod:      pod("", req("cpu", "1000", "memory", "2000"), req("cpu", "2000", "memory", "3000")),
			nodes:    []*v1.Node{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000")},
			existing: []*v1.Pod{pod("node1"), pod("node1")},
			want:     []int64{38, 50},
		},
		{
			// Same utilisations from bound pods: 38, 50.
			name:     "no resources requested, pods scheduled with resources",
			pod:      pod(""),
			nodes:    []*v1.Node{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000")},
			existing: []*v1.Pod{pod("node1", req("cpu", "3000", "memory", "5000")), pod("node2", req("cpu", "3000", "memory", "5000"))},
			want:     []int64{38, 50},
		},
	}
	runResourceCases(t, strategy, func(t *testing.T, rs []score.ResourceSpec) score.Scorer {
		return rtcr(t, defaultResources, leastShape...)
	})

	const mem = 10000 * 1024 * 1024
	single := []resourceCase{
		{
			// intel.com/foo not requested: skipped, weight sum 0 → 0.
			name:     "nothing scheduled, nothing requested",
			pod:      pod(""),
			nodes:    []*v1.Node{milliNode("node1", 4000, mem, "intel.com/foo", "8"), milliNode("node2", 4000, mem, "intel.com/foo", "4")},
			existing: nil,
			want:     []int64{0, 0},
		},
		{
			// node1: 2*100/8 = 25 → f = 10*25/100 = 2; node2: 2*100/4 = 50 → 5.
			name:     "resources requested, pods scheduled with less resources",
			pod:      pod("", req("intel.com/foo", "2")),
			nodes:    []*v1.Node{milliNode("node1", 4000, mem, "intel.com/foo", "8"), milliNode("node2", 4000, mem, "intel.com/foo", "4")},
			existing: nil, // upstream lists a pod bound to no node, which its snapshot ignores
			want:     []int64{2, 5},
		},
		{
			// node1: 25 → 2; node2: (2+2)*100/4 = 100 → 10.
			name:     "resources requested, pods scheduled with resources, on node with existing pod running",
			pod:      pod("", req("intel.com/foo", "2")),
			nodes:    []*v1.Node{milliNode("node1", 4000, mem, "intel.com/foo", "8"), milliNode("node2", 4000, mem, "intel.com/foo", "4")},
			existing: []*v1.Pod{pod("node2", req("intel.com/foo", "2"))},
			want:     []int64{2, 10},
		},
		{
			// node1: 4*100/8 = 50 → 5; node2: 100 → 10.
			name:     "resources requested, pods scheduled with more resources",
			pod:      pod("", req("intel.com/foo", "4")),
			nodes:    []*v1.Node{milliNode("node1", 4000, mem, "intel.com/foo", "8"), milliNode("node2", 4000, mem, "intel.com/foo", "4")},
			existing: nil, // upstream lists a pod bound to no node, which its snapshot ignores
			want:     []int64{5, 10},
		},
	}
	fooOnly := []score.ResourceSpec{{Name: "intel.com/foo", Weight: 1}}
	for i := range single {
		single[i].name = "single extended: " + single[i].name
	}
	runResourceCases(t, single, func(t *testing.T, _ []score.ResourceSpec) score.Scorer { return rtcr(t, fooOnly, packShape...) })

	multi := []resourceCase{
		{
			// Nothing requested: both skipped → 0.
			name:  "nothing scheduled, nothing requested",
			pod:   pod(""),
			nodes: []*v1.Node{milliNode("node1", 4000, mem, "intel.com/foo", "8", "intel.com/bar", "4"), milliNode("node2", 4000, mem, "intel.com/foo", "4", "intel.com/bar", "8")},
			want:  []int64{0, 0},
		},
		{
			// node1: foo 2/8 = 25% → 2, bar 2/4 = 50% → 5: round((2*3 + 5*5)/8) = round(3.875) = 4.
			// node2: foo 50% → 5, bar 25% → 2: round((5*3 + 2*5)/8) = round(3.125) = 3.
			name:     "resources requested, pods scheduled with less resources",
			pod:      pod("", req("intel.com/foo", "2", "intel.com/bar", "2")),
			nodes:    []*v1.Node{milliNode("node1", 4000, mem, "intel.com/foo", "8", "intel.com/bar", "4"), milliNode("node2", 4000, mem, "intel.com/foo", "4", "intel.com/bar", "8")},
			existing: nil, // upstream lists a pod bound to no node, which its snapshot ignores
			want:     []int64{4, 3},
		},
		{
			// node1: 4 as above. node2: foo (4+2)/4 > 100% → f(100) = 10, bar (2+2)/8 = 50% → 5:
			// round((10*3 + 5*5)/8) = round(6.875) = 7.
			name:     "resources requested, pods scheduled with resources, on node with existing pod running",
			pod:      pod("", req("intel.com/foo", "2", "intel.com/bar", "2")),
			nodes:    []*v1.Node{milliNode("node1", 4000, mem, "intel.com/foo", "8", "intel.com/bar", "4"), milliNode("node2", 4000, mem, "intel.com/foo", "4", "intel.com/bar", "8")},
			existing: []*v1.Pod{pod("node2", req("intel.com/foo", "4", "intel.com/bar", "2"))},
			want:     []int64{4, 7},
		},
		{
			// node1: foo 4/8 → 5, bar 2/4 → 5: round(40/8) = 5. node2: foo 4/4 → 10, bar 2/8 → 2: round((30+10)/8) = 5.
			name:     "resources requested, pods scheduled with more resources",
			pod:      pod("", req("intel.com/foo", "4", "intel.com/bar", "2")),
			nodes:    []*v1.Node{milliNode("node1", 4000, mem, "intel.com/foo", "8", "intel.com/bar", "4"), milliNode("node2", 4000, mem, "intel.com/foo", "4", "intel.com/bar", "8")},
			existing: nil, // upstream lists a pod bound to no node, which its snapshot ignores
			want:     []int64{5, 5},
		},
	}
	fooBar := []score.ResourceSpec{{Name: "intel.com/foo", Weight: 3}, {Name: "intel.com/bar", Weight: 5}}
	for i := range multi {
		multi[i].name = "multiple extended: " + multi[i].name
	}
	runResourceCases(t, multi, func(t *testing.T, _ []score.ResourceSpec) score.Scorer { return rtcr(t, fooBar, packShape...) })
}

func TestRequestedToCapacityRatio(t *testing.T) {
	shape := []score.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}
	tests := []resourceCase{
		{
			// Resources whose shape value is 0 are left out of the weight sum: cpu 0% → 0 (dropped),
			// memory 4Gi/16Gi = 25% → 25: round(25/1) = 25.
			name:  "zero-scoring resources leave the weight sum",
			pod:   pod("", req("cpu", "0", "memory", "4Gi")),
			nodes: []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			want:  []int64{25},
		},
		// Init 3000m: (1000+3000)*100/8000 = 50% → 50.
		initHeavy(50),
		{
			// GPU unrequested, skipped: cpu 25%, memory 25% → 25 on both.
			name:      "pod requesting no GPU on GPU and GPU-less nodes",
			pod:       pod("", req("cpu", "2", "memory", "4Gi")),
			nodes:     gpuAndCPUOnlyNodes(),
			resources: withGPU,
			want:      []int64{25, 25},
		},
	}
	runResourceCases(t, tests, func(t *testing.T, rs []score.ResourceSpec) score.Scorer { return rtcr(t, rs, shape...) })
}

func TestRequestedToCapacityRatioValidation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape []score.UtilizationShapePoint
		msg   string
	}{
		{"no points", nil, "at least one point"},
		{"not increasing", []score.UtilizationShapePoint{{50, 1}, {50, 2}}, "shape[1].utilization: 50: values must be sorted"},
		{"utilization above 100", []score.UtilizationShapePoint{{0, 1}, {101, 2}}, "shape[1].utilization: 101 not in [0, 100]"},
		{"negative utilization", []score.UtilizationShapePoint{{-1, 1}}, "shape[0].utilization: -1"},
		{"score above 10", []score.UtilizationShapePoint{{0, 11}}, "shape[0].score: 11 not in [0, 10]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := score.RequestedToCapacityRatioArgs{Shape: tc.shape}
			_, err := score.NewRequestedToCapacityRatio(args)
			require.ErrorIs(t, err, score.ErrInvalidConfig)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}
