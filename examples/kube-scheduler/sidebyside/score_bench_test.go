package sidebyside

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"

	"github.com/schedkit/schedkit/examples/kube-scheduler/parity"
	"github.com/schedkit/schedkit/framework/kubescheduler"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

var sizes = []int{1000, 5000, 15000}

// upstreamNsPerNode holds, per node count, upstream's ns/node (wall
// clock and process CPU time) from the last run of its sub-benchmark, so
// that the schedkit and adapter sub-benchmarks that follow in the same
// binary report their speed-up.
var upstreamNsPerNode = map[int][2]float64{}

// perNode reports the cost of one iteration (a pod scored on every node)
// per node: ns/node (wall clock), cpu-ns/node (process CPU time, all
// threads: the garbage collector's work counts; the steadier figure on a
// shared machine) and allocs/node; it returns both ns/node.
func perNode(b *testing.B, n int, iter func()) [2]float64 {
	b.Helper()
	wall, cpu, allocs := timeLoop(b, iter)
	ns := [2]float64{wall / float64(n), cpu / float64(n)}
	b.ReportMetric(ns[0], "ns/node")
	b.ReportMetric(ns[1], "cpu-ns/node")
	b.ReportMetric(allocs/float64(n), "allocs/node")
	return ns
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportSpeedup reports upstream's ns/node over ours (x-upstream: 30
// means 30 times faster; x-upstream-cpu the same in CPU time) when
// upstream's sub-benchmark ran first.
func reportSpeedup(b *testing.B, n int, ns [2]float64) {
	if up, ok := upstreamNsPerNode[n]; ok && ns[0] > 0 && ns[1] > 0 {
		b.ReportMetric(up[0]/ns[0], "x-upstream")
		b.ReportMetric(up[1]/ns[1], "x-upstream-cpu")
	}
}

// BenchmarkScorePerNode scores one pod on every node of the same snapshot
// with LeastAllocated + BalancedAllocation (upstream's default resource
// scorers), per-pod preparation included on every side.
func BenchmarkScorePerNode(b *testing.B) {
	ctx := context.Background()
	for _, n := range sizes {
		nodes, bound, pod := scoreInputs(n)
		u, err := parity.NewUpstream(ctx)
		require.NoError(b, err)
		u.Load(nodes, bound)
		// Every side scores the nodes in the order of upstream's own
		// node list (the cycle's candidates come in that order, rotated),
		// the adapter's mirror synced from the same list.
		infos, err := u.Handle().SnapshotSharedLister().NodeInfos().List()
		require.NoError(b, err)

		b.Run(fmt.Sprintf("impl=upstream/nodes=%d", n), func(b *testing.B) {
			fit := u.MustPlugin(ctx, names.NodeResourcesFit, nil)
			ba := u.MustPlugin(ctx, names.NodeResourcesBalancedAllocation, nil)
			plugins := []fwk.Plugin{fit, ba}
			upstreamNsPerNode[n] = perNode(b, n, func() {
				state := framework.NewCycleState()
				for _, pl := range plugins {
					if st := pl.(fwk.PreScorePlugin).PreScore(ctx, state, pod, infos); !st.IsSuccess() {
						b.Fatal(st.AsError())
					}
				}
				for _, ni := range infos {
					for _, pl := range plugins {
						if _, st := pl.(fwk.ScorePlugin).Score(ctx, state, pod, ni); !st.IsSuccess() {
							b.Fatal(st.AsError())
						}
					}
				}
			})
		})

		b.Run(fmt.Sprintf("impl=schedkit/nodes=%d", n), func(b *testing.B) {
			cache := snapshot.NewCache()
			for _, nd := range nodes {
				require.NoError(b, cache.AddNode(nd))
			}
			for _, p := range bound {
				require.NoError(b, cache.AddPod(p))
			}
			snap := cache.Snapshot()
			ours := make([]*snapshot.NodeInfo, 0, n)
			for _, ni := range snap.Nodes() {
				ours = append(ours, ni)
			}
			profile := score.MustProfile(
				score.Weighted{Scorer: must(score.NewLeastAllocated()), Weight: 1},
				score.Weighted{Scorer: must(score.NewBalancedAllocation()), Weight: 1})
			totals := make([]int64, n)
			reportSpeedup(b, n, perNode(b, n, func() {
				pi, err := snapshot.NewPodInfo(pod)
				if err != nil {
					b.Fatal(err)
				}
				if err := profile.Score(pi, snap, ours, totals); err != nil {
					b.Fatal(err)
				}
			}))
		})

		// schedkit's scorers inside the upstream framework: PreScore
		// (mirror check of every node, one batch pass) + Score per node
		// on upstream's own NodeInfos.
		b.Run(fmt.Sprintf("impl=adapter/nodes=%d", n), func(b *testing.B) {
			h := u.Handle()
			plugins := []*kubescheduler.ScorePlugin{
				kubescheduler.WrapScorer("LA", must(score.NewLeastAllocated()), h),
				kubescheduler.WrapScorer("BA", must(score.NewBalancedAllocation()), h),
			}
			// Steady state: the mirror already holds the cluster (a running
			// scheduler pays the build once, then one node per cycle).
			for _, pl := range plugins {
				require.True(b, pl.PreScore(ctx, framework.NewCycleState(), pod, infos).IsSuccess())
			}
			reportSpeedup(b, n, perNode(b, n, func() {
				state := framework.NewCycleState()
				for _, pl := range plugins {
					if st := pl.PreScore(ctx, state, pod, infos); !st.IsSuccess() {
						b.Fatal(st.AsError())
					}
				}
				for _, ni := range infos {
					for _, pl := range plugins {
						if _, st := pl.Score(ctx, state, pod, ni); !st.IsSuccess() {
							b.Fatal(st.AsError())
						}
					}
				}
			}))
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
