package score_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

type balancedCase struct {
	name      string
	pod       *v1.Pod
	nodes     []*v1.Node
	existing  []*v1.Pod
	resources []v1.ResourceName
	want      []int64 // nil: the pod is skipped
}

func runBalanced(t *testing.T, tests []balancedCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, nodes := cluster(t, tc.nodes, tc.existing...)
			got, skipped := final(t, mustBalanced(t, tc.resources...), tc.pod, snap, nodes)
			if tc.want == nil {
				require.True(t, skipped, "want the pod skipped")
				return
			}
			require.False(t, skipped)
			requireScores(t, nodes, tc.want, got)
		})
	}
}

// Upstream's published vectors: kube-scheduler v1.37.2
// noderesources/balanced_allocation_test.go TestNodeResourcesBalancedAllocation
// (the DRA-backed extended-resource cases are out of scope: schedkit reads
// extended resources from node allocatable only). Each comment gives the
// fractions without → with the pod, s_without → s_with, and
// 50 + (50 + s_with − s_without)/2.
func TestBalancedAllocationUpstreamVectors(t *testing.T) {
	gpuSet := []v1.ResourceName{"cpu", "memory", "nvidia.com/gpu"}
	twoContainers := func() *v1.Pod {
		return pod("", req("cpu", "1000m", "memory", "2000"), req("cpu", "2000m", "memory", "3000"))
	}
	tests := []balancedCase{
		{
			name:  "nothing scheduled, nothing requested, skip in PreScore",
			pod:   pod(""),
			nodes: []*v1.Node{milliNode("node1", 4000, 10000), milliNode("node2", 4000, 10000)},
			want:  nil,
		},
		{
			// node1: cpu 0 → 75%, memory 0 → 50%; s 100 → 87; 50 + (50+87-100)/2 = 68.
			// node2: cpu 0 → 50%, memory 0 → 50%; s 100 → 100; 75.
			name:  "nothing scheduled, resources requested, differently sized nodes",
			pod:   twoContainers(),
			nodes: []*v1.Node{milliNode("node1", 4000, 10000), milliNode("node2", 6000, 10000)},
			want:  []int64{68, 75},
		},
		{
			// node1: cpu 30% → 60%, memory 0% → 25%; s 85 → 82; 50 + (50+82-85)/2 = 73.
			// node2: cpu 30% → 60%, memory 25% → 50%; s 97 → 95; 50 + (50+95-97)/2 = 74.
			name:  "resources requested, pods scheduled with resources",
			pod:   twoContainers(),
			nodes: []*v1.Node{milliNode("node1", 10000, 20000), milliNode("node2", 10000, 20000)},
			existing: []*v1.Pod{
				pod("node1", req("cpu", "1000m"), req("cpu", "2000m")),
				pod("node2", req("cpu", "1000m", "memory", "2000"), req("cpu", "2000m", "memory", "3000")),
			},
			want: []int64{73, 74},
		},
		{
			// node1 as above: 73. node2: cpu 30% → 60%, memory 10% → 20%; s 90 → 80; 50 + (50+80-90)/2 = 70.
			name:  "resources requested, pods scheduled with resources, differently sized nodes",
			pod:   twoContainers(),
			nodes: []*v1.Node{milliNode("node1", 10000, 20000), milliNode("node2", 10000, 50000)},
			existing: []*v1.Pod{
				pod("node1", req("cpu", "1000m"), req("cpu", "2000m")),
				pod("node2", req("cpu", "1000m", "memory", "2000"), req("cpu", "2000m", "memory", "3000")),
			},
			want: []int64{73, 70},
		},
		{
			// node1: cpu 100% → 100%, memory 0% → 100%; s 50 → 100; 50 + (50+100-50)/2 = 100.
			// node2: cpu 0% → 0%, memory 0% → 100%; s 100 → 50; 50 + (50+50-100)/2 = 50.
			name:     "resources requested, pods scheduled with resources, nodes to reach min/max score",
			pod:      pod("", req("memory", "2000"), req("memory", "3000")),
			nodes:    []*v1.Node{milliNode("node1", 3000, 5000), milliNode("node2", 3000, 5000)},
			existing: []*v1.Pod{pod("node1", req("cpu", "1000m"), req("cpu", "2000m"))},
			want:     []int64{100, 50},
		},
		{
			// node1: cpu 50% → 100%, memory 0% → 0%; s 75 → 50; 50 + (50+50-75)/2 = 62.
			// node2: cpu 50% → 100%, memory 50% → 50%; s 100 → 75; 50 + (50+75-100)/2 = 62.
			name:  "requested resources at node capacity",
			pod:   pod("", req("cpu", "1000m"), req("cpu", "2000m")),
			nodes: []*v1.Node{milliNode("node1", 6000, 10000), milliNode("node2", 6000, 10000)},
			existing: []*v1.Pod{
				pod("node1", req("cpu", "1000m"), req("cpu", "2000m")),
				pod("node2", req("cpu", "1000m", "memory", "2000"), req("cpu", "2000m", "memory", "3000")),
			},
			want: []int64{62, 62},
		},
		{
			// Three fractions, population std.
			// node1: cpu 85.7%, memory 12.5%, gpu 37.5% → 50%; s 69 → 70; 50 + (50+70-69)/2 = 75.
			// node2: cpu 85.7%, memory 12.5%, gpu 0% → 12.5%; s 62 → 65; 50 + (50+65-62)/2 = 76.
			name:  "scalar resource is included in the score computation if pod requests the scalar resource",
			pod:   pod("", req("cpu", "0", "memory", "0", "nvidia.com/gpu", "1")),
			nodes: []*v1.Node{milliNode("node1", 3500, 40000, "nvidia.com/gpu", "8"), milliNode("node2", 3500, 40000, "nvidia.com/gpu", "8")},
			existing: []*v1.Pod{
				pod("node1", req("cpu", "1000m", "memory", "2000"), req("cpu", "2000m", "memory", "3000", "nvidia.com/gpu", "3")),
				pod("node2", req("cpu", "1000m", "memory", "2000"), req("cpu", "2000m", "memory", "3000")),
			},
			resources: gpuSet,
			want:      []int64{75, 76},
		},
		{
			// gpu not requested, left out. Both nodes: cpu 0 → 85.7%, memory 0 → 12.5%; s 100 → 63;
			// 50 + (50+63-100)/2 = 56.
			name:      "scalar resource is not included in the score computation if pod doesn't request the scalar resource",
			pod:       twoContainers(),
			nodes:     []*v1.Node{milliNode("node1", 3500, 40000, "nvidia.com/gpu", "8"), milliNode("node2", 3500, 40000)},
			resources: gpuSet,
			want:      []int64{56, 56},
		},
	}
	runBalanced(t, tests)
}

func TestBalancedAllocation(t *testing.T) {
	tests := []balancedCase{
		{
			// Real requests, no defaults: a pod whose containers set no requests is best effort.
			name:  "containers without requests are best effort",
			pod:   pod("", req(), req()),
			nodes: []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			want:  nil,
		},
		{
			// Best effort is judged on the configured resources only: a GPU-only pod is skipped
			// with the default cpu, memory list.
			name:  "GPU-only pod with cpu and memory configured is skipped",
			pod:   pod("", req("nvidia.com/gpu", "1")),
			nodes: []*v1.Node{node("n", "cpu", "8", "memory", "16Gi", "nvidia.com/gpu", "8")},
			want:  nil,
		},
		{
			// One fraction only (memory allocatable 0): std 0 with and without; 50 + (50+100-100)/2 = 75.
			name:  "single resource",
			pod:   pod("", req("cpu", "1")),
			nodes: []*v1.Node{node("n", "cpu", "8")},
			want:  []int64{75},
		},
		{
			// Init 3000m: cpu 1000/8000 = 12.5% → 4000/8000 = 50%, memory 0% → 0%;
			// s 93 → 75; 50 + (50+75-93)/2 = 66.
			name:     "init-heavy pod",
			pod:      withInit("3000m", "100m"),
			nodes:    []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			existing: []*v1.Pod{pod("n", req("cpu", "1000m"))},
			want:     []int64{66},
		},
		{
			// BalancedAllocation does honour pod-level requests (4 cpu, not the container's 1):
			// cpu 0 → 50%, memory 0 → 0%; s 100 → 75; 50 + (50+75-100)/2 = 62.
			name:  "pod-level requests count",
			pod:   snapshottest.MakePod("p").Req("cpu", "1").PodRequests("cpu", "4").Obj(),
			nodes: []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			want:  []int64{62},
		},
		{
			// GPU unrequested, left out on both: cpu 0 → 25%, memory 0 → 50%; s 100 → 87; 50 + (50+87-100)/2 = 68.
			name:      "pod requesting no GPU on GPU and GPU-less nodes",
			pod:       pod("", req("cpu", "2", "memory", "8Gi")),
			nodes:     gpuAndCPUOnlyNodes(),
			resources: []v1.ResourceName{"cpu", "memory", "nvidia.com/gpu"},
			want:      []int64{68, 68},
		},
	}
	runBalanced(t, tests)
}

func TestBalancedAllocationValidation(t *testing.T) {
	_, err := score.NewBalancedAllocation("cpu", "cpu")
	require.ErrorIs(t, err, score.ErrInvalidConfig)
	require.ErrorContains(t, err, "resources[1].name: cpu appears twice")
}

// TestBalancedAllocationOverheadOnce: BalancedAllocation reads the
// status-aware request; a pod whose status maps already hold its overhead
// (1000m + 250m reported as 1250m) scores as a 1250m pod, not as the
// 1500m upstream counts (issue 17, item 3).
func TestBalancedAllocationOverheadOnce(t *testing.T) {
	nodes := []*v1.Node{milliNode("n1", 4000, 10000), milliNode("n2", 3000, 20000)}
	snap, ns := cluster(t, nodes)
	ba := mustBalanced(t)
	scores := func(p *v1.Pod) []int64 {
		got, skipped := final(t, ba, p, snap, ns)
		require.False(t, skipped)
		return got
	}
	withStatus := pod("", req("cpu", "1000m", "memory", "5000"))
	withStatus.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")}
	total := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1250m"), v1.ResourceMemory: resource.MustParse("5000")}
	withStatus.Status.AllocatedResources = total
	withStatus.Status.Resources = &v1.ResourceRequirements{Requests: total}
	once := scores(pod("", req("cpu", "1250m", "memory", "5000")))
	twice := scores(pod("", req("cpu", "1500m", "memory", "5000")))
	require.NotEqual(t, once, twice, "the case tells the two apart")
	require.Equal(t, once, scores(withStatus))
}
