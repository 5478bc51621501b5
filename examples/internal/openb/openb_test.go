package openb_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/examples/internal/openb"
)

const podHeader = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"

func TestReadPods(t *testing.T) {
	in := podHeader +
		"openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n" +
		"openb-pod-0061,11908,47104,1,1000,,BE,Pending,10001278,10001403,\n" + // never scheduled
		"openb-pod-1523,14000,0,1,1000,,Burstable,Succeeded,10611842,10615828,10611842\n" + // memory 0
		"openb-pod-0100,8000,30000,0,0,,Guaranteed,Failed,5,9,6\n" + // CPU-only
		"openb-pod-0200,4000,15000,2,1000,V100M16|V100M32|V100M32,LS,Running,1,2,1\n"
	pods, skipped, err := openb.ReadPods(strings.NewReader(in), "in.csv", openb.Strict)
	require.NoError(t, err)
	assert.Nil(t, skipped)
	require.Len(t, pods, 5)

	assert.Equal(t, openb.Pod{
		Name: "openb-pod-0001", MilliCPU: 6000, MemoryMiB: 12288, NumGPU: 1, GPUMilli: 460,
		QoS: openb.QoSLS, Phase: v1.PodRunning,
		Creation: 427061 * time.Second, Deletion: 12902960 * time.Second, Scheduled: 427061 * time.Second,
		HasCreation: true, HasDeletion: true, HasScheduled: true,
	}, pods[0])
	assert.False(t, pods[1].HasScheduled, "empty scheduled_time: never scheduled")
	assert.Equal(t, v1.PodPending, pods[1].Phase)
	assert.Equal(t, int64(0), pods[2].MemoryMiB)
	assert.Equal(t, openb.QoSBurstable, pods[2].QoS)
	assert.Equal(t, openb.QoSGuaranteed, pods[3].QoS)
	assert.Equal(t, v1.PodFailed, pods[3].Phase)
	assert.Nil(t, pods[0].GPUSpec, "empty gpu_spec: any model")
	assert.Equal(t, []string{"V100M16", "V100M32", "V100M32"}, pods[4].GPUSpec)
}

func TestReadPodsMultiGPUColumns(t *testing.T) {
	in := "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nopenb-pod-0000,12000,16384,8,1000\n"
	pods, _, err := openb.ReadPods(strings.NewReader(in), "multigpu.csv", openb.Strict)
	require.NoError(t, err)
	assert.Equal(t, []openb.Pod{{Name: "openb-pod-0000", MilliCPU: 12000, MemoryMiB: 16384, NumGPU: 8, GPUMilli: 1000}}, pods)
}

func TestReadHeaders(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr error
		msg     string
		nodes   []openb.Node
	}{
		{
			name:  "columns in another order, an extra column, a byte-order mark",
			in:    "\ufeffmodel,extra,gpu,sn,memory_mib,cpu_milli\nT4,?,2,openb-node-0001,524288,104000\n",
			nodes: []openb.Node{{Name: "openb-node-0001", MilliCPU: 104000, MemoryMiB: 524288, GPUs: 2, Model: "T4"}},
		},
		{
			name:  "header only",
			in:    "sn,cpu_milli,memory_mib,gpu,model\n",
			nodes: nil,
		},
		{
			name:    "empty file",
			in:      "",
			wantErr: openb.ErrHeader,
			msg:     "in.csv:1: openb: bad header: empty file, no header row",
		},
		{
			name:    "missing column",
			in:      "sn,cpu_milli,gpu,model\n",
			wantErr: openb.ErrHeader,
			msg:     `in.csv:1: column memory_mib: openb: bad header: no column "memory_mib" (header: sn,cpu_milli,gpu,model)`,
		},
		{
			name:    "column twice",
			in:      "sn,cpu_milli,memory_mib,gpu,model,gpu\n",
			wantErr: openb.ErrHeader,
			msg:     `in.csv:1: column gpu: openb: bad header: column "gpu" appears twice`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []openb.Mode{openb.Strict, openb.Lenient} {
				nodes, skipped, err := openb.ReadNodes(strings.NewReader(tt.in), "in.csv", mode)
				assert.Nil(t, skipped)
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr, "mode %d", mode)
					assert.Equal(t, tt.msg, err.Error())
					assert.Nil(t, nodes)
					continue
				}
				require.NoError(t, err)
				assert.Equal(t, tt.nodes, nodes)
			}
		})
	}
}

// TestReadMalformedRows: each case has one good row before and after the bad
// one. Strict fails with the bad row's error; Lenient returns the two good
// rows and the same error in skipped.
func TestReadMalformedRows(t *testing.T) {
	const good1 = "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
	const good2 = "openb-pod-0002,12000,24576,1,1000,,LS,Running,1558381,12902960,1558381\n"
	tests := []struct {
		name    string
		row     string
		wantErr error
		msg     string // the error, line 3 being the bad row
	}{
		{"not an integer", "p,12x,1,0,0,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column cpu_milli: openb: bad value: "12x" is not an integer`},
		{"a decimal", "p,1,1.5,0,0,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column memory_mib: openb: bad value: "1.5" is not an integer`},
		{"negative", "p,1,1,-1,0,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column num_gpu: openb: bad value: "-1" is negative`},
		{"negative gpu_milli", "p,1,1,1,-5,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column gpu_milli: openb: bad value: "-5" is negative`},
		{"beyond int64", "p,99999999999999999999,1,0,0,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column cpu_milli: openb: bad value: "99999999999999999999" is out of range [0, 9223372036854775807]`},
		// 2^43 MiB = 2^63 bytes, one past MaxInt64
		{"memory whose bytes overflow int64", "p,1,8796093022208,0,0,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column memory_mib: openb: bad value: "8796093022208" is out of range [0, 8796093022207]`},
		// 9223372037 s × 1e9 > MaxInt64 ns
		{"time beyond a time.Duration", "p,1,1,0,0,,LS,Running,9223372037,2,3\n", openb.ErrValue,
			`in.csv:3: column creation_time: openb: bad value: "9223372037" is out of range [0, 9223372036]`},
		{"gpu_milli above one GPU", "p,1,1,1,1500,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column gpu_milli: openb: bad value: 1500 is more than one GPU (1000): gpu_milli is the share of each GPU, at most a whole one; ask for whole GPUs in num_gpu`},
		{"gpu_milli above one GPU with two GPUs", "p,1,1,2,1001,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column gpu_milli: openb: bad value: 1001 is more than one GPU (1000): gpu_milli is the share of each GPU, at most a whole one; ask for whole GPUs in num_gpu`},
		{"gpu_milli without a GPU", "p,1,1,0,500,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column gpu_milli: openb: bad value: 500 with num_gpu 0: a share of no GPU`},
		{"empty required number", "p,1,,0,0,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column memory_mib: openb: bad value: empty, want an integer`},
		{"empty name", ",1,1,0,0,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column name: openb: bad value: empty name`},
		{"duplicate name", "openb-pod-0001,1,1,0,0,,LS,Running,1,2,3\n", openb.ErrDuplicate,
			`in.csv:3: column name: openb: duplicate name: "openb-pod-0001", first at line 2`},
		{"unknown QoS", "p,1,1,0,0,,XX,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column qos: openb: bad value: "XX", want one of LS, BE, Burstable, Guaranteed`},
		{"unknown phase", "p,1,1,0,0,,LS,Runing,1,2,3\n", openb.ErrValue,
			`in.csv:3: column pod_phase: openb: bad value: "Runing", want one of Running, Pending, Succeeded, Failed`},
		{"too few fields", "p,1,1,0,0\n", openb.ErrSyntax,
			`in.csv:3: openb: malformed CSV row: 5 fields, header has 11`},
		{"too many fields", "p,1,1,0,0,,LS,Running,1,2,3,4\n", openb.ErrSyntax,
			`in.csv:3: openb: malformed CSV row: 12 fields, header has 11`},
		{"bare quote", "p\"q,1,1,0,0,,LS,Running,1,2,3\n", openb.ErrSyntax,
			`in.csv:3: openb: malformed CSV row: bare " in non-quoted-field`},
		{"first problem of a row wins", "p,x,y,0,0,,LS,Running,1,2,3\n", openb.ErrValue,
			`in.csv:3: column cpu_milli: openb: bad value: "x" is not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := podHeader + good1 + tt.row + good2

			pods, skipped, err := openb.ReadPods(strings.NewReader(in), "in.csv", openb.Strict)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Equal(t, tt.msg, err.Error())
			assert.Nil(t, pods, "strict: nothing returned")
			assert.Nil(t, skipped)
			var e *openb.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, 3, e.Line)

			pods, skipped, err = openb.ReadPods(strings.NewReader(in), "in.csv", openb.Lenient)
			require.NoError(t, err)
			require.Len(t, pods, 2, "lenient: the good rows")
			assert.Equal(t, "openb-pod-0001", pods[0].Name)
			assert.Equal(t, "openb-pod-0002", pods[1].Name)
			require.Len(t, skipped, 1)
			assert.Equal(t, tt.msg, skipped[0].Error())
		})
	}
}

func TestReadMalformedNodeRows(t *testing.T) {
	const header = "sn,cpu_milli,memory_mib,gpu,model\n"
	tests := []struct {
		name, row, msg string
	}{
		{"negative gpu", "n,1,1,-2,T4\n", `in.csv:2: column gpu: openb: bad value: "-2" is negative`},
		// gpu-milli = gpu × 1000 must fit int64
		{"gpu whose milli overflows", "n,1,1,9223372036854776,T4\n", `in.csv:2: column gpu: openb: bad value: "9223372036854776" is out of range [0, 9223372036854775]`},
		{"empty sn", ",1,1,0,\n", `in.csv:2: column sn: openb: bad value: empty name`},
		{"cpu not a number", "n,64 cores,1,0,\n", `in.csv:2: column cpu_milli: openb: bad value: "64 cores" is not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := openb.ReadNodes(strings.NewReader(header+tt.row), "in.csv", openb.Strict)
			require.ErrorIs(t, err, openb.ErrValue)
			assert.Equal(t, tt.msg, err.Error())
		})
	}
}

func TestLenientCollectsEveryBadRow(t *testing.T) {
	in := "sn,cpu_milli,memory_mib,gpu,model\n" +
		"a,1,1,0,\n" +
		"b,x,1,0,\n" +
		"c,1,1,0,\n" +
		"a,1,1,0,\n" + // duplicate of line 2
		"d,1\n" +
		"e,1,1,1,T4\n"
	nodes, skipped, err := openb.ReadNodes(strings.NewReader(in), "in.csv", openb.Lenient)
	require.NoError(t, err)
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	assert.Equal(t, []string{"a", "c", "e"}, names)
	var lines []int
	for _, e := range skipped {
		lines = append(lines, e.Line)
	}
	assert.Equal(t, []int{3, 5, 6}, lines)
	assert.ErrorIs(t, skipped[0], openb.ErrValue)
	assert.ErrorIs(t, skipped[1], openb.ErrDuplicate)
	assert.ErrorIs(t, skipped[2], openb.ErrSyntax)
}

func TestReadIOError(t *testing.T) {
	r := &failAfter{data: "sn,cpu_milli,memory_mib,gpu,model\na,1,1,0,\n"}
	_, _, err := openb.ReadNodes(r, "in.csv", openb.Lenient)
	require.ErrorIs(t, err, openb.ErrIO, "lenient still fails on I/O")
	assert.Contains(t, err.Error(), "disk on fire")

	_, _, err = openb.ReadNodesFile("/nonexistent/nodes.csv", openb.Strict)
	require.ErrorIs(t, err, openb.ErrIO)
	assert.Contains(t, err.Error(), "/nonexistent/nodes.csv: openb: cannot read input")
}

type failAfter struct{ data string }

func (f *failAfter) Read(p []byte) (int, error) {
	if f.data == "" {
		return 0, errors.New("disk on fire")
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestNodeObject(t *testing.T) {
	n := openb.Node{Name: "openb-node-0000", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 2, Model: "P100"}.Object()
	assert.Equal(t, "openb-node-0000", n.Name)
	assert.Equal(t, map[string]string{
		"alibabacloud.com/gpu-card-model": "P100",
		"beta.kubernetes.io/os":           "linux",
		"kubernetes.io/hostname":          "openb-node-0000",
		"kubernetes.io/os":                "linux",
	}, n.Labels)
	for _, rl := range []v1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
		assert.Equal(t, int64(64000), rl.Cpu().MilliValue())
		// 262144 MiB × 2^20 = 274877906944 bytes
		assert.Equal(t, int64(274877906944), rl.Memory().Value())
		assert.Equal(t, int64(1001), rl.Pods().Value())
		gpus := rl[openb.ResourceGPUCount]
		assert.Equal(t, int64(2), gpus.Value())
		// 2 GPUs × 1000
		milli := rl[openb.ResourceGPUMilli]
		assert.Equal(t, int64(2000), milli.Value())
	}
	n.Status.Capacity[v1.ResourceCPU] = *n.Status.Capacity.Cpu()
	delete(n.Status.Capacity, v1.ResourcePods)
	assert.Equal(t, int64(1001), n.Status.Allocatable.Pods().Value(), "capacity and allocatable are separate maps")

	cpuOnly := openb.Node{Name: "openb-node-1500", MilliCPU: 32000, MemoryMiB: 262144}.Object()
	assert.NotContains(t, cpuOnly.Labels, openb.LabelGPUCardModel)
	zero := cpuOnly.Status.Capacity[openb.ResourceGPUCount]
	assert.True(t, zero.IsZero())
}

func TestPodObject(t *testing.T) {
	tests := []struct {
		name        string
		pod         openb.Pod
		cpuMilli    int64
		memoryBytes int64
		annotations map[string]string
	}{
		{
			// 12288 MiB × 2^20 = 12884901888 bytes
			name:        "GPU-sharing pod",
			pod:         openb.Pod{Name: "openb-pod-0001", MilliCPU: 6000, MemoryMiB: 12288, NumGPU: 1, GPUMilli: 460},
			cpuMilli:    6000,
			memoryBytes: 12884901888,
			annotations: map[string]string{"alibabacloud.com/gpu-count": "1", "alibabacloud.com/gpu-milli": "460"},
		},
		{
			name:        "memory 0 stays an explicit 0 request",
			pod:         openb.Pod{Name: "openb-pod-1523", MilliCPU: 14000, NumGPU: 1, GPUMilli: 1000},
			cpuMilli:    14000,
			annotations: map[string]string{"alibabacloud.com/gpu-count": "1", "alibabacloud.com/gpu-milli": "1000"},
		},
		{
			name:        "CPU-only pod has no annotations",
			pod:         openb.Pod{Name: "c", MilliCPU: 8000, MemoryMiB: 1},
			cpuMilli:    8000,
			memoryBytes: 1 << 20,
		},
		{
			name:        "gpu_milli above 1000 is clamped, spec joined",
			pod:         openb.Pod{Name: "g", MilliCPU: 1, NumGPU: 1, GPUMilli: 1500, GPUSpec: []string{"V100M16", "V100M32"}},
			cpuMilli:    1,
			annotations: map[string]string{"alibabacloud.com/gpu-count": "1", "alibabacloud.com/gpu-milli": "1000", "alibabacloud.com/gpu-card-model": "V100M16|V100M32"},
		},
		{
			name:        "multi-GPU",
			pod:         openb.Pod{Name: "m", MilliCPU: 1, NumGPU: 8, GPUMilli: 1000},
			cpuMilli:    1,
			annotations: map[string]string{"alibabacloud.com/gpu-count": "8", "alibabacloud.com/gpu-milli": "1000"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.pod.Object()
			assert.Equal(t, tt.pod.Name, p.Name)
			assert.Equal(t, "paib-gpu", p.Namespace)
			assert.Equal(t, tt.annotations, p.Annotations)
			require.Len(t, p.Spec.Containers, 1)
			c := p.Spec.Containers[0]
			assert.Equal(t, "main", c.Name)
			assert.Equal(t, "tensorflow:latest", c.Image)
			assert.Equal(t, v1.RestartPolicyOnFailure, p.Spec.RestartPolicy)
			for what, rl := range map[string]v1.ResourceList{"requests": c.Resources.Requests, "limits": c.Resources.Limits} {
				require.Len(t, rl, 2, what)
				assert.Equal(t, tt.cpuMilli, rl.Cpu().MilliValue(), what)
				mem, ok := rl[v1.ResourceMemory]
				assert.True(t, ok, "%s: memory present even when 0", what)
				assert.Equal(t, tt.memoryBytes, mem.Value(), what)
			}
			assert.Empty(t, p.Status.Phase, "a fresh pod to schedule")
		})
	}
}
