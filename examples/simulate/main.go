// Command simulate replays a cluster workload through schedkit: a cluster
// and a stream of pods go in; placements, utilisation, unschedulable pods
// and their reasons, and the cost of getting there come out, for one or
// several scheduling policies side by side.
//
// Inputs (one of):
//
//   - nothing: a seeded synthetic cluster shaped like a production GPU
//     cluster (1,500 nodes of a few shapes, CPU-only and 2/4/8-GPU;
//     8,000 pods mixing CPU-only, whole-GPU and fractional-GPU requests);
//   - -trace DIR, or -nodes FILE -pods FILE: the Alibaba openb GPU trace
//     (cluster-trace-gpu-v2023 CSVs), arrivals in creation_time order,
//     optionally shuffled (-shuffle), inflated (-inflate) and with
//     departures (-departures);
//   - -objects PATH...: Kubernetes Nodes and Pods in YAML or JSON; pods
//     with spec.nodeName are bound first, the others are scheduled.
//     Workloads are expanded as their controllers would expand them
//     (snapshot/load Options.ExpandWorkloads): an apps/v1 Deployment
//     without its ReplicaSet in the input becomes one, and a ReplicaSet,
//     StatefulSet or ReplicationController with fewer active pods in the
//     input than its spec.replicas gets the missing ones as pending pods
//     (a Deployment scaled in the input scales its current ReplicaSet
//     first), so a manifest from a git
//     repository ("what if I apply this?") schedules; the report says
//     how many workloads were expanded into how many pods. Namespaces,
//     Services, ReplicationControllers, ReplicaSets, StatefulSets,
//     PriorityClasses and PodDisruptionBudgets in the input reach the
//     scheduler's ledger, so the default policy spreads a
//     Deployment's pods as kube-scheduler's system default spreading does;
//     the report then gives each policy's workload skew per topology key
//     (hostname, zone), in the table and in -o json: per workload (the
//     pods of one controller, or of one Service), the most pods in one
//     domain minus the fewest, over the domains PodTopologySpread would
//     count for it — nodes with the key that pass its nodeSelector and
//     required node affinity (nodeAffinityPolicy Honor, the default) and,
//     where its own constraint for the key says nodeTaintsPolicy: Honor,
//     whose taints it tolerates.
//
// Every policy (-policy) is a score.Profile over the same filters
// (framework.DefaultFilters plus framework.GPUDevices), replayed by
// package replay (github.com/schedkit/schedkit/replay): pod by pod
// through a framework.Loop over a reserve.Ledger, a bind reporting the
// pod bound, with its GPU devices, as an informer would. A program of
// your own calls replay.Run with its own filters and scorers on the same
// inputs and gets the same numbers; this command adds the input readers,
// policies, tie-break rule, averaging over seeds, table, JSON and plots. The GPU policies are
// the FGD paper's (package gpushare, through gpushare.NewScorer). Run with -h
// for the flags.
//
// Usage:
//
//	go run ./examples/simulate
//	go run ./examples/simulate -trace ../shared/data/alibaba-clusterdata-gpu-v2023 -policy default,binpack,fgd
package main

import "os"

func main() {
	if isWhatif(os.Args[1:]) { // -fit, -scale-up, -drain: whatif.go
		os.Exit(runWhatif(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
