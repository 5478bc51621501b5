// Package score ranks nodes for a pod: the [Scorer] interface a user
// implements, weighted [Profile]s with upstream kube-scheduler's rules,
// explanations, and built-in scorers whose integer results equal
// kube-scheduler v1.37's.
//
// It works on [snapshot] values only: no cluster, no framework, no I/O.
//
// # Usage
//
// A [Scorer] has a name and a Prepare step that does the per-pod work once
// (parse requests, tolerations, affinity, image names) and returns a
// [PodScorer], which scores a batch of candidate nodes into a caller-owned
// slice:
//
//	prof := score.DefaultProfile()            // or score.NewProfile(score.Weighted{...}, ...)
//	totals := make([]int64, len(candidates))  // reused across pods
//	err := prof.Score(pod, snap, candidates, totals)
//	e, _ := prof.Explain(pod, snap, candidates, best) // "why did it go there?"
//	fmt.Print(e)
//
// Optional abilities are separate interfaces a PodScorer may implement:
// [Normalizer] (rescale over all candidates, upstream's NormalizeScore) and
// [Explainer] (a per-node account for [Profile.Explain]). [PerNode] turns a
// plain func(pod, node) int64 into a Scorer for quick experiments.
//
// Built-in scorers, with upstream's plugin names and exact integer
// results: [NewLeastAllocated], [NewMostAllocated], [NewRequestedToCapacityRatio]
// (NodeResourcesFit's strategies), [NewBalancedAllocation], [NewImageLocality],
// [NewTaintToleration], [NewNodeAffinity], [NewPodTopologySpread] and
// [NewInterPodAffinity] (both not node-local; system default spreading
// from the cluster's objects); [DefaultProfile] combines them with
// upstream's default weights and order: upstream's default profile except
// the volume and DRA plugins. Beyond upstream, with the same interface:
// [NewBinPack] (Volcano's binpack), [NewDominantResource] (DRF-style share
// balance) and [NewTetris] (Tetris alignment).
//
// # Concurrency
//
// Profiles and the built-in scorers are immutable after construction and
// safe for concurrent use; a PodScorer may score disjoint node batches
// concurrently. User scorers must keep the same promises.
//
// # Cost
//
// Scoring one pod against N nodes is O(scorers) Prepare calls plus one
// tight loop per scorer over the batch: no interface call, map look-up or
// allocation per node (ImageLocality and NodeAffinity look up the node's
// image and label maps, which are maps in the API), float arithmetic only
// where upstream uses it. [Profile.Score] walks the nodes in chunks of 128
// so each chunk stays in cache across scorers, allocates per pod only (the
// scorers' Prepare), and pools its scratch. For a Snapshot or Fork, the
// LeastAllocated + BalancedAllocation pair reads a contiguous array of
// per-node records (the nodes' cpu and memory figures) that the pooled
// scratch keeps and revalidates by the cluster's 64-node block versions,
// so a scan of a large cluster streams one array instead of one cache
// line per NodeInfo. With unit weights on amd64 processors with AVX2,
// that loop scores four nodes per iteration in vector registers; other
// processors, and any chunk of 128 nodes holding a node of 2^45
// milli-CPU or bytes or more, take a loop of one node at a time. Both give upstream's integer results bit for
// bit: the vector loop's float64 arithmetic is exact on such nodes, and
// the other turns LeastAllocated's integer division into a
// multiplication by a reciprocal with an exact correction.
//
// # Deliberate differences from upstream
//
// Where upstream's int64 arithmetic overflows (amounts near MaxInt64,
// weight × score products) this package saturates or widens to 128 bits
// and stays in range; ImageLocality with an empty cluster view counts no
// image instead of dividing by zero. Everything else matches upstream
// v1.37.2 bit for bit, including its quirks (NodeResourcesFit scoring
// ignores pod-level requests; see [NewLeastAllocated]).
//
// # Layer
//
// Above snapshot: score imports snapshot and internal packages
// (internal/arith, internal/layout, internal/nodeview, internal/scoring),
// never reserve, gpushare or framework. framework's equivalence cache
// reaches a profile prepared for one pod, and the node-local promise,
// through internal/scoring, not this API. The layers are those package
// schedkit's doc lists (the repository root's doc.go), checked by its
// TestLayering.
package score
