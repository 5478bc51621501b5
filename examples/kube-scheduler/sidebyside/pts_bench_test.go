package sidebyside

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	upstreamfw "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/schedkit/schedkit/examples/kube-scheduler/parity"
	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// ptsShape is one of scheduler_perf's topology-spreading workloads
// (test/integration/scheduler_perf/topology_spreading/performance-config.yaml):
// nodes labelled topology.kubernetes.io/zone moon-1..3 (and, as the
// kubelet sets it, kubernetes.io/hostname), one unlabelled pod-default
// pod per node already bound, then the measured pods.
type ptsShape struct {
	name string
	// pod returns measured pod i.
	pod func(i int) *v1.Pod
	// services are the objects the default constraints read.
	services []*v1.Service
}

var ptsShapes = []ptsShape{
	{
		// pod-with-topology-spreading.yaml: color=blue, zone maxSkew 5
		// DoNotSchedule selecting color=blue.
		name: "TopologySpreading",
		pod: func(i int) *v1.Pod {
			p := ptsPod(fmt.Sprintf("spreading-pod-%d", i), "default", map[string]string{"color": "blue"})
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
				MaxSkew: 5, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": "blue"}},
			}}
			return p
		},
	},
	{
		// pod-with-label.yaml in service-ns with service.yaml's Service
		// selecting app=scheduler-perf: the system default constraints
		// (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway) apply.
		name: "DefaultTopologySpreading",
		pod: func(i int) *v1.Pod {
			return ptsPod(fmt.Sprintf("pod-%d", i), "service-ns", map[string]string{"app": "scheduler-perf"})
		},
		services: []*v1.Service{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "service-ns", Name: "service-1"},
			Spec:       v1.ServiceSpec{Selector: map[string]string{"app": "scheduler-perf"}},
		}},
	},
}

func ptsPod(name, ns string, labels map[string]string) *v1.Pod {
	req := v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("500Mi")}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + ns + "-" + name), Labels: labels},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10.2",
			Resources: v1.ResourceRequirements{Requests: req, Limits: req}}}},
	}
}

// ptsCluster returns node-default.yaml nodes with the zone and hostname
// labels, and one pod-default pod bound to each.
func ptsCluster(n int) ([]*v1.Node, []*v1.Pod) {
	zones := []string{"moon-1", "moon-2", "moon-3"}
	nodes := make([]*v1.Node, n)
	pods := make([]*v1.Pod, n)
	for i := range n {
		name := fmt.Sprintf("scheduler-perf-%d", i)
		nodes[i] = &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelTopologyZone: zones[i%3], v1.LabelHostname: name}},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{
				v1.ResourcePods: resource.MustParse("110"), v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("32Gi")}},
		}
		p := ptsPod(fmt.Sprintf("pod-init-%d", i), "default", nil)
		p.Spec.NodeName = name
		pods[i] = p
	}
	return nodes, pods
}

// ptsMeasured is the number of pods one op schedules: scheduler_perf's
// measurePods for TopologySpreading 5000Nodes is 2,000.
func ptsMeasured(nodes int) int { return nodes / 5 }

// BenchmarkPodTopologySpreadSideBySide: upstream's PodTopologySpread
// plugin (PreFilter, Filter on every node, PreScore, Score and
// NormalizeScore on every feasible node) against schedkit's
// (PreFilterCluster, Filter, Prepare, Score, Normalize) on the same
// cluster, one op scheduling ptsMeasured pods in turn, each bound to the
// node its side scores best (first on ties) before the next: every node
// scored, as with percentageOfNodesToScore 100. Metrics: pods/s and
// pods/cpu-s per side over all ops (timedRuns); on schedkit's side
// x-upstream and x-upstream-cpu (its rates over upstream's, measured just
// before in the same binary) and differ, the placements that differ from
// upstream's (0: the same choices). Run with -benchtime 1x, or Nx for N
// runs per figure.
//
// What is timed is the plugins' work and the binding: building the
// cluster and the measured pod objects (an API server's work, not a
// scheduler's) is setup, and the setup's garbage is collected before the
// timer starts, so that neither side pays for it. Per pod, upstream's
// timed loop runs PreFilter (its parse of the constraints and the count
// over every node, on its parallelizer), Filter on every node, PreScore,
// Score and NormalizeScore, then binds: a DeepCopy of the pod (as its
// scheduler's assume does) and NodeInfo.AddPod, which builds upstream's
// PodInfo of the pod. schedkit's runs NewPodInfo (its PodInfo, plus the
// validation upstream leaves to the API server), PreFilterCluster, Filter
// on every node, Prepare, Score and Normalize, then AddPodInfo.
// When the pod has nothing to filter (upstream's PreFilter Skip,
// schedkit's nil PreFilterResult.Filter: no DoNotSchedule constraint, as
// with DefaultTopologySpreading) both sides take every node as feasible
// in one batch copy (upstream's NodeInfo list, schedkit's Fork.AppendNodes)
// instead of a loop over the nodes.
// Upstream's side is not charged for the PodInfo its scheduling queue
// builds when a pod arrives (a second one; schedkit's is the only one)
// nor for the API server's validation; schedkit's side is charged for
// both, so the ratios lean, if anything, upstream's way.
func BenchmarkPodTopologySpreadSideBySide(b *testing.B) {
	for _, sh := range ptsShapes {
		for _, n := range []int{1000, 5000} {
			var upRate ptsRate
			var upChoices []int
			b.Run(fmt.Sprintf("shape=%s/nodes=%d/impl=upstream", sh.name, n), func(b *testing.B) {
				upRate, upChoices = timedRuns(b, ptsMeasured(n), func() func(int) []int {
					r := newUpstreamPTS(b, sh, n)
					return func(k int) []int { return r.schedule(b, k) }
				})
			})
			b.Run(fmt.Sprintf("shape=%s/nodes=%d/impl=schedkit", sh.name, n), func(b *testing.B) {
				rate, choices := timedRuns(b, ptsMeasured(n), func() func(int) []int {
					r := newSchedkitPTS(b, sh, n)
					return func(k int) []int { return r.schedule(b, k) }
				})
				if upRate.wall > 0 {
					b.ReportMetric(rate.wall/upRate.wall, "x-upstream")
					b.ReportMetric(rate.cpu/upRate.cpu, "x-upstream-cpu")
					differ := 0
					for i := range choices {
						if i >= len(upChoices) || choices[i] != upChoices[i] {
							differ++
						}
					}
					b.ReportMetric(float64(differ), "differ")
				}
			})
		}
	}
}

// timedRuns runs one op per b.Loop: setup (untimed, its garbage collected
// before the timer starts) returns the run, which schedules k pods
// (timed). It reports and returns the pods/s and pods/cpu-s over all the
// ops (total pods over total timed wall and CPU time: with -benchtime Nx
// one figure from N runs, steadier than any single run on a shared
// machine) and the last op's choices. The timed run carries the pprof
// label timed=<benchmark name>, so that a -cpuprofile can be cut to the
// timed work (go tool pprof -tagfocus timed=schedkit).
func timedRuns(b *testing.B, k int, setup func() func(int) []int) (ptsRate, []int) {
	var choices []int
	var wall, cpu time.Duration
	pods := 0
	for b.Loop() {
		b.StopTimer()
		run := setup()
		runtime.GC()
		b.StartTimer()
		start, cpu0 := time.Now(), processCPU(b)
		pprof.Do(context.Background(), pprof.Labels("timed", b.Name()), func(context.Context) { choices = run(k) })
		wall += time.Since(start)
		cpu += processCPU(b) - cpu0
		pods += k
	}
	rate := ptsRate{wall: float64(pods) / wall.Seconds(), cpu: float64(pods) / cpu.Seconds()}
	b.ReportMetric(rate.wall, "pods/s")
	b.ReportMetric(rate.cpu, "pods/cpu-s")
	return rate, choices
}

// ptsRate is pods per second of wall time and of process CPU time (all
// threads: upstream's PreFilter and PreScore run on its parallelizer's
// goroutines, schedkit's on one). On a shared machine the CPU rate is the
// steadier one.
type ptsRate struct{ wall, cpu float64 }

// processCPU is the CPU time (user + system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// best returns the index of the highest score among feasible (first on
// ties), or -1.
func best(feasible []int, scores []int64) int {
	choice, top := -1, int64(-1)
	for i, j := range feasible {
		if scores[i] > top {
			choice, top = j, scores[i]
		}
	}
	return choice
}

// identity returns 0..n-1: the feasible node indexes when every node is.
func identity(n int) []int {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

type upstreamPTS struct {
	u     *parity.SpreadUpstream
	pl    fwk.Plugin
	pods  []*v1.Pod // the measured pods, made in setup
	infos []fwk.NodeInfo
}

func newUpstreamPTS(b *testing.B, sh ptsShape, n int) *upstreamPTS {
	ctx := context.Background()
	u, err := parity.NewSpreadUpstream(ctx)
	require.NoError(b, err)
	nodes, pods := ptsCluster(n)
	u.Load(nodes, pods)
	require.NoError(b, u.LoadWorkloads(sh.services, nil, nil, nil))
	pl, err := u.SpreadPlugin(ctx, nil)
	require.NoError(b, err)
	r := &upstreamPTS{u: u, pl: pl, pods: measuredPods(sh, n), infos: make([]fwk.NodeInfo, n)}
	for i, node := range nodes {
		r.infos[i], err = u.NodeInfo(node.Name)
		require.NoError(b, err)
	}
	return r
}

// schedule runs upstream's plugin for k measured pods, binding each to
// its best node (AddPod on the snapshot's NodeInfo); it returns the
// chosen node indexes.
func (r *upstreamPTS) schedule(b *testing.B, k int) []int {
	ctx := context.Background()
	pre := r.pl.(fwk.PreFilterPlugin)
	flt := r.pl.(fwk.FilterPlugin)
	psc := r.pl.(fwk.PreScorePlugin)
	sc := r.pl.(fwk.ScorePlugin)
	choices := make([]int, 0, k)
	feasBuf := make([]int, 0, len(r.infos))
	finfos := make([]fwk.NodeInfo, 0, len(r.infos))
	scoreBuf := make([]int64, len(r.infos))
	listBuf := make(fwk.NodeScoreList, len(r.infos))
	all := identity(len(r.infos))
	for i := range k {
		pod := r.pods[i]
		state := upstreamfw.NewCycleState()
		feasible := feasBuf[:0] // not all's array: all is never appended to
		finfos = finfos[:0]
		_, st := pre.PreFilter(ctx, state, pod, r.infos)
		switch {
		case st.IsSkip(): // every node feasible: the batch copy, as schedkit's side
			feasible, finfos = all, append(finfos, r.infos...)
		case !st.IsSuccess():
			b.Fatalf("upstream PreFilter: %v", st.AsError())
		default:
			for j, ni := range r.infos {
				if flt.Filter(ctx, state, pod, ni).IsSuccess() {
					feasible, finfos = append(feasible, j), append(finfos, ni)
				}
			}
		}
		scores := scoreBuf[:len(finfos)]
		clear(scores)
		if st := psc.PreScore(ctx, state, pod, finfos); st.IsSuccess() {
			list := listBuf[:len(finfos)]
			for j, ni := range finfos {
				s, st := sc.Score(ctx, state, pod, ni)
				if !st.IsSuccess() {
					b.Fatalf("upstream Score: %v", st.AsError())
				}
				list[j] = fwk.NodeScore{Name: ni.Node().Name, Score: s}
			}
			if st := sc.ScoreExtensions().NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
				b.Fatalf("upstream NormalizeScore: %v", st.AsError())
			}
			for j := range list {
				scores[j] = list[j].Score
			}
		} else if !st.IsSkip() {
			b.Fatalf("upstream PreScore: %v", st.AsError())
		}
		choice := best(feasible, scores)
		if choice < 0 {
			b.Fatalf("upstream: pod %d fits no node", i)
		}
		bound := pod.DeepCopy()
		bound.Spec.NodeName = r.infos[choice].Node().Name
		r.infos[choice].(*upstreamfw.NodeInfo).AddPod(bound)
		choices = append(choices, choice)
	}
	return choices
}

type schedkitPTS struct {
	f    *snapshot.Fork
	flt  framework.ClusterFilter
	sc   score.Scorer
	pods []*v1.Pod // the measured pods, made in setup
}

func newSchedkitPTS(b *testing.B, sh ptsShape, n int) *schedkitPTS {
	nodes, pods := ptsCluster(n)
	c := snapshot.NewCache()
	for _, node := range nodes {
		require.NoError(b, c.AddNode(node))
	}
	for _, p := range pods {
		require.NoError(b, c.AddPod(p))
	}
	for _, s := range sh.services {
		require.NoError(b, c.AddObject(s))
	}
	flt, err := framework.NewPodTopologySpread(score.PodTopologySpreadArgs{})
	require.NoError(b, err)
	sc, err := score.NewPodTopologySpread(score.PodTopologySpreadArgs{})
	require.NoError(b, err)
	return &schedkitPTS{f: c.Snapshot().Fork(), flt: flt.(framework.ClusterFilter), sc: sc, pods: measuredPods(sh, n)}
}

// measuredPods returns the ptsMeasured(n) pods one op schedules.
func measuredPods(sh ptsShape, n int) []*v1.Pod {
	pods := make([]*v1.Pod, ptsMeasured(n))
	for i := range pods {
		pods[i] = sh.pod(i)
	}
	return pods
}

// schedule runs schedkit's filter and scorer for k measured pods on the
// fork, binding each to its best node (AddPodInfo); it returns the chosen
// node indexes.
func (r *schedkitPTS) schedule(b *testing.B, k int) []int {
	choices := make([]int, 0, k)
	feasBuf := make([]int, 0, r.f.NumNodes())
	fnodes := make([]*snapshot.NodeInfo, 0, r.f.NumNodes())
	scoreBuf := make([]int64, r.f.NumNodes())
	all := identity(r.f.NumNodes())
	var reasons []framework.Reason
	for i := range k {
		// b.Fatal, not require: require's t.Helper walks the stack, a
		// cost of the harness the upstream side does not pay.
		pi, err := snapshot.NewPodInfo(r.pods[i])
		if err != nil {
			b.Fatal(err)
		}
		res, err := r.flt.PreFilterCluster(pi, r.f)
		if err != nil {
			b.Fatal(err)
		}
		feasible := feasBuf[:0] // not all's array: all is never appended to
		fnodes = fnodes[:0]
		if res.Filter == nil { // every node feasible: the batch copy
			feasible, fnodes = all[:r.f.NumNodes()], r.f.AppendNodes(fnodes)
		} else {
			for j, ni := range r.f.Nodes() { // the index order, as Node(j)
				if reasons = res.Filter.Filter(ni, reasons[:0]); len(reasons) == 0 {
					feasible, fnodes = append(feasible, j), append(fnodes, ni)
				}
			}
		}
		scores := scoreBuf[:len(fnodes)]
		clear(scores)
		ps, err := r.sc.Prepare(pi, r.f)
		if err != nil {
			b.Fatal(err)
		}
		if ps != nil {
			ps.Score(fnodes, scores)
			if err := ps.(score.Normalizer).Normalize(fnodes, scores); err != nil {
				b.Fatal(err)
			}
		}
		choice := best(feasible, scores)
		if choice < 0 {
			b.Fatalf("schedkit: pod %d fits no node", i)
		}
		if err := r.f.AddPodInfo(pi, r.f.Node(choice).Name()); err != nil {
			b.Fatal(err)
		}
		choices = append(choices, choice)
	}
	return choices
}
