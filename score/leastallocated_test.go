package score_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// resourceCase is one upstream-style test: an incoming pod, nodes, bound
// pods and the expected final score per node.
type resourceCase struct {
	name      string
	pod       *v1.Pod
	nodes     []*v1.Node
	existing  []*v1.Pod
	resources []score.ResourceSpec
	want      []int64
}

func runResourceCases(t *testing.T, tests []resourceCase, build func(t *testing.T, rs []score.ResourceSpec) score.Scorer) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, nodes := cluster(t, tc.nodes, tc.existing...)
			got, skipped := final(t, build(t, tc.resources), tc.pod, snap, nodes)
			require.False(t, skipped)
			requireScores(t, nodes, tc.want, got)
		})
	}
}

// Upstream's published vectors: kube-scheduler v1.37.2
// pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go
// TestLeastAllocatedScoringStrategy (inputs and expected scores; "cpu":
// "4000" is 4000 cores there as here).
func TestLeastAllocatedUpstreamVectors(t *testing.T) {
	twoContainers := func() *v1.Pod {
		return pod("", req("cpu", "1000", "memory", "2000"), req("cpu", "2000", "memory", "3000"))
	}
	tests := []resourceCase{
		{
			// CPU: (4000-0)*100/4000 = 100; memory: (10000-0)*100/10000 = 100; (100+100)/2 = 100 on both.
			name:      "nothing scheduled, nothing requested",
			pod:       pod(""),
			nodes:     []*v1.Node{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "4000", "memory", "10000")},
			resources: defaultResources,
			want:      []int64{100, 100},
		},
		{
			// node1: CPU (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50, (25+50)/2 = 37.
			// node2: CPU (6000-3000)*100/6000 = 50, memory 50, (50+50)/2 = 50.
			name:      "nothing scheduled, resources requested, differently sized nodes",
			pod:       twoContainers(),
			nodes:     []*v1.Node{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000")},
			resources: defaultResources,
			want:      []int64{37, 50},
		},
		{
			// Pods without containers request nothing, even with the non-zero defaults: 100 everywhere.
			name:      "no resources requested, pods scheduled",
			pod:       pod(""),
			nodes:     []*v1.Node{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "4000", "memory", "10000")},
			existing:  []*v1.Pod{pod("node1"), pod("node1"), pod("node2"), pod("node2")},
			resources: defaultResources,
			want:      []int64{100, 100},
		},
		{
			// node1: CPU (10000-6000)*100/10000 = 40, memory (20000-0)*100/20000 = 100, (40+100)/2 = 70.
			// node2: CPU 40, memory (20000-5000)*100/20000 = 75, (40+75)/2 = 57.
			name:  "no resources requested, pods scheduled with resources",
			pod:   pod(""),
			nodes: []*v1.Node{node("node1", "cpu", "10000", "memory", "20000"), node("node2", "cpu", "10000", "memory", "20000")},
			existing: []*v1.Pod{
				pod("node1", req("cpu", "3000", "memory", "0")), pod("node1", req("cpu", "3000", "memory", "0")),
				pod("node2", req("cpu", "3000", "memory", "0")), pod("node2", req("cpu", "3000", "memory", "5000")),
			},
			resources: defaultResources,
			want:      []int64{70, 57},
		},
		{
			// node1: CPU (10000-6000)*100/10000 = 40, memory (20000-5000)*100/20000 = 75, (40+75)/2 = 57.
			// node2: CPU 40, memory (20000-10000)*100/20000 = 50, (40+50)/2 = 45.
			name:      "resources requested, pods scheduled with resources",
			pod:       twoContainers(),
			nodes:     []*v1.Node{node("node1", "cpu", "10000", "memory", "20000"), node("node2", "cpu", "10000", "memory", "20000")},
			existing:  []*v1.Pod{pod("node1", req("cpu", "3000", "memory", "0")), pod("node2", req("cpu", "3000", "memory", "5000"))},
			resources: defaultResources,
			want:      []int64{57, 45},
		},
		{
			// node1: 57 as above. node2: CPU 40, memory (50000-10000)*100/50000 = 80, (40+80)/2 = 60.
			name:      "resources requested, pods scheduled with resources, differently sized nodes",
			pod:       twoContainers(),
			nodes:     []*v1.Node{node("node1", "cpu", "10000", "memory", "20000"), node("node2", "cpu", "10000", "memory", "50000")},
			existing:  []*v1.Pod{pod("node1", req("cpu", "3000", "memory", "0")), pod("node2", req("cpu", "3000", "memory", "5000"))},
			resources: defaultResources,
			want:      []int64{57, 60},
		},
		{
			// node1: CPU 6000 > 4000 → 0, memory 100, (0+100)/2 = 50. node2: CPU 0, memory (10000-5000)*100/10000 = 50, 25.
			name:      "requested resources exceed node capacity",
			pod:       pod("", req("cpu", "3000", "memory", "0")),
			nodes:     []*v1.Node{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "4000", "memory", "10000")},
			existing:  []*v1.Pod{pod("node1", req("cpu", "3000", "memory", "0")), pod("node2", req("cpu", "3000", "memory", "5000"))},
			resources: defaultResources,
			want:      []int64{50, 25},
		},
		{
			// No allocatable at all: every resource is skipped, weight sum 0 → 0.
			name:      "zero node resources, pods scheduled with resources",
			pod:       pod(""),
			nodes:     []*v1.Node{snapshottest.MakeNode("node1").Obj(), snapshottest.MakeNode("node2").Obj()},
			existing:  []*v1.Pod{pod("node1", req("cpu", "3000", "memory", "0")), pod("node2", req("cpu", "3000", "memory", "5000"))},
			resources: defaultResources,
			want:      []int64{0, 0},
		},
		{
			// node1: CPU (4000-3000)*100/4000 = 25, memory 50, (25*1 + 50*2)/(1+2) = 41.
			// node2: CPU (6000-3000)*100/6000 = 50, memory 50, (50*1 + 50*2)/3 = 50.
			name:      "different weight on CPU and memory, differently sized nodes",
			pod:       twoContainers(),
			nodes:     []*v1.Node{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000")},
			resources: []score.ResourceSpec{{Name: "memory", Weight: 2}, {Name: "cpu", Weight: 1}},
			want:      []int64{41, 50},
		},
		{
			// The pod does not request abc.com/xyz, so it is skipped: (50+50)/2 = 50 on both.
			name:      "bypass extended resource if the pod does not request",
			pod:       twoContainers(),
			nodes:     []*v1.Node{node("node1", "cpu", "6000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000", string(extendedRes), "4")},
			resources: extendedResourceSet,
			want:      []int64{50, 50},
		},
		{
			// cpu and memory 50 on both; xyz node1 (4-2)*100/4 = 50, node2 (10-2)*100/10 = 80.
			// node1 (50+50+50)/3 = 50; node2 (50+50+80)/3 = 60.
			name: "honor extended resource if the pod requests",
			pod:  pod("", req("cpu", "3000", "memory", "5000", string(extendedRes), "2")),
			nodes: []*v1.Node{
				node("node1", "cpu", "6000", "memory", "10000", string(extendedRes), "4"),
				node("node2", "cpu", "6000", "memory", "10000", string(extendedRes), "10"),
			},
			resources: extendedResourceSet,
			want:      []int64{50, 60},
		},
		{
			// xyz (weight 2) is not requested: CPU (6000-3000)*100/6000 = 50, memory (10000-4000)*100/10000 = 60, (50+60)/2 = 55.
			name:      "if the node doesn't have a resource",
			pod:       pod("", req("cpu", "3000", "memory", "4000")),
			nodes:     []*v1.Node{node("node1", "cpu", "6000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000", string(extendedRes), "4")},
			resources: []score.ResourceSpec{{Name: extendedRes, Weight: 2}, {Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}},
			want:      []int64{55, 55},
		},
	}
	runResourceCases(t, tests, func(t *testing.T, rs []score.ResourceSpec) score.Scorer { return mustLeast(t, rs...) })
}

func TestLeastAllocated(t *testing.T) {
	tests := []resourceCase{
		{
			// The init container's 3000m is the pod's CPU request (max(init, sum of containers) = max(3000, 100)):
			// (8000 - (1000+3000))*100/8000 = 50.
			name:      "init-heavy pod",
			pod:       snapshottest.MakePod("p").Init("cpu", "3000m").Req("cpu", "100m").Obj(),
			nodes:     []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			existing:  []*v1.Pod{pod("n", req("cpu", "1000m"))},
			resources: []score.ResourceSpec{{Name: "cpu"}},
			want:      []int64{50},
		},
		{
			// A container without requests counts 100m / 200Mi on both sides:
			// node: 250m CPU, 1000Mi; bound pod 100m+200Mi, incoming 100m+200Mi → 200m, 400Mi.
			// CPU (250-200)*100/250 = 20; memory (1000-400)*100/1000 = 60; (20+60)/2 = 40.
			name:     "non-zero defaults on both sides",
			pod:      pod("", req()),
			nodes:    []*v1.Node{node("n", "cpu", "250m", "memory", "1000Mi")},
			existing: []*v1.Pod{pod("n", req())},
			want:     []int64{40},
		},
		{
			// GPU not requested: skipped on both nodes, so the GPU-less node is not penalised.
			// CPU (8000-2000)*100/8000 = 75; memory (16Gi-4Gi)*100/16Gi = 75; 75 on both.
			name:      "pod requesting no GPU on GPU and GPU-less nodes",
			pod:       pod("", req("cpu", "2", "memory", "4Gi")),
			nodes:     gpuAndCPUOnlyNodes(),
			resources: []score.ResourceSpec{{Name: "cpu"}, {Name: "memory"}, {Name: "nvidia.com/gpu", Weight: 5}},
			want:      []int64{75, 75},
		},
		{
			// Weight 0 means 1 (upstream's v1 defaulting), so this is the default list:
			// CPU (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50; (25+50)/2 = 37.
			name:      "weight 0 means 1",
			pod:       pod("", req("cpu", "1000", "memory", "2000"), req("cpu", "2000", "memory", "3000")),
			nodes:     []*v1.Node{node("node1", "cpu", "4000", "memory", "10000")},
			resources: []score.ResourceSpec{{Name: "cpu", Weight: 0}, {Name: "memory", Weight: 0}},
			want:      []int64{37},
		},
		{
			// No resources: DefaultResources (upstream's v1 defaulting; its internal API
			// errors instead), so 37 as above.
			name:  "empty resource list means cpu:1 memory:1",
			pod:   pod("", req("cpu", "1000", "memory", "2000"), req("cpu", "2000", "memory", "3000")),
			nodes: []*v1.Node{node("node1", "cpu", "4000", "memory", "10000")},
			want:  []int64{37},
		},
		{
			// "pods" is never in upstream's scalar allocatable: skipped. ephemeral-storage is
			// not scalar, so it counts even unrequested: (100Gi-0)*100/100Gi = 100.
			// CPU (4000-1000)*100/4000 = 75; (75 + 100)/2 = 87.
			name:      "pods skipped, ephemeral-storage counted",
			pod:       pod("", req("cpu", "1000")),
			nodes:     []*v1.Node{node("n", "cpu", "4000", "memory", "10000", "pods", "110", "ephemeral-storage", "100Gi")},
			resources: []score.ResourceSpec{{Name: "cpu"}, {Name: "pods"}, {Name: "ephemeral-storage"}},
			want:      []int64{87},
		},
		{
			// Upstream's quirk: the strategy scorers ignore pod-level requests (4 cpu here)
			// and read the containers: (8000-1000)*100/8000 = 87.
			name:      "pod-level requests are ignored, as upstream v1.37.2",
			pod:       snapshottest.MakePod("p").Req("cpu", "1").PodRequests("cpu", "4").Obj(),
			nodes:     []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
			resources: []score.ResourceSpec{{Name: "cpu"}},
			want:      []int64{87},
		},
		{
			// Memory near MaxInt64: (a-r)*100 would overflow int64 upstream; here
			// ((2^62) - 2^61)*100/2^62 = 50 exactly. CPU (8000-0)*100/8000 = 100 → (100+50)/2 = 75.
			name:     "huge allocatable does not overflow",
			pod:      pod("", req("cpu", "0", "memory", "2305843009213693952")),
			nodes:    []*v1.Node{node("n", "cpu", "8", "memory", "4611686018427387904")},
			existing: nil,
			want:     []int64{75},
		},
	}
	runResourceCases(t, tests, func(t *testing.T, rs []score.ResourceSpec) score.Scorer { return mustLeast(t, rs...) })
}

func TestLeastAllocatedExplain(t *testing.T) {
	snap, nodes := cluster(t, []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")}, pod("n", req("cpu", "1000m", "memory", "1Gi")))
	ps, err := mustLeast(t).Prepare(podInfo(t, snapshottest.MakePod("p").Init("cpu", "3000m").Req("cpu", "100m", "memory", "1Gi").Obj()), snap)
	require.NoError(t, err)
	// CPU (8000-4000)*100/8000 = 50; memory (16Gi-2Gi)*100/16Gi = 87; (50+87)/2 = 68.
	require.Equal(t, "LeastAllocated cpu (8000-4000)*100/8000=50 ×1; memory (17179869184-2147483648)*100/17179869184=87 ×1; 137/2=68",
		ps.(score.Explainer).Explain(nodes[0]))
}

func TestResourceSpecValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		rs   []score.ResourceSpec
	}{
		{"negative weight", []score.ResourceSpec{{Name: "memory", Weight: -1}, {Name: "cpu", Weight: 1}}},
		{"weight above 100", []score.ResourceSpec{{Name: "memory", Weight: 1}, {Name: "cpu", Weight: 101}}},
		{"empty name", []score.ResourceSpec{{Name: "", Weight: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := score.NewLeastAllocated(tc.rs...)
			require.ErrorIs(t, err, score.ErrInvalidConfig)
			_, err = score.NewMostAllocated(tc.rs...)
			require.ErrorIs(t, err, score.ErrInvalidConfig)
			_, err = score.NewRequestedToCapacityRatio(score.RequestedToCapacityRatioArgs{Resources: tc.rs, Shape: []score.UtilizationShapePoint{{0, 0}, {100, 10}}})
			require.ErrorIs(t, err, score.ErrInvalidConfig)
			_, err = score.NewBinPack(tc.rs...)
			require.ErrorIs(t, err, score.ErrInvalidConfig)
		})
	}
	_, err := score.NewLeastAllocated(score.ResourceSpec{Name: "cpu", Weight: 101})
	require.ErrorContains(t, err, "resources[0].weight: 101 for cpu not in [1, 100]")
}
