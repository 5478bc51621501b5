package sidebyside

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	kframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/schedkit/schedkit/examples/kube-scheduler/parity"
	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// ipaShape is a scheduler_perf affinity workload (test/integration/
// scheduler_perf/affinity/performance-config.yaml, its pod templates):
// the bound pods (namespace sched-0) and the measured pod (sched-1),
// built from the same template.
type ipaShape struct {
	name string
	// pod builds the template's pod i in namespace ns.
	pod func(i int, ns string) *v1.Pod
	// initPerNode: bound pods per 1,000 nodes (1,000 and 5,000 nodes:
	// the workload's 5000Nodes initPods scaled).
	initPerThousand int
	// zone: the nodes are labelled topology.kubernetes.io/zone=zone1
	// (the workload's labelNodePrepareStrategy).
	zone bool
}

var ipaShapes = []ipaShape{
	// SchedulingPodAntiAffinity 5000Nodes: 1,000 bound pods, each with
	// required hostname anti-affinity to color=green in sched-0/sched-1.
	{name: "SchedulingPodAntiAffinity", pod: antiAffinityPod, initPerThousand: 200},
	// SchedulingPreferredPodAffinity 5000Nodes: 5,000 bound pods, each
	// with preferred (weight 1) hostname affinity to color=red.
	{name: "SchedulingPreferredPodAffinity", pod: preferredAffinityPod, initPerThousand: 1000},
	// SchedulingPodAffinity 5000Nodes: 5,000 bound pods, each with
	// required zone affinity to color=blue, every node in zone1.
	{name: "SchedulingPodAffinity", pod: affinityPod, initPerThousand: 1000, zone: true},
}

func affinityTerm() v1.PodAffinityTerm {
	return v1.PodAffinityTerm{TopologyKey: v1.LabelHostname, Namespaces: []string{"sched-1", "sched-0"}}
}

func templatePod(prefix string, i int, ns, color string) *v1.Pod {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("500Mi")}
	name := fmt.Sprintf("%s%05d", prefix, i)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(ns + "-" + name), Labels: map[string]string{"color": color}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10.2",
			Ports:     []v1.ContainerPort{{ContainerPort: 80}},
			Resources: v1.ResourceRequirements{Requests: rl, Limits: rl}}}},
	}
}

// antiAffinityPod is templates/pod-with-pod-anti-affinity.yaml.
func antiAffinityPod(i int, ns string) *v1.Pod {
	p := templatePod("anti-affinity-pod-", i, ns, "green")
	t := affinityTerm()
	t.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"color": "green"}}
	p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{t}}}
	return p
}

// affinityPod is templates/pod-with-pod-affinity.yaml.
func affinityPod(i int, ns string) *v1.Pod {
	p := templatePod("affinity-pod-", i, ns, "blue")
	t := affinityTerm()
	t.TopologyKey = v1.LabelTopologyZone
	t.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"color": "blue"}}
	p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{t}}}
	return p
}

// preferredAffinityPod is templates/pod-with-preferred-pod-affinity.yaml.
func preferredAffinityPod(i int, ns string) *v1.Pod {
	p := templatePod("preferred-affinity-pod-", i, ns, "red")
	t := affinityTerm()
	t.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"color": "red"}}
	p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: t}}}}
	return p
}

// ipaInputs: n nodes of the default template (4 cpu, 32Gi, 110 pods),
// labelled with their hostname (scheduler_perf's nodes carry no labels,
// so there the terms' topology key is missing everywhere and the plugin
// counts nothing; with the label both sides do the counting a real
// cluster asks for), and zone1 for the shapes whose workload labels it,
// and the shape's bound pods spread one per node.
func ipaInputs(s ipaShape, n int) (nodes []*v1.Node, bound []*v1.Pod, pending *v1.Pod) {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("32Gi"), v1.ResourcePods: resource.MustParse("110")}
	for i := range n {
		name := fmt.Sprintf("scheduler-perf-%05d", i)
		labels := map[string]string{v1.LabelHostname: name}
		if s.zone {
			labels[v1.LabelTopologyZone] = "zone1"
		}
		nodes = append(nodes, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: labels},
			Status:     v1.NodeStatus{Allocatable: rl, Capacity: rl},
		})
	}
	for i := range s.initPerThousand * n / 1000 {
		p := s.pod(i, "sched-0")
		p.Spec.NodeName = nodes[(i*7919)%n].Name
		bound = append(bound, p)
	}
	return nodes, bound, s.pod(0, "sched-1")
}

// upstreamIPANsPerPod: upstream's ns/pod (wall, CPU) per shape and size,
// for the ratio the schedkit sub-benchmark reports.
var upstreamIPANsPerPod = map[string][2]float64{}

// perPod runs iter (one pod filtered and scored on every node) and
// reports ns/pod, cpu-ns/pod (process CPU time: upstream's PreFilter and
// PreScore run on its parallelizer's goroutines) and allocs/pod.
func perPod(b *testing.B, iter func()) [2]float64 {
	b.Helper()
	wall, cpu, _ := timeLoop(b, iter)
	ns := [2]float64{wall, cpu}
	b.ReportMetric(ns[0], "ns/pod")
	b.ReportMetric(ns[1], "cpu-ns/pod")
	b.ReportMetric(1e9/ns[1], "pods/cpu-s")
	return ns
}

// BenchmarkInterPodAffinity: one pending pod of each scheduler_perf
// affinity shape, filtered and scored by InterPodAffinity on every node,
// upstream's plugin (PreFilter, Filter per node, PreScore, Score per
// node, NormalizeScore, on upstream's own snapshot) against schedkit's
// (NewPodInfo, PreFilterCluster, Filter per node, Prepare, Score,
// Normalize; then Release of the filter and the scorer, as the Scheduler
// and Profile.Score do), default args. schedkit's cycles go round a chain
// of 32 Cache snapshots, each one bound pod of the shape ahead of the
// one before, as consecutive cycles of scheduler_perf see the cluster
// (its memoised scores are brought up to date by the difference, not
// served for an unchanged cluster); upstream's state is built per cycle
// whatever the last one was, so its cycles use one snapshot. schedkit's
// sub-benchmark reports x-upstream (wall clock) and x-upstream-cpu (CPU
// time) when upstream's ran first in the same process.
//
// Run: go test -run '^$' -bench InterPodAffinity -benchtime 200x ./sidebyside
func BenchmarkInterPodAffinity(b *testing.B) {
	ctx := context.Background()
	for _, s := range ipaShapes {
		for _, n := range []int{1000, 5000} {
			nodes, bound, pod := ipaInputs(s, n)
			key := fmt.Sprintf("%s/nodes=%d", s.name, n)

			b.Run("impl=upstream/"+key, func(b *testing.B) {
				u, err := parity.NewSpreadUpstream(ctx)
				require.NoError(b, err)
				u.Load(nodes, bound)
				pl, err := u.IPAPlugin(ctx, nil)
				require.NoError(b, err)
				infos, err := u.NodeInfos()
				require.NoError(b, err)
				pre, fp := pl.(fwk.PreFilterPlugin), pl.(fwk.FilterPlugin)
				ps, sp := pl.(fwk.PreScorePlugin), pl.(fwk.ScorePlugin)
				list := make(fwk.NodeScoreList, len(infos))
				upstreamIPANsPerPod[key] = perPod(b, func() {
					state := kframework.NewCycleState()
					_, st := pre.PreFilter(ctx, state, pod, infos)
					if !st.IsSkip() {
						if !st.IsSuccess() {
							b.Fatal(st.AsError())
						}
						for _, ni := range infos {
							if st := fp.Filter(ctx, state, pod, ni); st.Code() == fwk.Error {
								b.Fatal(st.AsError())
							}
						}
					}
					st = ps.PreScore(ctx, state, pod, infos)
					if st.IsSkip() {
						return
					}
					if !st.IsSuccess() {
						b.Fatal(st.AsError())
					}
					for i, ni := range infos {
						sc, st := sp.Score(ctx, state, pod, ni)
						if !st.IsSuccess() {
							b.Fatal(st.AsError())
						}
						list[i] = fwk.NodeScore{Name: ni.Node().Name, Score: sc}
					}
					if st := sp.ScoreExtensions().NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
						b.Fatal(st.AsError())
					}
				})
			})

			b.Run("impl=schedkit/"+key, func(b *testing.B) {
				cache := snapshot.NewCache()
				for _, nd := range nodes {
					require.NoError(b, cache.AddNode(nd))
				}
				for _, p := range bound {
					require.NoError(b, cache.AddPod(p))
				}
				// As in scheduler_perf, where each cycle binds the
				// previous pod: a chain of snapshots, each with one
				// more bound pod of the shape than the one before
				// (upstream's cost does not depend on what the last
				// cycle was; schedkit's memoised preferred-term scores
				// are brought up to date by the difference).
				const chain = 32
				snaps := make([]*snapshot.Snapshot, chain)
				lists := make([][]*snapshot.NodeInfo, chain)
				for j := range chain {
					snaps[j] = cache.Snapshot()
					for _, ni := range snaps[j].Nodes() {
						lists[j] = append(lists[j], ni)
					}
					p := s.pod(len(bound)+j, "sched-0")
					p.Spec.NodeName = nodes[(j*7919+13)%n].Name
					require.NoError(b, cache.AddPod(p))
				}
				cycle := 0
				f := must(framework.NewInterPodAffinity(score.InterPodAffinityArgs{}))
				sc := must(score.NewInterPodAffinity(score.InterPodAffinityArgs{}))
				buf := make([]framework.Reason, 0, 16)
				out := make([]int64, n)
				ns := perPod(b, func() {
					snap, ours := snaps[cycle%chain], lists[cycle%chain]
					cycle++
					pi, err := snapshot.NewPodInfo(pod)
					if err != nil {
						b.Fatal(err)
					}
					res, err := framework.RunPreFilter(f, pi, snap)
					if err != nil || res.Reject != "" {
						b.Fatal(err, res.Reject)
					}
					if res.Filter != nil {
						for _, ni := range ours {
							buf = res.Filter.Filter(ni, buf[:0])
						}
						// As the Scheduler does when its cycle ends.
						res.Filter.(interface{ Release() }).Release()
					}
					ps, err := sc.Prepare(pi, snap)
					if err != nil {
						b.Fatal(err)
					}
					if ps == nil {
						return
					}
					ps.Score(ours, out)
					if err := ps.(score.Normalizer).Normalize(ours, out); err != nil {
						b.Fatal(err)
					}
					// As Profile.Score does when it returns.
					ps.(interface{ Release() }).Release()
				})
				if up, ok := upstreamIPANsPerPod[key]; ok {
					b.ReportMetric(up[0]/ns[0], "x-upstream")
					b.ReportMetric(up[1]/ns[1], "x-upstream-cpu")
				}
			})
		}
	}
}
