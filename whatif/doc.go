// Package whatif answers capacity-planning questions on a what-if
// [snapshot.Fork], with the scheduler's own filters and scores
// (framework.Scheduler):
//
//   - [FitCount]: how many copies of a pod template fit, where they go,
//     and why the next one does not;
//   - [PlaceGang]: place a set of pods all-or-nothing (a minimum count:
//     the scheduler-plugins PodGroup's minMember, or upstream v1.37's
//     scheduling.k8s.io/v1beta1 PodGroup through [GangOf]), keeping or
//     reverting the fork layer as a whole;
//   - [ScaleUp]: how many nodes of which node group would place pending
//     pods, with cluster-autoscaler's binpacking-estimator semantics and
//     its expanders (least-waste, most-pods, priority, random);
//   - [Drain] and [RemovableNodes]: can a node's pods move elsewhere under
//     cluster-autoscaler's drain rules and PodDisruptionBudgets, where
//     would they go, and which subset of nodes can go, greedily.
//
// Every question opens a layer on the caller's fork and reverts it before
// returning (PlaceGang commits it when the gang is placed), so the
// caller's state is as before; every answer is deterministic for the
// seeds it is given (framework.Config.Seed, ScaleUpConfig.Seed) and
// explains itself: per pod a [Placement] with its node, or the
// scheduling cycle's framework.Diagnosis, or a sentence (a limit, a
// drain rule).
//
// # Usage
//
//	f := cache.Snapshot().Fork()
//	fit, err := whatif.FitCount(f, template, 100, framework.Config{Seed: 1})
//	// fit.Count, fit.Placements[i].Node, fit.Next.Message()
//	up, err := whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{Expander: whatif.ExpanderLeastWaste})
//	// up.Groups[up.Chosen].NodesAdded, up.Why
//	drains, err := whatif.RemovableNodes(f, candidates, pdbLister, framework.Config{})
//	// drains[i].Removable, drains[i].Block, drains[i].Moved
//
// # Differences from cluster-autoscaler
//
// The answers follow cluster-autoscaler's estimator, expanders and
// removal simulator (kubernetes/autoscaler, cluster-autoscaler/estimator,
// expander, simulator; since 2026 kubernetes-sigs/cluster-autoscaler,
// pkg/...), read for facts, none of its code copied, with
// these deliberate differences: pods are placed by the full scheduler
// (filters and scores), where it checks filters only and places
// first-fit (a framework.Config whose Profile has no scorers gives
// filter-only placement); ties in its pod order are kept in input order
// (it sorts unstably); a removed node is gone from the simulated
// cluster, where it keeps a tainted ghost of it for topology spreading's
// domains; a pod being deleted is skipped without its long-terminating
// grace check, and a kube-system pod with no PDB always blocks where it
// stops blocking an hour after the pod's creation
// (--blocking-system-pod-distruption-timeout; the package reads no
// clock); controllers are not looked up (its replica-count rule reads
// them from the API server: a missing controller, or one below
// --min-replica-count, blocks there); a pod annotated safe-to-evict
// "on-completion" is moved like any other (it waits for such pods to
// finish); the priority expander takes each group's priority as a number instead of regular expressions
// over group names; least-waste reads a template's cpu or memory from
// status.allocatable when status.capacity lacks it, rejects a template
// with neither, and counts no waste for a zero capacity (it reads
// status.capacity only and divides by zero).
//
// # Concurrency
//
// Questions on one fork must not run concurrently (a Fork is not safe for
// concurrent use); questions on different forks may. The package keeps no
// state between calls, reads no clock (ScaleUpConfig.Now is the
// caller's), logs nothing and does no I/O.
//
// # Cost
//
// A question costs its scheduling cycles (see framework's package doc):
// FitCount limit+1 at most, PlaceGang one per member, ScaleUp one per
// pending pod over the existing nodes and, per group, one per pending pod
// over the nodes added, Drain one per pod to move. Layers cost what
// snapshot.Fork says (O(1) to open, O(copies) to revert). See the
// package's benchmarks for figures.
//
// # Layer
//
// whatif sits above framework (beside replay, at the top of the layers
// package schedkit's doc lists): it imports snapshot and framework; nothing in the core module
// imports it. The root package's TestLayering checks this.
package whatif
