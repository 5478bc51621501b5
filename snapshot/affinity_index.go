package snapshot

import (
	"maps"
	"unique"

	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/internal/spread"
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
// Persistent like the node tree: the group maps, the views and each
// group's domains are pmaps (hash tries whose nodes carry the token of
// the writer that may change them in place; a writer with another token
// copies the nodes on the path it changes). A state is copied by value
// on Fork, so Fork stays O(1) and Revert O(1) (the old roots come back);
// a change in a layer copies O(log16 entries) trie nodes per map it
// touches, whatever the maps' sizes and whatever the layers below
// changed, and a Fork layer takes those copies from its recycler, which
// gets them back on Revert: a steady Fork → AddPod → Revert loop
// allocates nothing, also for a pod with terms. A group's totals take a
// layer's first two values' changes in a patch beside the trie
// (termGroup), copying none of the totals trie: a pod with terms then
// copies only the small groups' and views' maps' leaves, and reads no
// node of a large hostname trie.
//
// Costs per change: a pod without terms costs O(views) term matches (one
// length check with no views) and changes only the views whose term
// matches it; in a Fork, a pod of the same class (namespace and labels)
// as the last one walked, with the same views, costs no term match, only
// the changes of the views it matches (affRecycler's match); a pod with
// terms O(its terms) map updates, and a term whose key no pod held
// before creates its view by matching every pod (O(nodes + pods),
// once). Adding or removing a node costs its pods' share;
// replacing a node whose labels changed, twice that.
//
// The Domains that TermGroups, MatchCounts and MatchViews hand out point
// into the tries: valid while the state they came from is not changed
// (and, in a Fork layer, while the layer is open), as NodeInfos are.

type affIndex struct {
	pods   int
	groups [interpod.NumKinds]pmap[string, termGroup]
	// views: per key of a static term some pod holds
	// (interpod.Term.Static), the pods that term matches per value of its
	// topology key (interpod.Index.MatchCounts); members counts the
	// term groups (one per kind at most) with the view's key, and the
	// view is dropped at 0.
	views pmap[string, termGroup]
	// viewSet names the set of views' terms: a fresh nextGeneration
	// value whenever a view is created or dropped (0 before the first),
	// so that two states with equal viewSet have the same views (a
	// Revert brings an older value back with the older views).
	viewSet int64
}

// viewMatch records the views' terms that pods of spread class class
// match (terms[:n], at most viewMatchMax) in the view set viewSet. A
// static term's verdict on a pod depends only on the pod's namespace and
// labels, which its spread class encodes exactly (spread.ClassOf), so
// the record holds for every pod of that class; a terminating pod's
// class (the zero one) is never recorded. The terms are the views'
// representatives (termGroup.term), which a view keeps while it exists,
// and the view set fixes which views exist.
type viewMatch struct {
	viewSet int64
	class   spread.Class
	n       int
	terms   [viewMatchMax]*interpod.Term
	// offHead: some of terms is (interpod.Term.OffHead; readsLabels).
	offHead bool
}

// viewMatchMax bounds the terms a viewMatch records; a class matching
// more views is not recorded.
const viewMatchMax = 4

// termGroup is a group of equal terms: a representative, how many terms
// it holds (it is dropped at 0), and its totals per topology value (no
// entry for a total of 0). The values are the handles the nodes' labels
// hold, hashed by pointer (interpod.HandleHash): a change reads neither
// the value's string nor its bytes, which on a node's first read in a
// cycle are cache misses. A key keeps its handle, and so its pointer,
// alive while the entry exists.
//
// A group's total for a value is its trie's plus its patch's change
// for that value. The patch keeps up to patchMax values' changes beside
// the trie, in the group's entry: a change whose trie path the writer
// does not own (a Fork layer's first change of the group, a Cache's
// after a Snapshot froze its nodes) goes there, so that it copies no
// trie node and reads none (the hostname totals of a large cluster are
// a trie of thousands of entries, cold in cache); the entry it changes
// (a leaf of the small groups or views map) is copied anyway. A change
// of a value the patch does not hold when it is full folds the patch
// into the trie first (path copies, as without a patch). Every patch
// entry has a non-zero change, for distinct values.
type termGroup struct {
	term    *interpod.Term
	members int64
	domains pmap[unique.Handle[string], int64]
	np      int
	patch   [patchMax]domainChange
}

// patchMax bounds a termGroup's patch: a Fork layer adding or removing
// a pod changes one value per group; two let a second layer (or a pod
// moved between nodes) change another without a fold.
const patchMax = 2

// domainChange is a patch entry: d (non-zero) added to v's total.
type domainChange struct {
	v unique.Handle[string]
	d int64
}

// patched returns the patch's change of v's total (0 if none).
func (g *termGroup) patched(v unique.Handle[string]) int64 {
	for i := range g.patch[:g.np] {
		if g.patch[i].v == v {
			return g.patch[i].d
		}
	}
	return 0
}

// Count is interpod.Domains': the total for topology value v, 0 if none.
func (g *termGroup) Count(v unique.Handle[string]) int64 {
	c, _ := g.domains.get(interpod.HandleHash(v), v)
	return c + g.patched(v)
}

// Len is interpod.Domains': the number of values with a total: the
// trie's, plus the patch's values it gives a total, minus those whose
// total it takes to 0. O(1), and a trie look-up per patch entry.
func (g *termGroup) Len() int {
	n := g.domains.n
	for _, c := range g.patch[:g.np] {
		base, _ := g.domains.get(interpod.HandleHash(c.v), c.v)
		switch {
		case base == 0:
			n++
		case base+c.d == 0:
			n--
		}
	}
	return n
}

// AddTo is interpod.Domains': mult × every total added to t (paddAll
// without a budget, then the patch's changes: a value whose total the
// patch takes to 0 is left in t with 0). O(entries), no allocation but
// t's.
func (g *termGroup) AddTo(t *interpod.ValueTable, mult int64) {
	budget := g.domains.n
	paddAll(g.domains.root, t, mult, &budget)
	for _, c := range g.patch[:g.np] {
		t.Add(c.v, mult*c.d)
	}
}

// AddDiff is interpod.Differ's: for old, a version of the same group
// (a *termGroup) in an older immutable state, the two tries are walked
// together, skipping the subtrees they share (the same node: frozen, so
// equal); where they differ (a leaf rewritten, split or dropped) old's
// entries there are subtracted and g's added, times mult. O(entries
// under the nodes that differ), no allocation but t's; false when old is
// not a *termGroup or more than budget entries were walked.
//
// The patches are compared entry by entry: a value in both with the same
// change adds nothing, any other patch entry its change (g's) or its
// negation (old's), counted against budget.
func (g *termGroup) AddDiff(old interpod.Domains, t *interpod.ValueTable, mult int64, budget int) bool {
	o, ok := old.(*termGroup)
	if !ok || !pdiff(o.domains.root, g.domains.root, t, mult, &budget) {
		return false
	}
	if budget -= g.np + o.np; budget < 0 {
		return false
	}
	for _, c := range g.patch[:g.np] {
		if d := c.d - o.patched(c.v); d != 0 {
			t.Add(c.v, mult*d)
		}
	}
	for _, c := range o.patch[:o.np] {
		if g.patched(c.v) == 0 {
			t.Add(c.v, -mult*c.d)
		}
	}
	return true
}

// pdiff adds mult × (b − a) to t over the subtrees a and b at the same
// trie position, as AddDiff.
func pdiff(a, b *pnode[unique.Handle[string], int64], t *interpod.ValueTable, mult int64, budget *int) bool {
	if a == b {
		return true
	}
	if a != nil && b != nil && !a.leaf && !b.leaf {
		for i := range a.kids {
			if !pdiff(a.kids[i], b.kids[i], t, mult, budget) {
				return false
			}
		}
		return true
	}
	return paddAll(a, t, -mult, budget) && paddAll(b, t, mult, budget)
}

// paddAll adds mult × every total under nd to t, counting the entries
// against budget; false when it runs out. The one walk of a subtree's
// entries: AddTo (the whole trie) and pdiff (the parts that differ).
func paddAll(nd *pnode[unique.Handle[string], int64], t *interpod.ValueTable, mult int64, budget *int) bool {
	if nd == nil {
		return true
	}
	if !nd.leaf {
		for _, k := range nd.kids {
			if !paddAll(k, t, mult, budget) {
				return false
			}
		}
		return true
	}
	if *budget -= int(nd.n); *budget < 0 {
		return false
	}
	for i := range nd.ents[:nd.n] {
		t.Add(nd.ents[i].key, mult*nd.ents[i].val)
	}
	// Only a full leaf has entries past ents (pmap's delete refills
	// ents from over): testing n first spares the read of over, a
	// cache line of its own, in every other leaf.
	if nd.n < pmapLeaf {
		return true
	}
	if *budget -= len(nd.over); *budget < 0 {
		return false
	}
	for i := range nd.over {
		t.Add(nd.over[i].key, mult*nd.over[i].val)
	}
	return true
}

// Each is interpod.Domains': every value with a total. O(entries), no
// allocation.
//
// With a patch, each trie entry's total gets its change (a total of 0
// is skipped), then the patch's values the trie has no entry for.
func (g *termGroup) Each(yield func(unique.Handle[string], int64) bool) {
	if g.np == 0 {
		g.domains.each(func(e *pent[unique.Handle[string], int64]) bool { return yield(e.key, e.val) })
		return
	}
	if !g.domains.each(func(e *pent[unique.Handle[string], int64]) bool {
		n := e.val + g.patched(e.key)
		return n == 0 || yield(e.key, n)
	}) {
		return
	}
	for _, c := range g.patch[:g.np] {
		if _, ok := g.domains.get(interpod.HandleHash(c.v), c.v); !ok && !yield(c.v, c.d) {
			return
		}
	}
}

// affRecycler is the part of a Fork's recycler that keeps the index's
// trie nodes: those made in a layer go back to the spare lists when it
// is reverted (recycler's open, revert, commit and forget call these).
//
// match is the Fork's memo of the last pod class viewPod walked the
// views for and the views it matched (viewMatch): a Fork → AddPod →
// Revert loop over pods of one workload then skips the views' walk and
// term matches, and changes only the views the class matches. It lives
// here, not in the state, because Revert discards the layer that learnt
// it.
//
// wroteTrie records whether the last pod change (affPod) wrote a totals
// trie rather than only groups' patches: only then does the next one
// warm the tries' paths (warmDomains), whose look-ups are wasted on a
// change that goes to patches, as a Fork → AddPod → Revert loop's do.
type affRecycler struct {
	counts    pool[pnode[unique.Handle[string], int64]]
	groups    pool[pnode[string, termGroup]]
	marks     [][2]int
	match     viewMatch
	wroteTrie bool
}

func (r *affRecycler) open() {
	r.marks = append(r.marks, [2]int{len(r.counts.log), len(r.groups.log)})
}

func (r *affRecycler) revert() {
	m := r.marks[len(r.marks)-1]
	r.marks = r.marks[:len(r.marks)-1]
	r.counts.spare = moveTail(r.counts.spare, &r.counts.log, m[0])
	r.groups.spare = moveTail(r.groups.spare, &r.groups.log, m[1])
}

func (r *affRecycler) commit() { r.marks = r.marks[:len(r.marks)-1] }

func (r *affRecycler) forget() {
	clear(r.counts.log)
	clear(r.groups.log)
	r.counts.log, r.groups.log = r.counts.log[:0], r.groups.log[:0]
	for i := range r.marks {
		r.marks[i] = [2]int{}
	}
}

// countW and groupW are the state's writers of its tries.
func (s *state) countW() pwriter[unique.Handle[string], int64] {
	if s.rec.logging() {
		return pwriter[unique.Handle[string], int64]{s.tok, &s.rec.aff.counts}
	}
	return pwriter[unique.Handle[string], int64]{s.tok, nil}
}

func (s *state) groupW() pwriter[string, termGroup] {
	if s.rec.logging() {
		return pwriter[string, termGroup]{s.tok, &s.rec.aff.groups}
	}
	return pwriter[string, termGroup]{s.tok, nil}
}

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
	interpod.Immutable = func(c any) bool {
		_, ok := c.(interface{ immutableAff() })
		return ok
	}
}

// immutableAff marks a Snapshot (and a type embedding one) for
// interpod.Immutable: its state never changes, and its index's trie
// nodes are never written or recycled (Cache.Snapshot and Fork.Snapshot
// freeze them: the writers that owned them take new tokens, and a
// Fork's recycler forgets the copies a Snapshot shares).
func (*Snapshot) immutableAff() {}

// NumPodsWithAffinity is interpod.Index's; O(1).
func (s *state) NumPodsWithAffinity() int { return s.aff.pods }

// TermGroups is interpod.Index's; O(groups of kind k), no allocation.
func (s *state) TermGroups(k interpod.Kind, yield func(*interpod.Term, interpod.Domains) bool) {
	s.aff.groups[k].each(func(e *pent[string, termGroup]) bool { return yield(e.val.term, &e.val) })
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
	if s.rec != nil {
		if p.shape.affinity != nil && s.rec.aff.wroteTrie {
			s.warmDomains(ni, p)
		}
		s.rec.aff.wroteTrie = false
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
	if len(old.PodsWithAffinity()) == 0 && s.aff.views.n == 0 || maps.Equal(old.node.Labels, fresh.node.Labels) {
		return
	}
	s.affNode(old, -1)
	s.affNode(fresh, 1)
}

// affTerms records the terms of p (on node ni) joining or leaving: the
// groups and, through them, the views' references.
func (s *state) affTerms(ni *NodeInfo, p *PodInfo, d int) {
	t := p.shape.affinity
	if t == nil {
		return
	}
	s.aff.pods += d
	for k := range interpod.NumKinds {
		ts := t.List(k)
		for j := range ts {
			s.affTerm(k, &ts[j], ni, d)
		}
	}
}

// viewPod counts pod p on node ni in (d = 1) or out of (d = -1) every
// view whose term matches it. O(views) term matches; allocates only
// outside a Fork layer, for the trie nodes it copies.
//
// In a Fork, a pod whose class (spread.ClassOf) viewPod has just seen
// with the same view set skips the walk and the term matches: the
// recycler remembers the last class and the views it matched
// (viewMatch).
func (s *state) viewPod(ni *NodeInfo, p *PodInfo, d int) {
	if s.aff.views.n == 0 {
		return
	}
	class := p.shape.spreadClass
	memo := s.rec != nil && class != (spread.Class{})
	var m *viewMatch
	if memo {
		m = &s.rec.aff.match
	}
	var terms []*interpod.Term
	if memo && m.viewSet == s.aff.viewSet && m.class == class {
		terms = m.terms[:m.n]
	} else {
		// Collect first: changing a view changes the trie being walked.
		var buf [8]*interpod.Term
		terms = buf[:0]
		s.aff.views.each(func(e *pent[string, termGroup]) bool {
			if e.val.term.Matches(p.shape.tmpl, nil) {
				terms = append(terms, e.val.term)
			}
			return true
		})
		if memo && len(terms) <= viewMatchMax {
			m.viewSet, m.class, m.n = s.aff.viewSet, class, copy(m.terms[:], terms)
			m.offHead = false
			for _, t := range terms {
				m.offHead = m.offHead || t.OffHead()
			}
		}
	}
	if len(terms) == 0 {
		return
	}
	for _, t := range terms {
		if v, ok := ni.labelValue(t.TopologyKeyHandle()); ok {
			s.noteTrie(s.aff.views.upd(s.groupW(), t.KeyHash(), t.Key()).add(s.countW(), v, int64(d)))
		}
	}
}

// viewRef records a term group created (d = 1) or dropped (d = -1) by
// affTerm, tm its term: a static term's view is created (by counting the
// matching pods of every node, O(nodes + pods)) when the first group with
// its key is and dropped when the last is. A term joining or leaving a
// group that stays costs the views nothing.
func (s *state) viewRef(tm *interpod.Term, d int) {
	if !tm.Static() {
		return
	}
	h, key := tm.KeyHash(), tm.Key()
	g := s.aff.views.upd(s.groupW(), h, key)
	if g.term == nil && d < 0 { // unreachable: the term joined with its view
		s.aff.views.del(s.groupW(), h, key)
		return
	}
	if g.term == nil { // new: count the pods the term matches
		g.term = tm
		s.aff.viewSet = nextGeneration()
		m := map[unique.Handle[string]]int64{}
		for i := range s.n {
			ni := s.node(i)
			v, ok := ni.labelValue(tm.TopologyKeyHandle())
			if !ok {
				continue
			}
			for _, p := range ni.pods {
				if tm.Matches(p.shape.tmpl, nil) {
					m[v]++
				}
			}
		}
		w := s.countW()
		for v, c := range m {
			g.domains.set(w, interpod.HandleHash(v), v, c)
		}
	}
	if g.members += int64(d); g.members == 0 {
		s.aff.views.del(s.groupW(), h, key)
		s.aff.viewSet = nextGeneration()
	}
}

// MatchCounts is interpod.Index's; O(log views), no allocation.
func (s *state) MatchCounts(t *interpod.Term) interpod.Domains {
	if !t.Static() || s.aff.views.n == 0 {
		return nil
	}
	if g := s.aff.views.ref(t.KeyHash(), t.Key()); g != nil {
		return g
	}
	return nil
}

// MatchViews is interpod.Index's.
func (s *state) MatchViews(yield func(*interpod.Term, interpod.Domains) bool) {
	s.aff.views.each(func(e *pent[string, termGroup]) bool { return yield(e.val.term, &e.val) })
}

// add adds c to the total of value v: in the patch when w does not own
// the trie's root (or the trie is empty) and the patch holds v or has
// room, else in the trie (after folding a full patch into it). It
// reports whether it wrote the trie.
func (g *termGroup) add(w pwriter[unique.Handle[string], int64], v unique.Handle[string], c int64) bool {
	if c == 0 {
		return false
	}
	if g.domains.root == nil || g.domains.root.owner != w.tok {
		for i := range g.patch[:g.np] {
			if p := &g.patch[i]; p.v == v {
				if p.d += c; p.d == 0 {
					g.np--
					*p = g.patch[g.np]
					g.patch[g.np] = domainChange{}
				}
				return false
			}
		}
		if g.np < patchMax {
			g.patch[g.np] = domainChange{v, c}
			g.np++
			return false
		}
		g.fold(w)
	}
	g.addTrie(w, v, c)
	return true
}

// noteTrie records, in a Fork, that a change wrote a totals trie
// (affRecycler.wroteTrie).
func (s *state) noteTrie(wrote bool) {
	if wrote && s.rec != nil {
		s.rec.aff.wroteTrie = true
	}
}

// fold moves the patch's changes into the trie (path copies) and
// empties it.
func (g *termGroup) fold(w pwriter[unique.Handle[string], int64]) {
	for i := range g.patch[:g.np] {
		g.addTrie(w, g.patch[i].v, g.patch[i].d)
		g.patch[i] = domainChange{}
	}
	g.np = 0
}

// addTrie adds c to the trie's total of value v.
func (g *termGroup) addTrie(w pwriter[unique.Handle[string], int64], v unique.Handle[string], c int64) {
	h := interpod.HandleHash(v)
	t := g.domains.upd(w, h, v)
	if *t += c; *t == 0 {
		g.domains.del(w, h, v)
	}
}

func (s *state) affTerm(k interpod.Kind, tm *interpod.Term, ni *NodeInfo, d int) {
	m := &s.aff.groups[k]
	h, key := tm.KeyHash(), tm.Key()
	g := m.upd(s.groupW(), h, key)
	if g.term == nil { // new group
		g.term = tm
		s.viewRef(tm, 1)
	}
	g.members += int64(d)
	if v, ok := ni.labelValue(tm.TopologyKeyHandle()); ok {
		s.noteTrie(g.add(s.countW(), v, int64(d)*k.Value(tm)))
	}
	if g.members == 0 {
		m.del(s.groupW(), h, key)
		s.viewRef(tm, -1)
	}
}

// readsLabels reports whether affPod's change for pod p may read a
// node's labels, not only its head: a term of p, or of a view p's class
// matches, has a topology key the head does not hold
// (interpod.Term.OffHead).
// Which views p's class matches is known from a Fork's memo
// (viewMatch); without it any view may. A nil p (not known yet) reads
// labels when any pod has terms or any view exists. Reads only; O(1).
func (s *state) readsLabels(p *PodInfo) bool {
	if p == nil {
		return s.aff.pods > 0 || s.aff.views.n > 0
	}
	if t := p.shape.affinity; t != nil && t.OffHead {
		return true
	}
	if s.aff.views.n == 0 {
		return false
	}
	if s.rec == nil {
		return true
	}
	m := &s.rec.aff.match
	if m.viewSet != s.aff.viewSet || m.class != p.shape.spreadClass || m.class == (spread.Class{}) {
		return true
	}
	return m.offHead
}

// warmDomains reads, level by level in step, the paths to node ni's
// values in the domain tries a Fork's change of pod p (with terms) is
// about to copy: its terms' groups and the views the Fork's memo says
// p's class matches, where the change goes to the trie (termGroup.add). Each path is a chain of dependent loads, cold in a
// trie larger than the cache (the hostname totals of a large cluster),
// and affTerms and viewPod copy them one after the other; read in step,
// the chains' misses overlap. Reads only; O(terms × depth).
func (s *state) warmDomains(ni *NodeInfo, p *PodInfo) {
	type path struct {
		nd *pnode[unique.Handle[string], int64]
		h  uint64
	}
	var buf [8]path
	paths := buf[:0]
	push := func(g *termGroup, tm *interpod.Term) {
		// A group whose trie root the state does not own and whose
		// patch has room takes the change in the patch, reading no trie
		// node (termGroup.add).
		if g == nil || g.domains.root == nil || g.np < patchMax && g.domains.root.owner != s.tok || len(paths) == len(buf) {
			return
		}
		if v, ok := ni.labelValue(tm.TopologyKeyHandle()); ok {
			paths = append(paths, path{g.domains.root, interpod.HandleHash(v)})
		}
	}
	t := p.shape.affinity
	for k := range interpod.NumKinds {
		ts := t.List(k)
		for j := range ts {
			push(s.aff.groups[k].ref(ts[j].KeyHash(), ts[j].Key()), &ts[j])
		}
	}
	if m := &s.rec.aff.match; m.viewSet == s.aff.viewSet && m.class == p.shape.spreadClass && m.class != (spread.Class{}) {
		for _, tm := range m.terms[:m.n] {
			push(s.aff.views.ref(tm.KeyHash(), tm.Key()), tm)
		}
	}
	for shift := uint(0); len(paths) > 0; shift += pmapBits {
		live := paths[:0]
		for _, q := range paths {
			if !q.nd.leaf {
				if q.nd = q.nd.kids[(q.h>>shift)&pmapMask]; q.nd != nil {
					live = append(live, q)
				}
			}
		}
		paths = live
	}
}
