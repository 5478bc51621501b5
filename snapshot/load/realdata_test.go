package load_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/shareddata"
	"github.com/schedkit/schedkit/snapshot/load"
)

// dataDir is shareddata.Dir: ../shared/data/<sub>, or a skip.
var dataDir = shareddata.Dir

// The OpenShift Insights sample: 6 Node and 19 Pod JSON files from one real
// cluster (see its SOURCE.md).
func TestFilesOpenShiftSample(t *testing.T) {
	dir := dataDir(t, "openshift-insights-archive-sample")
	objs, err := load.Files(filepath.Join(dir, "node"), filepath.Join(dir, "pod"))
	require.NoError(t, err)
	require.Len(t, objs.Nodes, 6)
	require.Len(t, objs.Pods, 19)
	assert.Nil(t, objs.Skipped)

	masters := 0
	for _, n := range objs.Nodes {
		assert.Equal(t, int64(3500), n.Status.Allocatable.Cpu().MilliValue(), n.Name)
		assert.Equal(t, int64(14236104*1024), n.Status.Allocatable.Memory().Value(), n.Name)
		assert.Equal(t, int64(4000), n.Status.Capacity.Cpu().MilliValue(), n.Name)
		assert.Equal(t, int64(250), n.Status.Capacity.Pods().Value(), n.Name)
		for _, taint := range n.Spec.Taints {
			if taint.Key == "node-role.kubernetes.io/master" && taint.Effect == v1.TaintEffectNoSchedule {
				masters++
			}
		}
	}
	assert.Equal(t, 3, masters, "masters tainted NoSchedule")

	nodes := map[string]bool{}
	for _, n := range objs.Nodes {
		nodes[n.Name] = true
	}
	byName := map[string]*v1.Pod{}
	for _, p := range objs.Pods {
		assert.True(t, nodes[p.Spec.NodeName], "pod %s/%s bound to a loaded node, got %q", p.Namespace, p.Name, p.Spec.NodeName)
		assert.Equal(t, v1.PodRunning, p.Status.Phase)
		byName[p.Name] = p
	}

	prom := byName["prometheus-k8s-0"]
	require.NotNil(t, prom)
	assert.Equal(t, "openshift-monitoring", prom.Namespace)
	require.Len(t, prom.Spec.Containers, 7)
	// 70m + 6 × 1m
	var cpu int64
	for _, c := range prom.Spec.Containers {
		cpu += c.Resources.Requests.Cpu().MilliValue()
	}
	assert.Equal(t, int64(76), cpu, "prometheus-k8s-0 CPU requests")

	var sched *v1.Pod
	for name, p := range byName {
		if strings.HasPrefix(name, "openshift-kube-scheduler-operator-") {
			sched = p
		}
	}
	require.NotNil(t, sched)
	_, hasCPU := sched.Spec.Containers[0].Resources.Requests[v1.ResourceCPU]
	assert.False(t, hasCPU, "scheduler operator requests memory only")
	assert.False(t, sched.Spec.Containers[0].Resources.Requests.Memory().IsZero())
}

// The sample was written by Kubernetes 1.17; k8s.io/api v0.37 still knows
// every field in it, so strict decoding accepts it too.
func TestFilesOpenShiftSampleStrict(t *testing.T) {
	dir := dataDir(t, "openshift-insights-archive-sample")
	objs, err := load.Options{Strict: true, RejectOtherKinds: true}.Files(dir)
	require.NoError(t, err)
	assert.Len(t, objs.Nodes, 6)
	assert.Len(t, objs.Pods, 19)
}

// The Alibaba openb GPU cluster as 1213 multi-document YAML Nodes; counts
// from its SOURCE.md.
func TestFilesOpenbNodeYAML(t *testing.T) {
	path := filepath.Join(dataDir(t, "alibaba-clusterdata-gpu-v2023"), "node_yaml", "openb_node_list_gpu_node.yaml")
	objs, err := load.Files(path)
	require.NoError(t, err)
	require.Len(t, objs.Nodes, 1213)
	assert.Empty(t, objs.Pods)

	models := map[string]int{}
	var gpus int64
	for _, n := range objs.Nodes {
		models[n.Labels["alibabacloud.com/gpu-card-model"]]++
		count := n.Status.Capacity["alibabacloud.com/gpu-count"]
		milli := n.Status.Capacity["alibabacloud.com/gpu-milli"]
		assert.Equal(t, count.Value()*1000, milli.Value(), n.Name)
		assert.Equal(t, int64(1001), n.Status.Allocatable.Pods().Value(), n.Name)
		gpus += count.Value()
	}
	assert.Equal(t, int64(6212), gpus)
	assert.Equal(t, map[string]int{"G2": 549, "T4": 404, "P100": 134, "V100M16": 55, "G3": 39, "V100M32": 30, "A10": 2}, models)
	assert.Equal(t, "openb-node-0000", objs.Nodes[0].Name)
	assert.Equal(t, "openb-node-1212", objs.Nodes[1212].Name)
}

func BenchmarkReadOpenbNodeYAML(b *testing.B) {
	path := filepath.Join(dataDir(b, "alibaba-clusterdata-gpu-v2023"), "node_yaml", "openb_node_list_gpu_node.yaml")
	data, err := os.ReadFile(path)
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		objs, err := load.Read(bytes.NewReader(data), path)
		if err != nil || len(objs.Nodes) != 1213 {
			b.Fatalf("Read: %d nodes, %v", len(objs.Nodes), err)
		}
	}
}
