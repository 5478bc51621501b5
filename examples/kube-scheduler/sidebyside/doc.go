// Package sidebyside holds the side-by-side benchmarks of schedkit against
// upstream kube-scheduler v1.37.2, in one binary on the same inputs:
//
//   - BenchmarkScorePerNode: the per-node cost of LeastAllocated +
//     BalancedAllocation, upstream's plugins (Score on its NodeInfos, PreScore
//     once per pod) against schedkit's score.Profile and against schedkit
//     through the kube-scheduler adapter; metrics ns/node and allocs/node.
//   - BenchmarkThroughput: pods per second of the real upstream scheduler
//     in-process (fake clientset, default profile), of the same scheduler
//     with NodeResourcesFit and BalancedAllocation replaced by schedkit's
//     through the adapters, and of schedkit's custom loop (framework.Loop
//     over a reserve.Ledger), on the same nodes and pods; metric pods/s.
//
// Run: go test -run '^$' -bench . -benchtime 1x ./sidebyside (throughput)
// or -bench ScorePerNode -benchtime 20x.
package sidebyside
