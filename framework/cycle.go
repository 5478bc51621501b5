package framework

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/scoring"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// The scheduling cycle. schedulePod runs PreFilter, narrows the
// candidates, takes the equivalence cache's path when it applies
// (equivalence.go), filters (filter fusion: fused.go; parallel chunks:
// chunks.go), scores, and picks the host (host.go). Schedule adds the
// ledger's view and Reserve.

// Scheduler runs scheduling cycles: for one pod it prepares every filter
// once, filters nodes (starting where the previous cycle stopped, as
// upstream's nextStartNodeIndex, and stopping after
// numFeasibleNodesToFind ([Config.PercentageOfNodesToScore]) feasible nodes), scores them with the profile,
// and picks the highest total, breaking ties uniformly at random from the
// seeded source.
//
// A Scheduler keeps that start index, the random source, scratch
// buffers and its equivalence cache between cycles, so decisions depend
// on the sequence of pods it has scheduled (never on the cache); it is not
// safe for concurrent use (use one per goroutine). With Parallelism > 1 a
// cycle filters on that many goroutines, all joined before it returns;
// decisions are the same as sequential.
type Scheduler struct {
	filters    []Filter
	profile    *score.Profile
	hasScoring bool
	percentage int32
	workers    int
	breakdown  bool
	// nodeReasons: Config.NodeReasons, keep every rejected node's
	// reasons for the Diagnosis.
	nodeReasons bool
	devices     snapshot.DeviceChooser // see deviceChooser
	rng         *rand.Rand
	// nodeLocal: every filter and scorer is NodeLocal (and the cache is
	// on): pod classes may be cached.
	nodeLocal bool
	// condLocal: the filters that are node-local only for some pods
	// (scoring.PodNodeLocal), checked per pod with the profile's before
	// the cache is read.
	condLocal []scoring.PodNodeLocal
	// condFilter[i]: s.filters[i] is one of condLocal, whose PreFilter a
	// pod localFor reports true for need not run (it promised nothing).
	condFilter []bool
	classes    classCache
	nominated  nominations // pods nominated to nodes (nominated.go)

	next     int           // upstream nextStartNodeIndex
	narrowed bool          // this cycle's candidates are s.cands
	view     nodeview.View // the cycle's cluster's, if it is a Snapshot or Fork

	// per-cycle scratch
	pfs      []PodFilter
	pfNames  []string // "" for a fusedFilter (see fuse)
	fused    []fusedFilter
	cands    []*snapshot.NodeInfo
	feasible []*snapshot.NodeInfo
	totals   []int64
	ws       []worker
	chunks   []chunkResult
	tally    []ReasonCount // diagnose's merge of the workers' tallies
	order    [][3]int32    // diagnose's (first position, worker, entry)
	run      runState
}

// New returns a Scheduler for cfg after [Config.Validate].
func New(cfg Config) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Scheduler{
		filters:     cfg.Filters,
		profile:     cfg.Profile,
		percentage:  cfg.PercentageOfNodesToScore,
		workers:     max(cfg.Parallelism, 1),
		breakdown:   cfg.Breakdown,
		nodeReasons: cfg.NodeReasons,
		rng:         rand.New(rand.NewPCG(cfg.Seed, 0x5c4ed417)),
	}
	if s.filters == nil {
		s.filters = DefaultFilters()
	}
	if s.profile == nil {
		s.profile = score.DefaultProfile()
	}
	s.hasScoring = len(s.profile.Scorers()) > 0
	s.devices = deviceChooser(s.profile, cfg.DeviceChooser)
	s.ws = make([]worker, s.workers)
	s.classes.fixed = cfg.EquivalenceClasses
	s.classes.seed = maphash.MakeSeed()
	s.nodeLocal = s.classes.fixed >= 0 && s.hasScoring
	s.condFilter = make([]bool, len(s.filters))
	for i, f := range s.filters {
		if isNodeLocal(f) {
			continue
		}
		if c, ok := f.(scoring.PodNodeLocal); ok {
			s.condLocal = append(s.condLocal, c)
			s.condFilter[i] = true
			continue
		}
		s.nodeLocal = false
	}
	if !scoring.ProfileNodeLocal(s.profile) {
		s.nodeLocal = false
	}
	return s, nil
}

// SchedulePod runs one scheduling cycle for pod against cluster (a
// [snapshot.Snapshot], a [snapshot.Fork], or a ledger's snapshot with its
// holds: for a pod that may own named reservations, the one
// reserve.Ledger.SnapshotFor returns, or the reservations leave it no
// room) and returns the decision. It reserves nothing; see
// [Scheduler.Schedule]. A pod that fits no node is a Decision with a
// Diagnosis, not an error; errors are a filter's PreFilter or the
// profile failing (wrapped, naming the plugin and pod).
//
// Cost: O(filters + scorers) per-pod preparation, then O(filtered nodes ×
// per-node filter cost) and O(feasible nodes × per-node score cost); the
// per-node work allocates nothing; scratch is reused between calls. When
// the equivalence cache applies (see Config.EquivalenceClasses) and the
// pod's class is cached: O(spec size) to encode the pod's spec, filter and
// score work only for the nodes that changed since the class last saw
// them, and O(nodes) passes over cached int64s; the first pod of a class
// costs a full cycle. Filters and scorers that are node-local only for
// some pods (internal/scoring's PodNodeLocal: PodTopologySpread,
// InterPodAffinity) are not prepared for a pod they report doing nothing
// for, so their O(nodes) preparation is not paid.
//
// Differences from upstream, none of which changes which nodes are
// feasible: the nominated node (preemption) is not tried first; candidates
// named by a PreFilter are visited in name order (upstream: map order); a
// single feasible node is still scored (upstream skips scoring); ties are
// broken uniformly from the seeded source (upstream v1.37 takes the top
// of a heap, which without extenders favours no node in particular).
func (s *Scheduler) SchedulePod(cluster score.Cluster, pod *snapshot.PodInfo) (Decision, error) {
	return s.schedulePod(cluster, pod, nil)
}

// schedulePod is SchedulePod with the candidates limited to the nodes
// named in only, if only is non-nil (as a PreFilter's NodeNames limit
// them: the equivalence cache is not used); such a cycle leaves the
// rotating start index as it was.
func (s *Scheduler) schedulePod(cluster score.Cluster, pod *snapshot.PodInfo, only []string) (Decision, error) {
	if pod == nil {
		return Decision{}, fmt.Errorf("framework: SchedulePod: pod is nil: %w", ErrInvalidPod)
	}
	if isNilCluster(cluster) {
		return Decision{}, fmt.Errorf("framework: SchedulePod: pod %s: cluster is nil: %w", pod.Key(), ErrInvalidConfig)
	}
	d := Decision{Pod: pod}
	numAll := cluster.NumNodes()
	if numAll == 0 {
		d.Diagnosis = &Diagnosis{}
		return d, nil
	}

	// The equivalence cache (candidates not narrowed by a PreFilter: a
	// class is prepared only then). Any error on the cached path makes
	// the full cycle below run instead, so errors are the uncached ones.
	var class *classEntry
	admit := false
	kind := &s.classes.stats.Uncached // how the cache served this cycle
	defer func() { *kind++ }()
	vc, _ := nodeview.ViewOf(cluster) // nil unless a Snapshot or Fork
	if only != nil {
		defer func(next int) { s.next = next }(s.next)
	}
	nomFilter := s.newNominatedFilter(cluster, pod) // nominated.go
	// local: the filters and scorers that are node-local only for some
	// pods do nothing for this one (they promised), so they are not
	// prepared at all — their PreFilter may cost O(nodes).
	local := s.localFor(pod, cluster)
	if s.nodeLocal && vc != nil && only == nil && nomFilter == nil && local {
		e, adm, ok := s.classes.get(pod, numAll)
		switch {
		case !ok, e == nil:
			admit = adm
		case e.ready && e.nodeSet == vc.NodeSetVersion() && e.n == numAll:
			if s.runClass(e, vc, &d, &s.classes.stats.Cached, &kind) {
				return s.finish(d, cluster)
			}
		default:
			class = e
		}
	}

	// PreFilter: prepare every filter once, intersect candidate names.
	s.pfs, s.pfNames = s.pfs[:0], s.pfNames[:0]
	kept := false // an equivalence class keeps s.pfs (class.prepare)
	defer func() {
		if !kept {
			releaseFilters(s.pfs)
		}
		clear(s.pfs)
		clear(s.fused)
	}() // drop per-pod state
	var names map[string]struct{}
	var narrowing []string
	if only != nil {
		names = intersect(nil, only)
	}
	for i, f := range s.filters {
		if local && s.condFilter[i] {
			continue
		}
		res, err := RunPreFilter(f, pod, cluster)
		if err != nil {
			return d, filterError(f, pod, err)
		}
		if res.Reject != "" {
			d.Diagnosis = &Diagnosis{NumAllNodes: numAll, PreFilterMsg: res.Reject, UnschedulablePlugins: []string{f.Name()}}
			return d, nil
		}
		if res.NodeNames != nil {
			narrowing = append(narrowing, f.Name())
			names = intersect(names, res.NodeNames)
			if len(names) == 0 {
				sort.Strings(narrowing)
				msg := "node(s) didn't satisfy plugin(s) " + fmt.Sprint(narrowing) + " simultaneously"
				if len(narrowing) == 1 {
					msg = "node(s) didn't satisfy plugin " + narrowing[0]
				}
				d.Diagnosis = &Diagnosis{NumAllNodes: numAll, PreFilterMsg: msg, UnschedulablePlugins: narrowing}
				return d, nil
			}
		}
		if res.Filter != nil {
			s.pfs = append(s.pfs, res.Filter)
			s.pfNames = append(s.pfNames, f.Name())
		}
	}
	if nomFilter != nil {
		s.pfs, s.pfNames = append(s.pfs, nomFilter), append(s.pfNames, "")
	}
	s.fuse()

	// Candidates: every node, or the named ones that exist, in name order.
	numCand := numAll
	s.cands = s.cands[:0]
	s.narrowed = narrowing != nil || only != nil
	if s.narrowed {
		sorted := make([]string, 0, len(names))
		for n := range names {
			sorted = append(sorted, n)
		}
		slices.Sort(sorted)
		for _, n := range sorted {
			if ni := cluster.Get(n); ni != nil {
				s.cands = append(s.cands, ni)
			}
		}
		numCand = len(s.cands)
		defer clear(s.cands)
	}

	if (class != nil || admit) && !s.narrowed && nomFilter == nil {
		if class == nil {
			class = s.classes.insert(numAll)
		}
		if pp, err := scoring.Prepare(s.profile, pod, cluster, true); err != nil {
			class.drop()
		} else {
			class.prepare(s, pp, vc, pod, numAll)
			kept = true
			if s.runClass(class, vc, &d, &s.classes.stats.Filled, &kind) {
				return s.finish(d, cluster)
			}
		}
	}

	numToFind := numFeasibleNodesToFind(s.percentage, numCand)
	if !s.hasScoring {
		numToFind = min(numToFind, 1)
	}
	processed := s.filterNodes(cluster, numCand, numToFind)
	s.next = (s.next + processed) % numAll
	d.Feasible, d.Evaluated = len(s.feasible), processed
	defer clear(s.feasible)

	if len(s.feasible) == 0 {
		d.Diagnosis = s.diagnose(numAll, numCand, narrowing)
		return d, nil
	}

	if cap(s.totals) < len(s.feasible) {
		s.totals = make([]int64, len(s.feasible))
	}
	totals := s.totals[:len(s.feasible)]
	var err error
	if local {
		err = scoring.ScoreLocal(s.profile, pod, cluster, s.feasible, totals)
	} else {
		err = s.profile.Score(pod, cluster, s.feasible, totals)
	}
	if err != nil {
		return d, fmt.Errorf("framework: scoring pod %s: %w", pod.Key(), err)
	}
	return s.finish(d, cluster)
}

// intersect returns the names of list that are in set (all of list if set
// is nil), as a new set.
func intersect(set map[string]struct{}, list []string) map[string]struct{} {
	out := make(map[string]struct{}, len(list))
	for _, n := range list {
		if _, ok := set[n]; ok || set == nil {
			out[n] = struct{}{}
		}
	}
	return out
}

// Schedule runs one cycle for pod against the ledger's view for it,
// ledger.SnapshotFor(pod) (bound pods plus the ledger's holds and named
// reservations, with the room pod's own reservations hold for it free),
// and, if a node is chosen, holds the pod there with ledger.Reserve —
// upstream's scheduling cycle up to Reserve. The caller then binds and
// calls ledger.Confirm, or ledger.Unreserve if the bind fails (see
// [Loop]).
//
// Reservation owners: a pod that may draw on named reservations (see
// reserve.Reservation) is first scheduled among the nodes where it would
// draw on one (the reserved nodes SnapshotFor lists); only if none of them
// passes the filters does the ordinary cycle over every node run. Among
// reserved nodes the profile's scores decide. The reservation holds its
// room for its owners whether they use it or not, so an owner placed
// elsewhere takes free capacity while the reserved room stays idle — the
// cluster pays twice — and the owner reserved the node to land there.
// The Decision's Evaluated and Feasible
// then count the reserved nodes. A pod that owns no reservation takes
// exactly the ordinary path: one cycle on the shared ledger.Snapshot().
//
// If the ledger refuses the hold because another reserver took the
// capacity since the snapshot, the Decision carries a Diagnosis with the
// ledger's reasons for that node (NodeResourcesFit reasons); scheduling the
// pod again sees the new state. Errors: those of SchedulePod, and the
// ledger's (unknown node, pod held elsewhere), wrapped; with an error the
// Decision is never Scheduled. A pod the ledger already holds counts its
// own hold as used: Schedule it again only after Unreserve (else the
// cycle may choose another node, which the ledger refuses with
// reserve.ErrConflict, or report its own hold's node as full).
func (s *Scheduler) Schedule(ledger *reserve.Ledger, pod *snapshot.PodInfo) (Decision, error) {
	if ledger == nil {
		return Decision{}, fmt.Errorf("framework: Schedule: ledger is nil: %w", ErrInvalidConfig)
	}
	if pod == nil {
		return Decision{}, fmt.Errorf("framework: Schedule: pod is nil: %w", ErrInvalidPod)
	}
	snap, reserved := ledger.SnapshotFor(pod)
	var d Decision
	var err error
	if reserved != nil {
		d, err = s.schedulePod(snap, pod, reserved)
	}
	if reserved == nil || (err == nil && !d.Scheduled()) {
		d, err = s.SchedulePod(snap, pod)
	}
	if err != nil {
		d.Node, d.Total, d.Breakdown = "", 0, nil // never Scheduled with an error
		return d, err
	}
	if !d.Scheduled() {
		return d, nil
	}
	unfit, err := ledger.Reserve(d.Pod, d.Node)
	if err != nil {
		node := d.Node
		d.Node, d.Total, d.Breakdown = "", 0, nil // not placed: never Scheduled with an error
		return d, fmt.Errorf("framework: reserving pod %s on node %s: %w", pod.Key(), node, err)
	}
	if unfit != nil {
		diag := &Diagnosis{NumAllNodes: snap.NumNodes(), UnschedulablePlugins: []string{nodeResourcesFitName}}
		for _, in := range unfit {
			r := insufficientReason(in)
			r.Plugin, r.Node = nodeResourcesFitName, d.Node
			diag.Counts = tallyReason(diag.Counts, 0, &r, 1, nil)
			if s.nodeReasons {
				diag.Reasons = append(diag.Reasons, r)
			}
		}
		for i := range diag.Counts {
			diag.Counts[i].Message = diag.Counts[i].Reason.Message()
		}
		d.Node, d.Total, d.Breakdown, d.Diagnosis = "", 0, nil, diag
	}
	return d, nil
}

// localFor reports whether every filter and scorer that is node-local
// only for some pods (scoring.PodNodeLocal) does nothing for pod over
// cluster, so that the equivalence cache may serve it.
func (s *Scheduler) localFor(pod *snapshot.PodInfo, cluster score.Cluster) bool {
	for _, c := range s.condLocal {
		if !c.NodeLocalFor(pod, cluster) {
			return false
		}
	}
	return scoring.ProfileNodeLocalFor(s.profile, pod, cluster)
}

// isNilCluster reports a nil interface or a typed nil Snapshot or Fork.
func isNilCluster(c score.Cluster) bool {
	switch v := c.(type) {
	case nil:
		return true
	case *snapshot.Snapshot:
		return v == nil
	case *snapshot.Fork:
		return v == nil
	}
	return false
}

// releaser is a PodFilter whose storage its plugin may reuse once its
// only user is done with it (InterPodAffinity's).
type releaser interface{ Release() }

// releaseFilters releases the filters of pfs that are releasers: the
// cycle that prepared them is over and nothing kept them.
func releaseFilters(pfs []PodFilter) {
	for _, pf := range pfs {
		if r, ok := pf.(releaser); ok {
			r.Release()
		}
	}
}
