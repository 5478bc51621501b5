package openb_test

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/examples/internal/openb"
)

// FuzzReadPods: ReadPods never panics; Strict either fails with nothing
// returned or agrees with Lenient (same pods, nothing skipped); every pod
// Lenient keeps is valid (non-empty unique name, non-negative values within
// range); and writing the kept pods back as CSV and reading them in Strict
// mode gives them back exactly.
func FuzzReadPods(f *testing.F) {
	for _, seed := range []string{
		podHeader,
		podHeader + "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n",
		podHeader + "openb-pod-0061,11908,47104,1,1000,T4|P100,BE,Pending,10001278,10001403,\n",
		podHeader + "p,1,0,1,1500,A||B,Burstable,Succeeded,1,2,3\np,1,1,0,0,,,,,,\n",
		podHeader + "p,1,0,1,1001,,,,,,\nq,1,0,0,1,,,,,,\nr,1,0,2,1000,,,,,,\n",
		podHeader + "p,-1,x,,0,,Q,Running,1,2,3\n\"q\"\"\",1,1,0,0,,LS,Running,1,2\n",
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\nopenb-pod-0000,12000,16384,8,1000\n",
		"gpu_milli,num_gpu,memory_mib,cpu_milli,name,extra\n1,2,3,4,x,y\n",
		"name,cpu_milli\n",
		"",
		"\ufeffname,cpu_milli,memory_mib,num_gpu,gpu_milli\r\na,1,1,1,1\r\n",
		podHeader + "p,99999999999999999999,8796093022208,0,0,,LS,Running,9223372037,2,3\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		strict, strictSkipped, strictErr := openb.ReadPods(bytes.NewReader(in), "fuzz.csv", openb.Strict)
		require.Nil(t, strictSkipped)
		pods, skipped, err := openb.ReadPods(bytes.NewReader(in), "fuzz.csv", openb.Lenient)
		if strictErr != nil {
			require.Nil(t, strict, "strict returned pods with an error")
			require.True(t, err != nil || len(skipped) > 0, "strict failed (%v) but lenient skipped nothing", strictErr)
		} else {
			require.NoError(t, err)
			require.Empty(t, skipped)
			require.Equal(t, strict, pods)
		}
		if err != nil {
			require.Nil(t, pods)
			return
		}
		seen := map[string]bool{}
		for _, p := range pods {
			require.NotEmpty(t, p.Name)
			require.False(t, seen[p.Name], "duplicate %q kept", p.Name)
			seen[p.Name] = true
			for _, v := range []int64{p.MilliCPU, p.MemoryMiB, p.NumGPU, p.GPUMilli, int64(p.Creation), int64(p.Deletion), int64(p.Scheduled)} {
				require.GreaterOrEqual(t, v, int64(0), "%s", p.Name)
			}
			require.LessOrEqual(t, p.MemoryMiB, int64(1<<43-1), "%s: bytes overflow", p.Name)
			for _, m := range p.GPUSpec {
				require.NotEmpty(t, m)
				require.NotContains(t, m, "|")
			}
			require.True(t, p.GPUMilli >= 0 && p.GPUMilli <= 1000, "%s: gpu_milli %d is not a share of one GPU", p.Name, p.GPUMilli)
			require.True(t, p.NumGPU > 0 || p.GPUMilli == 0, "%s: gpu_milli %d with num_gpu 0", p.Name, p.GPUMilli)
			require.Equal(t, p.GPUMilli, p.GPUMilliClamped(), "%s: nothing to clamp", p.Name)
		}
		again, _, err := openb.ReadPods(bytes.NewReader(writePods(t, pods)), "again.csv", openb.Strict)
		require.NoError(t, err)
		require.Equal(t, pods, again, "round trip")
	})
}

// FuzzReadNodes: as FuzzReadPods, for node lists.
func FuzzReadNodes(f *testing.F) {
	for _, seed := range []string{
		"sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,64000,262144,2,P100\nopenb-node-1500,32000,262144,0,\n",
		"sn,cpu_milli,memory_mib,gpu,model\na,1,1,-2,T4\na,x,1,0,\nb,1\n",
		"model,gpu,memory_mib,cpu_milli,sn\n,0,0,0,z\n",
		"sn,cpu_milli,memory_mib,gpu,model,gpu\n",
		"sn,cpu_milli,memory_mib,gpu,model\n\"a\nb\",1,1,1,\"T\"\"4\"\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		strict, _, strictErr := openb.ReadNodes(bytes.NewReader(in), "fuzz.csv", openb.Strict)
		nodes, skipped, err := openb.ReadNodes(bytes.NewReader(in), "fuzz.csv", openb.Lenient)
		if strictErr != nil {
			require.Nil(t, strict)
			require.True(t, err != nil || len(skipped) > 0, "strict failed (%v) but lenient skipped nothing", strictErr)
		} else {
			require.NoError(t, err)
			require.Empty(t, skipped)
			require.Equal(t, strict, nodes)
		}
		if err != nil {
			return
		}
		seen := map[string]bool{}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		require.NoError(t, w.Write([]string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}))
		for _, n := range nodes {
			require.NotEmpty(t, n.Name)
			require.False(t, seen[n.Name])
			seen[n.Name] = true
			require.True(t, n.MilliCPU >= 0 && n.MemoryMiB >= 0 && n.GPUs >= 0)
			obj := n.Object() // GPUs × 1000 and MiB << 20 must not have wrapped
			milli := obj.Status.Capacity[openb.ResourceGPUMilli]
			require.GreaterOrEqual(t, milli.Value(), int64(0))
			require.GreaterOrEqual(t, obj.Status.Capacity.Memory().Value(), int64(0))
			require.NoError(t, w.Write([]string{n.Name, itoa(n.MilliCPU), itoa(n.MemoryMiB), itoa(n.GPUs), n.Model}))
		}
		w.Flush()
		again, _, err := openb.ReadNodes(&buf, "again.csv", openb.Strict)
		require.NoError(t, err)
		require.Equal(t, nodes, again, "round trip")
	})
}

// writePods writes pods as an 11-column pod list.
func writePods(t *testing.T, pods []openb.Pod) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	require.NoError(t, w.Write(strings.Split(strings.TrimSpace(podHeader), ",")))
	opt := func(d time.Duration, ok bool) string {
		if !ok {
			return ""
		}
		return itoa(int64(d / time.Second))
	}
	for _, p := range pods {
		require.NoError(t, w.Write([]string{
			p.Name, itoa(p.MilliCPU), itoa(p.MemoryMiB), itoa(p.NumGPU), itoa(p.GPUMilli),
			strings.Join(p.GPUSpec, "|"), string(p.QoS), string(p.Phase),
			opt(p.Creation, p.HasCreation), opt(p.Deletion, p.HasDeletion), opt(p.Scheduled, p.HasScheduled),
		}))
	}
	w.Flush()
	require.NoError(t, w.Error())
	return buf.Bytes()
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
