package score_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
)

// Upstream's published vectors: kube-scheduler v1.37.2
// noderesources/most_allocated_test.go TestMostAllocatedScoringStrategy.
func TestMostAllocatedUpstreamVectors(t *testing.T) {
	twoContainers := func() *v1.Pod {
		return pod("", req("cpu", "1000", "memory", "2000"), req("cpu", "2000", "memory", "3000"))
	}
	tests := []resourceCase{
		{
			// CPU 0*100/4000 = 0, memory 0*100/10000 = 0: (0+0)/2 = 0 on both.
			name:      "nothing scheduled, nothing requested",
			pod:       pod(""),
			nodes:     []*v1.Node{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "4000", "memory", "10000")},
			resources: defaultResources,
			want:      []int64{0, 0},
		},
		{
			// node1: CPU 3000*100/4000 = 75, memory 5000*100/10000 = 50, (75+50)/2 = 62.
			// node2: CPU 3000*100/6000 = 50, memory 50, 50.
			name:      "nothing scheduled, resources requested, differently sized nodes",
			pod:       twoContainers(),
			nodes:     []*v1.Node{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000")},
			resources: defaultResources,
			want:      []int64{62, 50},
		},
		{
			// node1: CPU 6000*100/10000 = 60, memory 0, 30. node2: CPU 60, memory 5000*100/20000 = 25, (60+25)/2 = 42.
			name:  "no resources requested, pods scheduled with resources",
			pod:   pod(""),
			nodes: []*v1.Node{node("node1", "cpu", "10000", "memory", "20000"), node("node2", "cpu", "10000", "memory", "20000")},
			existing: []*v1.Pod{
				pod("node1", req("cpu", "3000", "memory", "0")), pod("node1", req("cpu", "3000", "memory", "0")),
				pod("node2", req("cpu", "3000", "memory", "0")), pod("node2", req("cpu", "3000", "memory", "5000")),
			},
			resources: defaultResources,
			want:      []int64{30, 42},
		},
		{
			// node1: CPU 60, memory 5000*100/20000 = 25, 42. node2: CPU 60, memory 10000*100/20000 = 50, 55.
			name:      "resources requested, pods scheduled with resources",
			pod:       twoContainers(),
			nodes:     []*v1.Node{node("node1", "cpu", "10000", "memory", "20000"), node("node2", "cpu", "10000", "memory", "20000")},
			existing:  []*v1.Pod{pod("node1", req("cpu", "3000", "memory", "0")), pod("node2", req("cpu", "3000", "memory", "5000"))},
			resources: defaultResources,
			want:      []int64{42, 55},
		},
		{
			// node1: CPU 5000*100/5000 = 100, memory 9000*100/10000 = 90, 95.
			// node2: CPU 5000*100/10000 = 50, memory 9000*100/9000 = 100, 75.
			name:      "resources requested equal node capacity",
			pod:       pod("", req("cpu", "2000", "memory", "4000"), req("cpu", "3000", "memory", "5000")),
			nodes:     []*v1.Node{node("node1", "cpu", "5000", "memory", "10000"), node("node2", "cpu", "10000", "memory", "9000")},
			resources: defaultResources,
			want:      []int64{95, 75},
		},
		{
			// node1: CPU 75, memory 50, (75*1 + 50*2)/3 = 58. node2: CPU 50, memory 50, 50.
			name:      "different weight on CPU and memory",
			pod:       twoContainers(),
			nodes:     []*v1.Node{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000")},
			resources: []score.ResourceSpec{{Name: "memory", Weight: 2}, {Name: "cpu", Weight: 1}},
			want:      []int64{58, 50},
		},
		{
			// Containers without requests count 100m / 200Mi:
			// node1: CPU min(300,250)*100/250 = 100, memory 600Mi*100/1000Mi = 60, 80.
			// node2: CPU 100*100/250 = 40, memory 200*100/1000 = 20, 30.
			name:      "no resources requested, pods scheduled, nonzero request for resource",
			pod:       pod("", req()),
			nodes:     []*v1.Node{node("node1", "cpu", "250m", "memory", "1000Mi"), node("node2", "cpu", "250m", "memory", "1000Mi")},
			existing:  []*v1.Pod{pod("node1", req()), pod("node1", req())},
			resources: defaultResources,
			want:      []int64{80, 30},
		},
		{
			// xyz not requested: (50+50)/2 = 50 on both.
			name:      "bypass extended resource if the pod does not request",
			pod:       twoContainers(),
			nodes:     []*v1.Node{node("node1", "cpu", "6000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000", string(extendedRes), "4")},
			resources: extendedResourceSet,
			want:      []int64{50, 50},
		},
		{
			// xyz node1 2*100/4 = 50, node2 2*100/10 = 20: (50+50+50)/3 = 50, (50+50+20)/3 = 40.
			name: "honor extended resource if the pod requests",
			pod:  pod("", req("cpu", "3000", "memory", "5000", string(extendedRes), "2")),
			nodes: []*v1.Node{
				node("node1", "cpu", "6000", "memory", "10000", string(extendedRes), "4"),
				node("node2", "cpu", "6000", "memory", "10000", string(extendedRes), "10"),
			},
			resources: extendedResourceSet,
			want:      []int64{50, 40},
		},
		{
			// CPU 3000*100/6000 = 50, memory 4000*100/10000 = 40: (50+40)/2 = 45 on both.
			name:      "if the node doesn't have a resource",
			pod:       pod("", req("cpu", "3000", "memory", "4000")),
			nodes:     []*v1.Node{node("node1", "cpu", "6000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000", string(extendedRes), "4")},
			resources: []score.ResourceSpec{{Name: extendedRes, Weight: 2}, {Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}},
			want:      []int64{45, 45},
		},
	}
	runResourceCases(t, tests, func(t *testing.T, rs []score.ResourceSpec) score.Scorer { return mustMost(t, rs...) })
}

func TestMostAllocated(t *testing.T) {
	tests := []resourceCase{
		// CPU: init 3000m dominates the 100m container; (1000+3000)*100/8000 = 50.
		initHeavy(50),
		{
			// GPU unrequested, skipped: CPU 2000*100/8000 = 25, memory 4Gi*100/16Gi = 25 → 25 on both.
			name:      "pod requesting no GPU on GPU and GPU-less nodes",
			pod:       pod("", req("cpu", "2", "memory", "4Gi")),
			nodes:     gpuAndCPUOnlyNodes(),
			resources: withGPU,
			want:      []int64{25, 25},
		},
	}
	runResourceCases(t, tests, func(t *testing.T, rs []score.ResourceSpec) score.Scorer { return mustMost(t, rs...) })
}
