package sidebyside

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/schedkit/schedkit/examples/kube-scheduler/inprocess"
	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/framework/kubescheduler"
	"github.com/schedkit/schedkit/reserve"
)

const (
	throughputNodes = 5000
	throughputPods  = 10000
	// throughputPairs: the upstream+schedkit-plugins row runs this many
	// pairs of runs (plain upstream and with schedkit's plugins, in
	// alternating order: see pairedRuns), each run a fresh cluster with
	// 1/throughputPairs of the row's pods.
	throughputPairs = 4
)

// defaultConfig is upstream's default KubeSchedulerConfiguration (one
// default-scheduler profile) with percentageOfNodesToScore pct (0:
// adaptive, 10% at 5,000 nodes).
func defaultConfig(b *testing.B, pct int32) *config.KubeSchedulerConfiguration {
	v1cfg := &configv1.KubeSchedulerConfiguration{}
	scheme.Scheme.Default(v1cfg)
	cfg := &config.KubeSchedulerConfiguration{}
	require.NoError(b, scheme.Scheme.Convert(v1cfg, cfg, nil))
	cfg.PercentageOfNodesToScore = &pct
	return cfg
}

// pluginsConfig is upstream's default profile with NodeResourcesFit
// (filter and LeastAllocated score) and BalancedAllocation replaced by
// schedkit's, through the adapters.
const pluginsConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: %d
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled: [{name: NodeResourcesFit}, {name: NodeResourcesBalancedAllocation}]
      enabled: [{name: SchedkitNodeResourcesFit}, {name: SchedkitScore, weight: 1}, {name: SchedkitBalanced, weight: 1}]
  pluginConfig:
  - name: SchedkitBalanced
    args: {scorer: BalancedAllocation}
`

func withPlugins(b *testing.B, pct int32) (*config.KubeSchedulerConfiguration, frameworkruntime.Registry) {
	path := filepath.Join(b.TempDir(), "config.yaml")
	require.NoError(b, os.WriteFile(path, []byte(fmt.Sprintf(pluginsConfig, pct)), 0o600))
	cfg, err := inprocess.LoadConfig(path)
	require.NoError(b, err)
	reg := inprocess.Registry()
	reg["SchedkitBalanced"] = kubescheduler.SchedkitScoreFactory("SchedkitBalanced")
	return cfg, reg
}

// BenchmarkThroughput: pods per second scheduling the same pods onto the
// same nodes with the real upstream scheduler in-process (default profile,
// fake clientset, bindings included), with upstream and schedkit's
// resource plugins (runs paired with plain upstream: pairedRuns) and
// with schedkit's custom loop (default filters and profile, ledger holds
// and confirms). One op is one whole run; run with -benchtime 1x.
func BenchmarkThroughput(b *testing.B) {
	for _, tc := range []struct {
		name string
		pct  int32
		pods int
	}{
		{"pct=adaptive", 0, throughputPods},
		{"pct=adaptive", 0, throughputPods / 5},
		// Scoring every node is ~7x slower upstream: fewer pods keep the
		// run under a minute; pods/s is what is compared.
		{"pct=100", 100, throughputPods / 5},
	} {
		key := fmt.Sprintf("%s/pods=%d", tc.name, tc.pods)
		b.Run(fmt.Sprintf("impl=upstream/%s/nodes=%d/pods=%d", tc.name, throughputNodes, tc.pods), func(b *testing.B) {
			upWall := runUpstream(b, tc.pods, func() (*config.KubeSchedulerConfiguration, frameworkruntime.Registry) {
				return defaultConfig(b, tc.pct), inprocess.Registry()
			})
			upstreamPodsPerSec[key] = upWall
		})
		b.Run(fmt.Sprintf("impl=upstream+schedkit-plugins/%s/nodes=%d/pods=%d", tc.name, throughputNodes, tc.pods), func(b *testing.B) {
			// The same scheduler with two plugins swapped, measured in
			// pairs of shorter runs alternating with plain upstream (see
			// pairedRuns): on a shared machine, load that comes and goes
			// hits both sides of a pair alike.
			plain := func() (*config.KubeSchedulerConfiguration, frameworkruntime.Registry) {
				return defaultConfig(b, tc.pct), inprocess.Registry()
			}
			plugins := func() (*config.KubeSchedulerConfiguration, frameworkruntime.Registry) {
				return withPlugins(b, tc.pct)
			}
			pairedRuns(b, tc.pods/throughputPairs, plain, plugins)
		})
		b.Run(fmt.Sprintf("impl=schedkit/%s/nodes=%d/pods=%d", tc.name, throughputNodes, tc.pods), func(b *testing.B) {
			var rate float64
			for b.Loop() {
				b.StopTimer()
				nodes, pods := throughputInputs(throughputNodes, tc.pods, "default-scheduler")
				ledger := reserve.New()
				for _, n := range nodes {
					require.NoError(b, ledger.AddNode(n))
				}
				s, err := framework.New(framework.Config{PercentageOfNodesToScore: tc.pct, Parallelism: 2})
				require.NoError(b, err)
				loop := framework.NewLoop(s, ledger, nil)
				for _, p := range pods {
					require.NoError(b, loop.Add(p))
				}
				b.StartTimer()
				start := time.Now()
				attempts, err := loop.ScheduleAll(context.Background())
				require.NoError(b, err)
				rate = float64(tc.pods) / time.Since(start).Seconds()
				b.StopTimer()
				require.Len(b, attempts, tc.pods)
				require.Empty(b, loop.Unschedulable())
				b.StartTimer()
			}
			b.ReportMetric(rate, "pods/s")
			if up := upstreamPodsPerSec[key]; up > 0 {
				b.ReportMetric(rate/up, "x-upstream")
			}
		})
	}
}

// upstreamPodsPerSec holds upstream's pods/s per case from the sub-benchmark
// that runs just before schedkit's in the same binary.
var upstreamPodsPerSec = map[string]float64{}

// runUpstream times the real scheduler, configured by setup, from start to
// the last binding of pods pods on throughputNodes nodes. It reports pods
// per wall-clock second and pods per CPU second of the whole process (the
// scheduler's goroutines, the fake clientset and the garbage collector)
// over the same span, and returns the former.
func runUpstream(b *testing.B, pods int, setup func() (*config.KubeSchedulerConfiguration, frameworkruntime.Registry)) float64 {
	var wall, cpu float64
	for b.Loop() {
		b.StopTimer()
		nodes, ps := throughputInputs(throughputNodes, pods, "default-scheduler")
		cl, err := inprocess.NewCluster(nodes, ps)
		require.NoError(b, err)
		cfg, reg := setup()
		ctx, cancel := context.WithCancel(context.Background())
		b.StartTimer()
		start, c0 := time.Now(), cpuTime()
		_, err = cl.Start(ctx, cfg, reg)
		require.NoError(b, err)
		require.NoError(b, cl.WaitBinds(ctx, pods, 10*time.Minute))
		wall = float64(pods) / time.Since(start).Seconds()
		cpu = float64(pods) / (cpuTime() - c0).Seconds()
		b.StopTimer()
		cancel()
		b.StartTimer()
	}
	b.ReportMetric(wall, "pods/s")
	b.ReportMetric(cpu, "pods/cpu-s")
	return wall
}

// pairedRuns times the real scheduler configured by base and by alt,
// alternately, throughputPairs times each per op (base first in pairs 0,
// 2, …, alt first in pairs 1, 3, …, so that neither always runs
// second), each run a fresh cluster scheduling pods pods. A run is timed
// in its steady state: from the binding that ends the first tenth of its
// pods (the scheduler's start, informer sync and the first cycles'
// warm-up — the mirror's first build for the plugins — left out) to the
// last binding, in wall-clock and process CPU time; so its pods/s is not
// comparable with the other rows', which include the start. It reports
// alt's pods/s and pods/cpu-s, and alt over base: x-upstream and
// x-upstream-cpu (totals over all pairs of all ops: pods per second of
// alt / of base, above 1 when alt is faster) and the lowest and highest
// pair's CPU ratio (x-upstream-cpu-min, -max).
func pairedRuns(b *testing.B, pods int, base, alt func() (*config.KubeSchedulerConfiguration, frameworkruntime.Registry)) {
	var sum [2]struct{ pods, wall, cpu float64 }
	lo, hi, pairs := 0.0, 0.0, 0
	for b.Loop() {
		for pair := range throughputPairs {
			var rate [2]float64
			for k := range 2 {
				side := k
				if pair%2 == 1 {
					side = 1 - k
				}
				setup := base
				if side == 1 {
					setup = alt
				}
				n, wall, cpu := steadyRun(b, pods, setup)
				sum[side].pods += n
				sum[side].wall += wall
				sum[side].cpu += cpu
				rate[side] = n / cpu
			}
			r := rate[1] / rate[0]
			if pairs == 0 || r < lo {
				lo = r
			}
			if pairs == 0 || r > hi {
				hi = r
			}
			pairs++
		}
	}
	b.ReportMetric(sum[1].pods/sum[1].wall, "pods/s")
	b.ReportMetric(sum[1].pods/sum[1].cpu, "pods/cpu-s")
	b.ReportMetric((sum[1].pods/sum[1].wall)/(sum[0].pods/sum[0].wall), "x-upstream")
	b.ReportMetric((sum[1].pods/sum[1].cpu)/(sum[0].pods/sum[0].cpu), "x-upstream-cpu")
	b.ReportMetric(lo, "x-upstream-cpu-min")
	b.ReportMetric(hi, "x-upstream-cpu-max")
}

// steadyRun starts the scheduler configured by setup on a fresh cluster
// of throughputNodes nodes and pods pending pods, and returns how many
// bindings it timed and their wall-clock and process CPU seconds, from
// the one that completes the first tenth of the pods to the last.
func steadyRun(b *testing.B, pods int, setup func() (*config.KubeSchedulerConfiguration, frameworkruntime.Registry)) (n, wall, cpu float64) {
	b.StopTimer()
	defer b.StartTimer()
	nodes, ps := throughputInputs(throughputNodes, pods, "default-scheduler")
	cl, err := inprocess.NewCluster(nodes, ps)
	require.NoError(b, err)
	cfg, reg := setup()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.StartTimer()
	_, err = cl.Start(ctx, cfg, reg)
	require.NoError(b, err)
	require.NoError(b, cl.WaitBinds(ctx, max(pods/10, 1), 10*time.Minute))
	n0, start, c0 := cl.Binds(), time.Now(), cpuTime()
	require.NoError(b, cl.WaitBinds(ctx, pods, 10*time.Minute))
	n, wall, cpu = float64(cl.Binds()-n0), time.Since(start).Seconds(), (cpuTime() - c0).Seconds()
	b.StopTimer()
	require.Positive(b, n, "no binding in the timed span")
	return n, wall, cpu
}
