package whatif

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/quantity"
	"github.com/schedkit/schedkit/snapshot"
)

// NodeGroup is a set of identical nodes that can grow: a node template
// and how many nodes may be added.
type NodeGroup struct {
	// Name names the group; new nodes are called "<Name>-new-<i>", i
	// from 0, skipping the names of nodes the fork already has (so a
	// second ScaleUp on a fork holding the first one's nodes names its
	// own afresh). Names must be unique and not empty.
	Name string
	// Template is the shape of a new node (labels, taints, allocatable,
	// capacity); its name is replaced, and so is its
	// kubernetes.io/hostname label when it has one.
	Template *v1.Node
	// MaxNodes is how many nodes the group may add (its maximum size less
	// its current size), >= 0.
	MaxNodes int
	// Priority ranks the group for [ExpanderPriority]: higher wins
	// (cluster-autoscaler's priority expander, with the group's priority
	// given directly instead of by regular expressions over names).
	Priority int
}

// Expander chooses among the groups that can place pods, as
// cluster-autoscaler's expanders do; ties are broken at random from
// ScaleUpConfig.Seed (its random fallback).
type Expander int

const (
	// ExpanderLeastWaste picks the group whose new nodes would leave the
	// smallest fraction of CPU plus memory unused: (capacity − requested)
	// / capacity for each, capacity being the template's status.capacity
	// (status.allocatable for a resource status.capacity lacks) times the
	// nodes added and requested the sum of the placed pods' containers'
	// requests (cluster-autoscaler expander/waste). A template with
	// neither of cpu or of memory is an error wrapping ErrInvalidInput.
	ExpanderLeastWaste Expander = iota
	// ExpanderMostPods picks the group that places the most pods.
	ExpanderMostPods
	// ExpanderPriority picks the group with the highest Priority.
	ExpanderPriority
	// ExpanderRandom picks a group at random.
	ExpanderRandom
)

// String is cluster-autoscaler's flag value: "least-waste", "most-pods",
// "priority", "random".
func (e Expander) String() string {
	switch e {
	case ExpanderLeastWaste:
		return "least-waste"
	case ExpanderMostPods:
		return "most-pods"
	case ExpanderPriority:
		return "priority"
	case ExpanderRandom:
		return "random"
	}
	return "Expander(" + strconv.Itoa(int(e)) + ")"
}

// ScaleUpConfig configures [ScaleUp]. The zero value is the default
// scheduler, least-waste, seed 0, no node or time limit.
type ScaleUpConfig struct {
	// Scheduler places pods (filters and scores; cluster-autoscaler's
	// estimator checks filters only, a Profile with no scorers is that).
	Scheduler framework.Config
	// Expander chooses the group.
	Expander Expander
	// Seed drives the expander's random choice.
	Seed uint64
	// MaxNodes caps the nodes one group's estimate may add
	// (cluster-autoscaler's --max-nodes-per-scaleup, its estimation
	// limiter); 0 means no cap beyond NodeGroup.MaxNodes.
	MaxNodes int
	// MaxDuration caps one group's estimate (cluster-autoscaler's
	// --max-binpacking-time): once it has run that long it adds no more
	// nodes. It needs Now; 0 means no time limit.
	MaxDuration time.Duration
	// Now is the caller's clock, read once per node added when
	// MaxDuration > 0 (the package reads no clock of its own).
	Now func() time.Time
}

// ScaleUpResult answers [ScaleUp].
type ScaleUpResult struct {
	// Existing are the pending pods that fit the cluster as it is (placed
	// there first, as cluster-autoscaler's filter-out-schedulable step
	// does); no group is needed for them.
	Existing []Placement
	// Groups has one estimate per node group, in the given order.
	Groups []GroupEstimate
	// Chosen is the index in Groups of the expander's choice; -1 when no
	// group places a pod.
	Chosen int
	// Why explains the choice.
	Why string
}

// GroupEstimate is what growing one node group would do for the pods that
// do not fit the cluster as it is.
type GroupEstimate struct {
	// Group is the node group's name.
	Group string
	// NodesAdded is how many new nodes receive pods (empty nodes added
	// during the estimate are not counted, as cluster-autoscaler counts
	// only new nodes with pods).
	NodesAdded int
	// Placed are the pods placed on the new nodes, in the order placed.
	Placed []Placement
	// Pending are the pods still pending and why: the diagnosis on a
	// fresh node of the group, or the limit that stopped the estimate.
	Pending []Placement
	// Waste is the least-waste score, in [0, 2] (wasted CPU fraction plus
	// wasted memory fraction of the new nodes); 0 when no node is added.
	Waste float64
}

// ScaleUp estimates, for pending pods and node groups, how many new nodes
// of each group place them, with cluster-autoscaler's binpacking
// estimator semantics (estimator.BinpackingNodeEstimator), and which group
// an expander would grow:
//
//  1. The pods that fit the existing nodes are placed there first, one
//     by one in framework.Loop's queue order (see Existing); a pod of the
//     same equivalence group as one that fit nowhere, with no pod placed
//     in between, is not tried again (it would fit nowhere either).
//  2. For each group, on its own layer: the other pods are grouped in
//     equivalence groups (same controller, equal specs and labels; pods
//     with no controller are alone) and the groups sorted by decreasing
//     cpu/allocatable cpu + memory/allocatable memory of the group's
//     first pod against the template (the estimator's
//     DecreasingPodOrderer; sums of container requests; stable among
//     equal scores). A group's pods are placed on the nodes added so far
//     (only those; first-fit in the estimator, the scheduler's choice
//     here) until one fits none; that pod and each later one then try
//     the last node added, and a new template node is added only when
//     it does not fit there, unless the last node added is still empty
//     (the pod fits no fresh node) or a limit is reached. A pod that
//     fits no fresh node, or hits a limit, leaves the rest of its
//     equivalence group pending too, as the estimator stops there.
//  3. The expander picks among the groups that placed a pod.
//
// f is as before the call. Deterministic for cfg.Seed and
// cfg.Scheduler.Seed (and the clock, with MaxDuration).
//
// Cost: at most one scheduling cycle per pending pod over the existing
// nodes; then per group, for each equivalence group, cycles over the
// nodes added until a pod fits none (the other nodes rejected by a
// node-local filter, so with the scheduler's equivalence cache a pod
// after the first costs O(changed nodes) plus cheap O(nodes) passes),
// and for each later pod one or two cycles on the last node added alone;
// O(pods × equivalence groups per controller) grouping and a sort.
// Errors (f unchanged): a nil fork or pod, an invalid pod, a group with
// no name, a repeated name, a nil template or a negative MaxNodes, a pod
// listed twice in pending (same namespace/name), a
// negative cfg.MaxNodes or MaxDuration, MaxDuration without Now, an
// unknown Expander (wrapping [ErrInvalidInput]); an invalid scheduler
// configuration; a new node's name that is not a valid node name
// (wrapping ErrInvalidInput, naming the group and node).
func ScaleUp(f *snapshot.Fork, pending []*v1.Pod, groups []NodeGroup, cfg ScaleUpConfig) (ScaleUpResult, error) {
	if err := cfg.validate(groups); err != nil {
		return ScaleUpResult{}, err
	}
	pis := make([]*snapshot.PodInfo, len(pending))
	seen := make(map[snapshot.PodKey]int, len(pending))
	for i, p := range pending {
		if p == nil {
			return ScaleUpResult{}, fmt.Errorf("pending[%d] is nil: %w", i, ErrInvalidInput)
		}
		pi, err := snapshot.DecodePodInfo(p, decoderOf(f))
		if err != nil {
			return ScaleUpResult{}, fmt.Errorf("pending[%d]: %w: %w", i, err, ErrInvalidInput)
		}
		if j, dup := seen[pi.Key()]; dup {
			return ScaleUpResult{}, fmt.Errorf("pending[%d]: pod %s: listed twice (also pending[%d]): %w", i, pi.Key(), j, ErrInvalidInput)
		}
		seen[pi.Key()] = i
		pis[i] = pi
	}
	queueOrder(pis)
	s, err := framework.New(cfg.Scheduler)
	if err != nil {
		return ScaleUpResult{}, err
	}
	newOnly := &newNodesOnly{set: map[string]struct{}{}}
	all, last := cfg.Scheduler, cfg.Scheduler
	all.Filters = append([]framework.Filter{newOnly}, filtersOf(cfg.Scheduler)...)
	last.Filters = append([]framework.Filter{lastNode{newOnly}}, filtersOf(cfg.Scheduler)...)
	if err := open(f); err != nil {
		return ScaleUpResult{}, err
	}
	defer f.Revert() //nolint:errcheck // the layer opened above
	res := ScaleUpResult{Chosen: -1}
	// A pod equivalent to one that fit nowhere, with no pod placed
	// since, fits nowhere either (same spec and labels, same cluster):
	// its cycle is skipped.
	failed := map[*class]int{} // class -> len(res.Existing) at its failure
	left := map[*snapshot.PodInfo]bool{}
	groupsOf := equivalenceGroups(pis)
	classOf := map[*snapshot.PodInfo]*class{}
	for _, c := range groupsOf {
		for _, pi := range c.pods {
			classOf[pi] = c
		}
	}
	for _, pi := range pis {
		c := classOf[pi]
		if at, ok := failed[c]; ok && at == len(res.Existing) {
			left[pi] = true
			continue
		}
		p, err := place(s, f, pi)
		if err != nil {
			return ScaleUpResult{}, err
		}
		if p.Node != "" {
			res.Existing = append(res.Existing, p)
		} else {
			failed[c] = len(res.Existing)
			left[pi] = true
		}
	}
	var classes []*class // the classes of the pods left, in order
	for _, c := range groupsOf {
		rest := &class{milliCPU: c.milliCPU, memory: c.memory}
		for _, pi := range c.pods {
			if left[pi] {
				rest.pods = append(rest.pods, pi)
			}
		}
		if len(rest.pods) > 0 {
			classes = append(classes, rest)
		}
	}
	for _, g := range groups {
		var es estimators
		if es.all, err = framework.New(all); err != nil {
			return ScaleUpResult{}, err
		}
		if es.last, err = framework.New(last); err != nil {
			return ScaleUpResult{}, err
		}
		newOnly.reset()
		f.Fork()
		ge, err := estimate(es, f, newOnly, classes, g, cfg)
		if rerr := f.Revert(); err == nil {
			err = rerr
		}
		if err != nil {
			return ScaleUpResult{}, err
		}
		res.Groups = append(res.Groups, ge)
	}
	res.Chosen, res.Why = expand(res.Groups, groups, cfg)
	return res, nil
}

func (cfg *ScaleUpConfig) validate(groups []NodeGroup) error {
	switch {
	case cfg.MaxNodes < 0:
		return fmt.Errorf("ScaleUpConfig.MaxNodes %d is negative: %w", cfg.MaxNodes, ErrInvalidInput)
	case cfg.MaxDuration < 0:
		return fmt.Errorf("ScaleUpConfig.MaxDuration %v is negative: %w", cfg.MaxDuration, ErrInvalidInput)
	case cfg.MaxDuration > 0 && cfg.Now == nil:
		return fmt.Errorf("ScaleUpConfig.MaxDuration is set but Now is nil: %w", ErrInvalidInput)
	case cfg.Expander < ExpanderLeastWaste || cfg.Expander > ExpanderRandom:
		return fmt.Errorf("ScaleUpConfig.Expander %v is unknown: %w", cfg.Expander, ErrInvalidInput)
	}
	seen := map[string]bool{}
	for i, g := range groups {
		switch {
		case g.Name == "":
			return fmt.Errorf("groups[%d].Name is empty: %w", i, ErrInvalidInput)
		case seen[g.Name]:
			return fmt.Errorf("groups[%d]: group %q repeats: %w", i, g.Name, ErrInvalidInput)
		case g.Template == nil:
			return fmt.Errorf("group %s: Template is nil: %w", g.Name, ErrInvalidInput)
		case g.MaxNodes < 0:
			return fmt.Errorf("group %s: MaxNodes %d is negative: %w", g.Name, g.MaxNodes, ErrInvalidInput)
		}
		if cfg.Expander == ExpanderLeastWaste {
			for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
				if _, ok := wasteBase(g.Template, r); !ok {
					return fmt.Errorf("group %s: Template has no %s in status.capacity or status.allocatable (least-waste computes waste from it): %w", g.Name, r, ErrInvalidInput)
				}
			}
		}
		seen[g.Name] = true
	}
	return nil
}

func filtersOf(cfg framework.Config) []framework.Filter {
	if cfg.Filters == nil {
		return framework.DefaultFilters()
	}
	return cfg.Filters
}

// estimators are one group's schedulers: all places a pod on the nodes
// added so far, last on the last node added only.
type estimators struct{ all, last *framework.Scheduler }

// lastNode narrows the candidates to the last node added.
type lastNode struct{ n *newNodesOnly }

// lastNodeName is lastNode's plugin name; lastNodeText is the reason
// [placeLast] gives the nodes it excluded.
const (
	lastNodeName = "LastNewNode"
	lastNodeText = "node(s) were not the last node added by the scale-up estimate"
)

func (lastNode) Name() string { return lastNodeName }

func (l lastNode) PreFilter(*snapshot.PodInfo) (framework.PreFilterResult, error) {
	return framework.PreFilterResult{NodeNames: l.n.names[len(l.n.names)-1:]}, nil
}

// placeLast places pi on the last node added only (s.last). When the pod
// does not fit, the nodes lastNode's PreFilter excluded are reported as
// not being the last node added, in the estimate's own words like
// newNodesOnly's, instead of the framework's "node(s) didn't satisfy
// plugin(s) [LastNewNode]", which names an internal plugin.
func placeLast(s estimators, f *snapshot.Fork, pi *snapshot.PodInfo) (Placement, error) {
	p, err := place(s.last, f, pi)
	if d := p.Diagnosis; err == nil && d != nil && d.NotCandidates > 0 && slices.Contains(d.UnschedulablePlugins, lastNodeName) {
		d.NotCandidate.Text = lastNodeText
	}
	return p, err
}

// newNodesOnly rejects the nodes not added by the estimate. It is
// node-local (framework's equivalence-cache promise): its verdict on a
// node depends only on the node's name, and a name joins the set when
// its node is added and never leaves it for the Scheduler's life (one
// group's estimate), so pods of one class are filtered and scored again
// only on the nodes that changed.
type newNodesOnly struct {
	names []string
	set   map[string]struct{}
}

func (*newNodesOnly) Name() string    { return "NewNodesOnly" }
func (*newNodesOnly) NodeLocal() bool { return true }

func (n *newNodesOnly) PreFilter(*snapshot.PodInfo) (framework.PreFilterResult, error) {
	return framework.PreFilterResult{Filter: n}, nil
}

func (n *newNodesOnly) Filter(node *snapshot.NodeInfo, reasons []framework.Reason) []framework.Reason {
	if _, ok := n.set[node.Name()]; ok {
		return reasons
	}
	return append(reasons, framework.Reason{Code: framework.CodeCustom, Unresolvable: true, Text: "node(s) were not added by the scale-up estimate"})
}

func (n *newNodesOnly) add(name string) {
	n.names = append(n.names, name)
	n.set[name] = struct{}{}
}

func (n *newNodesOnly) reset() {
	n.names = n.names[:0]
	clear(n.set)
}

// class is an equivalence group of pending pods.
type class struct {
	pods  []*snapshot.PodInfo
	score float64
	// milliCPU and memory are containerRequests of the class's pods
	// (equal specs, equal requests).
	milliCPU, memory int64
}

// equivalenceGroups groups pods by controller UID and equal specs (the
// estimator's PodEquivalenceGroup) and labels (which spreading and
// affinity read), in order of first appearance.
func equivalenceGroups(pods []*snapshot.PodInfo) []*class {
	var out []*class
	byCtrl := map[string][]*class{}
	for _, pi := range pods {
		ctrl := metav1.GetControllerOf(pi.Pod())
		if ctrl == nil {
			out = append(out, &class{pods: []*snapshot.PodInfo{pi}})
			continue
		}
		var c *class
		for _, cand := range byCtrl[string(ctrl.UID)] {
			q := cand.pods[0].Pod()
			if equalPods(q, pi.Pod()) {
				c = cand
				break
			}
		}
		if c == nil {
			c = &class{}
			byCtrl[string(ctrl.UID)] = append(byCtrl[string(ctrl.UID)], c)
			out = append(out, c)
		}
		c.pods = append(c.pods, pi)
	}
	for _, c := range out {
		c.milliCPU, c.memory = containerRequests(c.pods[0].Pod())
	}
	return out
}

// equalPods compares labels and specs: reflect.DeepEqual first (fast,
// and true for copies of one template), then semantically (quantities
// written differently).
func equalPods(a, b *v1.Pod) bool {
	if reflect.DeepEqual(a.Labels, b.Labels) && reflect.DeepEqual(&a.Spec, &b.Spec) {
		return true
	}
	return equality.Semantic.DeepEqual(a.Labels, b.Labels) && equality.Semantic.DeepEqual(a.Spec, b.Spec)
}

// containerRequests sums the containers' cpu (milli) and memory (bytes)
// requests, as the estimator's orderer and the least-waste expander do
// (no init containers, overhead or pod-level resources).
func containerRequests(p *v1.Pod) (milliCPU, memory int64) {
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Requests[v1.ResourceCPU]; ok {
			milliCPU = arith.Add(milliCPU, quantity.Milli(q))
		}
		if q, ok := c.Resources.Requests[v1.ResourceMemory]; ok {
			memory = arith.Add(memory, quantity.Value(q))
		}
	}
	return milliCPU, memory
}

// orderScore is DecreasingPodOrderer's score of a pod requesting cpu
// (milli) and mem (bytes) in its containers against template.
func orderScore(cpu, mem int64, template *v1.Node) float64 {
	score := 0.0
	if q, ok := template.Status.Allocatable[v1.ResourceCPU]; ok {
		if a := quantity.Milli(q); a > 0 {
			score += float64(cpu) / float64(a)
		}
	}
	if q, ok := template.Status.Allocatable[v1.ResourceMemory]; ok {
		if a := quantity.Value(q); a > 0 {
			score += float64(mem) / float64(a)
		}
	}
	return score
}

// estimate runs the binpacking estimate for one group on f's top layer.
func estimate(s estimators, f *snapshot.Fork, newOnly *newNodesOnly, classes []*class, g NodeGroup, cfg ScaleUpConfig) (GroupEstimate, error) {
	ge := GroupEstimate{Group: g.Name}
	order := make([]*class, len(classes))
	for i, c := range classes {
		c.score = orderScore(c.milliCPU, c.memory, g.Template)
		order[i] = c
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].score > order[j].score })
	limit := g.MaxNodes
	if cfg.MaxNodes > 0 && cfg.MaxNodes < limit {
		limit = cfg.MaxNodes
	}
	var start time.Time
	if cfg.MaxDuration > 0 {
		start = cfg.Now()
	}
	withPods := map[string]bool{}
	last := ""
	next := 0          // the index of the next new node's name to try
	var cpu, mem int64 // placed pods' container requests, for waste
	for _, c := range order {
		placed := len(ge.Placed)
		// The estimator's tryToScheduleOnExistingNodes: the class's pods
		// go on the nodes added so far until one fits none of them.
		k := 0
		var p Placement
		for ; k < len(c.pods); k++ {
			var err error
			if p, err = place(s.all, f, c.pods[k]); err != nil {
				return GroupEstimate{}, err
			}
			if p.Node == "" {
				break
			}
			withPods[p.Node] = true
			ge.Placed = append(ge.Placed, p)
		}
		// Its tryToScheduleOnNewNodes: each later pod tries the last
		// node added (the pod that just failed has: it is among the
		// nodes added), else a new node, else it and the rest of the
		// class stay pending.
		for first := true; k < len(c.pods); k, first = k+1, false {
			pi := c.pods[k]
			if !first && last != "" {
				var err error
				if p, err = placeLast(s, f, pi); err != nil {
					return GroupEstimate{}, err
				}
				if p.Node != "" {
					ge.Placed = append(ge.Placed, p)
					continue
				}
			}
			why := ""
			switch {
			case last != "" && !withPods[last]:
				// The last node added is empty and the pod does not fit
				// it: no fresh node would take it.
			case len(newOnly.names) >= limit:
				why = fmt.Sprintf("node limit: group %s may add %d node(s)", g.Name, limit)
			case cfg.MaxDuration > 0 && cfg.Now().Sub(start) > cfg.MaxDuration:
				why = fmt.Sprintf("time limit: the estimate ran longer than %v", cfg.MaxDuration)
			default:
				var name string
				name, next = newNodeName(f, g.Name, next)
				if err := f.AddNode(fromTemplate(g.Template, name)); err != nil {
					return GroupEstimate{}, fmt.Errorf("group %s: new node %s: %w: %w", g.Name, name, err, ErrInvalidInput)
				}
				newOnly.add(name)
				last = name
				var err error
				if p, err = placeLast(s, f, pi); err != nil {
					return GroupEstimate{}, err
				}
				if p.Node != "" {
					withPods[p.Node] = true
					ge.Placed = append(ge.Placed, p)
					continue
				}
			}
			if why != "" {
				p.Diagnosis, p.Why = nil, why
			}
			ge.Pending = append(ge.Pending, p)
			for _, rest := range c.pods[k+1:] {
				ge.Pending = append(ge.Pending, Placement{Pod: rest, Diagnosis: p.Diagnosis, Why: p.Why})
			}
			break
		}
		n := int64(len(ge.Placed) - placed)
		cpu, mem = cpu+n*c.milliCPU, mem+n*c.memory
	}
	ge.NodesAdded = len(withPods)
	ge.Waste = waste(ge.NodesAdded, cpu, mem, g.Template)
	return ge, nil
}

// newNodeName returns the first name "<group>-new-<i>", i >= from, that
// no node of f has (an earlier ScaleUp's nodes, added to the cluster or
// to the fork, keep theirs), and the index after it. O(names skipped).
func newNodeName(f *snapshot.Fork, group string, from int) (string, int) {
	for i := from; ; i++ {
		if name := group + "-new-" + strconv.Itoa(i); f.Get(name) == nil {
			return name, i + 1
		}
	}
}

// fromTemplate is template named name (and its hostname label, if any):
// its own metadata, the spec and status shared with template (read-only).
func fromTemplate(template *v1.Node, name string) *v1.Node {
	n := *template
	n.ObjectMeta = *template.ObjectMeta.DeepCopy()
	n.Name = name
	n.UID = ""
	if _, ok := n.Labels[v1.LabelHostname]; ok {
		n.Labels[v1.LabelHostname] = name
	}
	return &n
}

// waste is the least-waste expander's score of nodes new nodes of
// template holding pods that request cpu (milli) and mem (bytes) in their
// containers, each resource's capacity taken by wasteBase; a zero
// capacity wastes nothing (where the expander divides by zero).
func waste(nodes int, cpu, mem int64, template *v1.Node) float64 {
	if nodes == 0 {
		return 0
	}
	w := 0.0
	cq, _ := wasteBase(template, v1.ResourceCPU)
	if avail := quantity.Milli(cq) * int64(nodes); avail > 0 {
		w += float64(avail-cpu) / float64(avail)
	}
	mq, _ := wasteBase(template, v1.ResourceMemory)
	if avail := quantity.Value(mq) * int64(nodes); avail > 0 {
		w += float64(avail-mem) / float64(avail)
	}
	return w
}

// wasteBase is the template's capacity of r for least-waste: its
// status.capacity entry, else its status.allocatable entry (templates
// written by hand often give allocatable only); ok is false when it has
// neither.
func wasteBase(template *v1.Node, r v1.ResourceName) (q resource.Quantity, ok bool) {
	if q, ok = template.Status.Capacity[r]; ok {
		return q, true
	}
	q, ok = template.Status.Allocatable[r]
	return q, ok
}

// expand applies the expander to the groups that placed a pod.
func expand(ests []GroupEstimate, groups []NodeGroup, cfg ScaleUpConfig) (int, string) {
	var opts []int
	for i, ge := range ests {
		if len(ge.Placed) > 0 {
			opts = append(opts, i)
		}
	}
	if len(opts) == 0 {
		return -1, "no node group places a pending pod"
	}
	best := opts[:0:0]
	var what string
	switch cfg.Expander {
	case ExpanderLeastWaste:
		for _, i := range opts {
			if len(best) == 0 || ests[i].Waste < ests[best[0]].Waste {
				best = []int{i}
			} else if ests[i].Waste == ests[best[0]].Waste {
				best = append(best, i)
			}
		}
		what = fmt.Sprintf("waste %.4f", ests[best[0]].Waste)
	case ExpanderMostPods:
		for _, i := range opts {
			if len(best) == 0 || len(ests[i].Placed) > len(ests[best[0]].Placed) {
				best = []int{i}
			} else if len(ests[i].Placed) == len(ests[best[0]].Placed) {
				best = append(best, i)
			}
		}
		what = fmt.Sprintf("%d pods", len(ests[best[0]].Placed))
	case ExpanderPriority:
		for _, i := range opts {
			if len(best) == 0 || groups[i].Priority > groups[best[0]].Priority {
				best = []int{i}
			} else if groups[i].Priority == groups[best[0]].Priority {
				best = append(best, i)
			}
		}
		what = fmt.Sprintf("priority %d", groups[best[0]].Priority)
	case ExpanderRandom:
		best = opts
		what = "random"
	}
	chosen := best[0]
	why := fmt.Sprintf("%s: %s (%s)", cfg.Expander, ests[chosen].Group, what)
	if len(best) > 1 {
		r := rand.New(rand.NewPCG(cfg.Seed, 0))
		chosen = best[r.IntN(len(best))]
		names := make([]string, len(best))
		for k, i := range best {
			names[k] = ests[i].Group
		}
		why = fmt.Sprintf("%s: %s, chosen at random (seed %d) among %v (%s)", cfg.Expander, ests[chosen].Group, cfg.Seed, names, what)
	}
	return chosen, why
}
