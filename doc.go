// Package schedkit is a library of Kubernetes scheduling primitives that
// need no cluster: node snapshots, pluggable scorers and a reservation
// ledger, with the same integer answers as kube-scheduler v1.37 and a small
// API.
//
// The pieces fit together like this (the package Example runs it):
//
//	ledger := reserve.New()                              // fed the informer's node and pod events
//	_ = ledger.AddNode(node)                             // it keeps the cluster state
//	sched, _ := framework.New(framework.Config{Seed: 1}) // upstream's filters and score.DefaultProfile
//	d, _ := sched.Schedule(ledger, snapshot.MustPodInfo(pod))
//	// d.Node is held in the ledger: bind, then ledger.Confirm(key), or
//	// ledger.Unreserve(key) if the bind fails. An unschedulable pod has
//	// d.Diagnosis with upstream's message.
//
// The packages:
//
//   - [github.com/schedkit/schedkit/snapshot]: resource vectors,
//     upstream-exact pod requests, NodeInfo, immutable Snapshots, an
//     event-fed Cache, copy-on-write Forks, GPU devices as counted data
//     (the snapshot charges the devices a pod records and chooses none).
//   - [github.com/schedkit/schedkit/score]: the Scorer interface, weighted
//     Profiles with Explain, upstream's scorers (LeastAllocated,
//     MostAllocated, RequestedToCapacityRatio, BalancedAllocation,
//     ImageLocality, TaintToleration, NodeAffinity) and others.
//   - [github.com/schedkit/schedkit/reserve]: the reservation ledger (assumed
//     pods, gangs, named reservations, journal).
//   - [github.com/schedkit/schedkit/framework]: upstream-exact filters, the
//     scheduling cycle and a loop for custom schedulers and simulators.
//   - [github.com/schedkit/schedkit/gpushare]: GPU sharing, above snapshot
//     and score — device arithmetic, the FGD fragmentation measure and its
//     baselines, as scorers and device choosers.
//   - module github.com/schedkit/schedkit/framework/kubescheduler: adapters
//     that plug these into the upstream kube-scheduler framework.
//
// Imports run one way, each package importing only those below it:
// snapshot (cluster state; no schedkit package but internal ones), then
// snapshot/load (reading objects for it), then score and reserve, then
// gpushare (GPU sharing, above snapshot and score), then framework, then
// replay and whatif. What the packages share for speed
// — the node layout, block versions, prepared profiles — lives under
// internal/, so changing it changes no API. TestLayering checks the
// graph; each package doc states its layer.
//
// See the README for the two commands a newcomer runs.
package schedkit
