package score_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// cluster builds a snapshot of nodes with the bound pods and returns the
// NodeInfos in the order of nodes. Unnamed pods are named p0, p1, ...
func cluster(t *testing.T, nodes []*v1.Node, pods ...*v1.Pod) (*snapshot.Snapshot, []*snapshot.NodeInfo) {
	t.Helper()
	for i, p := range pods {
		if p.Name == "" {
			p.Name = fmt.Sprintf("p%d", i)
		}
	}
	snap := snapshottest.Snapshot(t, nodes, pods...)
	infos := make([]*snapshot.NodeInfo, len(nodes))
	for i, n := range nodes {
		infos[i] = snap.Get(n.Name)
		require.NotNil(t, infos[i], "node %s", n.Name)
	}
	return snap, infos
}

// podInfo parses pod, naming it "incoming" if it has no name and putting
// it in namespace "default" if it has none (upstream's test pods have
// neither; the API server fills the namespace from the request's URL, and
// NewPodInfo requires one).
func podInfo(t *testing.T, pod *v1.Pod) *snapshot.PodInfo {
	t.Helper()
	if pod.Name == "" {
		pod.Name = "incoming"
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	pi, err := snapshot.NewPodInfo(pod)
	require.NoError(t, err)
	return pi
}

// final runs s for pod over nodes the way a Profile does for one scorer:
// Prepare, Score, then Normalize if the PodScorer has it. skipped reports a
// nil PodScorer.
func final(t *testing.T, s score.Scorer, pod *v1.Pod, snap score.Cluster, nodes []*snapshot.NodeInfo) (scores []int64, skipped bool) {
	t.Helper()
	ps, err := s.Prepare(podInfo(t, pod), snap)
	require.NoError(t, err)
	if ps == nil {
		return nil, true
	}
	out := make([]int64, len(nodes))
	ps.Score(nodes, out)
	if nz, ok := ps.(score.Normalizer); ok {
		require.NoError(t, nz.Normalize(nodes, out))
	}
	return out, false
}

// requireScores checks scores node by node with a message naming the node.
func requireScores(t *testing.T, nodes []*snapshot.NodeInfo, want, got []int64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equalf(t, want[i], got[i], "Score(%s) = %d, want %d", nodes[i].Name(), got[i], want[i])
	}
}

// list is snapshottest.List for map-shaped upstream requests.
func list(kv ...string) v1.ResourceList { return snapshottest.List(kv...) }

// node is a node with capacity = allocatable = kv.
func node(name string, kv ...string) *v1.Node {
	return snapshottest.MakeNode(name).Capacity(kv...).Obj()
}

// milliNode is upstream's noderesources makeNode: cpu in milli-CPU, memory
// in bytes, extended resources as counts.
func milliNode(name string, milliCPU, memory int64, ext ...string) *v1.Node {
	kv := append([]string{"cpu", fmt.Sprintf("%dm", milliCPU), "memory", fmt.Sprint(memory)}, ext...)
	return node(name, kv...)
}

// pod is a pod with one container per request list (an empty list is a
// container without requests), bound to nodeName if non-empty.
func pod(nodeName string, containers ...[]string) *v1.Pod {
	w := snapshottest.MakePod("")
	for _, c := range containers {
		w.Req(c...)
	}
	if nodeName != "" {
		w.Node(nodeName)
	}
	return w.Obj()
}

// req is a request list: req("cpu", "1000m", "memory", "2000").
func req(kv ...string) []string { return kv }

func mustLeast(t *testing.T, rs ...score.ResourceSpec) score.Scorer {
	s, err := score.NewLeastAllocated(rs...)
	require.NoError(t, err)
	return s
}

func mustMost(t *testing.T, rs ...score.ResourceSpec) score.Scorer {
	s, err := score.NewMostAllocated(rs...)
	require.NoError(t, err)
	return s
}

func mustBalanced(t *testing.T, rs ...v1.ResourceName) score.Scorer {
	s, err := score.NewBalancedAllocation(rs...)
	require.NoError(t, err)
	return s
}

var (
	extendedRes         = v1.ResourceName("abc.com/xyz")
	defaultResources    = []score.ResourceSpec{{Name: v1.ResourceCPU, Weight: 1}, {Name: v1.ResourceMemory, Weight: 1}}
	extendedResourceSet = []score.ResourceSpec{{Name: v1.ResourceCPU, Weight: 1}, {Name: v1.ResourceMemory, Weight: 1}, {Name: extendedRes, Weight: 1}}
)

// withInit is a pod with one plain init container and one container, each
// requesting only cpu.
func withInit(initCPU, cpu string) *v1.Pod {
	return snapshottest.MakePod("").Init("cpu", initCPU).Req("cpu", cpu).Obj()
}

// gpuAndCPUOnlyNodes are two nodes alike but for 8 GPUs on the first, for
// the "a pod requesting no GPU is not penalised on GPU-less nodes" cases.
func gpuAndCPUOnlyNodes() []*v1.Node {
	return []*v1.Node{node("gpu", "cpu", "8", "memory", "16Gi", "nvidia.com/gpu", "8"), node("cpu-only", "cpu", "8", "memory", "16Gi")}
}

// withGPU is cpu, memory and nvidia.com/gpu, weight 1 each.
var withGPU = []score.ResourceSpec{{Name: "cpu"}, {Name: "memory"}, {Name: "nvidia.com/gpu"}}

// initHeavy is the init-heavy case for a cpu-only scorer: init
// container 3000m, container 100m (effective request 3000m), on a node with
// 1000m of 8000m used; want is the scorer's result.
func initHeavy(want int64) resourceCase {
	return resourceCase{
		name:      "init-heavy pod",
		pod:       withInit("3000m", "100m"),
		nodes:     []*v1.Node{node("n", "cpu", "8", "memory", "16Gi")},
		existing:  []*v1.Pod{pod("n", req("cpu", "1000m"))},
		resources: []score.ResourceSpec{{Name: "cpu"}},
		want:      []int64{want},
	}
}
