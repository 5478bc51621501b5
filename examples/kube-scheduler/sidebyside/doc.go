// Package sidebyside holds the side-by-side benchmarks of schedkit against
// upstream kube-scheduler v1.37.2, in one binary on the same inputs. A
// ratio metric x-upstream is upstream's cost over schedkit's (or
// schedkit's rate over upstream's): above 1, schedkit is faster;
// x-upstream-cpu is the same in process CPU time (all threads, the
// garbage collector's included), the steadier figure on a shared
// machine. A schedkit sub-benchmark reports them when upstream's ran
// before it in the same process (BenchmarkThroughput's impl=schedkit
// row: x-upstream only).
//
//   - BenchmarkScorePerNode: the per-node cost of LeastAllocated +
//     BalancedAllocation, upstream's plugins (Score on its NodeInfos, PreScore
//     once per pod) against schedkit's score.Profile and against schedkit
//     through the kube-scheduler adapter; metrics ns/node, cpu-ns/node and
//     allocs/node.
//   - BenchmarkInterPodAffinity and BenchmarkPodTopologySpreadSideBySide:
//     one pending pod of each scheduler_perf shape filtered and scored on
//     every node by upstream's plugin and by schedkit's; metrics per pod.
//   - BenchmarkThroughput: pods per second of the real upstream scheduler
//     in-process (fake clientset, default profile), of the same scheduler
//     with NodeResourcesFit and BalancedAllocation replaced by schedkit's
//     through the adapters, and of schedkit's custom loop (framework.Loop
//     over a reserve.Ledger), on the same nodes and pods; metrics pods/s
//     and pods/cpu-s. The adapters' row (impl=upstream+schedkit-plugins)
//     runs 4 pairs of fresh clusters, plain upstream and with schedkit's
//     plugins alternately, each with a quarter of the row's pods, timed
//     from the binding that completes a run's first tenth to its last
//     (so its pods/s, steady-state, is not comparable with the other
//     rows', which include the scheduler's start); its x-upstream and
//     x-upstream-cpu are over the totals of the pairs, x-upstream-cpu-min
//     and -max the lowest and highest pair's, and its ns/op covers all 8
//     runs from each scheduler's start (building the clusters left out).
//
// Run one with -run '^$' -bench NAME; BenchmarkThroughput with
// -benchtime 1x (one op is a whole run), BenchmarkScorePerNode with
// -benchtime 20x.
package sidebyside
