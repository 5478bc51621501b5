// Package framework is the custom-loop side of schedkit: upstream
// kube-scheduler's filter plugins with identical verdicts, the scheduling
// cycle (filter → score → select → reserve) and a small queue-and-bind
// loop, so that a scheduler or a simulator fits in a page of code.
//
// The pieces, in the order a cycle uses them:
//
//   - [Filter]s (upstream v1.37 semantics and reason strings):
//     [NewNodeName], [NewNodeUnschedulable], [NewTaintToleration],
//     [NewNodeAffinity], [NewNodePorts], [NewNodeResourcesFit],
//     [NewPodTopologySpread], [NewInterPodAffinity]; [DefaultFilters] lists
//     them in upstream's order: upstream's default profile except the
//     volume and DRA filters. PodTopologySpread is a
//     [ClusterFilter]: its preparation counts pods per topology domain
//     over the cycle's cluster, whose objects (a snapshot of a Cache or
//     reserve.Ledger fed Services, ReplicaSets, ...) give the system
//     defaults' selector; so is InterPodAffinity.
//     A Filter's PreFilter does the per-pod work once and
//     returns a [PodFilter] that checks one node without allocating, and
//     may narrow the candidates to named nodes (upstream's
//     PreFilterResult).
//   - [Reason]s are values (code, resource, requested/used/capacity, the
//     taint); a [Diagnosis] aggregates them into upstream's message,
//     "0/5000 nodes are available: 4200 Insufficient cpu, 800 node(s) had
//     untolerated taint(s)." An empty candidate set (affinity naming a
//     node that does not exist, an empty cluster) is a Diagnosis too.
//   - [Scheduler] runs one cycle: PreFilter, filter from a rotating start
//     until enough nodes fit ([Config.PercentageOfNodesToScore]:
//     adaptive, fixed or 100), score with a score.Profile, pick the best
//     total with seeded tie-breaking, and with [Scheduler.Schedule] hold
//     the node in a reserve.Ledger (filtering the ledger's view for the
//     pod, reserve.Ledger.SnapshotFor, and trying the nodes of a
//     reservation owner's reservations first). The result is a [Decision].
//   - The equivalence cache: pods with equal specs and requests (a
//     Deployment's replicas) get the same verdicts and raw scores on a
//     node in a given state, so a Scheduler keeps them per pod class and
//     per node and, for the next pod of the class, filters and scores
//     again only the nodes that changed (snapshot block versions say
//     which), as Borg does with equivalence classes and score caching. It
//     changes no decision, and is used when no PreFilter narrows the
//     candidates and every filter and scorer is node-local. The built-ins
//     are (but score.RandomGPU and score.PerNode's scorers); a custom
//     filter or scorer is when it has a method NodeLocal() bool that
//     returns true, a promise that for two pods with equal specs (the
//     v1.PodSpec, the requests snapshot.PodInfo derives, the GPU request
//     it parses) it gives every node the same verdict or raw score, which
//     depends only on those, that node's NodeInfo and data that changes
//     only with the node set (NumNodes, ImageNumNodes) — not on other
//     nodes, the pod's name, namespace, labels, other annotations, a
//     clock or a random source — and that a Normalize depends only on the
//     nodes and raw scores it is given. A type embedding a built-in does
//     not inherit the promise. Config.EquivalenceClasses sizes or
//     disables the cache; [Scheduler.EquivalenceStats] says how it is
//     used.
//   - [Loop] adds a priority queue (upstream's PrioritySort), the caller's
//     bind, ledger.Confirm on success and Unreserve plus requeue on
//     failure.
//
// # Usage
//
//	ledger := reserve.New()                  // feed it AddNode/AddPod events
//	sched, err := framework.New(framework.Config{Seed: 1})
//	loop := framework.NewLoop(sched, ledger, bind)
//	loop.Add(pod)
//	attempts, err := loop.ScheduleAll(ctx)   // a.Node, a.Total, a.Diagnosis
//
// Or, in a simulator, one cycle at a time on a what-if fork:
//
//	f := snap.Fork() // snap is a *snapshot.Snapshot
//	d, err := sched.SchedulePod(f, podInfo)
//	if d.Scheduled() {
//		err = f.AddPodInfo(d.Pod, d.Node) // d.Pod records GPU devices
//	}
//
// examples/customloop is a complete program.
//
// # Concurrency
//
// Filters, prepared PodFilters and Diagnoses are safe for concurrent use.
// A Scheduler and a Loop are not: each keeps a start index, a seeded random
// source and scratch buffers; use one per goroutine. With
// Config.Parallelism > 1 a cycle filters on that many goroutines that all
// end before it returns, and decides exactly as a sequential cycle does.
// The package reads no clock, logs nothing and does no I/O.
//
// # Cost
//
// Per pod: O(filters + scorers) preparation with a few small allocations,
// then O(filtered nodes) filter checks and O(feasible nodes) scoring, both
// allocation-free per node; scratch is reused between cycles. An
// unschedulable pod additionally allocates its Diagnosis: O(kinds of
// reasons), nothing per filtered node (Config.NodeReasons keeps every
// node's reasons, one Reason per filtered node). The cost per node is that of reading the node's
// NodeInfo. With the equivalence cache, a pod whose class is cached costs
// O(changed nodes) filter and score work plus O(nodes) cheap passes
// (gather the cached results, normalise, select): about 35 µs at 5,000
// nodes, and 8 + 8 × (normalising scorers) bytes per node and class. See
// BenchmarkSchedule for figures.
//
// # Layer
//
// framework composes the packages below it: it imports snapshot, score,
// gpushare, reserve and internal packages; replay and the adapters sit
// above it. The layers are those package schedkit's doc lists (the
// repository root's doc.go), checked by its TestLayering.
package framework
