package interpod

import (
	"hash/maphash"
	"slices"
	"strconv"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kind names one of a pod's four term lists.
type Kind uint8

const (
	// RequiredAffinity: requiredDuringScheduling pod affinity terms.
	RequiredAffinity Kind = iota
	// RequiredAntiAffinity: requiredDuringScheduling pod anti-affinity
	// terms.
	RequiredAntiAffinity
	// PreferredAffinity: preferredDuringScheduling pod affinity terms.
	PreferredAffinity
	// PreferredAntiAffinity: preferredDuringScheduling pod anti-affinity
	// terms.
	PreferredAntiAffinity
	// NumKinds is the number of kinds.
	NumKinds
)

// List returns t's term list of kind k (nil for none).
func (t *Terms) List(k Kind) []Term {
	switch k {
	case RequiredAffinity:
		return t.RequiredAffinity
	case RequiredAntiAffinity:
		return t.RequiredAntiAffinity
	case PreferredAffinity:
		return t.PreferredAffinity
	case PreferredAntiAffinity:
		return t.PreferredAntiAffinity
	}
	return nil
}

// Value is what one term of kind k held by an existing pod adds to its
// group's total in its domain: 1 for a required term (a count), the
// weight for a preferred one (a sum of weights, upstream's scoring adds
// or subtracts it).
func (k Kind) Value(t *Term) int64 {
	if k == PreferredAffinity || k == PreferredAntiAffinity {
		return int64(t.Weight)
	}
	return 1
}

// Key identifies what a term matches and where it counts: its topology
// key, its resolved namespaces, its namespaceSelector and its merged
// labelSelector (not its weight). Terms with equal keys match exactly the
// same pods ([Term.Matches] gives the same answer for every pod), so an
// index may test one of them for the whole group. Computed by [Parse].
func (t *Term) Key() string { return t.key }

// KeyHash is [Hash]([Term.Key]), computed once by [Parse]; O(1).
func (t *Term) KeyHash() uint64 { return t.keyHash }

var hashSeed = maphash.MakeSeed()

// Hash is a process-wide 64-bit hash of s (hash/maphash with one seed
// per process), for indexes keyed by term keys (topology values, interned,
// hash by their handles: [HandleHash]);
// O(len(s)), no allocation.
func Hash(s string) uint64 { return maphash.String(hashSeed, s) }

// Domains are one group's totals per topology value (of the group's
// topology key): [Kind.Value] summed over the group's terms held by pods
// on nodes with that value. Values are the interned handles nodes'
// labels hold (unique.Make of the value). Count is 0 for a value with no
// entry; Len is the number of values with an entry (a non-zero total);
// Each yields every entry until yield returns false. Read-only for
// the reader; no allocation; Len and Count O(1) expected for map-backed
// Domains and O(log16 values) trie hops for snapshot's index (Len: one
// look-up per entry of a group's patch, at most two), Each O(entries).
type Domains interface {
	Count(value unique.Handle[string]) int64
	Len() int
	Each(yield func(value unique.Handle[string], total int64) bool)
	// AddTo adds mult × each total to t (Each without a call per
	// entry); it may also leave a value whose total is 0 in t, adding
	// 0 to it. O(entries) table inserts.
	AddTo(t *ValueTable, mult int64)
}

// Index is a cluster's index of its existing pods' terms, grouped by
// [Term.Key] per [Kind], with per-domain totals. snapshot keeps one per
// Snapshot and Fork, updated on every pod and node change; [ScanIndex]
// builds one by walking the nodes for clusters that keep none.
type Index interface {
	// NumPodsWithAffinity is the number of pods with pod affinity or
	// anti-affinity ([HasAffinity]) on the cluster's nodes; O(1).
	NumPodsWithAffinity() int
	// TermGroups calls yield, in no particular order, for each group of
	// equal terms of kind k that pods on the nodes hold: a representative
	// term and the group's domains; it stops when yield returns false.
	// O(groups of kind k); no allocation.
	TermGroups(k Kind, yield func(t *Term, d Domains) bool)
	// MatchCounts returns, for a [Term.Static] term whose key some
	// existing pod's term has, the number of pods on the cluster's nodes
	// that the term matches, per value of its topology key (the domains
	// of upstream's PreFilter and PreScore counts for that term); nil
	// for any other term. O(1) expected (snapshot's: O(log16 terms));
	// no allocation.
	MatchCounts(t *Term) Domains
	// MatchViews calls yield for each term whose counts MatchCounts
	// keeps, until yield returns false. O(such terms).
	MatchViews(yield func(t *Term, d Domains) bool)
}

// IndexOf returns the index a cluster (a *snapshot.Snapshot or
// *snapshot.Fork) keeps, or nil; snapshot sets it in its init.
var IndexOf = func(cluster any) Index { return nil }

// IndexFor returns cluster's index, or, for a cluster that keeps none,
// builds one by walking its nodes node(0..n-1) ([ScanIndex]: O(nodes +
// pods with affinity × their terms), allocating).
func IndexFor[N NodeInfo[P], P PodInfo](cluster any, n int, node func(int) N) Index {
	if ix := IndexOf(cluster); ix != nil {
		return ix
	}
	return ScanIndex(n, node)
}

// scanIndex is the deliberately simple Index: maps built by one walk
// over every node's pods with affinity.
type scanIndex struct {
	pods   int
	groups [NumKinds]map[string]*scanGroup
	views  map[string]*scanGroup
}

type scanGroup struct {
	term   *Term
	counts map[unique.Handle[string]]int64
}

func (g *scanGroup) Count(v unique.Handle[string]) int64 { return g.counts[v] }
func (g *scanGroup) Len() int                            { return len(g.counts) }

func (g *scanGroup) AddTo(t *ValueTable, mult int64) {
	for v, n := range g.counts {
		t.Add(v, mult*n)
	}
}

func (g *scanGroup) Each(yield func(unique.Handle[string], int64) bool) {
	for v, n := range g.counts {
		if !yield(v, n) {
			return
		}
	}
}

// ScanIndex builds the [Index] of nodes node(0..n-1) by walking their
// pods: the reference an incremental index must equal, and the index of
// a cluster that keeps none. O(nodes + pods with affinity × their terms
// + pods × distinct static terms); allocates the maps.
func ScanIndex[N NodeInfo[P], P PodInfo](n int, node func(int) N) Index {
	ix := &scanIndex{}
	for i := range n {
		ni := node(i)
		labels := ni.Labels()
		for _, ep := range ni.PodsWithAffinity() {
			t := TermsOf(ep)
			if t == nil {
				continue
			}
			ix.pods++
			for k := range NumKinds {
				ts := t.List(k)
				for j := range ts {
					tm := &ts[j]
					if ix.groups[k] == nil {
						ix.groups[k] = map[string]*scanGroup{}
					}
					g := ix.groups[k][tm.key]
					if g == nil {
						g = &scanGroup{term: tm, counts: map[unique.Handle[string]]int64{}}
						ix.groups[k][tm.key] = g
					}
					if v, ok := valueOf(labels, tm.topo); ok {
						if g.counts[v] += k.Value(tm); g.counts[v] == 0 {
							delete(g.counts, v)
						}
					}
				}
			}
		}
	}
	for k := range NumKinds {
		for key, g := range ix.groups[k] {
			if !g.term.static || ix.views[key] != nil {
				continue
			}
			if ix.views == nil {
				ix.views = map[string]*scanGroup{}
			}
			v := &scanGroup{term: g.term, counts: map[unique.Handle[string]]int64{}}
			for i := range n {
				ni := node(i)
				val, ok := valueOf(ni.Labels(), g.term.topo)
				if !ok {
					continue
				}
				for _, p := range ni.Pods() {
					if g.term.Matches(p.Template(), nil) {
						v.counts[val]++
					}
				}
			}
			ix.views[key] = v
		}
	}
	return ix
}

func (ix *scanIndex) NumPodsWithAffinity() int { return ix.pods }

func (ix *scanIndex) MatchCounts(t *Term) Domains {
	if v := ix.views[t.key]; v != nil && t.static {
		return v
	}
	return nil
}

func (ix *scanIndex) MatchViews(yield func(*Term, Domains) bool) {
	for _, v := range ix.views {
		if !yield(v.term, v) {
			return
		}
	}
}

func (ix *scanIndex) TermGroups(k Kind, yield func(*Term, Domains) bool) {
	for _, g := range ix.groups[k] {
		if !yield(g.term, g) {
			return
		}
	}
}

// termKey is [Term.Key]: quoted fields, so that no two different terms
// share a key. Built in one buffer (one allocation for the result, one
// more only for more than 8 namespaces or matchLabels).
func termKey(topologyKey string, names []string, nsSel, sel *metav1.LabelSelector) string {
	b := make([]byte, 0, 128)
	b = strconv.AppendQuote(b, topologyKey)
	b = append(b, " ns["...)
	var nsBuf [8]string
	ns := append(nsBuf[:0], names...)
	slices.Sort(ns)
	for i, n := range ns {
		if i > 0 && n == ns[i-1] {
			continue
		}
		b = strconv.AppendQuote(b, n)
		b = append(b, ' ')
	}
	b = append(b, "] nsSel "...)
	b = appendSelectorKey(b, nsSel)
	b = append(b, " sel "...)
	b = appendSelectorKey(b, sel)
	return string(b)
}

func appendSelectorKey(b []byte, s *metav1.LabelSelector) []byte {
	if s == nil {
		return append(b, "nil"...)
	}
	b = append(b, '{')
	var keyBuf [8]string
	keys := keyBuf[:0]
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = strconv.AppendQuote(b, k)
		b = append(b, '=')
		b = strconv.AppendQuote(b, s.MatchLabels[k])
		b = append(b, ' ')
	}
	b = append(b, '|')
	for _, e := range s.MatchExpressions {
		b = strconv.AppendQuote(b, e.Key)
		b = append(b, ' ')
		b = strconv.AppendQuote(b, string(e.Operator))
		b = append(b, " ("...)
		for _, v := range e.Values {
			b = strconv.AppendQuote(b, v)
			b = append(b, ' ')
		}
		b = append(b, ") "...)
	}
	return append(b, '}')
}
