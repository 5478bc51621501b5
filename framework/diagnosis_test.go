package framework

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

func TestDiagnosisMessage(t *testing.T) {
	cpu := Reason{Code: CodeInsufficientResource, Insufficient: snapshot.Insufficient{Resource: snapshot.CPU}}
	mem := Reason{Code: CodeInsufficientResource, Insufficient: snapshot.Insufficient{Resource: snapshot.Memory}}
	taint := Reason{Code: CodeUntoleratedTaint}
	pods := Reason{Code: CodeTooManyPods}
	rep := func(r Reason, n int) []Reason {
		out := make([]Reason, n)
		for i := range out {
			out[i] = r
		}
		return out
	}
	tests := []struct {
		name string
		d    Diagnosis
		want string
	}{
		{
			name: "empty cluster",
			d:    Diagnosis{},
			want: "no nodes available to schedule pods",
		},
		{
			// "4200 Insufficient cpu" < "800 node(s)…": the strings sort, not the counts.
			name: "counts sort as strings",
			d:    Diagnosis{NumAllNodes: 5000, Reasons: append(rep(cpu, 4200), rep(taint, 800)...)},
			want: "0/5000 nodes are available: 4200 Insufficient cpu, 800 node(s) had untolerated taint(s).",
		},
		{
			name: "10 sorts before 2",
			d:    Diagnosis{NumAllNodes: 15, Reasons: append(append(rep(taint, 2), rep(pods, 10)...), rep(cpu, 3)...)},
			want: "0/15 nodes are available: 10 Too many pods, 2 node(s) had untolerated taint(s), 3 Insufficient cpu.",
		},
		{
			// node a lacks cpu and memory, node b memory only: each reason counts per node.
			name: "a node with two reasons counts in both",
			d:    Diagnosis{NumAllNodes: 2, Reasons: []Reason{cpu, mem, mem}},
			want: "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory.",
		},
		{
			// a cycle's Diagnosis: counts per kind, no per-node reasons;
			// kinds with one message (resolvable or not) merge.
			name: "counts",
			d: Diagnosis{NumAllNodes: 5000, Counts: []ReasonCount{
				{Count: 4000, Reason: cpu}, {Count: 800, Reason: taint}, {Count: 200, Reason: Reason{Code: CodeInsufficientResource, Unresolvable: true}},
			}},
			want: "0/5000 nodes are available: 4200 Insufficient cpu, 800 node(s) had untolerated taint(s).",
		},
		{
			name: "prefilter rejection",
			d:    Diagnosis{NumAllNodes: 3, PreFilterMsg: "pod affinity terms conflict"},
			want: "0/3 nodes are available: pod affinity terms conflict.",
		},
		{
			name: "nodes outside the PreFilter's candidates",
			d: Diagnosis{NumAllNodes: 5, NotCandidates: 4, Reasons: []Reason{{Code: CodeNodeAffinity}},
				NotCandidate: Reason{Code: CodeNotCandidate, Text: "node(s) didn't satisfy plugin(s) [NodeAffinity]"}},
			want: "0/5 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 4 node(s) didn't satisfy plugin(s) [NodeAffinity].",
		},
		{
			name: "custom reasons merge by message",
			d: Diagnosis{NumAllNodes: 3, Reasons: []Reason{
				{Code: CodeCustom, Text: "node(s) were unschedulable"}, {Code: CodeNodeUnschedulable}, {Code: CodeCustom, Text: "GPU too old"},
			}},
			want: "0/3 nodes are available: 1 GPU too old, 2 node(s) were unschedulable.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.d.Message())
			assert.Equal(t, tc.want, tc.d.String())
		})
	}
}

func TestReasonString(t *testing.T) {
	r := Reason{Node: "n1", Code: CodeInsufficientResource, Insufficient: snapshot.Insufficient{Resource: snapshot.CPU, Requested: 2000, Used: 7000, Capacity: 8000}}
	assert.Equal(t, "n1: Insufficient cpu (requested 2000, used 7000, capacity 8000)", r.String())
	taint := mkNode("x").Taint("k", "v", "NoSchedule").Obj().Spec.Taints[0]
	r = Reason{Node: "n2", Code: CodeUntoleratedTaint, Taint: &taint}
	assert.Equal(t, "n2: node(s) had untolerated taint(s) (k=v:NoSchedule)", r.String())
	assert.Equal(t, "GPU too old", Reason{Text: "GPU too old"}.String())
}

// TestNilDiagnosisMessage: a loop printing every attempt's message reads a
// bound pod's nil Diagnosis; it is "" (it panicked).
func TestNilDiagnosisMessage(t *testing.T) {
	var d *Diagnosis
	assert.Equal(t, "", d.Message())
}

// TestDiagnosisCountsMatchReasons: a cycle's Counts are the tally of the
// per-node Reasons (Config.NodeReasons), kind by kind in visiting order
// with the first node's reason, whatever the parallelism; the message
// is the same either way.
func TestDiagnosisCountsMatchReasons(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 20))
	nodes := genCluster(20, 700)
	snap := snapshottest.Snapshot(t, nodes)
	scheds := map[string]*Scheduler{}
	for _, par := range []int{1, 3} {
		for _, detail := range []bool{false, true} {
			scheds[fmt.Sprint(par, detail)] = mustNew(t, Config{Parallelism: par, NodeReasons: detail})
		}
	}
	diagnosed := 0
	for i := range 60 {
		w := mkPod(fmt.Sprintf("p%d", i)).Req("cpu", []string{"20", "40", "64"}[rng.IntN(3)], "memory", []string{"1Gi", "100Gi", "200Gi"}[rng.IntN(3)])
		if rng.IntN(3) == 0 {
			w.Toleration("dedicated", v1.TolerationOpEqual, "gpu", v1.TaintEffectNoSchedule)
		}
		if rng.IntN(4) == 0 {
			w.NodeSelector("topology.kubernetes.io/zone", []string{"a", "b", "c"}[rng.IntN(3)])
		}
		pod := snapshot.MustPodInfo(w.Obj())
		var want *Diagnosis
		for _, key := range []string{"1 true", "1 false", "3 true", "3 false"} {
			d, err := scheds[key].SchedulePod(snap, pod)
			require.NoError(t, err)
			if d.Diagnosis == nil {
				continue
			}
			diag := d.Diagnosis
			if key == "1 true" {
				want = diag
				diagnosed++
				// Counts are the tally of Reasons, with messages.
				tally := (&Diagnosis{Reasons: diag.Reasons}).tally()
				for j := range tally {
					tally[j].Message = tally[j].Reason.Message()
				}
				require.Equal(t, tally, diag.Counts, "pod %d", i)
				continue
			}
			require.NotNil(t, want, "pod %d: %s", i, key)
			require.Equal(t, want.Counts, diag.Counts, "pod %d: %s", i, key)
			require.Equal(t, want.UnschedulablePlugins, diag.UnschedulablePlugins, "pod %d: %s", i, key)
			require.Equal(t, want.Message(), diag.Message(), "pod %d: %s", i, key)
			if strings.HasSuffix(key, "true") {
				require.Equal(t, want.Reasons, diag.Reasons, "pod %d: %s", i, key)
			} else {
				require.Nil(t, diag.Reasons)
			}
		}
	}
	assert.Greater(t, diagnosed, 20, "unschedulable pods")
}
