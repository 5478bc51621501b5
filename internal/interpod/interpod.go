package interpod

import (
	"math"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/selector"
)

// PodInfo is the engine's view of a pod (*snapshot.PodInfo).
type PodInfo interface{ Pod() *v1.Pod }

// NodeInfo is the engine's view of a node (*snapshot.NodeInfo): its
// object, all its pods, and those with pod (anti-)affinity (upstream's
// PodsWithAffinity, kept by snapshot on add and remove).
type NodeInfo[P PodInfo] interface {
	Node() *v1.Node
	Pods() []P
	PodsWithAffinity() []P
}

// NamespaceLister finds a namespace by name (nil if unknown); the
// objects are read-only. snapshot's Cache, Snapshot and Fork implement it
// once they hold namespaces.
type NamespaceLister interface {
	Namespace(name string) *v1.Namespace
}

// namespaces memoises a lister's answers for one pod's preparation.
type namespaces struct {
	lister NamespaceLister
	seen   map[string]map[string]string
}

// labels returns the labels of namespace ns, nil if unknown.
func (n *namespaces) labels(ns string) (map[string]string, bool) {
	if n.lister == nil {
		return nil, false
	}
	if l, ok := n.seen[ns]; ok {
		return l, l != nil
	}
	if n.seen == nil {
		n.seen = map[string]map[string]string{}
	}
	o := n.lister.Namespace(ns)
	if o == nil {
		n.seen[ns] = nil
		return nil, false
	}
	l := o.Labels
	if l == nil {
		l = map[string]string{}
	}
	n.seen[ns] = l
	return l, true
}

// incoming is a term of the incoming pod, its namespaceSelector resolved
// as upstream's mergeAffinityTermNamespacesIfNotEmpty: an empty ({})
// selector matches every namespace; any other matches the known
// namespaces whose labels it selects (an unknown namespace never).
type incoming struct {
	*Term
	ns *namespaces
}

// matches is upstream's t.Matches(pod, nil) after the merge.
func (t incoming) matches(pod *v1.Pod) bool {
	if !t.names.Has(pod.Namespace) && !t.nsSel.Empty() {
		l, ok := t.ns.labels(pod.Namespace)
		if !ok || !selector.MatchMap(&t.nsSel, l) {
			return false
		}
	}
	return selector.MatchMap(&t.sel, pod.Labels)
}

func resolve(ts []Term, ns *namespaces) []incoming {
	if len(ts) == 0 {
		return nil
	}
	out := make([]incoming, len(ts))
	for i := range ts {
		out[i] = incoming{&ts[i], ns}
	}
	return out
}

// matchesAll is upstream's podMatchesAllAffinityTerms (false for no terms).
func matchesAll(ts []incoming, pod *v1.Pod) bool {
	if len(ts) == 0 {
		return false
	}
	for _, t := range ts {
		if !t.matches(pod) {
			return false
		}
	}
	return true
}

type pair struct{ key, value string }

type counts map[pair]int64

func (c counts) add(n *v1.Node, key string) {
	if v, ok := n.Labels[key]; ok {
		c[pair{key, v}]++
	}
}

// Result is a node's filter verdict, in upstream's order of checks.
type Result uint8

const (
	// Pass: the node passes.
	Pass Result = iota
	// AffinityNotMatch: the pod's required affinity is not satisfied
	// (UnschedulableAndUnresolvable).
	AffinityNotMatch
	// AntiAffinityNotMatch: pods matching the pod's required
	// anti-affinity are in the node's domain (Unschedulable).
	AntiAffinityNotMatch
	// ExistingAntiAffinityNotMatch: an existing pod's required
	// anti-affinity rejects the pod in the node's domain (Unschedulable).
	ExistingAntiAffinityNotMatch
)

// Filter is upstream's InterPodAffinity PreFilter state. Read-only after
// [NewFilter]; Check is safe for concurrent use and allocates nothing.
type Filter struct {
	affinity, anti []incoming
	// selfMatch: the pod matches all its own affinity terms (the first
	// pod of a group, upstream's satisfiesSelfAffinityCheck).
	selfMatch  bool
	affCounts  counts
	antiCounts counts
	existing   counts
	// existingKeys: the distinct keys of existing.
	existingKeys []string
}

// NewFilter prepares the filter for pod (t its parsed terms, nil for
// none) over nodes node(0..n-1), upstream's PreFilter: the counts, per
// topology pair, of existing pods whose required anti-affinity terms
// match pod (over the nodes' PodsWithAffinity; the pod's namespace labels
// come from lister, nil when unknown), and, if pod has required terms, of
// the existing pods that match all its affinity terms and of those that
// match each anti-affinity term (over every pod). nil when upstream's
// PreFilter returns Skip (no term on either side matters). Cost: O(nodes
// + pods with affinity × their terms) plus, only for a pod with required
// terms, O(pods × terms); allocates the maps.
func NewFilter[N NodeInfo[P], P PodInfo](pod *v1.Pod, t *Terms, lister NamespaceLister, n int, node func(int) N) *Filter {
	ns := &namespaces{lister: lister}
	f := &Filter{}
	if t != nil {
		f.affinity = resolve(t.RequiredAffinity, ns)
		f.anti = resolve(t.RequiredAntiAffinity, ns)
	}
	nsLabels, _ := ns.labels(pod.Namespace)
	for i := range n {
		ni := node(i)
		for _, ep := range ni.PodsWithAffinity() {
			et := TermsOf(ep)
			if et == nil {
				continue
			}
			for j := range et.RequiredAntiAffinity {
				tm := &et.RequiredAntiAffinity[j]
				if tm.Matches(pod, nsLabels) {
					if f.existing == nil {
						f.existing = counts{}
					}
					if _, ok := ni.Node().Labels[tm.TopologyKey]; ok && !containsKey(f.existingKeys, tm.TopologyKey) {
						f.existingKeys = append(f.existingKeys, tm.TopologyKey)
					}
					f.existing.add(ni.Node(), tm.TopologyKey)
				}
			}
		}
	}
	if len(f.affinity)+len(f.anti) > 0 {
		f.affCounts, f.antiCounts = counts{}, counts{}
		for i := range n {
			ni := node(i)
			nd := ni.Node()
			for _, ep := range ni.Pods() {
				p := ep.Pod()
				if matchesAll(f.affinity, p) {
					for _, tm := range f.affinity {
						f.affCounts.add(nd, tm.TopologyKey)
					}
				}
				for _, tm := range f.anti {
					if tm.matches(p) {
						f.antiCounts.add(nd, tm.TopologyKey)
					}
				}
			}
		}
		f.selfMatch = matchesAll(f.affinity, pod)
	}
	if len(f.existing) == 0 && len(f.affinity)+len(f.anti) == 0 {
		return nil
	}
	return f
}

func containsKey(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// Check is upstream's Filter for one node (feature gate
// InterPodAffinityHostnameFastPath off): the first failing check. O(terms
// + existing keys) map look-ups; allocates nothing.
func (f *Filter) Check(n *v1.Node) Result {
	if len(f.affinity) > 0 {
		exist := true
		for _, tm := range f.affinity {
			v, ok := n.Labels[tm.TopologyKey]
			if !ok {
				// All topology labels must exist, also for self-affinity.
				return AffinityNotMatch
			}
			if f.affCounts[pair{tm.TopologyKey, v}] <= 0 {
				exist = false
			}
		}
		if !exist && !(len(f.affCounts) == 0 && f.selfMatch) {
			return AffinityNotMatch
		}
	}
	if len(f.antiCounts) > 0 {
		for _, tm := range f.anti {
			if v, ok := n.Labels[tm.TopologyKey]; ok && f.antiCounts[pair{tm.TopologyKey, v}] > 0 {
				return AntiAffinityNotMatch
			}
		}
	}
	for _, k := range f.existingKeys {
		if v, ok := n.Labels[k]; ok && f.existing[pair{k, v}] > 0 {
			return ExistingAntiAffinityNotMatch
		}
	}
	return Pass
}

// Score is upstream's InterPodAffinity PreScore state: per topology key
// and value, the summed weights. Read-only after [NewScore]; Raw is safe
// for concurrent use and allocates nothing.
type Score struct {
	topo map[string]map[string]int64
}

// HasPreferred reports whether pod has preferred pod affinity or
// anti-affinity terms (upstream PreScore's hasConstraints).
func HasPreferred(pod *v1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && (a.PodAffinity != nil && len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 ||
		a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0)
}

// NewScore is upstream's PreScore for pod (t its parsed terms) over nodes
// node(0..n-1): for each existing pod on a node with labels, (1) each of
// pod's preferred affinity (anti-affinity) terms the existing pod matches
// adds (subtracts) its weight to the pair (topologyKey, the node's value);
// (2) if hardWeight > 0, each required affinity term of the existing pod
// that pod matches adds hardWeight; (3) each preferred affinity
// (anti-affinity) term of the existing pod that pod matches adds
// (subtracts) its weight. (2) and (3) use pod's namespace labels from
// lister. Without preferred terms of its own, pod is scored only against
// the pods with affinity (PodsWithAffinity), and not at all with
// ignoreExisting. nil when upstream's PreScore returns Skip (no term
// matched anything): every node scores 0. Cost: O(nodes + pods with
// affinity × their terms), or O(pods × terms) for a pod with preferred
// terms; allocates the maps.
func NewScore[N NodeInfo[P], P PodInfo](pod *v1.Pod, t *Terms, hardWeight int32, ignoreExisting bool, lister NamespaceLister, n int, node func(int) N) *Score {
	has := HasPreferred(pod)
	if ignoreExisting && !has {
		return nil
	}
	ns := &namespaces{lister: lister}
	var pref, prefAnti []incoming
	if t != nil {
		pref = resolve(t.PreferredAffinity, ns)
		prefAnti = resolve(t.PreferredAntiAffinity, ns)
	}
	nsLabels, _ := ns.labels(pod.Namespace)
	s := &Score{topo: map[string]map[string]int64{}}
	touched := false
	add := func(nd *v1.Node, key string, w int64) {
		v, ok := nd.Labels[key]
		if !ok {
			return
		}
		m := s.topo[key]
		if m == nil {
			m = map[string]int64{}
			s.topo[key] = m
		}
		m[v] += w
		touched = true
	}
	for i := range n {
		ni := node(i)
		nd := ni.Node()
		if len(nd.Labels) == 0 {
			continue
		}
		pods := ni.PodsWithAffinity()
		if has {
			pods = ni.Pods()
		}
		for _, ep := range pods {
			p := ep.Pod()
			for _, tm := range pref {
				if tm.matches(p) {
					add(nd, tm.TopologyKey, int64(tm.Weight*1))
				}
			}
			for _, tm := range prefAnti {
				if tm.matches(p) {
					add(nd, tm.TopologyKey, int64(tm.Weight*-1))
				}
			}
			et := TermsOf(ep)
			if et == nil {
				continue
			}
			if hardWeight > 0 {
				for j := range et.RequiredAffinity {
					if tm := &et.RequiredAffinity[j]; tm.Matches(pod, nsLabels) {
						add(nd, tm.TopologyKey, int64(hardWeight*1))
					}
				}
			}
			for j := range et.PreferredAffinity {
				if tm := &et.PreferredAffinity[j]; tm.Matches(pod, nsLabels) {
					add(nd, tm.TopologyKey, int64(tm.Weight*1))
				}
			}
			for j := range et.PreferredAntiAffinity {
				if tm := &et.PreferredAntiAffinity[j]; tm.Matches(pod, nsLabels) {
					add(nd, tm.TopologyKey, int64(tm.Weight*-1))
				}
			}
		}
	}
	if !touched {
		return nil
	}
	return s
}

// Raw is upstream's Score: the sum, over the topology keys with a
// weight, of the weight of the node's value. O(keys); allocates nothing.
func (s *Score) Raw(n *v1.Node) int64 {
	var sum int64
	for k, vs := range s.topo {
		if v, ok := n.Labels[k]; ok {
			sum += vs[v]
		}
	}
	return sum
}

// Keys returns the number of topology keys with a weight.
func (s *Score) Keys() int { return len(s.topo) }

// Normalize is upstream's NormalizeScore: 100 × (raw − min) / (max −
// min) over the candidates, truncated (0 for all when max = min).
// O(len(scores)); allocates nothing.
func Normalize(scores []int64) {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, s := range scores {
		hi = max(hi, s)
		lo = min(lo, s)
	}
	d := hi - lo
	for i, s := range scores {
		f := float64(0)
		if d > 0 {
			f = float64(100) * (float64(s-lo) / float64(d))
		}
		scores[i] = int64(f)
	}
}

// Inert reports that InterPodAffinity's filter and score do nothing for
// a pod with terms t (nil: no pod affinity or anti-affinity) over a
// cluster of n nodes: the pod has no terms and no node holds a pod with
// terms, so neither the pod's own terms nor existing pods' terms (required
// anti-affinity for the filter; affinity and anti-affinity, required with
// hardPodAffinityWeight or preferred, for the score) can apply. Framework's
// equivalence cache serves such pods (internal/scoring.PodNodeLocal).
// O(1) in a process that has never parsed a pod with terms (see
// everParsed); else O(n) length checks until the first node with such a
// pod. No allocation.
func Inert[N NodeInfo[P], P PodInfo](t *Terms, n int, node func(int) N) bool {
	if t != nil {
		return false
	}
	if !everParsed.Load() {
		return true
	}
	for i := range n {
		if len(node(i).PodsWithAffinity()) > 0 {
			return false
		}
	}
	return true
}
