// Package scoring is score's private face for framework: the per-pod
// prepared profile the equivalence cache scores nodes with in parts, and
// the node-local promise filters and scorers make — what framework needs
// of score beyond its API, kept out of it so that it can change freely.
//
// Layer: above snapshot, below score. scoring imports snapshot only;
// score implements it (and sets [Prepare] in its init), framework uses
// it.
package scoring

import "github.com/schedkit/schedkit/snapshot"

// NodeLocal is implemented by a filter or scorer whose results may be
// cached per node and shared between pods with the same spec — what
// framework's equivalence cache needs (the idea of Borg's equivalence
// classes and score caching: Verma et al., "Large-scale cluster
// management at Google with Borg", EuroSys 2015, §3.4). NodeLocal()
// returns true to promise:
//
//   - for two pods with equal specs — the v1.PodSpec, the requests
//     snapshot.PodInfo derives (which for a pod resized in place also
//     depend on its status) and the GPU request it parses from
//     annotations — a scorer's Prepare returns scorers that give every
//     node the same raw scores, and a filter's PreFilter gives the same
//     result and the prepared filters every node the same verdict;
//   - a node's raw score or verdict depends only on those, that node's
//     NodeInfo, and cluster-wide data that changes only with the node set
//     (layout.View.NodeSetVersion: NumNodes, ImageNumNodes) — not on
//     other nodes' pods, the pod's name, namespace, labels, other
//     annotations or other status fields, a clock or a random source;
//   - a scorer's Normalize depends only on the nodes and raw scores it is
//     given.
//
// The built-in filters and scorers are node-local (score and framework
// know their own types, so they carry no method); a custom one opts in
// with this method. A type that embeds a built-in does not inherit the
// promise.
type NodeLocal interface {
	NodeLocal() bool
}

// PodNodeLocal is implemented by a filter or scorer that is not
// node-local in general (its results depend on other nodes' pods) but
// does nothing at all for some pods: NodeLocalFor(pod, cluster) returns
// true only if, for pod over cluster (a score.Cluster), the filter's
// PreFilter returns no filter and rejects nothing, or the scorer's
// Prepare returns nil — whatever other pods of the pod's equivalence
// class (equal specs, see [NodeLocal]) it then serves from the cache also
// get nothing from it, because each is checked the same way before the
// cache is read. PodTopologySpread is one: a pod without topology spread
// constraints that no Service, ReplicationController, ReplicaSet or
// StatefulSet selects is not spread. The check must be cheap (it runs
// once per pod before the cache).
type PodNodeLocal interface {
	NodeLocalFor(pod *snapshot.PodInfo, cluster any) bool
}

// IsNodeLocal reports whether x implements [NodeLocal] and returns true.
func IsNodeLocal(x any) bool {
	nl, ok := x.(NodeLocal)
	return ok && nl.NodeLocal()
}

// PodProfile is a score.Profile prepared for one pod: every scorer's
// PodScorer, made once, and the pieces score.Profile.Score is made of,
// for callers that score the candidates in parts and keep per-node
// results between pods — framework's equivalence cache. A node's total is
//
//	AddPlain's sum (final scores of the non-normalising scorers, weighted)
//	+ Σ over normalising scorers k of AddNormalized's weighted share,
//
// where AddPlain's share of a node depends on that node alone, and each
// normalising scorer's Raw score of a node on that node alone, but its
// normalisation on all candidates' raw scores.
//
// A PodProfile is not safe for concurrent use, except that Raw may run
// concurrently on disjoint nodes (AddPlain and AddPlainPart write to one
// scratch buffer of the PodProfile, so they may not).
type PodProfile interface {
	// NumNormalizing is the number of prepared scorers that normalise
	// (not counting those that skipped the pod); they are numbered 0.. in
	// profile order for Raw and AddNormalized.
	NumNormalizing() int
	// Raw writes normalising scorer k's raw score of nodes[i] to raw[i];
	// len(raw) >= len(nodes). O(len(nodes)) with the scorer's per-node
	// cost.
	Raw(k int, nodes []*snapshot.NodeInfo, raw []int64)
	// AddNormalized normalises scorer k's raw scores of all candidates
	// (raw[i] of nodes[i]; rewritten in place), checks they are in
	// [score.MinScore, score.MaxScore] and adds weight × score to
	// totals[i]. Errors: the scorer's Normalize error, or one wrapping
	// score.ErrScoreOutOfRange naming scorer, node and score.
	// O(len(nodes)).
	AddNormalized(k int, nodes []*snapshot.NodeInfo, raw, totals []int64) error
	// NormalizesByMax reports whether normalising scorer k's Normalize
	// is score.DefaultNormalize, so that a node's normalised score depends
	// only on its raw score and the largest raw score among all
	// candidates (0 if none is larger): AddNormalizedByMax may then
	// normalise any subset of the candidates. O(1).
	NormalizesByMax(k int) bool
	// AddNormalizedByMax is AddNormalized for a scorer k that
	// NormalizesByMax, over some of the candidates (nodes, their raw
	// scores raw, rewritten in place), with maxRaw the largest raw score
	// among all of them: each node gets exactly the weighted share
	// AddNormalized over all candidates gives it. Panics if k does not
	// NormalizesByMax. Errors: as AddNormalized's range check. O(len(nodes)).
	AddNormalizedByMax(k int, nodes []*snapshot.NodeInfo, raw, totals []int64, maxRaw int64) error
	// AddPlain adds to totals[i] the weighted final scores of nodes[i]
	// from every non-normalising scorer, checking each is in range (else
	// an error wrapping score.ErrScoreOutOfRange naming scorer, node and
	// score). The nodes are scored in chunks of 128, every scorer in
	// turn, so a chunk stays in cache; a LeastAllocated and
	// BalancedAllocation pair is scored in one pass. Allocates nothing.
	AddPlain(nodes []*snapshot.NodeInfo, totals []int64) error
	// Split reports whether every prepared scorer is a built-in whose
	// scores of a node depend, besides the pod, either on the node object
	// alone (not on its pods: ImageLocality, TaintToleration,
	// NodeAffinity) or on the pod's requests and the node's allocatable
	// and requested amounts alone (LeastAllocated, MostAllocated,
	// RequestedToCapacityRatio, BalancedAllocation), with every
	// normalising scorer of the first kind — so that pods with equal
	// requests share the second part (framework's shared request shapes).
	// O(scorers).
	Split() bool
	// AddPlainPart is AddPlain restricted to the non-normalising scorers
	// of one part of a Split profile: the request-only ones if requests,
	// else the node-object ones. Same checks, errors and cost.
	AddPlainPart(nodes []*snapshot.NodeInfo, totals []int64, requests bool) error
}

// The functions package score sets in its init, which runs before that of
// any package importing score; nothing changes them afterwards: they hold
// no state and couple nothing. They take any because scoring sits below
// score and cannot name its types; a profile of another type panics.
var (
	// Prepare prepares profile (a *score.Profile) for pod over cluster
	// (a score.Cluster, or nil). With local — only for a pod
	// ProfileNodeLocalFor reported true for over the same cluster — the
	// [PodNodeLocal] scorers are not asked and count as skipping the pod,
	// as they promised (their Prepare may cost O(nodes)). Errors are a
	// scorer's Prepare error, naming the scorer and pod. O(scorers);
	// allocates the PodProfile and what the scorers' Prepare allocate.
	Prepare func(profile any, pod *snapshot.PodInfo, cluster any, local bool) (PodProfile, error)
	// ScoreLocal is score.Profile.Score for a pod ProfileNodeLocalFor
	// reported true for over cluster: the [PodNodeLocal] scorers are not
	// asked (see Prepare's local). Same results, errors and cost
	// otherwise.
	ScoreLocal func(profile any, pod *snapshot.PodInfo, cluster any, nodes []*snapshot.NodeInfo, totals []int64) error
	// ProfileNodeLocal reports whether every scorer of profile (a
	// *score.Profile) is node-local: a built-in, or one implementing
	// [NodeLocal] and returning true, or a [PodNodeLocal] (checked per
	// pod with ProfileNodeLocalFor). O(scorers).
	ProfileNodeLocal func(profile any) bool
	// ProfileNodeLocalFor reports whether every [PodNodeLocal] scorer of
	// profile does nothing for pod over cluster. O(such scorers × their
	// check).
	ProfileNodeLocalFor func(profile any, pod *snapshot.PodInfo, cluster any) bool
	// IgnoresCluster reports whether scorer (a score.Scorer, or a
	// *score.Profile of such) prepares without reading its cluster and
	// scores a node from that node's NodeInfo alone: its results do not
	// depend on which other nodes the snapshot holds or on their state,
	// so a snapshot current only in the nodes scored serves (the
	// kube-scheduler adapter's lazy mirror, internal/mirror's SyncLazy).
	// Exactly the built-in resource, taint and node-affinity scorers;
	// ImageLocality (its spread counts nodes) and custom scorers are not.
	// O(1), O(scorers) for a profile.
	IgnoresCluster func(scorer any) bool
)
