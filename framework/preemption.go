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

func startNanos(p *v1.Pod) int64 {
	if t := p.Status.StartTime; t != nil {
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
	nodeLoc  bool        // every filter is node-local: prepare once
	pfs      []PodFilter // prepared on the original cluster (nodeLoc)
	pfNames  []string
	only     map[string]struct{} // PreFilter NodeNames (nil: all)
	reject   bool                // a PreFilter rejected the pod
	pdbs     map[string][]pdbInfo
	rejected []Reason // scratch
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
// Cost: O(nodes × filter cost) to find potential nodes; per potential
// node O(pods there × filter cost) (a Fork layer per node, O(1) to
// revert); with a filter that is not node-local (PodTopologySpread) each
// check also re-runs its PreFilter on the changed cluster.
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
	prio, err := PodPriority(pod.Pod(), opts.Objects)
	if err != nil {
		return Preemption{}, err
	}
	r := &preemptRun{s: s, pod: pod, prio: prio, opts: opts, fork: base.Fork(),
		pdbs: map[string][]pdbInfo{}}
	return r.run()
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
	numAll := r.fork.NumNodes()

	// Potential nodes: resolvably unschedulable.
	var potential []string
	if !r.reject {
		for i := range numAll {
			name := r.fork.Node(i).Name()
			ok, reasons, err := r.check(name)
			if err != nil {
				return out, err
			}
			if !ok && !unresolvable(reasons) {
				potential = append(potential, name)
			}
		}
	}

	// Eligibility (after the filter statuses, which it reads).
	if nom := r.nominatedNode(); nom != "" && slices.Contains(potential, nom) {
		for _, p := range r.fork.Get(nom).Pods() {
			vp, err := r.priority(p)
			if err != nil {
				return out, err
			}
			if vp < r.prio && terminatingByPreemption(p.Pod()) {
				out.Message = preemptionPrefix + msgTerminatingVictim
				return out, nil
			}
		}
	}

	// The dry run.
	num := len(potential)
	offset := 0
	if r.opts.MinCandidateNodesPercentage != 0 || r.opts.MinCandidateNodesAbsolute != 0 {
		n := int32(len(potential)) * r.opts.MinCandidateNodesPercentage / 100
		num = int(min(max(n, r.opts.MinCandidateNodesAbsolute), int32(len(potential))))
		if len(potential) > 0 {
			offset = ((r.opts.Offset % len(potential)) + len(potential)) % len(potential)
		}
	}
	var nonViolating, violating []candidate
	failed := map[string][]Reason{} // node -> its status's reasons
	for i := range potential {
		name := potential[(offset+i)%len(potential)]
		c, reasons, err := r.selectVictims(name)
		if err != nil {
			return out, err
		}
		if c == nil {
			failed[name] = reasons
		} else if c.numPDB == 0 {
			if len(nonViolating) < num {
				nonViolating = append(nonViolating, *c)
			}
		} else if len(violating) < num {
			violating = append(violating, *c)
		}
		if len(nonViolating) > 0 && len(nonViolating)+len(violating) >= num {
			break
		}
	}
	cands := append(nonViolating, violating...)
	if len(cands) == 0 {
		out.Message = preemptionPrefix + noCandidateMessage(numAll, failed)
		return out, nil
	}
	best := pickOneNode(cands)
	out.Node, out.NumPDBViolations = best.node, best.numPDB
	out.Victims = make([]*snapshot.PodInfo, len(best.victims))
	for i := range best.victims {
		out.Victims[i] = best.victims[i].pi
	}
	out.Message = "found a potential placement for pod on node " + best.node + ", preempting " + strconv.Itoa(len(best.victims)) + " victims"
	return out, nil
}

// prepare runs every filter's PreFilter once on the original cluster.
func (r *preemptRun) prepare() error {
	r.nodeLoc = true
	for _, f := range r.s.filters {
		if !isNodeLocal(f) {
			r.nodeLoc = false
		}
	}
	pfs, names, only, reject, err := r.preFilter()
	if err != nil {
		return err
	}
	r.pfs, r.pfNames, r.only, r.reject = pfs, names, only, reject
	return nil
}

// preFilter prepares the filters for the pod on the fork's current state.
func (r *preemptRun) preFilter() (pfs []PodFilter, names []string, only map[string]struct{}, reject bool, err error) {
	for _, f := range r.s.filters {
		res, err := RunPreFilter(f, r.pod, r.fork)
		if err != nil {
			return nil, nil, nil, false, fmt.Errorf("framework: filter %s: pod %s: %w", f.Name(), r.pod.Key(), err)
		}
		if res.Reject != "" {
			return nil, nil, nil, true, nil
		}
		if res.NodeNames != nil {
			only = intersect(only, res.NodeNames)
		}
		if res.Filter != nil {
			pfs = append(pfs, res.Filter)
			names = append(names, f.Name())
		}
	}
	return pfs, names, only, false, nil
}

// check runs the filters on node name of the fork's current state as
// upstream's RunFilterPluginsWithNominatedPods: first with the nominated
// pods of equal or higher priority added to the node (if any), then, if
// that passed, without. It returns the failing filter's reasons.
func (r *preemptRun) check(name string) (bool, []Reason, error) {
	if noms := r.s.nominatedFor(name, r.pod.Key(), r.prio); len(noms) > 0 {
		r.fork.Fork()
		for _, n := range noms {
			_ = r.fork.AddPodInfo(n, name) // a pod already there stays once
		}
		ok, reasons, err := r.filter(name)
		_ = r.fork.Revert()
		if err != nil || !ok {
			return ok, reasons, err
		}
	}
	return r.filter(name)
}

// filter runs the filters once on node name.
func (r *preemptRun) filter(name string) (bool, []Reason, error) {
	pfs, names, only, reject := r.pfs, r.pfNames, r.only, r.reject
	if !r.nodeLoc {
		var err error
		if pfs, names, only, reject, err = r.preFilter(); err != nil {
			return false, nil, err
		}
	}
	if reject {
		return false, []Reason{{Node: name, Code: CodeCustom, Unresolvable: true, Text: msgPreemptionNotHelpful}}, nil
	}
	if only != nil {
		if _, ok := only[name]; !ok {
			return false, []Reason{{Node: name, Code: CodeNotCandidate, Unresolvable: true, Text: msgPreemptionNotHelpful}}, nil
		}
	}
	ni := r.fork.Get(name)
	for j, f := range pfs {
		reasons := f.Filter(ni, r.rejected[:0])
		if len(reasons) > 0 {
			out := slices.Clone(reasons)
			for k := range out {
				out[k].Plugin, out[k].Node = names[j], name
			}
			r.rejected = reasons[:0]
			return false, out, nil
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

// selectVictims is upstream's SelectVictimsOnNode on the fork, which it
// leaves as it found it. A nil candidate comes with the node's status
// reasons.
func (r *preemptRun) selectVictims(name string) (*candidate, []Reason, error) {
	ni := r.fork.Get(name)
	var pot []victim
	for _, p := range ni.Pods() {
		vp, err := r.priority(p)
		if err != nil {
			return nil, nil, err
		}
		if vp < r.prio {
			pot = append(pot, victim{pi: p, prio: vp, start: startNanos(p.Pod())})
		}
	}
	if len(pot) == 0 {
		return nil, []Reason{{Node: name, Code: CodeCustom, Unresolvable: true, Text: msgNoVictims}}, nil
	}
	r.fork.Fork()
	defer func() { _ = r.fork.Revert() }()
	for i := range pot {
		if err := r.fork.RemovePod(pot[i].pi.Key(), name); err != nil {
			return nil, nil, err
		}
	}
	if ok, reasons, err := r.check(name); err != nil || !ok {
		return nil, reasons, err
	}
	slices.SortFunc(pot, func(a, b victim) int { return moreImportant(&a, &b) })
	violating, err := r.pdbViolations(pot)
	if err != nil {
		return nil, nil, err
	}
	c := &candidate{node: name}
	reprieve := func(v *victim) (bool, error) {
		if err := r.fork.AddPodInfo(v.pi, name); err != nil {
			return false, err
		}
		ok, _, err := r.check(name)
		if err != nil {
			return false, err
		}
		if !ok {
			if err := r.fork.RemovePod(v.pi.Key(), name); err != nil {
				return false, err
			}
			c.victims = append(c.victims, *v)
		}
		return ok, nil
	}
	nViol := 0
	for pass := range 2 {
		for i := range pot {
			if violating[i] != (pass == 0) {
				continue
			}
			if pass == 0 {
				nViol++
			}
			fits, err := reprieve(&pot[i])
			if err != nil {
				return nil, nil, err
			}
			if !fits && pass == 0 {
				c.numPDB++
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
// whether evicting it (and those before it) violates a PDB.
func (r *preemptRun) pdbViolations(pot []victim) ([]bool, error) {
	allowed := map[*policyv1.PodDisruptionBudget]int32{}
	out := make([]bool, len(pot))
	for i := range pot {
		p := pot[i].pi.Pod()
		if len(p.Labels) == 0 {
			continue
		}
		pdbs, err := r.pdbsOf(p.Namespace)
		if err != nil {
			return nil, err
		}
		for _, d := range pdbs {
			if d.sel.Empty() || !d.sel.Matches(labels.Set(p.Labels)) {
				continue
			}
			if _, ok := d.pdb.Status.DisruptedPods[p.Name]; ok {
				continue
			}
			a, seen := allowed[d.pdb]
			if !seen {
				a = d.pdb.Status.DisruptionsAllowed
			}
			a--
			allowed[d.pdb] = a
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
	if l, ok := r.pdbs[ns]; ok {
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
	return l, nil
}

// pickOneNode is upstream's pickOneNodeForPreemption with its default
// criteria; the last tie goes to the first candidate.
func pickOneNode(cands []candidate) *candidate {
	if len(cands) == 1 {
		return &cands[0]
	}
	best := &cands[0]
	for i := 1; i < len(cands); i++ {
		if compareCandidates(cands[i].key(), best.key()) < 0 {
			best = &cands[i]
		}
	}
	return best
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
// candidate: each failed node's reasons, every other node "Preemption is
// not helpful for scheduling", counted and sorted.
func noCandidateMessage(numAll int, failed map[string][]Reason) string {
	counts := map[string]int{}
	for _, rs := range failed {
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
	return msg
}
