package parity

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
)

func node(name, cpu, mem string) *v1.Node {
	rl := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(cpu),
		v1.ResourceMemory: resource.MustParse(mem),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: rl, Capacity: rl}}
}

func pod(name, nodeName, cpu, mem string) *v1.Pod {
	rl := v1.ResourceList{}
	if cpu != "" {
		rl[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		rl[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{{
			Name: "c", Resources: v1.ResourceRequirements{Requests: rl},
		}}},
	}
}

// The harness runs upstream's real plugins: check it against the formulas
// written out by hand on small cases.
func TestUpstreamScoresMatchFormulas(t *testing.T) {
	ctx := context.Background()
	u, err := NewUpstream(ctx)
	require.NoError(t, err)
	u.Load([]*v1.Node{node("empty", "4", "8Gi"), node("busy", "4", "8Gi")},
		[]*v1.Pod{pod("b1", "busy", "3", "2Gi")})
	p := pod("p", "", "1", "2Gi")

	tests := []struct {
		name   string
		plugin string
		args   runtime.Object // nil: default args
		want   []int64
	}{
		{
			// empty: cpu (4000-1000)*100/4000 = 75, mem (8Gi-2Gi)*100/8Gi = 75 → 75
			// busy:  cpu (4000-4000)*100/4000 = 0,  mem (8Gi-4Gi)*100/8Gi = 50 → (0+50)/2 = 25
			name: "LeastAllocated", plugin: names.NodeResourcesFit, want: []int64{75, 25},
		},
		{
			// empty: cpu 1000*100/4000 = 25, mem 2Gi*100/8Gi = 25 → 25
			// busy:  cpu 4000*100/4000 = 100, mem 4Gi*100/8Gi = 50 → 75
			name: "MostAllocated", plugin: names.NodeResourcesFit,
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated}},
			want: []int64{25, 75},
		},
		{
			// shape {0→0, 100→10} scaled ×10: score = utilisation%.
			// empty: cpu 25, mem 25 → 25; busy: cpu 100, mem 50 → 75
			name: "RequestedToCapacityRatio", plugin: names.NodeResourcesFit,
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{
				Type: configv1.RequestedToCapacityRatio,
				RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{
					Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}},
				},
			}},
			want: []int64{25, 75},
		},
		{
			// v1.37 scores the change in balance: b(f) = int((1 - |f_cpu-f_mem|/2)*100),
			// score = 50 + (50 + b(with pod) - b(without pod))/2.
			// empty: with (0.25, 0.25) → 100, without (0, 0) → 100 → 50 + 50/2 = 75
			// busy:  with (1.0, 0.5) → 75, without (0.75, 0.25) → 75 → 75
			name: "BalancedAllocation", plugin: names.NodeResourcesBalancedAllocation, want: []int64{75, 75},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := u.Plugin(ctx, tc.plugin, tc.args)
			require.NoError(t, err)
			got, err := u.Score(ctx, pl, p)
			require.NoError(t, err)
			assert.False(t, got.Skipped)
			assert.Equal(t, tc.want, got.Normalized, "scores (empty, busy)")
		})
	}
}

func TestUpstreamFilterVerdicts(t *testing.T) {
	ctx := context.Background()
	u, err := NewUpstream(ctx)
	require.NoError(t, err)
	cordoned := node("cordoned", "2", "4Gi")
	cordoned.Spec.Unschedulable = true
	tainted := node("tainted", "2", "4Gi")
	tainted.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
	u.Load([]*v1.Node{node("small", "500m", "4Gi"), cordoned, tainted}, nil)
	p := pod("p", "", "1", "1Gi")

	fit, err := u.Filter(ctx, u.MustPlugin(ctx, names.NodeResourcesFit, nil), p)
	require.NoError(t, err)
	// 1000m > 500m allocatable: unresolvable (larger than the whole node).
	assert.Equal(t, Verdict{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{"Insufficient cpu"}}, fit.Verdicts[0])
	assert.Equal(t, Verdict{Code: fwk.Success}, fit.Verdicts[1])

	unsched, err := u.Filter(ctx, u.MustPlugin(ctx, names.NodeUnschedulable, nil), p)
	require.NoError(t, err)
	assert.Equal(t, fwk.UnschedulableAndUnresolvable, unsched.Verdicts[1].Code)
	assert.Equal(t, fwk.Success, unsched.Verdicts[0].Code)

	taint, err := u.Filter(ctx, u.MustPlugin(ctx, names.TaintToleration, nil), p)
	require.NoError(t, err)
	assert.Equal(t, Verdict{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{"node(s) had untolerated taint(s)"}}, taint.Verdicts[2])

	// NodePorts skips a pod without host ports at PreFilter: all pass.
	ports, err := u.Filter(ctx, u.MustPlugin(ctx, names.NodePorts, nil), p)
	require.NoError(t, err)
	for i, v := range ports.Verdicts {
		assert.Equal(t, fwk.Success, v.Code, "node %d", i)
	}
}

// PodResource is upstream's NodeInfo accounting: a container without
// requests counts 100m / 200Mi towards NonZeroRequested only.
func TestUpstreamPodResource(t *testing.T) {
	got, err := PodResource(pod("p", "", "", "1Gi"))
	require.NoError(t, err)
	assert.Equal(t, int64(0), got.Resource.GetMilliCPU())
	assert.Equal(t, int64(1<<30), got.Resource.GetMemory())
	assert.Equal(t, int64(100), got.Non0CPU)
	assert.Equal(t, int64(1<<30), got.Non0Mem)
}

// The generator is deterministic for a seed and produces every feature the
// parity suites rely on.
func TestGenDeterministicAndCovering(t *testing.T) {
	a, b := NewGen(7, DefaultConfig()), NewGen(7, DefaultConfig())
	for i := 0; i < 50; i++ {
		ca, cb := a.Case(), b.Case()
		require.Equal(t, ca, cb, "case %d", i)
	}
	g := NewGen(1, DefaultConfig())
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		c := g.Case()
		for _, n := range c.Nodes {
			if n.Spec.Unschedulable {
				seen["unschedulable"] = true
			}
			for _, t := range n.Spec.Taints {
				seen["taint:"+string(t.Effect)] = true
			}
			if _, ok := n.Status.Allocatable[ResourceGPU]; ok {
				seen["node gpu"] = true
			}
			if len(n.Status.Images) > 0 {
				seen["images"] = true
			}
		}
		for _, p := range append(c.Bound, c.Pod) {
			for _, ic := range p.Spec.InitContainers {
				if ic.RestartPolicy != nil {
					seen["sidecar"] = true
				} else {
					seen["init"] = true
				}
			}
			if p.Spec.Overhead != nil {
				seen["overhead"] = true
			}
			if p.Spec.Resources != nil {
				seen["pod-level"] = true
			}
			for _, c := range p.Spec.Containers {
				if q, ok := c.Resources.Requests[v1.ResourceCPU]; ok && q.IsZero() {
					seen["explicit zero"] = true
				}
				if _, ok := c.Resources.Requests[ResourceHugePages]; ok {
					seen["hugepages"] = true
				}
				for _, port := range c.Ports {
					if port.HostPort > 0 {
						seen["host port"] = true
					}
				}
			}
			for _, tol := range p.Spec.Tolerations {
				if tol.Key == "" && tol.Operator == v1.TolerationOpExists {
					seen["tolerate all"] = true
				}
			}
			if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
				if r := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
					for _, term := range r.NodeSelectorTerms {
						if len(term.MatchFields) > 0 {
							seen["matchFields"] = true
						}
					}
				}
				if len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
					seen["preferred"] = true
				}
			}
			if len(p.Spec.NodeSelector) > 0 {
				seen["nodeSelector"] = true
			}
		}
	}
	for _, k := range []string{"unschedulable", "taint:NoSchedule", "taint:PreferNoSchedule", "taint:NoExecute",
		"node gpu", "images", "sidecar", "init", "overhead", "pod-level", "explicit zero", "hugepages",
		"host port", "tolerate all", "matchFields", "preferred", "nodeSelector"} {
		assert.True(t, seen[k], "generator never produced %s", k)
	}
}
