package framework

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// Preemption: upstream kube-scheduler v1.37.2's DefaultPreemption
// PostFilter (plugins/defaultpreemption/default_preemption.go and
// framework/preemption/preemption.go, util.go) for single pods, as a
// value. Pod groups (GenericWorkload, beta and off by default in v1.37)
// are not modelled: every pod is its own victim.

// PreemptionObjects is what preemption reads besides nodes and pods:
// PriorityClasses by name and the PodDisruptionBudgets of a namespace
// (snapshot's Cache, Snapshot and Fork implement both). Returned objects
// are read-only.
type PreemptionObjects interface {
	PriorityClasses
	PodDisruptionBudgets(namespace string) []*policyv1.PodDisruptionBudget
}

// PreemptOptions configures [Scheduler.Preempt]. The zero value examines
// every potential node and reads PriorityClasses and PDBs from the
// cluster.
type PreemptOptions struct {
	// Objects resolves priorityClassName and lists PDBs; nil: the
	// cluster's own (a Snapshot or Fork of a Cache or reserve.Ledger fed
	// PriorityClasses and PodDisruptionBudgets), so that they are current
	// at every call.
	Objects PreemptionObjects
	// MinCandidateNodesPercentage in [0, 100] and MinCandidateNodesAbsolute
	// >= 0 are upstream's DefaultPreemptionArgs (upstream's defaults: 10
	// and 100): the dry run stops once it has max(potential nodes ×
	// percentage / 100, absolute) candidates, at least one of them without
	// PDB violations. Both 0 (the default) examine every potential node,
	// which is upstream's answer whenever upstream examines every
	// potential node (with its defaults: at most 100 potential nodes);
	// beyond that upstream's sample depends on a random offset and on
	// goroutine timing, and the full search is never worse by upstream's
	// own criteria.
	MinCandidateNodesPercentage, MinCandidateNodesAbsolute int32
	// Offset is where the sampled dry run starts among the potential
	// nodes (taken modulo their number; upstream draws it at random).
	// Unused when every node is examined.
	Offset int
}

// Preemption is the outcome of [Scheduler.Preempt]: a node where evicting
// Victims lets the pod fit, or no node and upstream's message.
type Preemption struct {
	// Node is the chosen node ("" if preemption cannot help).
	Node string
	// Victims are the pods to evict from Node, most important first
	// (priority descending, then earliest start); the caller's slice.
	Victims []*snapshot.PodInfo
	// NumPDBViolations is the number of victims whose eviction violates a
	// PodDisruptionBudget (upstream's Victims.NumPDBViolations).
	NumPDBViolations int
	// Priority is the preemptor's priority (spec.priority, or its
	// PriorityClass's value).
	Priority int32
	// Message is upstream's PostFilter status message: "preemption: "
	// followed by the ineligibility reason, the FitError message of the
	// dry run ("0/3 nodes are available: 1 No preemption victims found
	// for incoming pod, 2 Preemption is not helpful for scheduling."), or
	// "found a potential placement for pod on node n, preempting k
	// victims" when Node is set (upstream logs that one without the
	// prefix).
	Message string
}

// Found reports whether a node was chosen.
func (p *Preemption) Found() bool { return p.Node != "" }

// ApplyTo evicts the victims from p.Node in f and places pod there, in
// one nested layer that it commits (so the caller's f.Revert after its
// own f.Fork undoes it all, O(1)). On error nothing is changed. It is the
// caller's choice: upstream evicts and nominates, and binds the pod in a
// later cycle, which the [Loop] reproduces.
func (p *Preemption) ApplyTo(f *snapshot.Fork, pod *snapshot.PodInfo) error {
	if pod == nil {
		return fmt.Errorf("framework: Preemption.ApplyTo: pod is nil: %w", ErrInvalidPod)
	}
	if f == nil {
		return fmt.Errorf("framework: Preemption.ApplyTo: pod %s: fork is nil: %w", pod.Key(), ErrInvalidConfig)
	}
	if !p.Found() {
		return fmt.Errorf("framework: Preemption.ApplyTo: pod %s: no node chosen: %w", pod.Key(), ErrInvalidPod)
	}
	f.Fork()
	for _, v := range p.Victims {
		if err := f.RemovePod(v.Key(), p.Node); err != nil {
			_ = f.Revert()
			return fmt.Errorf("framework: evicting victim %s from node %s: %w", v.Key(), p.Node, err)
		}
	}
	if err := f.AddPodInfo(pod, p.Node); err != nil {
		_ = f.Revert()
		return fmt.Errorf("framework: placing preemptor %s on node %s: %w", pod.Key(), p.Node, err)
	}
	return f.Commit()
}

// Upstream's messages (default_preemption.go, preemption.go).
const (
	msgPreemptNever         = "not eligible due to preemptionPolicy=Never."
	msgTerminatingVictim    = "not eligible due to a terminating pod on the nominated node."
	msgNoVictims            = "No preemption victims found for incoming pod"
	msgPreemptionNotHelpful = "Preemption is not helpful for scheduling"
	preemptionPrefix        = "preemption: "
)

// victim is a pod that may be evicted, with what ordering reads.
type victim struct {
	pi    *snapshot.PodInfo
	prio  int32
	start int64 // status.startTime in ns; math.MaxInt64 if unset ("now")
}

// moreImportant is upstream's MoreImportantVictim for single pods:
// higher priority, then earlier start; then (schedkit, for a
// deterministic order where upstream's sort is unspecified) the key.
func moreImportant(a, b *victim) int {
	if a.prio != b.prio {
		return cmp.Compare(b.prio, a.prio)
	}
	if a.start != b.start {
		return cmp.Compare(a.start, b.start)
	}
	return cmp.Or(cmp.Compare(a.pi.Key().Namespace, b.pi.Key().Namespace), cmp.Compare(a.pi.Key().Name, b.pi.Key().Name))
}

func startNanos(p *snapshot.PodInfo) int64 {
	if t, ok := p.StartTime(); ok {
		return t.UnixNano()
	}
	return math.MaxInt64
}

// candidate is a node where preemption helps.
type candidate struct {
	node    string
	victims []victim // most important first
	numPDB  int
}

// pdbInfo is one PDB with its parsed selector.
type pdbInfo struct {
	pdb *policyv1.PodDisruptionBudget
	sel labels.Selector
}

// preemptRun is one Preempt call's state.
type preemptRun struct {
	s        *Scheduler
	pod      *snapshot.PodInfo
	prio     int32
	opts     PreemptOptions
	fork     *snapshot.Fork
	nodeLoc  bool        // the prepared filters hold in every dry-run state
	pfs      []PodFilter // prepared on the original cluster
	pfOwners []int       // the index in s.filters each of pfs came from
	pfNames  []string
	only     map[string]struct{} // PreFilter NodeNames (nil: all)
	reject   bool                // a PreFilter rejected the pod
	pdbs     map[string][]pdbInfo
	lastNS   string    // the namespace pdbsOf answered last
	lastPDBs []pdbInfo // its PDBs
	lastNSOK bool
	rejected []Reason // scratch
	fast     fastFit  // the fit-arithmetic dry run (fast.ok: usable)
	// scratch reused across nodes: potential victims, their PDB
	// verdicts and budgets, the candidate being built and the best so far
	pot     []victim
	viol    []bool
	allowed map[*policyv1.PodDisruptionBudget]int32
	cur     candidate
	best    candidate
}

// Preempt runs upstream's DefaultPreemption for pod on cluster (a
// [snapshot.Snapshot] or [snapshot.Fork]; neither is changed) with the
// scheduler's filters and nominations ([Scheduler.Nominate]): call it
// after a cycle in which pod fit no node.
//
// Steps, as upstream v1.37.2: (1) eligibility: preemptionPolicy Never
// never preempts; a pod nominated to a node (its nomination here, else
// status.nominatedNodeName) where the filters do not fail unresolvably
// waits while a lower-priority pod there is terminating by preemption
// (deletionTimestamp and a DisruptionTarget condition with reason
// PreemptionByScheduler). (2) Potential nodes: those that fail the
// filters resolvably (not a taint, affinity, name, or a request beyond
// allocatable). (3) Per node, the dry run: remove every pod of lower
// priority; if the filters (with the nominated pods of equal or higher
// priority, both of upstream's passes) still fail, the node is no
// candidate; else reprieve the victims, PDB-violating ones first, each
// group most important first, keeping each one the pod still fits
// with. A pod violates a PDB of its namespace whose selector (not empty)
// matches its labels when the budget's status.disruptionsAllowed, less
// the victims before it that the PDB matches, is spent; pods in
// status.disruptedPods do not count. (4) pickOneNodeForPreemption: fewest
// PDB violations, then lowest highest-victim priority, then lowest sum of
// priorities (each + 2^31), then fewest victims, then the latest earliest
// start time among the highest-priority victims, then the first
// candidate (non-violating candidates first, each in node order; upstream
// takes a map's first, i.e. any).
//
// Deliberate differences: PDBs are visited in name order within a
// namespace (upstream: informer order, unspecified, which matters only
// when one pod matches several PDBs whose budgets run out); a pod without
// status.startTime counts as started at +inf (upstream: time.Now() at
// each read); victims tied on priority and start time are ordered by key
// (upstream: unspecified); a PDB whose selector does not parse is an
// error (upstream silently lets it match nothing).
//
// Errors (nothing is changed): a nil pod or cluster, a cluster that is
// neither a Snapshot nor a Fork, a pod whose priorityClassName names no
// PriorityClass (the preemptor, a pod on a potential node, or a nominated
// pod; wrapping [ErrInvalidPod], naming pod and field), a PDB with an
// invalid spec.selector (wrapping [ErrInvalidConfig], naming it), a
// filter's PreFilter error.
//
// Cost: O(nodes × filter cost) to find potential nodes (with the
// filters prepared once). Per potential node, when NodeResourcesFit is
// the only filter prepared for the pod that reads the node's pods (the
// others read only the node, or, like PodTopologySpread and
// InterPodAffinity for a pod they do not constrain, prepare nothing) and
// no nominated pod the pod yields to is on the node: O(pods there ×
// (log pods + requested resources + the namespace's PDBs)) by fit
// arithmetic, without a fork and without allocating. Otherwise a Fork
// layer per node (O(1) to revert) and O(pods there × filter cost); with a
// filter that is not node-local and prepared something for the pod, each
// check of the dry run also re-runs the PreFilters on the changed
// cluster. Allocates O(nodes) (the potential nodes' indexes) and the
// result.
func (s *Scheduler) Preempt(cluster score.Cluster, pod *snapshot.PodInfo, opts PreemptOptions) (Preemption, error) {
	if pod == nil {
		return Preemption{}, fmt.Errorf("framework: Preempt: pod is nil: %w", ErrInvalidPod)
	}
	var base *snapshot.Snapshot
	switch c := cluster.(type) {
	case *snapshot.Snapshot:
		base = c
	case *snapshot.Fork:
		if c != nil {
			base = c.Snapshot()
		}
	}
	if base == nil {
		return Preemption{}, fmt.Errorf("framework: Preempt: pod %s: cluster is nil or neither a Snapshot nor a Fork: %w", pod.Key(), ErrInvalidConfig)
	}
	if p := opts.MinCandidateNodesPercentage; p < 0 || p > 100 || opts.MinCandidateNodesAbsolute < 0 {
		return Preemption{}, fmt.Errorf("framework: Preempt: MinCandidateNodesPercentage %d / MinCandidateNodesAbsolute %d out of range: %w",
			p, opts.MinCandidateNodesAbsolute, ErrInvalidConfig)
	}
	if opts.Objects == nil {
		opts.Objects = base
	}
	r, err := s.newPreemptRun(base, pod, opts)
	if err != nil {
		return Preemption{}, err
	}
	return r.run()
}

// newPreemptRun resolves the pod's priority and starts a run on a fork
// of base (opts.Objects set).
func (s *Scheduler) newPreemptRun(base *snapshot.Snapshot, pod *snapshot.PodInfo, opts PreemptOptions) (*preemptRun, error) {
	prio, err := PodPriority(pod.Pod(), opts.Objects)
	if err != nil {
		return nil, err
	}
	return &preemptRun{s: s, pod: pod, prio: prio, opts: opts, fork: base.Fork(), pdbs: map[string][]pdbInfo{}}, nil
}

func (r *preemptRun) run() (Preemption, error) {
	out := Preemption{Priority: r.prio}
	pod := r.pod.Pod()
	if pp := pod.Spec.PreemptionPolicy; pp != nil && *pp == v1.PreemptNever {
		out.Message = preemptionPrefix + msgPreemptNever
		return out, nil
	}
	if err := r.prepare(); err != nil {
		return out, err
	}
	// The filters prepared on the original cluster are the run's alone
	// (the outcome holds none of their storage).
	defer releaseFilters(r.pfs)
	numAll := r.fork.NumNodes()

	// Potential nodes (their indexes): resolvably unschedulable.
	nom := r.nominatedNode()
	nomPotential := false
	var potential []int32
	if !r.reject {
		potential = make([]int32, 0, numAll)
		for i := range numAll {
			ni := r.fork.Node(i)
			ok, reasons, err := r.check(ni, false)
			if err != nil {
				return out, err
			}
			if !ok && !unresolvable(reasons) {
				potential = append(potential, int32(i))
				nomPotential = nomPotential || ni.Name() == nom
			}
		}
	}

	// Eligibility (after the filter statuses, which it reads).
	if nomPotential {
		for _, p := range r.fork.Get(nom).Pods() {
			vp, err := r.priority(p)
			if err != nil {
				return out, err
			}
			if vp < r.prio && p.Terminating() && terminatingByPreemption(p.Pod()) {
				out.Message = preemptionPrefix + msgTerminatingVictim
				return out, nil
			}
		}
	}

	// The dry run. Upstream collects up to num candidates of each kind
	// (without and with PDB violations) and picks the best, the ones
	// without violations first; as every one of those beats every
	// violating one on the first criterion, keeping the best so far in
	// node order (ties to the earlier) picks the same one.
	num := len(potential)
	offset := 0
	if r.opts.MinCandidateNodesPercentage != 0 || r.opts.MinCandidateNodesAbsolute != 0 {
		n := int32(len(potential)) * r.opts.MinCandidateNodesPercentage / 100
		num = int(min(max(n, r.opts.MinCandidateNodesAbsolute), int32(len(potential))))
		if len(potential) > 0 {
			offset = ((r.opts.Offset % len(potential)) + len(potential)) % len(potential)
		}
	}
	var failed []nodeFailure // nodes that are no candidate (reasons nil: not yet computed)
	var bestKey candidateKey
	nonViolating, violating := 0, 0
	for i := range potential {
		ni := r.fork.Node(int(potential[(offset+i)%len(potential)]))
		c, reasons, err := r.selectVictims(ni)
		if err != nil {
			return out, err
		}
		if c == nil {
			failed = append(failed, nodeFailure{ni, reasons})
			continue
		}
		keep := false
		if c.numPDB == 0 {
			keep = nonViolating < num
			nonViolating += b2i(keep)
		} else {
			keep = violating < num
			violating += b2i(keep)
		}
		if keep {
			if k := c.key(); nonViolating+violating == 1 || compareCandidates(k, bestKey) < 0 {
				bestKey = k
				r.best, r.cur = r.cur, r.best
			}
		}
		if nonViolating > 0 && nonViolating+violating >= num {
			break
		}
	}
	if nonViolating+violating == 0 {
		msg, err := r.noCandidateMessage(numAll, failed)
		if err != nil {
			return out, err
		}
		out.Message = preemptionPrefix + msg
		return out, nil
	}
	best := &r.best
	out.Node, out.NumPDBViolations = best.node, best.numPDB
	out.Victims = make([]*snapshot.PodInfo, len(best.victims))
	for i := range best.victims {
		out.Victims[i] = best.victims[i].pi
	}
	out.Message = "found a potential placement for pod on node " + best.node + ", preempting " + strconv.Itoa(len(best.victims)) + " victims"
	return out, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nodeFailure is a potential node where preemption does not help, with
// its status's reasons (nil until needed: the fit-arithmetic dry run
// decides without them).
type nodeFailure struct {
	node    *snapshot.NodeInfo
	reasons []Reason
}

// prepare runs every filter's PreFilter once on the original cluster
// and decides how the dry run re-checks the pod: with the prepared
// filters when they hold in every state the dry run makes (nodeLoc), and
// with fit arithmetic alone when, besides, NodeResourcesFit is the only
// prepared filter that reads the node's pods (fast).
func (r *preemptRun) prepare() error {
	pfs, owners, only, reject, err := r.preFilter()
	if err != nil {
		return err
	}
	r.pfs, r.pfOwners, r.only, r.reject = pfs, owners, only, reject
	r.pfNames = r.names(owners)
	r.nodeLoc = true
	for i, f := range r.s.filters {
		if !isNodeLocal(f) && !r.inertInDryRun(i, f) {
			r.nodeLoc = false
		}
	}
	r.fast.prepare(r)
	return nil
}

// inertInDryRun reports that f, a filter that is not node-local, gave
// the pod no filter on the original cluster and gives none on any
// cluster the dry run makes from it: the original with pods removed from
// one node, plus the nominated pods of priority >= the pod's. That holds
// for PodTopologySpread (whether a DoNotSchedule constraint applies
// depends on the pod and the cluster's workload objects, never on its
// pods) and for InterPodAffinity when no nominee has pod (anti-)affinity
// terms (with none on the pod and none among the original pods, removing
// pods adds none). Any other filter is assumed to depend on the pods.
func (r *preemptRun) inertInDryRun(i int, f Filter) bool {
	if slices.Contains(r.pfOwners, i) {
		return false
	}
	switch f.(type) {
	case *podTopologySpreadPlugin:
		return true
	case *interPodAffinity:
		for _, l := range r.s.nominated.byNode {
			for _, n := range l {
				if n.prio >= r.prio && n.pi.Key() != r.pod.Key() && interpod.TermsOf(n.pi) != nil {
					return false
				}
			}
		}
		return true
	}
	return false
}

// preFilter prepares the filters for the pod on the fork's current
// state: the prepared filters with the filter each came from.
func (r *preemptRun) preFilter() (pfs []PodFilter, owners []int, only map[string]struct{}, reject bool, err error) {
	for i, f := range r.s.filters {
		res, err := RunPreFilter(f, r.pod, r.fork)
		if err != nil {
			releaseFilters(pfs)
			return nil, nil, nil, false, filterError(f, r.pod, err)
		}
		if res.Reject != "" {
			releaseFilters(pfs)
			return nil, nil, nil, true, nil
		}
		if res.NodeNames != nil {
			only = intersect(only, res.NodeNames)
		}
		if res.Filter != nil {
			pfs = append(pfs, res.Filter)
			owners = append(owners, i)
		}
	}
	return pfs, owners, only, false, nil
}

// names returns the names of the filters at indexes owners.
func (r *preemptRun) names(owners []int) []string {
	out := make([]string, len(owners))
	for i, o := range owners {
		out[i] = r.s.filters[o].Name()
	}
	return out
}

// check runs the filters on node name of the fork's current state as
// upstream's RunFilterPluginsWithNominatedPods: first with the nominated
// pods of equal or higher priority added to the node (if any), then, if
// that passed, without. changed says the fork is no longer the original
// cluster (the dry run removed or reprieved pods). It returns the
// failing filter's reasons in scratch space, valid until the next call.
func (r *preemptRun) check(ni *snapshot.NodeInfo, changed bool) (bool, []Reason, error) {
	name := ni.Name()
	if noms := r.s.nominatedFor(name, r.pod.Key(), r.prio); len(noms) > 0 {
		r.fork.Fork()
		for _, n := range noms {
			_ = r.fork.AddPodInfo(n, name) // a pod already there stays once
		}
		ok, reasons, err := r.filter(r.fork.Get(name), true)
		_ = r.fork.Revert()
		if err != nil || !ok {
			return ok, reasons, err
		}
	}
	return r.filter(ni, changed)
}

// filter runs the filters once on node name; the filters prepared on the
// original cluster unless the fork changed and they may not hold there.
func (r *preemptRun) filter(ni *snapshot.NodeInfo, changed bool) (bool, []Reason, error) {
	name := ni.Name()
	pfs, names, only, reject := r.pfs, r.pfNames, r.only, r.reject
	if changed && !r.nodeLoc {
		var owners []int
		var err error
		if pfs, owners, only, reject, err = r.preFilter(); err != nil {
			return false, nil, err
		}
		// Prepared for this one check: their reasons are copied into
		// r.rejected before they are released.
		defer releaseFilters(pfs)
		names = r.names(owners)
	}
	if reject {
		r.rejected = append(r.rejected[:0], Reason{Node: name, Code: CodeCustom, Unresolvable: true, Text: msgPreemptionNotHelpful})
		return false, r.rejected, nil
	}
	if only != nil {
		if _, ok := only[name]; !ok {
			r.rejected = append(r.rejected[:0], Reason{Node: name, Code: CodeNotCandidate, Unresolvable: true, Text: msgPreemptionNotHelpful})
			return false, r.rejected, nil
		}
	}
	for j, f := range pfs {
		reasons := f.Filter(ni, r.rejected[:0])
		r.rejected = reasons[:0]
		if len(reasons) > 0 {
			for k := range reasons {
				reasons[k].Plugin, reasons[k].Node = names[j], name
			}
			return false, reasons, nil
		}
	}
	return true, nil, nil
}

func unresolvable(reasons []Reason) bool {
	for i := range reasons {
		if reasons[i].Unresolvable {
			return true
		}
	}
	return false
}

// priority returns p's priority (O(1) plus a lookup for a pod with only
// priorityClassName).
func (r *preemptRun) priority(p *snapshot.PodInfo) (int32, error) {
	t := p.Template()
	if pr := t.Spec.Priority; pr != nil {
		return *pr, nil
	}
	if t.Spec.PriorityClassName == "" {
		return 0, nil
	}
	return PodPriority(p.Pod(), r.opts.Objects)
}

// nominatedNode is the preemptor's nominated node: its nomination in the
// scheduler, else status.nominatedNodeName.
func (r *preemptRun) nominatedNode() string {
	if n, ok := r.s.nominatedNode(r.pod.Key()); ok {
		return n
	}
	return r.pod.Pod().Status.NominatedNodeName
}

// terminatingByPreemption is upstream's PodTerminatingByPreemption.
func terminatingByPreemption(p *v1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			return c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// selectVictims is upstream's SelectVictimsOnNode. It returns r.cur
// filled in, or nil and the node's status reasons (nil when the
// fit-arithmetic dry run decided: [preemptRun.noCandidateMessage]
// computes them if needed). The fork is left as it was found.
func (r *preemptRun) selectVictims(ni *snapshot.NodeInfo) (*candidate, []Reason, error) {
	name := ni.Name()
	pot := r.pot[:0]
	for _, p := range ni.Pods() {
		vp, err := r.priority(p)
		if err != nil {
			return nil, nil, err
		}
		if vp < r.prio {
			pot = append(pot, victim{pi: p, prio: vp, start: startNanos(p)})
		}
	}
	r.pot = pot
	if len(pot) == 0 {
		return nil, []Reason{{Node: name, Code: CodeCustom, Unresolvable: true, Text: msgNoVictims}}, nil
	}
	if r.fast.ok && len(r.s.nominatedFor(name, r.pod.Key(), r.prio)) == 0 {
		c, err := r.fastSelect(ni, pot)
		return c, nil, err
	}
	return r.slowSelect(name, pot)
}

// slowSelect is the dry run on a fork layer: remove the potential
// victims pot, run the filters, then reprieve each victim whose return
// the filters still pass.
func (r *preemptRun) slowSelect(name string, pot []victim) (*candidate, []Reason, error) {
	r.fork.Fork()
	defer func() { _ = r.fork.Revert() }()
	for i := range pot {
		if err := r.fork.RemovePod(pot[i].pi.Key(), name); err != nil {
			return nil, nil, err
		}
	}
	if ok, reasons, err := r.check(r.fork.Get(name), true); err != nil || !ok {
		return nil, slices.Clone(reasons), err
	}
	return r.reprieve(name, pot, func(v *victim) (bool, error) {
		if err := r.fork.AddPodInfo(v.pi, name); err != nil {
			return false, err
		}
		ok, _, err := r.check(r.fork.Get(name), true)
		if err != nil {
			return false, err
		}
		if !ok {
			if err := r.fork.RemovePod(v.pi.Key(), name); err != nil {
				return false, err
			}
		}
		return ok, nil
	})
}

// reprieve sorts the potential victims pot (most important first) and
// puts them back, PDB-violating ones first, each group in that order,
// keeping each one that back reports the pod still fits with; the others
// are r.cur's victims.
func (r *preemptRun) reprieve(name string, pot []victim, back func(*victim) (bool, error)) (*candidate, []Reason, error) {
	slices.SortFunc(pot, func(a, b victim) int { return moreImportant(&a, &b) })
	violating, err := r.pdbViolations(pot)
	if err != nil {
		return nil, nil, err
	}
	c := &r.cur
	c.node, c.victims, c.numPDB = name, c.victims[:0], 0
	nViol := 0
	for pass := range 2 {
		for i := range pot {
			if violating[i] != (pass == 0) {
				continue
			}
			if pass == 0 {
				nViol++
			}
			fits, err := back(&pot[i])
			if err != nil {
				return nil, nil, err
			}
			if !fits {
				c.victims = append(c.victims, pot[i])
				if pass == 0 {
					c.numPDB++
				}
			}
		}
	}
	if nViol != 0 && nViol != len(pot) {
		slices.SortFunc(c.victims, func(a, b victim) int { return moreImportant(&a, &b) })
	}
	if len(c.victims) == 0 {
		return nil, nil, fmt.Errorf("framework: preemption: pod %s: expected at least one victim pod on node %q", r.pod.Key(), name)
	}
	return c, nil, nil
}

// pdbViolations is upstream's FilterVictimsWithPDBViolation for single
// pods, in the order given (most important first): reports per victim
// whether evicting it (and those before it) violates a PDB. The result
// is scratch space, valid until the next call.
func (r *preemptRun) pdbViolations(pot []victim) ([]bool, error) {
	out := slices.Grow(r.viol[:0], len(pot))[:len(pot)]
	clear(out)
	r.viol = out
	if r.allowed != nil {
		clear(r.allowed)
	}
	for i := range pot {
		pdbs, err := r.pdbsOf(pot[i].pi.Key().Namespace)
		if err != nil {
			return nil, err
		}
		podLabels := pot[i].pi.Template().Labels
		if len(pdbs) == 0 || len(podLabels) == 0 {
			continue
		}
		for _, d := range pdbs {
			if d.sel.Empty() || !d.sel.Matches(labels.Set(podLabels)) {
				continue
			}
			if _, ok := d.pdb.Status.DisruptedPods[pot[i].pi.Key().Name]; ok {
				continue
			}
			if r.allowed == nil {
				r.allowed = map[*policyv1.PodDisruptionBudget]int32{}
			}
			a, seen := r.allowed[d.pdb]
			if !seen {
				a = d.pdb.Status.DisruptionsAllowed
			}
			a--
			r.allowed[d.pdb] = a
			if a < 0 {
				out[i] = true
				break
			}
		}
	}
	return out, nil
}

// pdbsOf returns the namespace's PDBs in name order with parsed selectors.
func (r *preemptRun) pdbsOf(ns string) ([]pdbInfo, error) {
	if r.lastNSOK && ns == r.lastNS {
		return r.lastPDBs, nil
	}
	if l, ok := r.pdbs[ns]; ok {
		r.lastNS, r.lastPDBs, r.lastNSOK = ns, l, true
		return l, nil
	}
	var l []pdbInfo
	if r.opts.Objects != nil {
		for _, d := range r.opts.Objects.PodDisruptionBudgets(ns) {
			if d == nil || d.Namespace != ns {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
			if err != nil {
				return nil, fmt.Errorf("framework: PodDisruptionBudget %s/%s: spec.selector: %v: %w", d.Namespace, d.Name, err, ErrInvalidConfig)
			}
			l = append(l, pdbInfo{pdb: d, sel: sel})
		}
		sort.SliceStable(l, func(i, j int) bool { return l[i].pdb.Name < l[j].pdb.Name })
	}
	r.pdbs[ns] = l
	r.lastNS, r.lastPDBs, r.lastNSOK = ns, l, true
	return l, nil
}

// key returns the candidate's criteria.
func (c *candidate) key() candidateKey {
	k := candidateKey{numPDB: int64(c.numPDB), highest: int64(c.victims[0].prio), num: int64(len(c.victims))}
	earliest := c.victims[0].start
	for i := range c.victims {
		v := &c.victims[i]
		k.sum += int64(v.prio) + math.MaxInt32 + 1
		if v.prio == c.victims[0].prio && v.start < earliest {
			earliest = v.start
		}
	}
	k.earliest = earliest
	return k
}

// candidateKey holds pickOneNodeForPreemption's criteria.
type candidateKey struct{ numPDB, highest, sum, num, earliest int64 }

// compareCandidates orders two candidates' criteria: negative when a
// is preferred.
func compareCandidates(a, b candidateKey) int {
	return cmp.Or(cmp.Compare(a.numPDB, b.numPDB), cmp.Compare(a.highest, b.highest),
		cmp.Compare(a.sum, b.sum), cmp.Compare(a.num, b.num), cmp.Compare(b.earliest, a.earliest))
}

// noCandidateMessage is upstream's FitError message for a dry run with no
// candidate: each failed node's reasons (computed on a fork for the nodes
// the fit-arithmetic dry run decided), every other node "Preemption is
// not helpful for scheduling", counted and sorted.
func (r *preemptRun) noCandidateMessage(numAll int, failed []nodeFailure) (string, error) {
	counts := map[string]int{}
	for _, f := range failed {
		rs := f.reasons
		if rs == nil {
			r.pot = r.pot[:0]
			for _, p := range f.node.Pods() {
				if vp, err := r.priority(p); err == nil && vp < r.prio {
					r.pot = append(r.pot, victim{pi: p, prio: vp, start: startNanos(p)})
				}
			}
			c, reasons, err := r.slowSelect(f.node.Name(), r.pot)
			if err != nil {
				return "", err
			}
			if c != nil {
				return "", fmt.Errorf("framework: preemption: pod %s: node %q: the fit arithmetic found no candidate, the filters found one", r.pod.Key(), f.node.Name())
			}
			rs = reasons
		}
		for i := range rs {
			counts[rs[i].Message()]++
		}
	}
	if absent := numAll - len(failed); absent > 0 {
		counts[msgPreemptionNotHelpful] += absent
	}
	parts := make([]string, 0, len(counts))
	for m, n := range counts {
		parts = append(parts, strconv.Itoa(n)+" "+m)
	}
	sort.Strings(parts)
	msg := noNodeAvailablePrefix + strconv.Itoa(numAll) + noNodeAvailableSuffix
	if len(parts) > 0 {
		msg += " " + strings.Join(parts, ", ") + "."
	}
	return msg, nil
}
