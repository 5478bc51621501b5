package spread

import (
	"maps"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The default constraints' cache. A pod without constraints of its own
// gets the defaults with [DefaultSelector]'s selector: the union of the
// selectors of the Services in its namespace that select it, and its
// controller's. Compiling that per pod (a map, the selectors, the parsed
// constraints: about a microsecond and a dozen allocations) is the same
// work for every pod of a Deployment. A [SelectorCache] keeps the parsed
// constraints per pod class (namespace and labels, [ClassOf]), controller
// reference and action, with a copy of what they were computed from:
// each Service's spec.selector in order, and the controller's selector.
// A hit compares those copies with the lister's current objects (content,
// not identity, so a lister that changes an object in place is seen too)
// and recomputes on any difference: a Service added, removed or
// re-selected, a controller created, deleted or changed, a Fork that
// reverted any of these. Results never differ from computing afresh.
// The pods of a workload come in runs: the entry of the last hit is
// tried first, matched by namespace, labels (against a copy),
// action and controller reference, which spares the pod's class (a
// sort and an interning) and the map's hash.

// The pods' own constraints are cached too: the pods of one workload
// carry equal spec.topologySpreadConstraints, whose labelSelectors
// [Config.Constraints] would otherwise compile (validating every key and
// value) per pod. A [SelectorCache] keeps the parsed constraints of the
// last maxOwnEntries distinct specs, each with a copy of the spec and,
// when they have matchLabelKeys, the pod's values of those keys (which
// the selectors include); a pod whose constraints and values equal an
// entry's (compared field by field) gets its constraints.

// SelectorCache caches [Config.Constraints]' parsed constraints (see
// above). The zero value is ready; safe for concurrent use; at most
// maxSelectorEntries entries for default constraints (then it starts
// again empty) and maxOwnEntries for pods' own (least recently added
// dropped).
type SelectorCache struct {
	mu  sync.Mutex
	m   map[selectorKey]*selectorEntry
	own []*ownEntry // most recently added first
	// last is the entry of the last hit or put: the pods of a workload
	// come in runs, and a pod whose namespace, labels (compared with
	// the entry's copy), action and controller reference are last's
	// finds it without computing its class or hashing a key.
	last *selectorEntry
}

const maxOwnEntries = 8

type ownEntry struct {
	action v1.UnsatisfiableConstraintAction
	spec   []v1.TopologySpreadConstraint // a deep copy
	// keyed[k] is the pod's value of matchLabelKeys key k, when it has
	// one: the keys of every constraint's matchLabelKeys.
	keyed map[string]string
	cs    []Constraint // read-only, shared
}

// getOwn returns the cached constraints for pod's own constraints and
// action. O(entries × constraints × selector size); allocates nothing.
func (c *SelectorCache) getOwn(pod *v1.Pod, action v1.UnsatisfiableConstraintAction) ([]Constraint, bool) {
	if c == nil {
		return nil, false
	}
	spec := pod.Spec.TopologySpreadConstraints
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.own {
		if e.action == action && equalConstraints(e.spec, spec) && sameKeyed(e.keyed, spec, pod.Labels) {
			return e.cs, true
		}
	}
	return nil, false
}

// putOwn records cs as the parse of pod's own constraints for action.
func (c *SelectorCache) putOwn(pod *v1.Pod, action v1.UnsatisfiableConstraintAction, cs []Constraint) {
	if c == nil {
		return
	}
	spec := pod.Spec.TopologySpreadConstraints
	e := &ownEntry{action: action, spec: make([]v1.TopologySpreadConstraint, len(spec)), cs: cs}
	for i := range spec {
		spec[i].DeepCopyInto(&e.spec[i])
		for _, k := range spec[i].MatchLabelKeys {
			if v, ok := pod.Labels[k]; ok {
				if e.keyed == nil {
					e.keyed = map[string]string{}
				}
				e.keyed[k] = v
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.own) < maxOwnEntries {
		c.own = append(c.own, nil)
	}
	copy(c.own[1:], c.own)
	c.own[0] = e
}

// sameKeyed reports whether the pod's labels give every matchLabelKeys
// key of spec the value (or absence) keyed records.
func sameKeyed(keyed map[string]string, spec []v1.TopologySpreadConstraint, labels map[string]string) bool {
	for i := range spec {
		for _, k := range spec[i].MatchLabelKeys {
			v, ok := labels[k]
			w, had := keyed[k]
			if ok != had || v != w {
				return false
			}
		}
	}
	return true
}

// equalConstraints reports whether a and b are the same constraints,
// field by field.
func equalConstraints(a, b []v1.TopologySpreadConstraint) bool {
	return slices.EqualFunc(a, b, func(x, y v1.TopologySpreadConstraint) bool {
		return x.MaxSkew == y.MaxSkew && x.TopologyKey == y.TopologyKey && x.WhenUnsatisfiable == y.WhenUnsatisfiable &&
			equalLabelSelectors(x.LabelSelector, y.LabelSelector) && equalPtr(x.MinDomains, y.MinDomains) &&
			equalPtr(x.NodeAffinityPolicy, y.NodeAffinityPolicy) && equalPtr(x.NodeTaintsPolicy, y.NodeTaintsPolicy) &&
			slices.Equal(x.MatchLabelKeys, y.MatchLabelKeys)
	})
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

const maxSelectorEntries = 1024

type selectorKey struct {
	class  Class
	action v1.UnsatisfiableConstraintAction
	// the controller reference's, "" without one
	apiVersion, kind, name string
}

type selectorEntry struct {
	key selectorKey
	// ns and labels: the pod's namespace and a copy of its labels (what
	// key.class interns).
	ns     string
	labels map[string]string
	// svcs[i] is a copy of Service i's spec.selector; nil for a nil
	// Service or selector (which select nothing); empty (not nil) for an
	// empty one (which selects every pod).
	svcs []map[string]string
	// The controller found: its kind (rcKind, ... as 1, 2, 3; 0: none)
	// and a copy of its selector.
	ctrl   uint8
	rcSel  map[string]string
	ctrlLS *metav1.LabelSelector
	cs     []Constraint // read-only, shared
}

func keyOf(pod *v1.Pod, action v1.UnsatisfiableConstraintAction, in *defaultInputs) (selectorKey, bool) {
	cl := ClassOf(pod)
	if cl == (Class{}) {
		return selectorKey{}, false // a terminating pod: not worth keeping
	}
	k := selectorKey{class: cl, action: action}
	if in.owner != nil {
		k.apiVersion, k.kind, k.name = in.owner.APIVersion, in.owner.Kind, in.owner.Name
	}
	return k, true
}

// get returns the cached constraints for pod and action if they were
// computed from objects equal to in's. A nil cache has nothing.
func (c *SelectorCache) get(pod *v1.Pod, action v1.UnsatisfiableConstraintAction, in *defaultInputs) ([]Constraint, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	last := c.last
	c.mu.Unlock()
	if last != nil && last.samePod(pod, action, in) {
		if last.current(in) {
			return last.cs, true
		}
		return nil, false
	}
	k, ok := keyOf(pod, action, in)
	if !ok {
		return nil, false
	}
	c.mu.Lock()
	e := c.m[k]
	if e != nil {
		c.last = e
	}
	c.mu.Unlock()
	if e == nil || !e.current(in) {
		return nil, false
	}
	return e.cs, true
}

// samePod reports whether pod and action, with in's controller
// reference, have the entry's key: the same action, controller
// reference, namespace and labels, and the pod not terminating (whose
// class is none). O(labels); allocates nothing.
func (e *selectorEntry) samePod(pod *v1.Pod, action v1.UnsatisfiableConstraintAction, in *defaultInputs) bool {
	if pod.DeletionTimestamp != nil || e.key.action != action || e.ns != pod.Namespace {
		return false
	}
	if in.owner == nil {
		if e.key.apiVersion != "" || e.key.kind != "" || e.key.name != "" {
			return false
		}
	} else if e.key.apiVersion != in.owner.APIVersion || e.key.kind != in.owner.Kind || e.key.name != in.owner.Name {
		return false
	}
	return maps.Equal(e.labels, pod.Labels)
}

// put records cs as pod's constraints for action computed from in.
func (c *SelectorCache) put(pod *v1.Pod, action v1.UnsatisfiableConstraintAction, in *defaultInputs, cs []Constraint) {
	if c == nil {
		return
	}
	k, ok := keyOf(pod, action, in)
	if !ok {
		return
	}
	e := &selectorEntry{key: k, ns: pod.Namespace, labels: maps.Clone(pod.Labels), svcs: make([]map[string]string, len(in.svcs)), cs: cs}
	for i, svc := range in.svcs {
		if svc != nil && svc.Spec.Selector != nil {
			e.svcs[i] = maps.Clone(svc.Spec.Selector)
		}
	}
	switch {
	case in.rc != nil:
		e.ctrl, e.rcSel = 1, maps.Clone(in.rc.Spec.Selector)
	case in.rs != nil:
		e.ctrl, e.ctrlLS = 2, in.rs.Spec.Selector.DeepCopy()
	case in.ss != nil:
		e.ctrl, e.ctrlLS = 3, in.ss.Spec.Selector.DeepCopy()
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxSelectorEntries {
		c.m = make(map[selectorKey]*selectorEntry)
	}
	c.m[k] = e
	c.last = e
	c.mu.Unlock()
}

// current reports whether in's objects select as the entry's copies do.
// O(Services × selector size); allocates nothing.
func (e *selectorEntry) current(in *defaultInputs) bool {
	if len(in.svcs) != len(e.svcs) {
		return false
	}
	for i, svc := range in.svcs {
		var sel map[string]string
		if svc != nil {
			sel = svc.Spec.Selector
		}
		if (sel == nil) != (e.svcs[i] == nil) || !maps.Equal(sel, e.svcs[i]) {
			return false
		}
	}
	switch {
	case in.rc != nil:
		return e.ctrl == 1 && maps.Equal(in.rc.Spec.Selector, e.rcSel)
	case in.rs != nil:
		return e.ctrl == 2 && equalLabelSelectors(in.rs.Spec.Selector, e.ctrlLS)
	case in.ss != nil:
		return e.ctrl == 3 && equalLabelSelectors(in.ss.Spec.Selector, e.ctrlLS)
	}
	return e.ctrl == 0
}

// equalLabelSelectors reports whether a and b are the same selector
// (nil only equals nil; a nil and an empty matchLabels are the same).
func equalLabelSelectors(a, b *metav1.LabelSelector) bool {
	if a == nil || b == nil {
		return a == b
	}
	return maps.Equal(a.MatchLabels, b.MatchLabels) &&
		slices.EqualFunc(a.MatchExpressions, b.MatchExpressions, func(x, y metav1.LabelSelectorRequirement) bool {
			return x.Key == y.Key && x.Operator == y.Operator && slices.Equal(x.Values, y.Values)
		})
}
