// Package spread is upstream's PodTopologySpread arithmetic
// (kube-scheduler v1.37.2 pkg/scheduler/framework/plugins/podtopologyspread:
// common.go, filtering.go, scoring.go, plugin.go, and helper/spread.go for
// the system-default selector), shared by framework's PodTopologySpread
// filter and score's PodTopologySpread scorer.
//
// Layer: internal. It imports k8s.io/api, k8s.io/apimachinery and
// internal/selector (the one selector engine: pod label selectors, the
// pod's required node affinity) only, and reads nodes and pods through the small generic [NodeInfo] and [PodInfo]
// interfaces (which *snapshot.NodeInfo and *snapshot.PodInfo satisfy), so
// that it needs no public schedkit package. Whether the pod tolerates a
// node's taints the callers pass as a predicate built from their taint
// checks.
//
// The feature gates are upstream v1.37.2's defaults:
// NodeInclusionPolicyInPodTopologySpread (GA) and
// MatchLabelKeysInPodTopologySpread on; TaintTolerationComparisonOperators
// and InPlacePodVerticalScalingSchedulerPreemption off.
package spread

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/selector"
)

// Upstream's reason strings (podtopologyspread/plugin.go).
const (
	ReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	ReasonNodeLabelNotMatch   = ReasonConstraintsNotMatch + " (missing required label)"
)

// Upstream's defaulting types (config.PodTopologySpreadConstraintsDefaulting).
const (
	SystemDefaulting = "System"
	ListDefaulting   = "List"
)

// SystemDefaultConstraints are upstream's system defaults
// (podtopologyspread/plugin.go systemDefaultConstraints).
func SystemDefaultConstraints() []v1.TopologySpreadConstraint {
	return []v1.TopologySpreadConstraint{
		{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
		{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
	}
}

// ErrInvalidArgs is wrapped by [NewConfig]'s errors; callers wrap it in
// their own package's sentinel.
var ErrInvalidArgs = errors.New("invalid PodTopologySpread args")

// Lister finds the objects whose selectors make up the selector of the
// default constraints (snapshot.Workloads satisfies it). Every method
// returns nil for "none".
type Lister interface {
	Services(namespace string) []*v1.Service
	ReplicationController(namespace, name string) *v1.ReplicationController
	ReplicaSet(namespace, name string) *appsv1.ReplicaSet
	StatefulSet(namespace, name string) *appsv1.StatefulSet
}

// Config is validated PodTopologySpread args.
type Config struct {
	// Defaults apply to pods without spec.topologySpreadConstraints.
	Defaults []v1.TopologySpreadConstraint
	// System: the defaults are the system defaults (defaultingType
	// System). It decides whether scoring ignores nodes missing a
	// topology key.
	System bool
	// Lister finds the pod's Services and controller; nil: the cluster's
	// (see [Config.ListerOf]).
	Lister Lister
	// Memo caches the passes' per-block counts (memo.go); nil: none.
	// [NewConfig] sets a new one.
	Memo *Memo
	// Selectors caches the parsed constraints, own and default, per
	// workload (defaults.go); nil: none. [NewConfig] sets a new one. Its
	// default entries hold Defaults' parse: a Config with other
	// Defaults needs its own.
	Selectors *SelectorCache
}

// ListerOf returns the lister for a cycle over cluster: the configured
// Lister if set, else cluster itself if it has the look-ups (a
// snapshot.Snapshot or Fork, fed by the Cache or Ledger it came from),
// else nil (default constraints then never apply).
func (c *Config) ListerOf(cluster any) Lister {
	if c.Lister != nil {
		return c.Lister
	}
	l, _ := cluster.(Lister)
	return l
}

// NewConfig validates args as upstream's ValidatePodTopologySpreadArgs
// does and applies its defaulting ("" is System, as v1's
// SetDefaults_PodTopologySpreadArgs). Errors wrap [ErrInvalidArgs] and
// name the field ("defaultConstraints[1].maxSkew"). O(constraints²).
func NewConfig(defaults []v1.TopologySpreadConstraint, defaultingType string, lister Lister) (Config, error) {
	if defaultingType == "" {
		defaultingType = SystemDefaulting
	}
	var errs field.ErrorList
	switch {
	case defaultingType != SystemDefaulting && defaultingType != ListDefaulting:
		errs = append(errs, field.NotSupported(field.NewPath("defaultingType"), defaultingType, []string{SystemDefaulting, ListDefaulting}))
	case defaultingType == SystemDefaulting && len(defaults) > 0:
		errs = append(errs, field.Invalid(field.NewPath("defaultingType"), defaultingType, "when .defaultConstraints are not empty"))
	}
	path := field.NewPath("defaultConstraints")
	for i := range defaults {
		c := &defaults[i]
		p := path.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "not in valid range (0, inf)"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch c.WhenUnsatisfiable {
		case v1.DoNotSchedule, v1.ScheduleAnyway:
		case "":
			errs = append(errs, field.Required(p.Child("whenUnsatisfiable"), "can not be empty"))
		default:
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)}))
		}
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"))
		}
		for j := range defaults[:i] {
			if o := &defaults[j]; o.TopologyKey == c.TopologyKey && o.WhenUnsatisfiable == c.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(p, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("%w: %w", errs.ToAggregate(), ErrInvalidArgs)
	}
	cfg := Config{Defaults: defaults, Lister: lister, Memo: &Memo{}, Selectors: &SelectorCache{}}
	if defaultingType == SystemDefaulting {
		cfg.Defaults, cfg.System = SystemDefaultConstraints(), true
	}
	return cfg, nil
}

// Constraint is one parsed spread constraint (upstream's
// topologySpreadConstraint).
type Constraint struct {
	MaxSkew     int32
	TopologyKey string
	// Selector selects the pods counted; a Selector that is Empty
	// (labelSelector {}) counts no pod but matches the incoming pod
	// itself, as upstream's countPodsMatchSelector and Filter do.
	Selector Selector
	// MinDomains is the constraint's minDomains, 1 when unset.
	MinDomains int32
	// HonorAffinity and HonorTaints are nodeAffinityPolicy Honor (the
	// default) and nodeTaintsPolicy Honor (default Ignore).
	HonorAffinity, HonorTaints bool
	hostname                   bool
	key                        unique.Handle[string] // TopologyKey's
}

// Constraints returns the constraints with action whenUnsatisfiable that
// apply to pod (upstream getConstraints / initPreScoreState): the pod's own
// if it has any, else the defaults with the selector of [DefaultSelector]
// over l (none if that selector is empty). Errors (an invalid
// labelSelector) name the field. O(constraints × selector size), plus
// O(Services in the namespace) for defaults. The constraints come from
// c.Selectors when it holds them: the defaults' for the pod's class,
// owner and objects (O(labels × log labels + Services × selector size)
// to check), the pod's own for constraints equal to the pod's and the
// same values of their matchLabelKeys (O(recent specs × constraints ×
// selector size) to check); no allocation then. They are shared between
// pods and read-only.
func (c *Config) Constraints(pod *v1.Pod, action v1.UnsatisfiableConstraintAction, l Lister) ([]Constraint, error) {
	if own := pod.Spec.TopologySpreadConstraints; len(own) > 0 {
		if cs, ok := c.Selectors.getOwn(pod, action); ok {
			return cs, nil
		}
		cs, err := parse(own, pod.Labels, action, "spec.topologySpreadConstraints")
		if err != nil {
			return nil, err
		}
		c.Selectors.putOwn(pod, action, cs)
		return cs, nil
	}
	if !hasAction(c.Defaults, action) || unselected(pod, l) {
		return nil, nil // allocation-free for most pods
	}
	in := inputsOf(pod, l)
	if cs, ok := c.Selectors.get(pod, action, &in); ok {
		return cs, nil
	}
	cs, err := parse(c.Defaults, pod.Labels, action, "defaultConstraints")
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	sel := in.selector(pod)
	if sel.Empty() {
		cs = nil
	}
	for i := range cs {
		cs[i].Selector = sel
	}
	c.Selectors.put(pod, action, &in, cs)
	return cs, nil
}

// Inert reports whether [Config.Constraints] returns no constraint for
// pod and action over l without an error: the pod's own constraints have
// none with action, or it has none and no default has action or the
// default selector is empty. O(constraints), plus O(Services in the
// namespace) when defaults apply.
func (c *Config) Inert(pod *v1.Pod, action v1.UnsatisfiableConstraintAction, l Lister) bool {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return !hasAction(pod.Spec.TopologySpreadConstraints, action)
	}
	return !hasAction(c.Defaults, action) || unselected(pod, l) || DefaultSelector(pod, l).Empty()
}

// unselected reports, without allocating, that [DefaultSelector] is
// certainly empty for pod: no lister, or no Service in its namespace and
// no controller ownerReference.
func unselected(pod *v1.Pod, l Lister) bool {
	return l == nil || (len(l.Services(pod.Namespace)) == 0 && metav1.GetControllerOfNoCopy(pod) == nil)
}

// MayApply reports whether some constraint with action may apply to pod:
// one of its own, or, if it has none, a default (whose selector depends
// on the cluster's objects). O(constraints); allocates nothing.
func (c *Config) MayApply(pod *v1.Pod, action v1.UnsatisfiableConstraintAction) bool {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return hasAction(pod.Spec.TopologySpreadConstraints, action)
	}
	return hasAction(c.Defaults, action)
}

func hasAction(cs []v1.TopologySpreadConstraint, action v1.UnsatisfiableConstraintAction) bool {
	for i := range cs {
		if cs[i].WhenUnsatisfiable == action {
			return true
		}
	}
	return false
}

// parse is upstream's filterTopologySpreadConstraints.
func parse(in []v1.TopologySpreadConstraint, podLabels map[string]string, action v1.UnsatisfiableConstraintAction, path string) ([]Constraint, error) {
	var out []Constraint
	for i := range in {
		c := &in[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		one, err := selector.FromLabelSelector(c.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("%s[%d].labelSelector: %w", path, i, err)
		}
		sel := Selector{one}
		if len(c.MatchLabelKeys) > 0 && c.LabelSelector != nil {
			// Upstream's mergeLabelSetWithSelector: the pod's values of
			// these keys ANDed with the selector; a nil labelSelector
			// (nothing) stays as it is.
			set := map[string]string{}
			for _, k := range c.MatchLabelKeys {
				if v, ok := podLabels[k]; ok {
					set[k] = v
				}
			}
			if len(set) > 0 {
				sel = Selector{selector.FromSet(set), one}
			}
		}
		pc := Constraint{
			MaxSkew:       c.MaxSkew,
			TopologyKey:   c.TopologyKey,
			Selector:      sel,
			MinDomains:    1,
			HonorAffinity: true,
			hostname:      c.TopologyKey == v1.LabelHostname,
			key:           unique.Make(c.TopologyKey),
		}
		if c.MinDomains != nil {
			pc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			pc.HonorAffinity = *c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor
		}
		if c.NodeTaintsPolicy != nil {
			pc.HonorTaints = *c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor
		}
		out = append(out, pc)
	}
	return out, nil
}

// Selector is a pod label selector: compiled selectors ANDed (upstream's
// labels.Selector after Add). Read-only; matching allocates nothing.
type Selector []selector.Selector

// Matches reports whether every part matches the labels.
func (s Selector) Matches(ls map[string]string) bool {
	for i := range s {
		if !selector.MatchMap(&s[i], ls) {
			return false
		}
	}
	return true
}

// Empty reports whether s has no requirement (upstream's Selector.Empty:
// it matches every label set, and counts no pod).
func (s Selector) Empty() bool {
	for i := range s {
		if !s[i].Empty() {
			return false
		}
	}
	return true
}

var (
	rcKind = v1.SchemeGroupVersion.WithKind("ReplicationController")
	rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	ssKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
)

// DefaultSelector is upstream's helper.DefaultSelector: the union of the
// spec.selector of every Service in the pod's namespace whose (non-nil)
// selector matches the pod's labels, then, for the pod's controller
// (the ownerReference with controller: true): a ReplicationController's
// spec.selector merged into that set (its values win), or a ReplicaSet's
// or StatefulSet's spec.selector requirements added (an invalid or nil
// selector adds nothing). The controller is looked up by namespace and
// name whether or not its selector matches the pod. A nil lister gives an
// empty selector. O(services × selector size).
func DefaultSelector(pod *v1.Pod, l Lister) Selector {
	in := inputsOf(pod, l)
	return in.selector(pod)
}

// defaultInputs are the objects [DefaultSelector] reads for a pod: the
// Services in its namespace and its controller (at most one of rc, rs,
// ss: the controller found, by kind).
type defaultInputs struct {
	svcs  []*v1.Service
	owner *metav1.OwnerReference // the pod's controller reference, or nil
	rc    *v1.ReplicationController
	rs    *appsv1.ReplicaSet
	ss    *appsv1.StatefulSet
}

// inputsOf looks up pod's default selector inputs in l (none for a nil
// l). O(1) look-ups; allocates nothing.
func inputsOf(pod *v1.Pod, l Lister) defaultInputs {
	var in defaultInputs
	if l == nil {
		return in
	}
	in.svcs = l.Services(pod.Namespace)
	in.owner = metav1.GetControllerOfNoCopy(pod)
	if in.owner == nil {
		return in
	}
	gv, err := schema.ParseGroupVersion(in.owner.APIVersion)
	if err != nil {
		return in
	}
	switch gv.WithKind(in.owner.Kind) {
	case rcKind:
		in.rc = l.ReplicationController(pod.Namespace, in.owner.Name)
	case rsKind:
		in.rs = l.ReplicaSet(pod.Namespace, in.owner.Name)
	case ssKind:
		in.ss = l.StatefulSet(pod.Namespace, in.owner.Name)
	}
	return in
}

// selector is [DefaultSelector] from the inputs.
func (in *defaultInputs) selector(pod *v1.Pod) Selector {
	set := map[string]string{}
	for _, svc := range in.svcs {
		if svc == nil || svc.Spec.Selector == nil {
			continue // a nil selector matches nothing
		}
		if sel := selector.FromSet(svc.Spec.Selector); selector.MatchMap(&sel, pod.Labels) {
			maps.Copy(set, svc.Spec.Selector)
		}
	}
	var ls *metav1.LabelSelector
	switch {
	case in.rc != nil:
		maps.Copy(set, in.rc.Spec.Selector) // labels.Merge: the controller's values win
		return Selector{selector.FromSet(set)}
	case in.rs != nil:
		ls = in.rs.Spec.Selector
	case in.ss != nil:
		ls = in.ss.Spec.Selector
	}
	sel := Selector{selector.FromSet(set)}
	if ls == nil {
		return sel // nil: LabelSelectorAsSelector gives Nothing, which has no requirements to add
	}
	other, err := selector.FromLabelSelector(ls)
	if err != nil {
		return sel
	}
	return append(sel, other)
}

// PodInfo is the engine's view of a pod (*snapshot.PodInfo).
type PodInfo interface{ Pod() *v1.Pod }

// NodeInfo is the engine's view of a node (*snapshot.NodeInfo): its
// object, its labels as handles (for the node-affinity check) and its
// pods.
type NodeInfo[P PodInfo] interface {
	comparable // a pointer: the memo's blocks are matched by identity
	Node() *v1.Node
	Labels() []selector.Label
	Pods() []P
}

// Inclusion says whether a node passes the pod's required node affinity
// and tolerates-taints checks, the inputs of nodeAffinityPolicy and
// nodeTaintsPolicy Honor. Build it with [NewInclusion].
type Inclusion[N any] struct {
	affinity  func(name string, ls []selector.Label) bool
	tolerated func(N) bool
}

// NewInclusion returns the pod's inclusion checks: its required node
// affinity as upstream's RequiredNodeAffinity.Match (spec.nodeSelector
// and the required terms, compiled by internal/selector; invalid terms
// match nothing), and tolerated, which must report that the pod
// tolerates every NoSchedule and NoExecute taint of the node (nil: every
// node). O(requirements) to compile.
func NewInclusion[N any](pod *v1.Pod, tolerated func(N) bool) Inclusion[N] {
	in := Inclusion[N]{tolerated: tolerated}
	var required *selector.NodeSelector
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		ns, _ := selector.CompileNodeSelector(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, nil) // errors: those terms match nothing
		required = &ns
	}
	if len(pod.Spec.NodeSelector) == 0 && required == nil {
		return in
	}
	sel := selector.FromSet(pod.Spec.NodeSelector)
	in.affinity = func(name string, ls []selector.Label) bool {
		return selector.Match(&sel, ls) && (required == nil || selector.MatchNode(required, name, ls))
	}
	return in
}

// includes is upstream's matchNodeInclusionPolicies.
func (in *Inclusion[N]) includes(c *Constraint, n N, node *v1.Node, ls []selector.Label) bool {
	if c.HonorAffinity && in.affinity != nil && !in.affinity(node.Name, ls) {
		return false
	}
	if c.HonorTaints && in.tolerated != nil && !in.tolerated(n) {
		return false
	}
	return true
}

// Verdict is the outcome of [Filter.Check] on one node.
type Verdict uint8

const (
	// Pass: every constraint holds.
	Pass Verdict = iota
	// MissingLabel: the node lacks a constraint's topology key
	// (ReasonNodeLabelNotMatch, UnschedulableAndUnresolvable).
	MissingLabel
	// Skew: placing the pod would exceed a constraint's maxSkew
	// (ReasonConstraintsNotMatch, Unschedulable).
	Skew
)

// Filter is upstream's preFilterState for one pod: for every
// DoNotSchedule constraint, the matching pods per topology domain among
// the eligible nodes, the global minimum, and whether the pod matches its
// own selector. Domains are label values as handles (package unique).
// Read-only after [NewFilter]; safe for concurrent Check.
type Filter struct {
	cs     []Constraint
	counts []domains
	min    []int
	self   []bool
	// limit[i] is the most pods constraint i's domain may hold: a node
	// passes it while counts[i] of its domain <= limit[i] (maxSkew +
	// minimum − 1 if the pod matches itself).
	limit []int
	// all: every node the filter was built over passes (see PassesAll).
	all bool
	// headKeys: every topology key is the hostname or the zone (see
	// CheckHead).
	headKeys bool
	// small holds the per-constraint slices and the first domains of up
	// to two constraints, so that NewFilter allocates the Filter alone
	// for them.
	small struct {
		counts     [2]domains
		dom        [2][smallDomains]domain
		min, limit [2]int
		self       [2]bool
	}
}

// NewFilter counts, for the DoNotSchedule constraints cs of pod, the
// pods matching each constraint per topology domain over the n nodes
// node(0..n-1) (upstream calPreFilterState): a node missing any
// constraint's topology key is skipped; a constraint skips a node its
// inclusion policies exclude; a domain of an eligible node exists even
// with no matching pod. nil for no constraints (upstream's Skip).
// It reads each node's label handles and its pod groups ([GroupsOf]),
// not its pods: O(n × (labels × constraints + groups per node)) plus the
// selector once per pod class; allocates the per-domain maps. With a
// memo m and the cluster's blocks bv (both non-nil; bv describes the same
// n nodes) and inclusion policies that include every node, the pass
// reads only the nodes changed since the memo last saw them (memo.go):
// O(blocks × domains per block + changed nodes × (labels + groups)).
func NewFilter[N NodeInfo[P], P PodInfo](cs []Constraint, pod *v1.Pod, n int, node func(int) N, in Inclusion[N], m *Memo, bv Blocks[N]) *Filter {
	if len(cs) == 0 {
		return nil
	}
	f := &Filter{cs: cs, headKeys: true}
	for i := range cs {
		f.headKeys = f.headKeys && layout.InHead(cs[i].key)
	}
	if k := len(cs); k <= len(f.small.counts) {
		f.counts, f.min, f.self, f.limit = f.small.counts[:k], f.small.min[:k], f.small.self[:k], f.small.limit[:k]
		for i := range f.counts {
			f.counts[i].small = f.small.dom[i][:0]
		}
	} else {
		f.counts, f.min, f.self, f.limit = make([]domains, k), make([]int, k), make([]bool, k), make([]int, k)
	}
	for i := range cs {
		f.self[i] = cs[i].Selector.Matches(pod.Labels)
	}
	var blocks []*block
	if in.allTrivial(cs) {
		blocks = memoCounts(m, modeFilter, cs, pod.Namespace, bv, f.counts)
	}
	complete := 0 // nodes with every key
	if blocks != nil {
		for _, e := range blocks {
			complete += e.counted
		}
	} else {
		complete = filterPass(f, pod, n, node, in)
	}
	f.all = complete == n
	for i := range cs {
		// Upstream's critical path: the smallest count, MaxInt32 with no
		// domain; 0 when there are fewer domains than minDomains.
		m, most := f.counts[i].bounds()
		if f.counts[i].size() < int(cs[i].MinDomains) {
			m = 0
		}
		f.min[i] = m
		// count + self − min > maxSkew fails (int: no overflow with m
		// MaxInt32, no domain).
		f.limit[i] = int(cs[i].MaxSkew) + m
		if f.self[i] {
			f.limit[i]--
		}
		f.all = f.all && most <= f.limit[i]
	}
	return f
}

// PassesAll reports that [Filter.Check] passes every one of the n nodes
// the filter was built over: each has every topology key, and no domain
// holds more than its constraint allows (a domain missing from the
// counts, of nodes the inclusion policies excluded, holds 0, which
// always passes). A caller may then skip the per-node checks. O(1).
func (f *Filter) PassesAll() bool { return f.all }

// filterPass is NewFilter's direct pass over the n nodes; it returns the
// number of nodes with every topology key.
func filterPass[N NodeInfo[P], P PodInfo](f *Filter, pod *v1.Pod, n int, node func(int) N, in Inclusion[N]) (complete int) {
	cs := f.cs
	ms := make([]*matcher, len(cs))
	for i := range cs {
		ms[i] = newMatcher(cs[i].Selector, pod.Namespace)
	}
	vals := make([]unique.Handle[string], len(cs))
	for j := 0; j < n; j++ {
		ni := node(j)
		ls := ni.Labels()
		if !values(ls, cs, vals) {
			continue
		}
		complete++
		var groups []Group
		for i := range cs {
			c := &cs[i]
			if !in.trivial(c) && !in.includes(c, ni, ni.Node(), ls) {
				continue
			}
			if groups == nil {
				groups = GroupsOf(ni)
			}
			f.counts[i].add(vals[i], ms[i].count(groups))
		}
	}
	return complete
}

// values writes the value of each constraint's key in ls to vals and
// reports whether ls has every key.
func values(ls []selector.Label, cs []Constraint, vals []unique.Handle[string]) bool {
	for i := range cs {
		v, ok := valueOf(ls, cs[i].key)
		if !ok {
			return false
		}
		vals[i] = v
	}
	return true
}

// trivial reports that c's inclusion policies include every node for
// this pod (no required node affinity to honour, taints ignored or every
// node tolerated), so that the per-node check can be skipped.
func (in *Inclusion[N]) trivial(c *Constraint) bool {
	return (!c.HonorAffinity || in.affinity == nil) && (!c.HonorTaints || in.tolerated == nil)
}

// allTrivial reports that every constraint's inclusion is trivial.
func (in *Inclusion[N]) allTrivial(cs []Constraint) bool {
	for i := range cs {
		if !in.trivial(&cs[i]) {
			return false
		}
	}
	return true
}

// Check is upstream's Filter for one node, given its labels as handles
// (snapshot.NodeInfo.Labels): constraint by constraint, the node must
// have the topology key (else MissingLabel), and matching pods in its
// domain + 1 if the pod matches the selector − the global minimum must
// not exceed maxSkew (else Skew). O(constraints × labels) pointer
// compares and one map look-up per constraint; allocates nothing.
func (f *Filter) Check(ls []selector.Label) Verdict {
	for i := range f.cs {
		v, ok := valueOf(ls, f.cs[i].key)
		if !ok {
			return MissingLabel
		}
		if f.counts[i].get(v) > f.limit[i] {
			return Skew
		}
	}
	return Pass
}

// HeadKeys reports that every constraint's topology key is
// kubernetes.io/hostname or topology.kubernetes.io/zone, whose values a
// node's layout head holds, so that [Filter.CheckHead] applies. O(1).
func (f *Filter) HeadKeys() bool { return f.headKeys }

// CheckHead is [Filter.Check] for a node given its layout head, whose
// CPUMemory.Hostname and FilterBlock.Zone hold the node's hostname and
// zone label values (the zero handle: no such label): the same verdict
// without reading the node's labels, two dependent cache lines fewer
// per node. Only when HeadKeys; O(constraints), one map look-up per
// hostname constraint; allocates nothing.
func (f *Filter) CheckHead(h *layout.Head) Verdict {
	for i := range f.cs {
		v, ok, _ := h.Value(f.cs[i].key)
		if !ok {
			return MissingLabel
		}
		if f.counts[i].get(v) > f.limit[i] {
			return Skew
		}
	}
	return Pass
}

// ZoneBlocked is, for a filter whose only constraint has the zone key
// (topology.kubernetes.io/zone, which a node's head holds:
// layout.FilterBlock.Zone), the domains whose nodes fail it: those
// holding more matching pods than the constraint allows. It fills
// dst[:n] and reports ok; then, for every node, [Filter.Check] gives
// MissingLabel for a node without the zone label, Skew for one whose
// zone is among dst[:n], Pass otherwise, so that a caller may check a
// node with a few handle comparisons. ok is false for any other filter
// and when more than len(dst) domains are blocked. O(domains); no
// allocation.
func (f *Filter) ZoneBlocked(dst []unique.Handle[string]) (n int, ok bool) {
	if len(f.cs) != 1 || f.cs[0].key != layout.ZoneKey {
		return 0, false
	}
	ok = true
	f.counts[0].each(func(v unique.Handle[string], c int) {
		if c <= f.limit[0] {
			return
		}
		if n == len(dst) {
			ok = false
			return
		}
		dst[n] = v
		n++
	})
	if !ok {
		return 0, false
	}
	return n, true
}

// Constraints returns the constraints the filter checks. Read-only.
func (f *Filter) Constraints() []Constraint { return f.cs }

// emptyValue is the domain upstream's scoring gives a node without the
// key (node.Labels[key] is "").
var emptyValue = unique.Make("")

// Score is upstream's preScoreState for one pod, minus what depends on
// the candidate set (see [Score.Raw]): per ScheduleAnyway constraint
// (except hostname ones, counted per node), the matching pods per topology
// domain over the whole cluster. Read-only after [NewScore]; safe for
// concurrent use.
type Score[N NodeInfo[P], P PodInfo] struct {
	cs         []Constraint
	ns         string
	requireAll bool
	counts     []domains
	// bv and blocks, when the memo counted: the cluster's blocks and the
	// memo's blocks of the pass (memo.go), which Raw reads instead of the
	// nodes they still describe.
	bv     Blocks[N]
	blocks []*block
	// small holds counts and their first domains for up to two
	// constraints (the system defaults, most pods' own), so that
	// NewScore allocates the Score alone for them.
	small struct {
		counts [2]domains
		dom    [2][smallDomains]domain
	}
	// whole: when the memo counted, rawWhole's weights and terms (the
	// candidates being every node, they follow from the counts), made by
	// NewScore in tb's memory; read-only after.
	whole terms
	tb    termsBuf
}

// NewScore counts, for the ScheduleAnyway constraints cs of pod, the
// matching pods per domain over the n nodes node(0..n-1) (upstream
// PreScore's pass over all nodes). requireAll (the pod has its own
// constraints, or the defaults are not the system's) skips nodes missing
// any topology key; otherwise a missing key counts as the domain "". nil
// for no constraints or no nodes (upstream's Skip).
// O(n × (labels × constraints + groups per node)) plus the selector once
// per pod class, as [NewFilter]; no pass at all when every constraint is
// a hostname one. With a memo m and blocks bv and inclusion policies
// that include every node, the pass reads only the nodes changed since
// the memo last saw them (O(blocks × domains per block + changed
// nodes), as [NewFilter]), and keeps the memo's blocks, from which
// [Score.Raw] reads each candidate's values and counts.
func NewScore[N NodeInfo[P], P PodInfo](cs []Constraint, requireAll bool, pod *v1.Pod, n int, node func(int) N, in Inclusion[N], m *Memo, bv Blocks[N]) *Score[N, P] {
	if len(cs) == 0 || n == 0 {
		return nil
	}
	s := &Score[N, P]{cs: cs, ns: pod.Namespace, requireAll: requireAll}
	if len(cs) <= len(s.small.counts) {
		s.counts = s.small.counts[:len(cs)]
		for i := range s.counts {
			s.counts[i].small = s.small.dom[i][:0]
		}
	} else {
		s.counts = make([]domains, len(cs))
	}
	md := modeScoreAny
	if requireAll {
		md = modeScoreAll
	}
	if in.allTrivial(cs) {
		if s.blocks = memoCounts(m, md, cs, pod.Namespace, bv, s.counts); s.blocks != nil {
			s.bv = bv
			kept := 0
			for _, e := range s.blocks {
				kept += e.counted
			}
			var w []float64
			if k := len(cs); k <= len(s.tb.w) {
				w = s.tb.w[:k]
			} else {
				w = make([]float64, k)
			}
			w = s.weightsInto(w, kept, s.counts) // a hostname constraint's entry is not read
			s.whole = newTerms(cs, s.counts, w, &s.tb)
			return s
		}
	}
	for i := range cs {
		if !cs[i].hostname {
			scorePass(s, pod, n, node, in)
			break
		}
	}
	return s
}

// scorePass is NewScore's direct pass over the n nodes.
func scorePass[N NodeInfo[P], P PodInfo](s *Score[N, P], pod *v1.Pod, n int, node func(int) N, in Inclusion[N]) {
	cs, requireAll := s.cs, s.requireAll
	ms := make([]*matcher, len(cs))
	for i := range cs {
		ms[i] = newMatcher(cs[i].Selector, pod.Namespace)
	}
	vals := make([]unique.Handle[string], len(cs))
	for j := 0; j < n; j++ {
		ni := node(j)
		ls := ni.Labels()
		all := values(ls, cs, vals)
		if requireAll && !all {
			continue
		}
		var groups []Group
		for i := range cs {
			c := &cs[i]
			if c.hostname || !in.trivial(c) && !in.includes(c, ni, ni.Node(), ls) {
				continue
			}
			v := vals[i]
			if !all {
				var ok bool
				if v, ok = valueOf(ls, c.key); !ok {
					v = emptyValue
				}
			}
			if groups == nil {
				groups = GroupsOf(ni)
			}
			s.counts[i].add(v, ms[i].count(groups))
		}
	}
}

// Constraints returns the constraints scored. Read-only.
func (s *Score[N, P]) Constraints() []Constraint { return s.cs }

// Ignored reports whether scoring ignores a node with labels ls
// (upstream IgnoredNodes: it lacks a topology key and requireAll holds);
// its raw and final scores are 0.
func (s *Score[N, P]) Ignored(ls []selector.Label) bool {
	return s.requireAll && !hasAllKeys(ls, s.cs)
}

// weights returns upstream's TopologyNormalizingWeight per constraint:
// ln(domains + 2), where domains is, for a hostname constraint, kept
// (the candidates not ignored), otherwise the size of its entry in seen
// (the distinct values of its key among those candidates, a missing key
// being the value "").
func (s *Score[N, P]) weights(kept int, seen []domains) []float64 {
	return s.weightsInto(make([]float64, len(s.cs)), kept, seen)
}

// weightsInto is weights written to w (len(s.cs) entries).
func (s *Score[N, P]) weightsInto(w []float64, kept int, seen []domains) []float64 {
	for i := range s.cs {
		size := kept
		if !s.cs[i].hostname {
			size = seen[i].size()
		}
		w[i] = math.Log(float64(size + 2))
	}
	return w
}

// Raw writes upstream's Score of nodes[i] to out[i], taking nodes as the
// candidate set (upstream's filteredNodes, which set the weights
// TopologyNormalizingWeight: ln(domains + 2) per constraint, domains
// being the distinct values, a missing key being the value "", of the
// constraint's key among the candidates not ignored, or for a hostname
// constraint the number of those candidates): 0 for an ignored node,
// else round(Σ over constraints whose key the node has of count × weight
// + maxSkew − 1), where count is the matching pods in the node's domain,
// or on the node itself for a hostname constraint (which upstream counts
// without inclusion policies). One pass over the nodes reads each node's
// labels once (and its groups for hostname constraints) into a scratch
// table of counts, the weights follow, then a pass over the table:
// O(len(nodes) × constraints × labels); allocates the weights, the
// per-constraint domain sets and, with hostname constraints, a selector
// memo; the table comes from a pool. When [NewScore] counted through the
// memo, a candidate found at its position in the cluster's blocks
// (candidates in the cluster's order, rotated, with gaps, cost O(nodes)
// position compares in all) and unchanged since (its version) is read
// from the memo's block instead of the node: O(constraints) per node,
// no label or group read. When the candidates are every node of the
// cluster, in its order rotated, all unchanged since [NewScore] (every
// node scored, none filtered out), the weights are known before the pass
// (the domains of the memo's counts, the nodes with every key) and one
// pass over the memo's blocks writes the scores: O(nodes × constraints)
// compares and no allocation ([Score.rawWhole]).
func (s *Score[N, P]) Raw(nodes []N, out []int64) {
	if s.rawWhole(nodes, out) {
		return
	}
	k := len(s.cs)
	tp := rawPool.Get().(*[]int32)
	tab := *tp
	if cap(tab) < len(nodes)*k {
		tab = make([]int32, len(nodes)*k)
	}
	tab = tab[:len(nodes)*k]
	seen := make([]domains, k)
	var ms []*matcher
	kept := 0
	cur := cursor[N]{bv: s.bv, blocks: s.blocks, budget: 2*len(nodes) + 2*layout.BlockSize}
	if s.blocks != nil {
		cur.n = s.bv.NumNodes()
	}
	for j, ni := range nodes {
		row := tab[j*k : (j+1)*k]
		if vals, cnt := cur.find(ni); vals != nil {
			if s.rowFromMemo(row, vals, cnt, seen) {
				kept++
			}
			continue
		}
		ls := ni.Labels()
		if s.requireAll && !hasAllKeys(ls, s.cs) {
			row[0] = rawIgnored
			continue
		}
		kept++
		for i := range s.cs {
			c := &s.cs[i]
			v, ok := valueOf(ls, c.key)
			if !c.hostname {
				if ok {
					seen[i].add(v, 0)
				} else {
					seen[i].add(emptyValue, 0)
				}
			}
			switch {
			case !ok:
				row[i] = rawMissing
			case c.hostname:
				if ms == nil {
					ms = make([]*matcher, k)
				}
				if ms[i] == nil {
					ms[i] = newMatcher(c.Selector, s.ns)
				}
				row[i] = int32(ms[i].count(GroupsOf(ni)))
			default:
				row[i] = int32(s.counts[i].get(v))
			}
		}
	}
	w := s.weights(kept, seen)
	for j := range nodes {
		row := tab[j*k : (j+1)*k]
		if row[0] == rawIgnored {
			out[j] = 0
			continue
		}
		var sc float64
		for i, cnt := range row {
			if cnt != rawMissing {
				sc += float64(cnt)*w[i] + float64(s.cs[i].MaxSkew-1)
			}
		}
		out[j] = round(sc)
	}
	*tp = tab
	rawPool.Put(tp)
}

// rawWhole is [Score.Raw] for candidates that are every node of the
// cluster the memo counted, in the cluster's order rotated (candidate j
// is node (p+j) mod n), none changed since [NewScore]: it reports false,
// leaving out in any state, for any other candidate set (no memo, a
// node missing or out of place, a stale block). The candidates then
// being exactly the nodes the memo's counts cover, the domains of a
// constraint among the candidates not ignored are its counts' domains,
// and the candidates not ignored are the nodes the blocks counted, so
// the weights come first, and so does each domain's term count × weight
// + maxSkew − 1 (computed as Raw computes it); each node's score sums
// its terms in the order Raw sums them (bit-identical). A block whose
// version is the memo's needs no per-node version check (equal block
// versions mean equal nodes and contents). Nodes with the same code in
// the memo's blocks (the same inputs: memo.go's node codes) share one
// score, computed for the first of them: O(n) to find p, then O(n)
// compares and table reads plus O(distinct codes × constraints ×
// domains kept in a short list) for the scores; nodes without a code
// (more than 2 constraints, 7 domains or 14 matching pods on a node)
// cost O(constraints × domains) each. Allocates nothing: [NewScore]
// made the weights and terms.
func (s *Score[N, P]) rawWhole(nodes []N, out []int64) bool {
	if s.blocks == nil {
		return false
	}
	n := s.bv.NumNodes()
	if n == 0 || len(nodes) != n || len(s.blocks) != s.bv.NumBlocks() {
		return false
	}
	p := -1
	for b := range s.bv.NumBlocks() {
		bn, _ := s.bv.Block(b)
		if i := slices.Index(bn, nodes[0]); i >= 0 {
			p = b*layout.BlockSize + i
			break
		}
	}
	if p < 0 {
		return false
	}
	k := len(s.cs)
	tm := &s.whole
	// Scores by node code (memo.go): nodes with the same code have the
	// same inputs, so the same score, computed once per pass.
	var tab [numCodes]int64
	var set [numCodes]bool
	for j := 0; j < n; {
		pos := (p + j) % n
		b, slot := pos/layout.BlockSize, pos%layout.BlockSize
		bn, vers := s.bv.Block(b)
		e := s.blocks[b]
		if e.n != len(bn) {
			return false
		}
		// The run of candidates j.. in this block: first check that they
		// are its nodes, unchanged, then score them.
		m := min(len(bn)-slot, n-j)
		bs, cands := bn[slot:slot+m], nodes[j:j+m]
		cands = cands[:len(bs)]
		if s.bv.BlockVersion(b) == e.version {
			for i := range bs {
				if bs[i] != cands[i] {
					return false
				}
			}
		} else {
			vs, sv := vers[slot:slot+m], e.slotVer[slot:slot+m]
			vs, sv = vs[:len(bs)], sv[:len(bs)]
			for i := range bs {
				if bs[i] != cands[i] || vs[i] != sv[i] {
					return false
				}
			}
		}
		codes := e.code[slot : slot+m]
		os := out[j : j+m]
		os = os[:len(codes)]
		for i, code := range codes {
			if code != noCode && set[code] {
				os[i] = tab[code]
				continue
			}
			sc := s.wholeScore(tm, e, slot+i, k)
			os[i] = sc
			if code != noCode {
				tab[code], set[code] = sc, true
			}
		}
		j += m
	}
	return true
}

// wholeScore is [Score.rawWhole]'s raw score of node slot of block e
// (k constraints), from the memo's values and counts and the terms.
func (s *Score[N, P]) wholeScore(tm *terms, e *block, slot, k int) int64 {
	var missing unique.Handle[string]
	vals, cnt := e.vals[slot*k:(slot+1)*k], e.cnt[slot*k:(slot+1)*k]
	if s.requireAll && slices.Contains(vals, missing) {
		return 0
	}
	var sc float64
	for i, v := range vals {
		if v == missing {
			continue
		}
		if tm.host[i] {
			sc += float64(cnt[i])*tm.w[i] + tm.off[i]
			continue
		}
		if ds := tm.dom[i]; ds != nil {
			d := 0
			for d < len(ds) && ds[d].v != v {
				d++
			}
			if d < len(ds) {
				sc += ds[d].t
				continue
			}
		}
		sc += tm.term(i, v)
	}
	return round(sc)
}

// round is int64(math.Round(x)) (half away from zero), without
// math.Round's bit manipulation for 0 ≤ x < 2⁵² (int64(x) truncates
// exactly there, and x − ⌊x⌋ is exact).
func round(x float64) int64 {
	if !(x >= 0 && x < 1<<52) {
		return int64(math.Round(x))
	}
	t := int64(x)
	if x-float64(t) >= 0.5 {
		t++
	}
	return t
}

// terms are rawWhole's per-constraint terms count × weight + maxSkew − 1:
// for a constraint with few domains, one per domain, computed once per
// pass; for a hostname constraint (the node's own count) or one with
// many domains, computed per node as Raw computes them.
type terms struct {
	w, off []float64
	// host[i]: constraint i counts per node; dom[i]: constraint i's
	// domains and their terms, nil when they are in counts[i]'s map.
	host   []bool
	dom    [][]domainTerm
	counts []domains
}

type domainTerm struct {
	v unique.Handle[string]
	t float64
}

// termsBuf is the memory of the weights and terms of up to two
// constraints with up to smallDomains domains each.
type termsBuf struct {
	w, off [2]float64
	host   [2]bool
	dom    [2][]domainTerm
	dt     [2][smallDomains]domainTerm
}

// newTerms returns the terms of cs with counts and weights w, in tb's
// memory when it has room.
func newTerms(cs []Constraint, counts []domains, w []float64, tb *termsBuf) terms {
	k := len(cs)
	var tm terms
	if k <= len(tb.off) {
		tm = terms{w: w, off: tb.off[:k], host: tb.host[:k], dom: tb.dom[:k], counts: counts}
	} else {
		tm = terms{w: w, off: make([]float64, k), host: make([]bool, k), dom: make([][]domainTerm, k), counts: counts}
	}
	for i := range cs {
		tm.off[i] = float64(cs[i].MaxSkew - 1)
		tm.host[i] = cs[i].hostname
		if cs[i].hostname || counts[i].big != nil {
			continue
		}
		var ds []domainTerm
		if n := len(counts[i].small); i < len(tb.dt) && n <= len(tb.dt[i]) {
			ds = tb.dt[i][:n]
		} else {
			ds = make([]domainTerm, n)
		}
		for d, e := range counts[i].small {
			ds[d] = domainTerm{e.v, float64(int32(e.n))*w[i] + tm.off[i]}
		}
		tm.dom[i] = ds
	}
	return tm
}

// term is constraint i's term (not a hostname one) for a node whose
// value of its key is v (not missing), from the counts.
func (tm *terms) term(i int, v unique.Handle[string]) float64 {
	return float64(int32(tm.counts[i].get(v)))*tm.w[i] + tm.off[i]
}

// rowFromMemo is Raw's row for a node from the memo's values and counts
// of its constraints: false for an ignored node.
func (s *Score[N, P]) rowFromMemo(row []int32, vals []unique.Handle[string], cnt []int32, seen []domains) bool {
	var missing unique.Handle[string]
	if s.requireAll {
		for _, v := range vals {
			if v == missing {
				row[0] = rawIgnored
				return false
			}
		}
	}
	for i := range s.cs {
		c := &s.cs[i]
		v := vals[i]
		if !c.hostname {
			if v == missing {
				seen[i].add(emptyValue, 0)
			} else {
				seen[i].add(v, 0)
			}
		}
		switch {
		case v == missing:
			row[i] = rawMissing
		case c.hostname:
			row[i] = cnt[i]
		default:
			row[i] = int32(s.counts[i].get(v))
		}
	}
	return true
}

// cursor finds candidates' positions in the cluster's blocks, assuming
// they come in the cluster's order, possibly rotated and with gaps (as
// a Scheduler filters them): each look-up scans on from the last
// position found. The scans stop for good once they have stepped past
// budget nodes in all, so that candidates in another order cost
// O(nodes) more, not O(nodes²).
type cursor[N comparable] struct {
	bv     Blocks[N]
	blocks []*block
	n      int // nodes in bv
	pos    int // the next position to look at
	budget int
	// the block at b: its nodes and versions in bv
	b     int
	nodes []N
	vers  []int64
	ok    bool
}

// find returns node ni's values and counts in the memo (k entries
// each), or nil if it is not found or the memo's entry is stale (the
// node changed since the pass).
func (c *cursor[N]) find(ni N) ([]unique.Handle[string], []int32) {
	for c.budget > 0 && c.n > 0 {
		if c.pos >= c.n {
			c.pos = 0
		}
		b, slot := c.pos/layout.BlockSize, c.pos%layout.BlockSize
		if !c.ok || c.b != b {
			c.nodes, c.vers = c.bv.Block(b)
			c.b, c.ok = b, true
		}
		c.pos++
		c.budget--
		if c.nodes[slot] != ni {
			continue
		}
		if b >= len(c.blocks) {
			return nil, nil
		}
		e := c.blocks[b]
		if slot >= e.n || e.slotVer[slot] != c.vers[slot] {
			return nil, nil
		}
		k := len(e.vals) / layout.BlockSize
		return e.vals[slot*k : (slot+1)*k], e.cnt[slot*k : (slot+1)*k]
	}
	return nil, nil
}

// Marks in Raw's table: an ignored node (its first entry), a missing key.
const (
	rawIgnored = -2
	rawMissing = -1
)

// rawPool holds Raw's scratch tables.
var rawPool = sync.Pool{New: func() any { return new([]int32) }}

// Normalize is upstream's NormalizeScore: ignored nodes get 0; the others
// 100 × (max + min − s) / max over the raw scores of the nodes not
// ignored, or 100 each when that max is 0 (integer division, truncating,
// as upstream; [normalized] computes it without a hardware divide).
// O(len(nodes) × constraints × labels) with requireAll, O(len(nodes))
// without (no node is ignored, no label is read). scores[j] belongs to
// nodes[j]. Allocates nothing.
func (s *Score[N, P]) Normalize(nodes []N, scores []int64) {
	if s.requireAll {
		s.normalizeIgnoring(nodes, scores)
		return
	}
	scores = scores[:len(nodes)]
	lo, hi := minMax(scores)
	if hi == 0 {
		for j, sc := range scores {
			if sc == -1 {
				scores[j] = 0
			} else {
				scores[j] = 100
			}
		}
		return
	}
	d := newDivider(hi)
	// The raw scores take few distinct values (nodes of one code share
	// one, see rawWhole): a direct-mapped memo of the last results by
	// raw score spares most divisions. Every slot starts as -1 → 0:
	// upstream marks ignored nodes with -1 and zeroes every -1 (a raw
	// score can only be -1 with maxSkew 0, which is invalid); -1 maps to
	// slot 15, and no other slot is ever looked up with -1.
	var memoIn, memoOut [16]int64
	for i := range memoIn {
		memoIn[i] = -1
	}
	for j, sc := range scores {
		if h := sc & 15; memoIn[h] == sc {
			scores[j] = memoOut[h]
			continue
		}
		v := int64(0)
		if sc != -1 {
			v = d.div(100 * (hi + lo - sc))
		}
		memoIn[sc&15], memoOut[sc&15] = sc, v
		scores[j] = v
	}
}

// minMax returns the smallest of scores (math.MaxInt64 for none) and the
// largest of 0 and scores: four independent running minima and maxima,
// so that each step waits on the one four steps back, not the last.
// O(len(scores)); allocates nothing.
func minMax(scores []int64) (lo, hi int64) {
	lo0, lo1, lo2, lo3 := int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64)
	var hi0, hi1, hi2, hi3 int64
	j := 0
	for ; j+4 <= len(scores); j += 4 {
		s := scores[j : j+4 : j+4]
		lo0, hi0 = min(lo0, s[0]), max(hi0, s[0])
		lo1, hi1 = min(lo1, s[1]), max(hi1, s[1])
		lo2, hi2 = min(lo2, s[2]), max(hi2, s[2])
		lo3, hi3 = min(lo3, s[3]), max(hi3, s[3])
	}
	for ; j < len(scores); j++ {
		lo0, hi0 = min(lo0, scores[j]), max(hi0, scores[j])
	}
	return min(lo0, lo1, lo2, lo3), max(hi0, hi1, hi2, hi3)
}

// normalizeIgnoring is Normalize when nodes missing a topology key are
// ignored (requireAll): it reads each node's labels twice.
func (s *Score[N, P]) normalizeIgnoring(nodes []N, scores []int64) {
	lo, hi := int64(math.MaxInt64), int64(0)
	for j, ni := range nodes {
		if s.Ignored(ni.Labels()) {
			continue
		}
		lo, hi = min(lo, scores[j]), max(hi, scores[j])
	}
	d := newDivider(hi)
	for j, ni := range nodes {
		switch {
		case scores[j] == -1 || s.Ignored(ni.Labels()):
			scores[j] = 0
		case hi == 0:
			scores[j] = 100
		default:
			scores[j] = d.div(100 * (hi + lo - scores[j]))
		}
	}
}

// divider divides by a fixed d > 0 as Go's integer division does
// (truncating toward zero) without a hardware divide for the usual
// operands: for 0 ≤ x < 2⁵² and d < 2⁵², q = ⌊x × (1/d)⌋ in float64 is
// within one of ⌊x/d⌋ (x and d are exact in float64, the product's
// relative error is below 2⁻⁵¹), and one correction step each way makes
// it exact. Other operands use x / d. Normalize divides every node's
// score by the same max, and a 64-bit divide costs tens of cycles.
type divider struct {
	d    int64
	inv  float64
	fast bool
}

func newDivider(d int64) divider {
	if d <= 0 {
		return divider{d: d}
	}
	return divider{d: d, inv: 1 / float64(d), fast: d < 1<<52}
}

// div returns x / d (Go's truncating division); d must be non-zero.
func (v divider) div(x int64) int64 {
	if !v.fast || x < 0 || x >= 1<<52 {
		return x / v.d
	}
	q := int64(float64(x) * v.inv)
	if q*v.d > x {
		q--
	} else if (q+1)*v.d <= x {
		q++
	}
	return q
}
