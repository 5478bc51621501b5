package inprocess

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/whatif"
)

// TestFitCountEqualsUpstream: whatif.FitCount's answer — how many copies
// of a template fit, and on which nodes — equals what upstream's real
// kube-scheduler (default profile, in process) binds when given more
// copies than fit. On random clusters (mixed CPU, memory and pod limits,
// some nodes tainted, bound pods) the count per node is each node's room
// for copies, whatever order the copies land in, so both must agree node
// by node; the copies beyond the count stay pending in both.
func TestFitCountEqualsUpstream(t *testing.T) {
	v1cfg := &configv1.KubeSchedulerConfiguration{}
	scheme.Scheme.Default(v1cfg)
	cfg := &config.KubeSchedulerConfiguration{}
	require.NoError(t, scheme.Scheme.Convert(v1cfg, cfg, nil))

	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			var nodes []*v1.Node
			var bound []*v1.Pod
			for i := range 20 + r.IntN(30) {
				rl := v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse(fmt.Sprint(1 + r.IntN(8))),
					v1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", 1+r.IntN(16))),
					v1.ResourcePods:   resource.MustParse(fmt.Sprint(3 + r.IntN(20))),
				}
				name := fmt.Sprintf("node-%03d", i)
				n := &v1.Node{
					ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{v1.LabelHostname: name}},
					Status:     v1.NodeStatus{Allocatable: rl, Capacity: rl},
				}
				if r.IntN(5) == 0 {
					n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}}
				}
				nodes = append(nodes, n)
				for j := range r.IntN(3) {
					p := upstreamPod(fmt.Sprintf("bound-%d-%d", i, j), fmt.Sprintf("%dm", 100*(1+r.IntN(5))), fmt.Sprintf("%dMi", 256*(1+r.IntN(4))))
					p.Spec.NodeName = name
					bound = append(bound, p)
				}
			}
			tmpl := upstreamPod("web", fmt.Sprintf("%dm", 250*(1+r.IntN(4))), fmt.Sprintf("%dMi", 512*(1+r.IntN(3))))
			if seed%2 == 1 {
				tmpl.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
			}

			cache := snapshot.NewCache()
			for _, n := range nodes {
				require.NoError(t, cache.AddNode(n))
			}
			for _, p := range bound {
				require.NoError(t, cache.AddPod(p))
			}
			got, err := whatif.FitCount(cache.Snapshot().Fork(), tmpl, 2000, framework.Config{Seed: seed})
			require.NoError(t, err)
			require.Less(t, got.Count, 2000)
			want := map[string]int{}
			for _, p := range got.Placements {
				want[p.Node]++
			}

			// Upstream: the same cluster and Count+5 copies, pending.
			pods := append([]*v1.Pod(nil), bound...)
			for i := range got.Count + 5 {
				c := tmpl.DeepCopy()
				c.Name = fmt.Sprintf("web-%d", i)
				c.UID = types.UID("uid-" + c.Name)
				pods = append(pods, c)
			}
			cl, err := NewCluster(nodes, pods)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err = cl.Start(ctx, cfg, Registry())
			require.NoError(t, err)
			require.NoError(t, cl.WaitBinds(ctx, got.Count, time.Minute))
			time.Sleep(time.Second) // the 5 extra copies are tried and fail
			assert.Equal(t, got.Count, cl.Binds(), "upstream bound a different number of copies")
			all, err := cl.WaitBound(ctx, 0, time.Second)
			require.NoError(t, err)
			up := map[string]int{}
			for _, p := range all {
				if p.Spec.NodeName != "" && strings.HasPrefix(p.Name, "web-") {
					up[p.Spec.NodeName]++
				}
			}
			assert.Equal(t, want, up, "copies per node")
			t.Logf("%d nodes: %d copies fit; next: %s", len(nodes), got.Count, got.Next.Message())
		})
	}
}

func upstreamPod(name, cpu, mem string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{
			SchedulerName: "default-scheduler",
			Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)},
			}}},
		},
	}
}
