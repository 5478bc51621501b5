package framework

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// Upstream's bounds on how many feasible nodes a cycle looks for
// (kube-scheduler v1.37 pkg/scheduler/schedule_one.go).
const (
	// MinFeasibleNodesToFind: clusters below this many nodes are always
	// searched whole, and no search stops before this many feasible nodes.
	MinFeasibleNodesToFind = 100
	// MinFeasibleNodesPercentageToFind is the floor of the adaptive
	// percentage.
	MinFeasibleNodesPercentageToFind = 5
)

// NumFeasibleNodesToFind is how many feasible nodes a cycle looks for
// among numAllNodes candidates before it stops filtering and scores them —
// upstream's numFeasibleNodesToFind (kube-scheduler v1.37
// schedule_one.go): all of them below [MinFeasibleNodesToFind]; otherwise
// numAllNodes × percentage / 100 but at least MinFeasibleNodesToFind, where
// percentage 0 means adaptive: 50 − numAllNodes/125, floored at
// [MinFeasibleNodesPercentageToFind] (5000 nodes: 10 %, 15000 nodes: 5 %).
// O(1).
func NumFeasibleNodesToFind(percentage int32, numAllNodes int) int {
	if numAllNodes < MinFeasibleNodesToFind {
		return numAllNodes
	}
	p := int(percentage)
	if p == 0 {
		p = max(50-numAllNodes/125, MinFeasibleNodesPercentageToFind)
	}
	return max(numAllNodes*p/100, MinFeasibleNodesToFind)
}

// Config configures a [Scheduler]. The zero Config is upstream's default
// profile as far as schedkit implements it: [DefaultFilters],
// [score.DefaultProfile], the adaptive percentage of nodes to score,
// sequential filtering, seed 0.
type Config struct {
	// Filters run in order; a node's reasons come from the first filter it
	// fails. nil means DefaultFilters(); an empty non-nil slice filters
	// nothing.
	Filters []Filter
	// Profile scores the feasible nodes. nil means score.DefaultProfile();
	// a profile with no scorers means no scoring (upstream then stops at
	// the first feasible node).
	Profile *score.Profile
	// PercentageOfNodesToScore is upstream's percentageOfNodesToScore in
	// [0, 100]: 0 is adaptive, 100 filters and scores every node (see
	// [NumFeasibleNodesToFind]).
	PercentageOfNodesToScore int32
	// Parallelism is the number of goroutines that filter nodes; 0 or 1
	// filters in the calling goroutine. The workers exist only during a
	// call. Results do not depend on it.
	Parallelism int
	// Seed seeds the tie-breaking among nodes with the same highest total.
	// The same seed, snapshot and pods give the same decisions.
	Seed uint64
	// Breakdown fills [Decision.Breakdown] with the chosen node's
	// per-scorer scores ([score.Profile.Explain]); it costs one more pass
	// of the normalising scorers per pod.
	Breakdown bool
	// EquivalenceClasses is how many pod classes (pods with equal specs,
	// derived requests and GPU requests: see [NodeLocal])
	// the equivalence cache keeps per-node filter verdicts and scores for:
	// 0 means [DefaultEquivalenceClasses], a negative number turns the
	// cache off. The cache changes no decision, nor any error (a cached
	// cycle that fails gives way to the full cycle); it is used when no
	// PreFilter narrows the candidates to named nodes, the cluster is a
	// *snapshot.Snapshot or *snapshot.Fork (not a type embedding one), the
	// profile has scorers, and every filter and scorer is node-local
	// ([NodeLocal], [score.NodeLocal]). A class gets an entry
	// (evicting the least recently used) the second time it is seen,
	// unless a class seen in between took its slot in a 1,024-slot table
	// of classes seen once. Memory: 17 + 8 × (normalising scorers that do
	// not skip the pod) bytes per node and class, no pointers (the cache
	// keeps no NodeInfo alive); with the default profile (TaintToleration
	// normalises, NodeAffinity too for pods with preferred terms) 25–33
	// bytes, so 64 classes at 15,000 nodes take 24–32 MB. Speed
	// (BenchmarkSchedule, one core): copies of 20 specs, every node
	// scored, 3–12× the uncached rate at 1,000–15,000 nodes; 550 distinct
	// specs in 10,000 pods with the adaptive percentage, the same rate at
	// 5,000 nodes but about a fifth slower at 15,000 (the classes' arrays
	// crowd the nodes out of the CPU cache) — turn the cache off for such
	// workloads. [Scheduler.EquivalenceStats] counts how cycles were
	// served.
	EquivalenceClasses int
	// DeviceChooser picks the GPU devices of a pod asking for some, on the
	// node chosen for it, when no scorer of the profile is a
	// [snapshot.DeviceChooser] (gpushare's policy scorers are: FGD then
	// chooses the device that lowers fragmentation most). nil leaves such
	// pods to the profile; with no chooser there, a whole-GPU
	// nvidia.com/gpu demand gets no devices (the kubelet's device plugin
	// picks them; NodeResourcesFit counts the extended resource) and
	// placing an annotated demand (snapshot.AnnotationGPUCount) on a node
	// with devices is an error wrapping [ErrInvalidConfig].
	// gpushare.BestFit{} is the FGD simulator's default choice.
	DeviceChooser snapshot.DeviceChooser
}

// Validate reports a percentage outside [0, 100], a negative
// parallelism, a nil filter, or invalid filter arguments (filters with a
// Validate() error method are asked), wrapping [ErrInvalidConfig].
func (c *Config) Validate() error {
	if c.PercentageOfNodesToScore < 0 || c.PercentageOfNodesToScore > 100 {
		return fmt.Errorf("framework: percentageOfNodesToScore %d: want [0, 100]: %w", c.PercentageOfNodesToScore, ErrInvalidConfig)
	}
	if c.Parallelism < 0 {
		return fmt.Errorf("framework: parallelism %d is negative: %w", c.Parallelism, ErrInvalidConfig)
	}
	for i, f := range c.Filters {
		if f == nil {
			return fmt.Errorf("framework: filters[%d] is nil: %w", i, ErrInvalidConfig)
		}
		if v, ok := f.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return fmt.Errorf("framework: filters[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// Decision is the outcome of one scheduling cycle for one pod: the chosen
// node, or a [Diagnosis] saying why there is none.
type Decision struct {
	// Pod is the pod scheduled. For a pod asking for GPU devices that was
	// placed on a node with devices, it is a copy recording the devices
	// chosen (PodInfo.Devices): the profile's first snapshot.DeviceChooser
	// decides, else Config.DeviceChooser. Reserve and bind this one.
	Pod *snapshot.PodInfo
	// Node is the chosen node's name; "" when the pod is unschedulable.
	Node string
	// Total is the chosen node's weighted total score.
	Total int64
	// Breakdown is the chosen node's per-scorer scores when
	// Config.Breakdown is set, else nil.
	Breakdown *score.Explanation
	// Feasible is the number of nodes that passed the filters and were
	// scored; Evaluated the number of nodes filtered (upstream's
	// FeasibleNodes and EvaluatedNodes).
	Feasible, Evaluated int
	// Diagnosis is non-nil exactly when the pod fits no node.
	Diagnosis *Diagnosis
}

// Scheduled reports whether a node was chosen.
func (d *Decision) Scheduled() bool { return d.Diagnosis == nil && d.Node != "" }

// Scheduler runs scheduling cycles: for one pod it prepares every filter
// once, filters nodes (starting where the previous cycle stopped, as
// upstream's nextStartNodeIndex, and stopping after
// [NumFeasibleNodesToFind] feasible nodes), scores them with the profile,
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
	devices    snapshot.DeviceChooser // see deviceChooser
	rng        *rand.Rand
	// nodeLocal: every filter and scorer is NodeLocal (and the cache is
	// on): pod classes may be cached.
	nodeLocal bool
	classes   classCache

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
	run      runState
}

// New returns a Scheduler for cfg after [Config.Validate].
func New(cfg Config) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Scheduler{
		filters:    cfg.Filters,
		profile:    cfg.Profile,
		percentage: cfg.PercentageOfNodesToScore,
		workers:    max(cfg.Parallelism, 1),
		breakdown:  cfg.Breakdown,
		rng:        rand.New(rand.NewPCG(cfg.Seed, 0x5c4ed417)),
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
	s.classes.max = cfg.EquivalenceClasses
	if s.classes.max == 0 {
		s.classes.max = DefaultEquivalenceClasses
	}
	s.classes.seed = maphash.MakeSeed()
	s.nodeLocal = s.classes.max > 0 && s.hasScoring
	for _, f := range s.filters {
		if nl, ok := f.(NodeLocal); !ok || !nl.NodeLocal() {
			s.nodeLocal = false
		}
	}
	for _, w := range s.profile.Scorers() {
		if nl, ok := w.Scorer.(score.NodeLocal); !ok || !nl.NodeLocal() {
			s.nodeLocal = false
		}
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
// costs a full cycle.
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
	if s.nodeLocal && vc != nil && only == nil {
		e, adm, ok := s.classes.get(pod)
		switch {
		case !ok, e == nil:
			admit = adm
		case e.ready && e.nodeSet == vc.NodeSetVersion() && e.n == numAll:
			if s.runClass(e, vc, &d, &s.classes.stats.Cached, &kind) {
				return s.finish(d, cluster, nil)
			}
		default:
			class = e
		}
	}

	// PreFilter: prepare every filter once, intersect candidate names.
	s.pfs, s.pfNames = s.pfs[:0], s.pfNames[:0]
	defer func() { clear(s.pfs); clear(s.fused) }() // drop per-pod state
	var names map[string]struct{}
	var narrowing []string
	if only != nil {
		names = intersect(nil, only)
	}
	for _, f := range s.filters {
		res, err := RunPreFilter(f, pod, cluster)
		if err != nil {
			return d, fmt.Errorf("framework: filter %s: pod %s: %w", f.Name(), pod.Key(), err)
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

	if (class != nil || admit) && !s.narrowed {
		if class == nil {
			class = s.classes.insert()
		}
		if pp, err := s.profile.Prepare(pod, cluster); err != nil {
			class.drop()
		} else {
			class.prepare(s, pp, vc.NodeSetVersion(), numAll)
			if s.runClass(class, vc, &d, &s.classes.stats.Filled, &kind) {
				return s.finish(d, cluster, nil)
			}
		}
	}

	numToFind := NumFeasibleNodesToFind(s.percentage, numCand)
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
	if err := s.profile.Score(pod, cluster, s.feasible, totals); err != nil {
		return d, fmt.Errorf("framework: scoring pod %s: %w", pod.Key(), err)
	}
	return s.finish(d, cluster, nil)
}

// finish picks the host among s.feasible by s.totals (the cycle's
// totals, one per feasible node), chooses GPU devices and explains, unless
// err (returned with d) is set. It drops the cycle's nodes.
func (s *Scheduler) finish(d Decision, cluster score.Cluster, err error) (Decision, error) {
	defer clear(s.feasible)
	if err != nil {
		return d, err
	}
	pod := d.Pod
	totals := s.totals[:len(s.feasible)]
	best := s.selectHost(totals)
	d.Node, d.Total = s.feasible[best].Name(), totals[best]
	if pod.GPU().Count > 0 {
		withDevs, err := chooseDevices(s.devices, pod, s.feasible[best])
		if err != nil {
			return d, err
		}
		d.Pod = withDevs
	}
	if s.breakdown {
		e, err := s.profile.Explain(pod, cluster, s.feasible, best)
		if err != nil {
			return d, fmt.Errorf("framework: explaining pod %s: %w", pod.Key(), err)
		}
		d.Breakdown = e
	}
	return d, nil
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

// selectHost returns the index of a highest total, chosen uniformly among
// ties with one draw from the seeded source (the distribution of
// upstream's former reservoir sampling, selectHost before v1.33): the
// k-th tie in order for k drawn from [0, ties), no draw for a single
// best. O(n) in three short passes with few unpredictable branches (max,
// count, locate).
func (s *Scheduler) selectHost(totals []int64) int {
	// Four running maxima: one would make a chain of dependent compares.
	m := [4]int64{totals[0], totals[0], totals[0], totals[0]}
	i := 0
	for ; i+4 <= len(totals); i += 4 {
		q := totals[i : i+4 : i+4]
		m[0], m[1], m[2], m[3] = max(m[0], q[0]), max(m[1], q[1]), max(m[2], q[2]), max(m[3], q[3])
	}
	top := max(m[0], m[1], m[2], m[3])
	for _, t := range totals[i:] {
		top = max(top, t)
	}
	ties := 0
	for _, t := range totals {
		if t == top {
			ties++
		}
	}
	k := 0
	if ties > 1 {
		k = s.rng.IntN(ties)
	}
	for i, t := range totals {
		if t == top {
			if k == 0 {
				return i
			}
			k--
		}
	}
	panic("unreachable")
}

// chunk is how many consecutive candidates one worker filters at a time.
const chunk = 128

// worker is one filtering goroutine's scratch: the reasons of the nodes it
// rejected and the nodes it accepted (with their positions in visiting
// order), for all the chunks it processed, back to back.
type worker struct {
	reasons  []Reason
	feasible []*snapshot.NodeInfo
	pos      []int32
	// scratch takes the reasons of nodes rejected once this worker has
	// found a feasible node: the cycle then has a feasible node and
	// never reads reasons, so they are dropped (room for 16, as
	// PodFilter's contract promises).
	scratch []Reason
	// block is the snapshot block nodeAt read last: candidates blockLo
	// up to blockLo+len(block)-1.
	block   []*snapshot.NodeInfo
	blockLo int
}

// chunkResult locates one chunk's output in its worker's buffers.
type chunkResult struct {
	w      int32
	rs, re int32 // reasons[rs:re]
	fs, fe int32 // feasible[fs:fe], pos[fs:fe]
}

// nodeAt returns candidate i (an index into the candidates, not a
// visiting position) for worker wk. A snapshot's or fork's nodes are read
// from its blocks, one interface call per block: wk keeps the block it
// read last.
func (s *Scheduler) nodeAt(wk *worker, cluster score.Cluster, i int) *snapshot.NodeInfo {
	switch {
	case s.narrowed:
		return s.cands[i]
	case s.view != nil:
		if j := i - wk.blockLo; uint(j) < uint(len(wk.block)) {
			return wk.block[j]
		}
		b := i / layout.BlockSize
		wk.block, _ = s.view.Block(b)
		wk.blockLo = b * layout.BlockSize
		return wk.block[i-wk.blockLo]
	}
	return cluster.Node(i)
}

// filterNodes fills s.feasible with the first numToFind feasible
// candidates in visiting order (candidate (next+pos) mod numCand at
// position pos) and returns how many candidates were filtered up to and
// including the last of them (all, if fewer are feasible). Workers filter
// chunks of positions in order and stop taking new chunks once enough
// feasible nodes are known, so the result is the sequential one whatever
// the parallelism.
func (s *Scheduler) filterNodes(cluster score.Cluster, numCand, numToFind int) int {
	s.feasible = s.feasible[:0]
	if numCand == 0 || numToFind == 0 {
		return 0
	}
	s.view, _ = nodeview.ViewOf(cluster)
	defer func() { s.view = nil }()
	numChunks := (numCand + chunk - 1) / chunk
	if cap(s.chunks) < numChunks {
		s.chunks = make([]chunkResult, numChunks)
	}
	s.chunks = s.chunks[:numChunks]
	for i := range s.ws {
		wk := &s.ws[i]
		wk.reasons, wk.feasible, wk.pos = wk.reasons[:0], wk.feasible[:0], wk.pos[:0]
		wk.block, wk.blockLo = nil, 0
	}
	s.run = runState{cluster: cluster, numCand: numCand, numToFind: numToFind, numChunks: numChunks}
	s.run.nextChunk.Store(0)
	s.run.found.Store(0)
	defer func() { s.run.cluster = nil }()
	workers := min(s.workers, numChunks)
	if workers <= 1 {
		s.filterChunks(0, true)
	} else {
		var wg sync.WaitGroup
		for w := 1; w < workers; w++ {
			wg.Add(1)
			go func() { defer wg.Done(); s.filterChunks(w, false) }()
		}
		s.filterChunks(0, false)
		wg.Wait()
	}

	// The workers' buffers hold this cycle's nodes until the next one;
	// drop them so a finished snapshot can be collected.
	defer func() {
		for i := range s.ws {
			clear(s.ws[i].feasible)
			clear(s.ws[i].scratch[:cap(s.ws[i].scratch)])
			s.ws[i].block = nil
		}
	}()
	claimed := min(int(s.run.nextChunk.Load()), numChunks)
	for c := range claimed {
		cr := s.chunks[c]
		wk := &s.ws[cr.w]
		take := min(int(cr.fe-cr.fs), numToFind-len(s.feasible))
		s.feasible = append(s.feasible, wk.feasible[cr.fs:int(cr.fs)+take]...)
		if len(s.feasible) == numToFind {
			return int(wk.pos[int(cr.fs)+take-1]) + 1
		}
	}
	return numCand
}

// runState is the shared state of one cycle's filtering workers.
type runState struct {
	cluster                       score.Cluster
	numCand, numToFind, numChunks int
	nextChunk, found              atomic.Int64
}

// filterChunks is one filtering worker: it takes chunks in order until
// enough feasible nodes are known or none is left. The sequential worker
// also stops inside a chunk once the count is reached.
func (s *Scheduler) filterChunks(w int, sequential bool) {
	r, wk := &s.run, &s.ws[w]
	for r.found.Load() < int64(r.numToFind) {
		c := int(r.nextChunk.Add(1) - 1)
		if c >= r.numChunks {
			return
		}
		cr := chunkResult{w: int32(w), rs: int32(len(wk.reasons)), fs: int32(len(wk.feasible))}
		start, end := c*chunk, min((c+1)*chunk, r.numCand)
		limit := r.numToFind // a chunk alone never needs more
		if sequential {
			limit -= int(r.found.Load())
		}
		idx := (s.next + start) % r.numCand
		n := 0
		for pos := start; pos < end && n < limit; pos++ {
			ni := s.nodeAt(wk, r.cluster, idx)
			if idx++; idx == r.numCand {
				idx = 0
			}
			if s.filterNode(ni, wk) {
				wk.feasible = append(wk.feasible, ni)
				wk.pos = append(wk.pos, int32(pos))
				n++
			}
		}
		cr.re, cr.fe = int32(len(wk.reasons)), int32(len(wk.feasible))
		s.chunks[c] = cr
		r.found.Add(int64(n))
	}
}

// filterNode runs the prepared filters on ni; on the first failure it
// labels the reasons the filter appended to wk.reasons and reports false
// (once the worker has found a feasible node, it keeps no reasons).
func (s *Scheduler) filterNode(ni *snapshot.NodeInfo, wk *worker) bool {
	if len(wk.feasible) > 0 {
		// The reasons will not be read: no labels (no read of the
		// node's name), no growth of wk.reasons.
		var fits bool
		wk.scratch, fits = fitsAll(s.pfs, ni, wk.scratch)
		return fits
	}
	n0 := len(wk.reasons)
	for j, f := range s.pfs {
		wk.reasons = f.Filter(ni, wk.reasons)
		if len(wk.reasons) > n0 {
			_, fused := f.(*fusedFilter) // labels its reasons itself
			name := s.pfNames[j]
			for k := n0; k < len(wk.reasons); k++ {
				if !fused {
					wk.reasons[k].Plugin = name
				}
				wk.reasons[k].Node = ni.Name()
			}
			return false
		}
	}
	return true
}

// diagnose collects the reasons of a cycle that found no feasible node
// (every candidate was filtered, so every chunk is complete).
func (s *Scheduler) diagnose(numAll, numCand int, narrowing []string) *Diagnosis {
	d := &Diagnosis{NumAllNodes: numAll}
	n := 0
	for c := range (numCand + chunk - 1) / chunk {
		cr := s.chunks[c]
		n += int(cr.re - cr.rs)
	}
	d.Reasons = make([]Reason, 0, n)
	plugins := map[string]bool{}
	for c := range (numCand + chunk - 1) / chunk {
		cr := s.chunks[c]
		rs := s.ws[cr.w].reasons[cr.rs:cr.re]
		d.Reasons = append(d.Reasons, rs...)
		for i := range rs {
			plugins[rs[i].Plugin] = true
		}
	}
	if narrowing != nil {
		sorted := slices.Clone(narrowing)
		sort.Strings(sorted)
		d.NotCandidates = numAll - numCand
		d.NotCandidate = Reason{Code: CodeNotCandidate, Unresolvable: true,
			Text: "node(s) didn't satisfy plugin(s) [" + strings.Join(sorted, " ") + "]"}
		for _, p := range narrowing {
			plugins[p] = true
		}
	}
	for p := range plugins {
		d.UnschedulablePlugins = append(d.UnschedulablePlugins, p)
	}
	sort.Strings(d.UnschedulablePlugins)
	return d
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
// ledger's (unknown node, pod held elsewhere), wrapped.
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
	if err != nil || !d.Scheduled() {
		return d, err
	}
	unfit, err := ledger.Reserve(d.Pod, d.Node)
	if err != nil {
		return d, fmt.Errorf("framework: reserving pod %s on node %s: %w", pod.Key(), d.Node, err)
	}
	if unfit != nil {
		diag := &Diagnosis{NumAllNodes: snap.NumNodes(), UnschedulablePlugins: []string{NodeResourcesFitName}}
		for _, in := range unfit {
			r := insufficientReason(in)
			r.Plugin, r.Node = NodeResourcesFitName, d.Node
			diag.Reasons = append(diag.Reasons, r)
		}
		d.Node, d.Total, d.Breakdown, d.Diagnosis = "", 0, nil, diag
	}
	return d, nil
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
