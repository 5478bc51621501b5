package snapshot

import (
	"maps"

	"github.com/schedkit/schedkit/internal/interpod"
)

// The cluster-wide index of the pods' pod (anti-)affinity terms
// (interpod.Index), kept by every state on each pod and node change, so
// that InterPodAffinity reads existing pods' terms in O(groups of equal
// terms) instead of walking every node, and the incoming pod's own terms
// in O(1) when existing pods hold them too:
//
//   - the number of pods with pod (anti)affinity (interpod.Inert: O(1));
//   - per term kind (required/preferred affinity/anti-affinity), the
//     groups of terms with equal interpod.Term.Key, each with its totals
//     per value of its topology key (a count for required terms, a sum of
//     weights for preferred ones), over the pods on nodes with that label;
//   - views: for each static term (interpod.Term.Static) some pod holds,
//     the number of pods it matches per value of its topology key
//     (interpod.Index.MatchCounts), what upstream's PreFilter and PreScore
//     count for an incoming pod with that term, e.g. the next replica of a
//     workload with anti-affinity to itself.
//
// Copy-on-write like the node tree: the group maps and each group's
// domain map are ovmaps (an immutable base and a delta owned by one
// writer token), groups carry the token of the writer that may change
// them in place. A state is copied by value on Fork, so Fork stays O(1)
// and Revert O(1) (the old headers come back); the first change to a
// group in a layer copies the group (one allocation), the kind's group
// delta and the group's domain delta (each up to 32 + base/8 entries,
// amortised O(1) per change, see ovmap).
//
// Costs per change: a pod without terms costs O(views) term matches (one
// length check with no views) and changes only the views whose term
// matches it; a pod with terms O(its terms) map updates, and a term whose
// key no pod held before creates its view by matching every pod (O(nodes
// + pods), once). Adding or removing a node costs its pods' share;
// replacing a node whose labels changed, twice that.

type affIndex struct {
	pods   int
	groups [interpod.NumKinds]ovmap[*termGroup]
	// views: per key of a static term some pod holds
	// (interpod.Term.Static), the pods that term matches per value of its
	// topology key (interpod.Index.MatchCounts); members counts the terms
	// holding the view, which is dropped at 0.
	views  ovmap[*termGroup]
	nviews int
}

// termGroup is a group of equal terms: a representative, how many terms
// it holds (it is dropped at 0), and its totals per topology value.
type termGroup struct {
	owner   uint64
	term    *interpod.Term
	members int64
	domains ovmap[int64]
	size    int // values with an entry in domains
}

// Count is interpod.Domains': the total for topology value v, 0 if none.
func (g *termGroup) Count(v string) int64 {
	c, _ := g.domains.get(v)
	return c
}

// Len is interpod.Domains': the number of values with a total.
func (g *termGroup) Len() int { return g.size }

// affState returns the current state of a Snapshot or Fork (or of a
// type embedding one), whose index interpod.IndexOf returns.
func (s *view) affState() *state { return &s.st }

func init() {
	interpod.IndexOf = func(c any) interpod.Index {
		if v, ok := c.(interface{ affState() *state }); ok && v != nil {
			return v.affState()
		}
		return nil
	}
}

// NumPodsWithAffinity is interpod.Index's; O(1).
func (s *state) NumPodsWithAffinity() int { return s.aff.pods }

// TermGroups is interpod.Index's; O(groups of kind k), no allocation.
func (s *state) TermGroups(k interpod.Kind, yield func(*interpod.Term, interpod.Domains) bool) {
	m := &s.aff.groups[k]
	for key, g := range m.base {
		if _, over := m.delta[key]; over {
			continue
		}
		if !yield(g.term, g) {
			return
		}
	}
	for _, e := range m.delta {
		if !e.del && !yield(e.v.term, e.v) {
			return
		}
	}
}

// affPod records pod p joining (d = 1, p is already on ni) or leaving
// (d = -1, p is already off ni) node ni; nil changes nothing. The views
// count p first on joining (a view its own terms create then scans the
// nodes, p included) and last on leaving (after its terms may have
// dropped a view).
func (s *state) affPod(ni *NodeInfo, p *PodInfo, d int) {
	if p == nil {
		return
	}
	if d > 0 {
		s.viewPod(ni, p, d)
	}
	s.affTerms(ni, p, d)
	if d < 0 {
		s.viewPod(ni, p, d)
	}
}

// affNode records all of ni's pods joining (d = 1, ni is already in
// the tree) or leaving (d = -1, ni is already out of it), in the order
// affPod uses.
func (s *state) affNode(ni *NodeInfo, d int) {
	if d > 0 {
		for _, p := range ni.pods {
			s.viewPod(ni, p, d)
		}
	}
	for _, p := range ni.PodsWithAffinity() {
		s.affTerms(ni, p, d)
	}
	if d < 0 {
		for _, p := range ni.pods {
			s.viewPod(ni, p, d)
		}
	}
}

// affRelabel records node old replaced by fresh (same pods, fresh in
// the tree): only a change of labels moves totals.
func (s *state) affRelabel(old, fresh *NodeInfo) {
	if len(old.PodsWithAffinity()) == 0 && s.aff.nviews == 0 || maps.Equal(old.node.Labels, fresh.node.Labels) {
		return
	}
	s.affNode(old, -1)
	s.affNode(fresh, 1)
}

// affTerms records the terms of p (on node ni) joining or leaving: the
// groups and the views' references.
func (s *state) affTerms(ni *NodeInfo, p *PodInfo, d int) {
	t := p.shape.affinity
	if t == nil {
		return
	}
	s.aff.pods += d
	labels := ni.node.Labels
	for k := range interpod.NumKinds {
		ts := t.List(k)
		for j := range ts {
			s.affTerm(k, &ts[j], labels, d)
			s.viewRef(&ts[j], d)
		}
	}
}

// viewPod counts pod p on node ni in (d = 1) or out of (d = -1) every
// view whose term matches it. O(views) term matches; allocates only when
// a matching view is first changed in this writer's layer.
func (s *state) viewPod(ni *NodeInfo, p *PodInfo, d int) {
	if s.aff.nviews == 0 {
		return
	}
	// Collect first: changing a view may copy the map being walked.
	var buf [8]*termGroup
	hits := buf[:0]
	s.eachView(func(g *termGroup) bool {
		if _, ok := ni.node.Labels[g.term.TopologyKey]; ok && g.term.Matches(p.shape.tmpl, nil) {
			hits = append(hits, g)
		}
		return true
	})
	for _, g := range hits {
		g = s.ownView(g)
		g.add(s.tok, ni.node.Labels[g.term.TopologyKey], int64(d))
		s.aff.views.set(s.tok, g.term.Key(), g)
	}
}

// viewRef records a term of a pod joining or leaving: a static term's
// view is created (by counting the matching pods of every node, O(nodes +
// pods)) when the first term with its key joins and dropped when the
// last leaves.
func (s *state) viewRef(tm *interpod.Term, d int) {
	if !tm.Static() {
		return
	}
	key := tm.Key()
	g, _ := s.aff.views.get(key)
	if g == nil {
		if d < 0 {
			return // unreachable: the term joined with its view
		}
		g = &termGroup{owner: s.tok, term: tm}
		m := map[string]int64{}
		for i := range s.n {
			ni := s.node(i)
			v, ok := ni.node.Labels[tm.TopologyKey]
			if !ok {
				continue
			}
			for _, p := range ni.pods {
				if tm.Matches(p.shape.tmpl, nil) {
					m[v]++
				}
			}
		}
		g.domains.base, g.size = m, len(m)
		s.aff.nviews++
	} else {
		g = s.ownView(g)
	}
	g.members += int64(d)
	if g.members == 0 {
		s.aff.views.del(s.tok, key)
		s.aff.nviews--
		return
	}
	s.aff.views.set(s.tok, key, g)
}

func (s *state) ownView(g *termGroup) *termGroup {
	if g.owner == s.tok {
		return g
	}
	c := *g
	c.owner = s.tok
	return &c
}

func (s *state) eachView(yield func(*termGroup) bool) {
	m := &s.aff.views
	for key, g := range m.base {
		if _, over := m.delta[key]; over {
			continue
		}
		if !yield(g) {
			return
		}
	}
	for _, e := range m.delta {
		if !e.del && !yield(e.v) {
			return
		}
	}
}

// MatchCounts is interpod.Index's; O(1), no allocation.
func (s *state) MatchCounts(t *interpod.Term) interpod.Domains {
	if !t.Static() || s.aff.nviews == 0 {
		return nil
	}
	if g, _ := s.aff.views.get(t.Key()); g != nil {
		return g
	}
	return nil
}

// MatchViews is interpod.Index's.
func (s *state) MatchViews(yield func(*interpod.Term, interpod.Domains) bool) {
	s.eachView(func(g *termGroup) bool { return yield(g.term, g) })
}

// add adds c to the total of value v (g owned by tok).
func (g *termGroup) add(tok uint64, v string, c int64) {
	old := g.Count(v)
	n := old + c
	switch {
	case n == 0:
		g.domains.del(tok, v)
		g.size--
	case old == 0:
		g.domains.set(tok, v, n)
		g.size++
	default:
		g.domains.set(tok, v, n)
	}
}

func (s *state) affTerm(k interpod.Kind, tm *interpod.Term, labels map[string]string, d int) {
	m := &s.aff.groups[k]
	key := tm.Key()
	g, _ := m.get(key)
	if g == nil {
		g = &termGroup{owner: s.tok, term: tm}
	} else {
		g = s.ownView(g)
	}
	g.members += int64(d)
	if v, ok := labels[tm.TopologyKey]; ok {
		g.add(s.tok, v, int64(d)*k.Value(tm))
	}
	if g.members == 0 {
		m.del(s.tok, key)
		return
	}
	m.set(s.tok, key, g)
}
