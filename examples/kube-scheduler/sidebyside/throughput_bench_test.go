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
// fake clientset, bindings included) and with schedkit's custom loop
// (default filters and profile, ledger holds and confirms). One op is one
// whole run; run with -benchtime 1x.
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
		var upWall, upCPU float64
		b.Run(fmt.Sprintf("impl=upstream/%s/nodes=%d/pods=%d", tc.name, throughputNodes, tc.pods), func(b *testing.B) {
			upWall, upCPU = runUpstream(b, tc.pods, func() (*config.KubeSchedulerConfiguration, frameworkruntime.Registry) {
				return defaultConfig(b, tc.pct), inprocess.Registry()
			})
			upstreamPodsPerSec[key] = upWall
		})
		b.Run(fmt.Sprintf("impl=upstream+schedkit-plugins/%s/nodes=%d/pods=%d", tc.name, throughputNodes, tc.pods), func(b *testing.B) {
			wall, cpu := runUpstream(b, tc.pods, func() (*config.KubeSchedulerConfiguration, frameworkruntime.Registry) {
				return withPlugins(b, tc.pct)
			})
			// The same scheduler with two plugins swapped: the CPU-time
			// ratio is the steadier one on a shared machine.
			if upWall > 0 && upCPU > 0 {
				b.ReportMetric(wall/upWall, "x-upstream")
				b.ReportMetric(cpu/upCPU, "x-upstream-cpu")
			}
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
// the last binding of pods pods on throughputNodes nodes.
// It returns pods per wall-clock second and pods per CPU second of the
// whole process (the scheduler's goroutines, the fake clientset and the
// garbage collector) over the same span.
func runUpstream(b *testing.B, pods int, setup func() (*config.KubeSchedulerConfiguration, frameworkruntime.Registry)) (wall, cpu float64) {
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
	return wall, cpu
}
