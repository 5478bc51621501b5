package openb_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/internal/shareddata"
	"github.com/schedkit/schedkit/snapshot/load"
)

// traceDir returns ../shared/data/alibaba-clusterdata-gpu-v2023, or skips.
func traceDir(tb testing.TB) string {
	tb.Helper()
	return shareddata.Dir(tb, "alibaba-clusterdata-gpu-v2023")
}

// dataRows counts the non-empty lines after the header, the reference for
// how many rows each file holds.
func dataRows(t *testing.T, path string) int {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	n := -1
	for s.Scan() {
		if len(bytes.TrimSpace(s.Bytes())) > 0 {
			n++
		}
	}
	require.NoError(t, s.Err())
	return n
}

// Every one of the 26 CSV files parses in Strict mode with no row lost.
func TestAllTraceFiles(t *testing.T) {
	dir := filepath.Join(traceDir(t), "csv")
	nodeFiles := map[string]int{"openb_node_list_all_node.csv": 1523, "openb_node_list_gpu_node.csv": 1213}
	podFiles := map[string]int{ // rows, from SOURCE.md where it gives them
		"openb_pod_list_default.csv": 8152, "openb_pod_list_cpu0.csv": 7064, "openb_pod_list_cpu300.csv": 10094,
		"openb_pod_list_cpu037.csv": -1, "openb_pod_list_cpu050.csv": -1, "openb_pod_list_cpu072.csv": -1,
		"openb_pod_list_cpu100.csv": -1, "openb_pod_list_cpu200.csv": -1, "openb_pod_list_cpu235.csv": -1,
		"openb_pod_list_cpu250.csv":     -1,
		"openb_pod_list_gpushare20.csv": 8152, "openb_pod_list_gpushare40.csv": 8152, "openb_pod_list_gpushare60.csv": 8152,
		"openb_pod_list_gpushare80.csv": 8152, "openb_pod_list_gpushare100.csv": 8152,
		"openb_pod_list_gpuspec05.csv": 8152, "openb_pod_list_gpuspec10.csv": 8152, "openb_pod_list_gpuspec20.csv": 8152,
		"openb_pod_list_gpuspec25.csv": 8152, "openb_pod_list_gpuspec33.csv": 8152,
		"openb_pod_list_multigpu20.csv": -1, "openb_pod_list_multigpu30.csv": -1, "openb_pod_list_multigpu40.csv": -1,
		"openb_pod_list_multigpu50.csv": -1,
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	require.NoError(t, err)
	require.Len(t, files, 26, "the trace has 26 CSV files")

	for _, path := range files {
		base := filepath.Base(path)
		t.Run(base, func(t *testing.T) {
			rows := dataRows(t, path)
			if want, ok := nodeFiles[base]; ok {
				nodes, skipped, err := openb.ReadNodesFile(path, openb.Strict)
				require.NoError(t, err)
				assert.Nil(t, skipped)
				assert.Len(t, nodes, want)
				assert.Equal(t, rows, len(nodes))
				return
			}
			want, ok := podFiles[base]
			require.True(t, ok, "unexpected file %s", base)
			pods, skipped, err := openb.ReadPodsFile(path, openb.Strict)
			require.NoError(t, err)
			assert.Nil(t, skipped)
			if want >= 0 {
				assert.Len(t, pods, want)
			}
			assert.Equal(t, rows, len(pods))
			multi := strings.HasPrefix(base, "openb_pod_list_multigpu")
			for _, p := range pods {
				if multi {
					require.False(t, p.HasCreation || p.HasDeletion || p.HasScheduled, "%s: multigpu files have no times", p.Name)
					require.Empty(t, p.QoS)
				} else {
					require.True(t, p.HasCreation && p.HasDeletion, "%s: times present", p.Name)
					require.Equal(t, p.Phase == v1.PodPending, !p.HasScheduled, "%s: Pending exactly when never scheduled", p.Name)
				}
			}
		})
	}
}

// Facts about the default trace from SOURCE.md.
func TestDefaultTraceFacts(t *testing.T) {
	pods, _, err := openb.ReadPodsFile(filepath.Join(traceDir(t), "csv", "openb_pod_list_default.csv"), openb.Strict)
	require.NoError(t, err)
	require.Len(t, pods, 8152)

	numGPU := map[int64]int{}
	qos := map[openb.QoS]int{}
	sharing, pending := 0, 0
	var lastCreation time.Duration
	for _, p := range pods {
		numGPU[p.NumGPU]++
		qos[p.QoS]++
		if p.NumGPU > 0 && p.GPUMilli < 1000 {
			sharing++
		}
		if !p.HasScheduled {
			pending++
		}
		lastCreation = max(lastCreation, p.Creation)
		assert.Nil(t, p.GPUSpec, "%s: the default trace has no GPU model constraints", p.Name)
	}
	assert.Equal(t, map[int64]int{0: 1088, 1: 6989, 2: 16, 4: 15, 8: 44}, numGPU)
	assert.Equal(t, map[openb.QoS]int{openb.QoSLS: 4647, openb.QoSBE: 3398, openb.QoSBurstable: 100, openb.QoSGuaranteed: 7}, qos)
	assert.Equal(t, 3078, sharing, "GPU-sharing tasks (gpu_milli < 1000)")
	assert.Equal(t, 897, pending, "never scheduled")
	assert.Equal(t, 12901761*time.Second, lastCreation)

	var p1523 *openb.Pod
	for i := range pods {
		if pods[i].Name == "openb-pod-1523" {
			p1523 = &pods[i]
		}
	}
	require.NotNil(t, p1523)
	assert.Equal(t, openb.Pod{
		Name: "openb-pod-1523", MilliCPU: 14000, MemoryMiB: 0, NumGPU: 1, GPUMilli: 1000,
		QoS: openb.QoSBurstable, Phase: v1.PodSucceeded,
		Creation: 10611842 * time.Second, Deletion: 10615828 * time.Second, Scheduled: 10611842 * time.Second,
		HasCreation: true, HasDeletion: true, HasScheduled: true,
	}, *p1523)
	mem := p1523.Object().Spec.Containers[0].Resources.Requests[v1.ResourceMemory]
	assert.True(t, mem.IsZero(), "memory_mib=0 is an explicit zero request")
}

func TestVariantFacts(t *testing.T) {
	dir := filepath.Join(traceDir(t), "csv")
	countCPUOnly := func(file string) (cpuOnly, withSpec, gpuTasks int) {
		pods, _, err := openb.ReadPodsFile(filepath.Join(dir, file), openb.Strict)
		require.NoError(t, err)
		for _, p := range pods {
			if p.NumGPU == 0 {
				cpuOnly++
				continue
			}
			gpuTasks++
			if p.GPUSpec != nil {
				withSpec++
			}
		}
		return
	}
	cpuOnly, _, _ := countCPUOnly("openb_pod_list_cpu0.csv")
	assert.Equal(t, 0, cpuOnly, "cpu0 has the CPU-only tasks removed")
	cpuOnly, _, _ = countCPUOnly("openb_pod_list_cpu300.csv")
	assert.Equal(t, 3030, cpuOnly)
	// gpuspec33: 2388 of 7064 GPU tasks (33.8%) carry a model constraint
	_, withSpec, gpuTasks := countCPUOnly("openb_pod_list_gpuspec33.csv")
	assert.Equal(t, 7064, gpuTasks)
	assert.Equal(t, 2388, withSpec)
}

func TestNodeLists(t *testing.T) {
	dir := filepath.Join(traceDir(t), "csv")
	all, _, err := openb.ReadNodesFile(filepath.Join(dir, "openb_node_list_all_node.csv"), openb.Strict)
	require.NoError(t, err)
	require.Len(t, all, 1523)
	cpuOnly := 0
	for _, n := range all {
		if n.GPUs == 0 {
			cpuOnly++
			assert.Empty(t, n.Model, n.Name)
		}
	}
	assert.Equal(t, 310, cpuOnly)

	gpu, _, err := openb.ReadNodesFile(filepath.Join(dir, "openb_node_list_gpu_node.csv"), openb.Strict)
	require.NoError(t, err)
	require.Len(t, gpu, 1213)
	models := map[string]int{}
	var gpus int64
	for _, n := range gpu {
		models[n.Model]++
		gpus += n.GPUs
	}
	assert.Equal(t, int64(6212), gpus)
	assert.Equal(t, map[string]int{"G2": 549, "T4": 404, "P100": 134, "V100M16": 55, "G3": 39, "V100M32": 30, "A10": 2}, models)
}

// The GPU node CSV converted by Node.Object equals the authors' own node
// YAML read by snapshot/load: same names in the same order, same labels,
// same capacity and allocatable (compared as quantities).
func TestNodeObjectsMatchAuthorsYAML(t *testing.T) {
	dir := traceDir(t)
	nodes, _, err := openb.ReadNodesFile(filepath.Join(dir, "csv", "openb_node_list_gpu_node.csv"), openb.Strict)
	require.NoError(t, err)
	objs, err := load.Files(filepath.Join(dir, "node_yaml", "openb_node_list_gpu_node.yaml"))
	require.NoError(t, err)
	ours := openb.NodeObjects(nodes)
	require.Len(t, objs.Nodes, len(ours))
	for i, want := range objs.Nodes {
		got := ours[i]
		require.Equal(t, want.Name, got.Name, "node %d", i)
		require.Equal(t, want.Labels, got.Labels, want.Name)
		require.Empty(t, want.Spec.Taints)
		for what, pair := range map[string][2]v1.ResourceList{
			"capacity":    {want.Status.Capacity, got.Status.Capacity},
			"allocatable": {want.Status.Allocatable, got.Status.Allocatable},
		} {
			require.Len(t, pair[1], len(pair[0]), "%s %s", want.Name, what)
			for name, q := range pair[0] {
				g, ok := pair[1][name]
				require.True(t, ok, "%s %s[%s] missing", want.Name, what, name)
				require.Zero(t, q.Cmp(g), "%s %s[%s] = %s, want %s", want.Name, what, name, g.String(), q.String())
			}
		}
	}
}

func BenchmarkReadPods(b *testing.B) {
	path := filepath.Join(traceDir(b), "csv", "openb_pod_list_default.csv")
	data, err := os.ReadFile(path)
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		pods, _, err := openb.ReadPods(bytes.NewReader(data), path, openb.Strict)
		if err != nil || len(pods) != 8152 {
			b.Fatalf("ReadPods: %d pods, %v", len(pods), err)
		}
	}
}
