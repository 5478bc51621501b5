package interpod

import (
	"math"
	"sync"
	"unique"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/selector"
)

// PodInfo is the engine's view of a pod (*snapshot.PodInfo): its
// template, of which the engine reads namespace and labels (a lean
// record's shared skeleton, snapshot.PodInfo.Template).
type PodInfo interface{ Template() *v1.Pod }

// NodeInfo is the engine's view of a node (*snapshot.NodeInfo): its
// object, its labels as interned handles, all its pods, and those with pod (anti-)affinity (upstream's
// PodsWithAffinity, kept by snapshot on add and remove).
type NodeInfo[P PodInfo] interface {
	Node() *v1.Node
	Labels() []selector.Label
	Pods() []P
	PodsWithAffinity() []P
}

// NamespaceLister finds a namespace by name (nil if unknown); the
// objects are read-only. snapshot's Cache, Snapshot and Fork implement it
// once they hold namespaces.
type NamespaceLister interface {
	Namespace(name string) *v1.Namespace
}

// namespaces memoises a lister's answers for one pod's preparation: the
// first namespace asked for (nearly always the pod's own, and often the
// only one) in fields, others in a map made on the second.
type namespaces struct {
	lister NamespaceLister
	// name1, labels1: the first answer, when has1.
	has1    bool
	name1   string
	labels1 map[string]string
	seen    map[string]map[string]string
}

// noLabels is the labels of a known namespace without any: shared,
// never written.
var noLabels = map[string]string{}

// labels returns the labels of namespace ns, nil if unknown. The first
// namespace costs no allocation.
func (n *namespaces) labels(ns string) (map[string]string, bool) {
	if n.lister == nil {
		return nil, false
	}
	if n.has1 && n.name1 == ns {
		return n.labels1, n.labels1 != nil
	}
	if l, ok := n.seen[ns]; ok {
		return l, l != nil
	}
	var l map[string]string
	if o := n.lister.Namespace(ns); o != nil {
		if l = o.Labels; l == nil {
			l = noLabels
		}
	}
	if !n.has1 {
		n.has1, n.name1, n.labels1 = true, ns, l
	} else {
		if n.seen == nil {
			n.seen = map[string]map[string]string{}
		}
		n.seen[ns] = l
	}
	return l, l != nil
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

// resolve returns ts resolved with ns, in dst's storage when it has
// room (nil for no terms and no storage).
func resolve(dst []incoming, ts []Term, ns *namespaces) []incoming {
	dst = dst[:0]
	for i := range ts {
		dst = append(dst, incoming{&ts[i], ns})
	}
	return dst
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

// Filter is upstream's InterPodAffinity PreFilter state. Read-only from
// [NewFilter] to [Filter.Release] (if ever); Check is safe for concurrent
// use and allocates nothing.
// It holds its own tables of topology values (built from the index's
// totals or by counting), so it stays valid whatever happens to the
// cluster it was prepared over afterwards.
type Filter struct {
	affinity, anti []incoming
	// selfMatch: the pod matches all its own affinity terms (the first
	// pod of a group, upstream's satisfiesSelfAffinityCheck).
	selfMatch bool
	// aff[i]: per value of affinity[i]'s key, the existing pods that
	// match all the affinity terms (only values with such pods); affAny:
	// some such pod is on a node with a term's key (upstream's
	// affinityCounts is not empty).
	aff    []ValueTable
	affAny bool
	// existing: the groups of existing pods' required anti-affinity
	// terms that match the pod and count somewhere (upstream's
	// existingAntiAffinityCounts is their sum), then, when byKey was
	// built from the index alone, the counts of the pod's anti-affinity
	// terms (Index.MatchCounts): the recipe of byKey.
	existing []contrib
	// memo: byKey is exactly existing's sums on an immutable cluster
	// and the pod has no affinity terms, so Release keeps f in
	// filterMemo.
	memo bool
	// byKey: per topology key, per value, the number of pods matching
	// one of the pod's anti-affinity terms with that key in the domain
	// (upstream's antiAffinityCounts), times antiUnit, plus the totals of
	// the existing groups with that key there, so that Check reads each
	// key's node label and looks its value up once. Both parts are
	// counts of pods or terms, non-negative and far below 2^32 (at most
	// pods × terms), so the low 32 bits never carry into the anti part.
	byKey []keyTable
	// labels: some key of affinity or byKey is not the hostname key.
	labels bool
	// host1 is byKey's only table when that is the hostname key's and
	// the pod has no affinity terms (the anti-affinity replica's
	// filter): Check's path of one look-up per node.
	host1 *ValueTable
	// ns memoises the namespace lister for this preparation.
	ns namespaces
	// released: Release put f in filterPool (a second Release is a no-op).
	released bool
}

// filterPool and scorePool hold released Filters and Scores, whose
// emptied tables, slices and namespace memo the next NewFilter (NewScore)
// reuses, on any goroutine: a pod's preparation then allocates no table
// storage once a released one is as large as it needs. sync.Pool makes
// Get and Put safe for concurrent use; the GC may drop pooled objects.
var (
	filterPool = sync.Pool{New: func() any { return new(Filter) }}
	scorePool  = sync.Pool{New: func() any { return new(Score) }}
)

// Release ends f's use and lets a later [NewFilter] reuse its storage:
// the caller must be f's only user and must not use f (nor a copy of its
// results) afterwards, as f's tables will hold another pod's counts. The
// framework's Scheduler calls it when its cycle ends; a caller that keeps
// f, or does not know whether someone else does, simply never calls it
// (f is then garbage collected as before). Not safe concurrently with
// Check on f. A nil f or a second Release is a no-op. A Filter prepared
// on an immutable cluster for a pod without required affinity terms,
// from the index's totals alone, goes, tables intact, to the memo
// (filterMemo; see [NewFilter]): O(1). Any other: O(entries of f's
// tables) clears. No allocation.
func (f *Filter) Release() {
	if f == nil || f.released {
		return
	}
	if f.memo {
		f.released = true
		clear(f.affinity)
		clear(f.anti)
		f.affinity, f.anti = f.affinity[:0], f.anti[:0]
		f.ns = namespaces{}
		filterMemo.put(f)
		return
	}
	f.pool()
}

func (f *Filter) recipeOf() []contrib { return f.existing }

// pool empties f, keeping its storage, and puts it in filterPool.
func (f *Filter) pool() {
	clear(f.affinity)
	clear(f.anti)
	clear(f.existing)
	all := f.aff[:cap(f.aff)]
	for i := range all {
		all[i].reset()
	}
	*f = Filter{
		affinity: f.affinity[:0],
		anti:     f.anti[:0],
		aff:      f.aff[:0],
		existing: f.existing[:0],
		byKey:    resetTables(f.byKey),
		released: true,
	}
	filterPool.Put(f)
}

const (
	// antiUnit is what one pod matching an anti-affinity term adds to a
	// byKey entry; an existing group's total adds itself (unit 1).
	antiUnit     = 1 << 32
	existingMask = antiUnit - 1
)

// views returns, for each term, the counts ix keeps of the pods it
// matches (Index.MatchCounts), or nil unless ix keeps them for all.
func views(ix Index, ts []incoming) []Domains {
	ds := make([]Domains, len(ts))
	for i, tm := range ts {
		if ds[i] = ix.MatchCounts(tm.Term); ds[i] == nil {
			return nil
		}
	}
	return ds
}

// matchGroups appends to gs the groups of kind k in ix with an entry
// whose term matches pod (in the namespace with labels nsLabels), each
// worth mult. O(groups of kind k) term matches.
func matchGroups(gs []contrib, ix Index, k Kind, pod *v1.Pod, nsLabels map[string]string, mult int64) []contrib {
	ix.TermGroups(k, func(t *Term, d Domains) bool {
		if d.Len() > 0 && t.Matches(pod, nsLabels) {
			gs = append(gs, contrib{t.topo, d, mult, k, t.key})
		}
		return true
	})
	return gs
}

// NewFilter prepares the filter for pod (t its parsed terms, nil for
// none) over nodes node(0..n-1) whose existing pods' terms ix indexes
// ([IndexFor]), upstream's PreFilter: the groups of existing pods'
// required anti-affinity terms that match pod (the pod's namespace labels
// come from lister, nil when unknown), and, if pod has required terms,
// the counts per topology pair of the existing pods that match all its
// affinity terms and of those that match each anti-affinity term. Those
// counts are ix's (Index.MatchCounts) when it keeps them for every such
// term (static terms that existing pods also hold, at most one affinity
// term: the replicas of a workload with (anti-)affinity to itself), else
// counted over every pod. The totals are copied into the Filter's tables
// of topology values. nil when upstream's PreFilter returns Skip (no term
// on either side matters). Cost: O(ix's required anti-affinity groups)
// term matches plus O(values with a total in the matched groups and
// counts) table inserts, plus, only for a pod with required terms whose
// counts ix does not keep, O(nodes + pods × terms); allocates the
// Filter, the matched groups and the tables, or reuses those of a
// released Filter (filterPool; a table grows if it is too small).
//
// immutable says the cluster ix indexes never changes ([Immutable]):
// then, for a pod without required affinity terms whose anti-affinity
// counts ix keeps, a Filter released after an earlier preparation of the
// same recipe (the matched groups and the anti-affinity terms' counts,
// in order) on another immutable cluster is taken from the memo and its
// tables brought up to date by the difference, as [NewScore]'s.
func NewFilter[N NodeInfo[P], P PodInfo](pod *v1.Pod, t *Terms, lister NamespaceLister, ix Index, immutable bool, n int, node func(int) N) *Filter {
	f := filterPool.Get().(*Filter)
	f.released = false
	f.ns = namespaces{lister: lister}
	ns := &f.ns
	if t != nil {
		f.affinity = resolve(f.affinity, t.RequiredAffinity, ns)
		f.anti = resolve(f.anti, t.RequiredAntiAffinity, ns)
	}
	nsLabels, _ := ns.labels(pod.Namespace)
	f.existing = matchGroups(f.existing[:0], ix, RequiredAntiAffinity, pod, nsLabels, 1)
	if len(f.existing) == 0 && len(f.affinity)+len(f.anti) == 0 {
		f.Release()
		return nil
	}
	if len(f.affinity) == 0 && immutable {
		if antiD := views(ix, f.anti); antiD != nil || len(f.anti) == 0 {
			for i, d := range antiD {
				f.existing = append(f.existing, contrib{f.anti[i].topo, d, antiUnit, NumKinds, f.anti[i].key})
			}
			if m := filterMemo.take(f.existing); m != nil {
				if updateTables(m.byKey, m.existing, f.existing) {
					// m now holds f's totals: it takes f's recipe and
					// resolved terms (resolved again against m's
					// namespace memo); f goes back with m's old recipe
					// storage.
					m.existing, f.existing = f.existing, m.existing
					m.released, m.memo = false, true
					m.ns = namespaces{lister: lister}
					if t != nil {
						m.anti = resolve(m.anti, t.RequiredAntiAffinity, &m.ns)
					}
					m.host1 = nil
					f.pool()
					return m.setNeedsLabels()
				}
				m.pool()
			}
			for _, g := range f.existing {
				tableFor(&f.byKey, g.key).addDomains(g.d, g.mult)
			}
			f.memo = true
			return f.setNeedsLabels()
		}
	}
	for _, g := range f.existing {
		tableFor(&f.byKey, g.key).addDomains(g.d, 1)
	}
	if len(f.affinity)+len(f.anti) == 0 {
		return f.setNeedsLabels()
	}
	f.selfMatch = matchesAll(f.affinity, pod)
	if cap(f.aff) >= len(f.affinity) {
		f.aff = f.aff[:len(f.affinity)] // emptied by Release
	} else {
		f.aff = make([]ValueTable, len(f.affinity))
	}
	if len(f.affinity) <= 1 {
		affD, antiD := views(ix, f.affinity), views(ix, f.anti)
		if (affD != nil || len(f.affinity) == 0) && (antiD != nil || len(f.anti) == 0) {
			for i, d := range affD {
				f.aff[i].addDomains(d, 1)
			}
			f.affAny = len(affD) > 0 && affD[0].Len() > 0
			for i, d := range antiD {
				tableFor(&f.byKey, f.anti[i].topo).addDomains(d, antiUnit)
			}
			return f.setNeedsLabels()
		}
	}
	for i := range n {
		ni := node(i)
		ls := ni.Labels()
		for _, ep := range ni.Pods() {
			p := ep.Template()
			if matchesAll(f.affinity, p) {
				for j, tm := range f.affinity {
					if v, ok := valueOf(ls, tm.topo); ok {
						*f.aff[j].upd(v)++
						f.affAny = true
					}
				}
			}
			for _, tm := range f.anti {
				if !tm.matches(p) {
					continue
				}
				if v, ok := valueOf(ls, tm.topo); ok {
					*tableFor(&f.byKey, tm.topo).upd(v) += antiUnit
				}
			}
		}
	}
	return f.setNeedsLabels()
}

// NeedsLabels reports whether Check reads its labels argument: some
// term's topology key is neither kubernetes.io/hostname nor
// topology.kubernetes.io/zone (whose values the head holds). When false, the
// caller may pass nil labels and spare the node's label array. O(1).
func (f *Filter) NeedsLabels() bool { return f.labels }

// setNeedsLabels sets f.labels once the keys are known.
func (f *Filter) setNeedsLabels() *Filter {
	f.labels = needsLabels(f.byKey)
	for i := range f.affinity {
		f.labels = f.labels || !layout.InHead(f.affinity[i].topo)
	}
	if len(f.affinity) == 0 && len(f.byKey) == 1 && f.byKey[0].key == hostnameKey {
		f.host1 = &f.byKey[0].t
	}
	return f
}

// HostOnly reports whether [Filter.Check] reads nothing of a node but
// its kubernetes.io/hostname value: the pod has no required affinity
// terms, and its anti-affinity terms and the existing pods' terms that
// match it all have the hostname key (SchedulingPodAntiAffinity's
// replicas). [Filter.CheckHost] then gives Check's verdict. O(1).
func (f *Filter) HostOnly() bool { return f.host1 != nil }

// CheckHost is [Filter.Check] for a HostOnly filter, given the node's
// hostname label value (layout.CPUMemory.Hostname; the zero handle for a
// node without the label, which passes: no domain holds it). One table
// look-up; allocates nothing. Small enough to inline: a hostname the
// table's seen bits rule out (most nodes: only those holding a replica
// have an entry) passes with no call.
func (f *Filter) CheckHost(host unique.Handle[string]) Result {
	t := f.host1
	h := HandleHash(host)
	if t.n == 0 || !t.maySee(h) {
		return Pass
	}
	return f.checkHost(host, h)
}

// checkHost is CheckHost past the seen bits; h is HandleHash(host).
func (f *Filter) checkHost(host unique.Handle[string], h uint64) Result {
	if host == (unique.Handle[string]{}) {
		return Pass
	}
	// The loop of Check for one hostname table: c < antiUnit is the
	// existing groups' total alone.
	switch c, _ := f.host1.getHashed(host, h); {
	case c >= antiUnit:
		return AntiAffinityNotMatch
	case c != 0:
		return ExistingAntiAffinityNotMatch
	}
	return Pass
}

// Check is upstream's Filter for one node (feature gate
// InterPodAffinityHostnameFastPath off): the first failing check. h is
// the node's layout head, whose CPUMemory.Hostname and FilterBlock.Zone
// give its kubernetes.io/hostname and topology.kubernetes.io/zone label
// values (the zero handle without one); ls its labels, which Check reads
// only for other keys (nil will do when NeedsLabels is false).
// O(terms × labels) handle comparisons and O(keys) table look-ups;
// allocates nothing.
func (f *Filter) Check(h *layout.Head, ls []selector.Label) Result {
	if f.host1 != nil {
		return f.CheckHost(h.CPUMemory.Hostname)
	}
	if len(f.affinity) > 0 {
		exist := true
		for i := range f.affinity {
			v, ok := NodeValue(h, ls, f.affinity[i].topo)
			if !ok {
				// All topology labels must exist, also for self-affinity.
				return AffinityNotMatch
			}
			if c, _ := f.aff[i].get(v); c <= 0 {
				exist = false
			}
		}
		if !exist && !(!f.affAny && f.selfMatch) {
			return AffinityNotMatch
		}
	}
	// Every anti-affinity term is checked before the existing pods'
	// terms (upstream's order of verdicts).
	existing := false
	for i := range f.byKey {
		k := &f.byKey[i]
		if v, ok := NodeValue(h, ls, k.key); ok {
			c, _ := k.t.get(v)
			if c >= antiUnit {
				return AntiAffinityNotMatch
			}
			existing = existing || c&existingMask != 0
		}
	}
	if existing {
		return ExistingAntiAffinityNotMatch
	}
	return Pass
}

// Score is upstream's InterPodAffinity PreScore state: per topology key,
// per value, the summed weights of the pod's own preferred terms and of
// the matched groups of existing pods' terms, in tables of topology
// values. Read-only from [NewScore] to [Score.Release] (if ever); Raw is
// safe for concurrent use and allocates nothing. It holds its own tables, so it stays valid whatever
// happens to the cluster it was prepared over afterwards.
type Score struct {
	keys []keyTable
	// labels: some key is not the hostname key.
	labels bool
	// recipe: what the tables were built from, in order (the matched
	// groups of existing pods' terms, then the counts of the pod's own
	// preferred terms when the index keeps them).
	recipe []contrib
	// memo: the tables are exactly recipe's sums on an immutable
	// cluster (no counting pass), so Release keeps s in the memo.
	memo bool
	// ns, pref, prefAnti: NewScore's scratch, kept for reuse.
	ns             namespaces
	pref, prefAnti []incoming
	released       bool
}

// Release ends s's use and lets a later [NewScore] reuse its storage,
// as [Filter.Release] (same contract: the caller must be s's only user
// and must not use s afterwards; not safe concurrently with Raw; nil or
// a second Release is a no-op). A Score prepared on an immutable
// cluster from the index's totals alone goes, tables intact, to the
// memo (see [Immutable]); O(1). Any other: O(entries of s's tables)
// clears. No allocation.
func (s *Score) Release() {
	if s == nil || s.released {
		return
	}
	if !s.memo {
		s.pool()
		return
	}
	s.released = true
	clear(s.pref)
	clear(s.prefAnti)
	s.pref, s.prefAnti = s.pref[:0], s.prefAnti[:0]
	s.ns = namespaces{}
	scoreMemo.put(s)
}

func (s *Score) recipeOf() []contrib { return s.recipe }

// pool empties s, keeping its storage, and puts it in scorePool.
func (s *Score) pool() {
	clear(s.recipe)
	clear(s.pref)
	clear(s.prefAnti)
	*s = Score{
		keys:     resetTables(s.keys),
		recipe:   s.recipe[:0],
		pref:     s.pref[:0],
		prefAnti: s.prefAnti[:0],
		released: true,
	}
	scorePool.Put(s)
}

// HasPreferred reports whether pod has preferred pod affinity or
// anti-affinity terms (upstream PreScore's hasConstraints).
func HasPreferred(pod *v1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && (a.PodAffinity != nil && len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 ||
		a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0)
}

// NewScore is upstream's PreScore for pod (t its parsed terms) over nodes
// node(0..n-1) whose existing pods' terms ix indexes ([IndexFor]): for
// each existing pod on a node with labels, (1) each of pod's preferred
// affinity (anti-affinity) terms the existing pod matches adds
// (subtracts) its weight to the pair (topologyKey, the node's value);
// (2) if hardWeight > 0, each required affinity term of the existing pod
// that pod matches adds hardWeight; (3) each preferred affinity
// (anti-affinity) term of the existing pod that pod matches adds
// (subtracts) its weight. (2) and (3) use pod's namespace labels from
// lister and are read from ix's groups, one match per group; (1) reads
// ix's counts (Index.MatchCounts) when it keeps them for each of pod's
// preferred terms, else counts over every pod. With ignoreExisting, a
// pod without preferred terms is not scored. nil when upstream's
// PreScore returns Skip (no term matched anything): every node scores 0.
// Cost: O(ix's groups of those kinds) term matches plus O(values with a
// total in the matched groups and counts) table inserts, plus O(nodes +
// pods × terms) only for a pod with preferred terms whose counts ix does
// not keep; allocates the Score, the matched groups and the tables, or
// reuses those of a released Score (scorePool).
//
// immutable says the cluster ix indexes never changes ([Immutable]):
// then, when every total comes from ix (no counting), a Score released
// after an earlier preparation of the same recipe (the same matched
// groups and term counts, multipliers and keys, in the same order) on
// another immutable cluster is taken from the memo and brought up to
// date instead of built: O(entries of the trie parts the two clusters
// do not share) table updates ([Differ]; for a cluster one bound pod
// apart, a few leaves of each group), rebuilt when that passes half a
// build. Its raw scores equal a build's (a value whose total fell to 0
// keeps a zero entry).
func NewScore[N NodeInfo[P], P PodInfo](pod *v1.Pod, t *Terms, hardWeight int32, ignoreExisting bool, lister NamespaceLister, ix Index, immutable bool, n int, node func(int) N) *Score {
	has := HasPreferred(pod)
	if ignoreExisting && !has {
		return nil
	}
	s := scorePool.Get().(*Score)
	s.released = false
	s.ns = namespaces{lister: lister}
	ns := &s.ns
	nsLabels, _ := ns.labels(pod.Namespace)
	rec := s.recipe[:0]
	if hardWeight > 0 {
		rec = matchGroups(rec, ix, RequiredAffinity, pod, nsLabels, int64(hardWeight))
	}
	rec = matchGroups(rec, ix, PreferredAffinity, pod, nsLabels, 1)
	rec = matchGroups(rec, ix, PreferredAntiAffinity, pod, nsLabels, -1)
	var pref, prefAnti []incoming
	if has && t != nil {
		s.pref = resolve(s.pref, t.PreferredAffinity, ns)
		s.prefAnti = resolve(s.prefAnti, t.PreferredAntiAffinity, ns)
		pref, prefAnti = s.pref, s.prefAnti
		pd, ad := views(ix, pref), views(ix, prefAnti)
		if (pd != nil || len(pref) == 0) && (ad != nil || len(prefAnti) == 0) {
			for i, tm := range pref {
				if pd[i].Len() > 0 {
					rec = append(rec, contrib{tm.topo, pd[i], int64(tm.Weight), NumKinds, tm.key})
				}
			}
			for i, tm := range prefAnti {
				if ad[i].Len() > 0 {
					rec = append(rec, contrib{tm.topo, ad[i], -int64(tm.Weight), NumKinds, tm.key})
				}
			}
			pref, prefAnti = nil, nil
		}
	}
	s.recipe = rec
	counted := len(pref)+len(prefAnti) > 0
	if immutable && !counted && len(rec) > 0 {
		if m := scoreMemo.take(rec); m != nil {
			if updateTables(m.keys, m.recipe, rec) {
				// m now holds rec's totals: it takes rec, s goes back
				// (its tables empty) with m's old recipe storage.
				m.recipe, s.recipe = rec, m.recipe
				m.released, m.memo = false, true
				s.pool()
				return m
			}
			m.pool()
		}
	}
	for _, c := range rec {
		tableFor(&s.keys, c.key).addDomains(c.d, c.mult)
	}
	if counted {
		add := func(ls []selector.Label, key unique.Handle[string], w int64) {
			if v, ok := valueOf(ls, key); ok {
				*tableFor(&s.keys, key).upd(v) += w
			}
		}
		for i := range n {
			ni := node(i)
			ls := ni.Labels()
			if len(ls) == 0 {
				continue
			}
			for _, ep := range ni.Pods() {
				p := ep.Template()
				for _, tm := range pref {
					if tm.matches(p) {
						add(ls, tm.topo, int64(tm.Weight))
					}
				}
				for _, tm := range prefAnti {
					if tm.matches(p) {
						add(ls, tm.topo, -int64(tm.Weight))
					}
				}
			}
		}
	}
	if len(s.keys) == 0 {
		s.Release()
		return nil
	}
	s.memo = immutable && !counted
	s.labels = needsLabels(s.keys)
	return s
}

// NeedsLabels reports whether Raw reads its labels argument: some
// topology key with a weight is neither kubernetes.io/hostname nor
// topology.kubernetes.io/zone. O(1).
func (s *Score) NeedsLabels() bool { return s.labels }

// Raw is upstream's Score for a node: the sum, over the topology keys
// with a weight, of the weight of the node's value. h is the node's
// layout head (its hostname and zone label values, as for
// [Filter.Check]), ls its labels, read only for other keys (nil will do
// when NeedsLabels is false). O(keys × labels) handle comparisons and
// O(keys) table look-ups; allocates nothing.
func (s *Score) Raw(h *layout.Head, ls []selector.Label) int64 {
	var sum int64
	for i := range s.keys {
		k := &s.keys[i]
		if v, ok := NodeValue(h, ls, k.key); ok {
			c, _ := k.t.get(v)
			sum += c
		}
	}
	return sum
}

// Keys returns the number of distinct topology keys with a weight. O(1).
func (s *Score) Keys() int { return len(s.keys) }

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
// cluster: the pod has no terms and no node holds a pod with terms, so
// neither the pod's own terms nor existing pods' terms (required
// anti-affinity for the filter; affinity and anti-affinity, required with
// hardPodAffinityWeight or preferred, for the score) can apply.
// Framework's equivalence cache serves such pods
// (internal/scoring.PodNodeLocal). O(1) for a cluster that keeps an
// [Index] (snapshot's count of pods with affinity, kept on every pod and
// node change); else O(n) length checks of node(0..n-1) until the first
// node with such a pod. No allocation.
func Inert[N NodeInfo[P], P PodInfo](t *Terms, cluster any, n int, node func(int) N) bool {
	if t != nil {
		return false
	}
	if ix := IndexOf(cluster); ix != nil {
		return ix.NumPodsWithAffinity() == 0
	}
	for i := range n {
		if len(node(i).PodsWithAffinity()) > 0 {
			return false
		}
	}
	return true
}
