package snapshot

import (
	"maps"

	"github.com/schedkit/schedkit/internal/interpod"
)

// The cluster-wide index of existing pods' pod (anti-)affinity terms
// (interpod.Index), kept by every state on each pod and node change, so
// that InterPodAffinity reads the existing pods' terms in O(groups of
// equal terms) instead of walking every node:
//
//   - the number of pods with pod (anti-)affinity (interpod.Inert: O(1));
//   - per term kind (required/preferred affinity/anti-affinity), the
//     groups of terms with equal interpod.Term.Key, each with its totals
//     per value of its topology key (a count for required terms, a sum of
//     weights for preferred ones), over the pods on nodes with that label.
//
// Copy-on-write like the node tree: the group maps and each group's
// domain map are ovmaps (an immutable base and a delta owned by one
// writer token), groups carry the token of the writer that may change
// them in place. A state is copied by value on Fork, so Fork stays O(1)
// and Revert O(1) (the old headers come back); the first change to a
// group in a layer copies the group (one allocation), the kind's group
// delta and the group's domain delta (each up to 32 + base/8 entries,
// amortised O(1) per change, see ovmap). Only pods with terms touch it:
// adding or removing a pod without terms costs one nil check. Adding or
// removing a pod with terms costs O(its terms) map operations; adding or
// removing a node O(its pods with terms × their terms), replacing a node
// whose labels changed twice that.

type affIndex struct {
	pods   int
	groups [interpod.NumKinds]ovmap[*termGroup]
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

// affPod records pod p with terms joining (d = 1) or leaving (d = -1)
// node ni; a pod without terms (or nil) changes nothing.
func (s *state) affPod(ni *NodeInfo, p *PodInfo, d int) {
	if p == nil || p.affinity == nil {
		return
	}
	t := p.affinity
	s.aff.pods += d
	labels := ni.node.Labels
	for k := range interpod.NumKinds {
		ts := t.List(k)
		for j := range ts {
			s.affTerm(k, &ts[j], labels, d)
		}
	}
}

// affNode records all of ni's pods with terms joining or leaving.
func (s *state) affNode(ni *NodeInfo, d int) {
	for _, p := range ni.affinityPods {
		s.affPod(ni, p, d)
	}
}

// affRelabel records node old replaced by fresh (same pods): only a
// change of labels moves totals.
func (s *state) affRelabel(old, fresh *NodeInfo) {
	if len(old.affinityPods) == 0 || maps.Equal(old.node.Labels, fresh.node.Labels) {
		return
	}
	s.affNode(old, -1)
	s.affNode(fresh, 1)
}

func (s *state) affTerm(k interpod.Kind, tm *interpod.Term, labels map[string]string, d int) {
	m := &s.aff.groups[k]
	key := tm.Key()
	g, _ := m.get(key)
	switch {
	case g == nil:
		g = &termGroup{owner: s.tok, term: tm}
	case g.owner != s.tok:
		c := *g
		c.owner = s.tok
		g = &c
	}
	g.members += int64(d)
	if v, ok := labels[tm.TopologyKey]; ok {
		old := g.Count(v)
		c := old + int64(d)*k.Value(tm)
		switch {
		case c == 0:
			g.domains.del(s.tok, v)
			g.size--
		case old == 0:
			g.domains.set(s.tok, v, c)
			g.size++
		default:
			g.domains.set(s.tok, v, c)
		}
	}
	if g.members == 0 {
		m.del(s.tok, key)
		return
	}
	m.set(s.tok, key, g)
}
