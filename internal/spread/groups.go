package spread

import (
	"math"
	"slices"
	"strconv"
	"unique"
	"unsafe"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/selector"
)

// The incremental index. Counting the pods a constraint selects used to
// read every pod on every node for every pod scheduled (upstream's
// countPodsMatchSelector in calPreFilterState and PreScore): O(nodes ×
// pods per node × selector size) per pod. Instead, package snapshot keeps
// per node the pods that count, grouped by class — namespace and labels,
// which is all a constraint's selector and namespace read — with a count
// per group ([Group]), maintained on pod add and remove (O(groups on the
// node), no allocation once the node's group slice has room) and copied
// with the node by copy-on-write, so Fork, Commit and Revert keep their
// cost. A pass then reads one entry per group, and decides the selector
// once per class per pass ([matcher]), not once per pod: O(nodes ×
// groups per node) map-free pointer compares, plus O(classes ×
// selector size) for the selector itself. Pods of one ReplicaSet,
// StatefulSet revision hash aside, share one class, so a node with 30
// pods of 3 Deployments has 3 groups. On top of the groups, a [Memo]
// (memo.go) keeps per-64-node-block partial counts per query, so that a
// pass re-reads only the nodes changed since the last one.

// Class identifies a pod class: namespace and labels, interned
// (package unique), so that two pods have the same class exactly when
// their handles are equal. The zero Class is "not counted" (a
// terminating pod).
type Class = unique.Handle[string]

// ClassOf returns pod's class, or the zero Class for a pod that no
// constraint counts (metadata.deletionTimestamp set, as upstream's
// countPodsMatchSelector skips terminating pods). O(labels × log
// labels). The key is built on the stack (up to 16 labels and 512 bytes)
// and unique.Make copies it only the first time the class is seen, so
// a pod of a known class allocates nothing.
func ClassOf(pod *v1.Pod) Class {
	if pod.DeletionTimestamp != nil {
		return Class{}
	}
	var kb [16]string
	keys := kb[:0]
	for k := range pod.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var bb [512]byte
	// Length-prefixed fields: no label content can forge another class.
	b := appendClassField(bb[:0], pod.Namespace)
	for _, k := range keys {
		b = appendClassField(appendClassField(b, k), pod.Labels[k])
	}
	// unique.Make neither keeps nor lets escape the string it is given
	// (it stores a copy), so a view of the buffer is safe.
	return unique.Make(unsafe.String(unsafe.SliceData(b), len(b)))
}

func appendClassField(b []byte, s string) []byte {
	return append(append(strconv.AppendInt(b, int64(len(s)), 10), ':'), s...)
}

// Group is the pods of one class on one node: the unit the index counts.
type Group struct {
	Class Class
	// Namespace and Labels are those of the class (of one of its pods;
	// read-only).
	Namespace string
	Labels    map[string]string
	// N is the number of the node's pods of the class, > 0.
	N int32
}

// GroupsOf returns a node's groups (package snapshot sets it to read a
// *snapshot.NodeInfo; the engine's generic nodes are passed as any).
// Read-only, in no particular order; O(1).
var GroupsOf func(node any) []Group

// AddToGroups adds one pod of class c (namespace ns, labels ls) to
// groups and returns the result: O(len(groups)); appends in place
// (allocating only when full) for a new class. The zero class changes
// nothing.
func AddToGroups(groups []Group, c Class, ns string, ls map[string]string) []Group {
	if c == (Class{}) {
		return groups
	}
	for i := range groups {
		if groups[i].Class == c {
			groups[i].N++
			return groups
		}
	}
	return append(groups, Group{Class: c, Namespace: ns, Labels: ls, N: 1})
}

// RemoveFromGroups removes one pod of class c from groups, in place
// (a group that empties takes the last one's place): O(len(groups)), no
// allocation. A class not there changes nothing.
func RemoveFromGroups(groups []Group, c Class) []Group {
	if c == (Class{}) {
		return groups
	}
	for i := range groups {
		if groups[i].Class != c {
			continue
		}
		if groups[i].N--; groups[i].N > 0 {
			return groups
		}
		last := len(groups) - 1
		groups[i] = groups[last]
		groups[last] = Group{}
		return groups[:last]
	}
	return groups
}

// matcher decides sel for pods of namespace ns, once per class: the
// verdicts of the first classes seen sit in a short list compared by
// pointer, later ones in a map. Not safe for concurrent use: one per
// pass.
type matcher struct {
	sel   Selector
	ns    string
	empty bool
	small []memo
	big   map[Class]bool
}

type memo struct {
	c  Class
	ok bool
}

const smallMemo = 16

func newMatcher(sel Selector, ns string) *matcher {
	return &matcher{sel: sel, ns: ns, empty: sel.Empty()}
}

// count is upstream's countPodsMatchSelector over a node's groups: the
// pods of namespace ns that sel matches; 0 for an Empty selector.
// O(groups) compares, plus the selector once per new class.
func (m *matcher) count(groups []Group) int {
	if m.empty {
		return 0
	}
	n := 0
	for i := range groups {
		if g := &groups[i]; m.matches(g) {
			n += int(g.N)
		}
	}
	return n
}

func (m *matcher) matches(g *Group) bool {
	for i := range m.small {
		if m.small[i].c == g.Class {
			return m.small[i].ok
		}
	}
	if m.big != nil {
		if ok, seen := m.big[g.Class]; seen {
			return ok
		}
	}
	ok := g.Namespace == m.ns && m.sel.Matches(g.Labels)
	if len(m.small) < smallMemo {
		m.small = append(m.small, memo{g.Class, ok})
	} else {
		if m.big == nil {
			m.big = map[Class]bool{}
		}
		m.big[g.Class] = ok
	}
	return ok
}

// valueOf returns the value of label key in ls (a node's labels as
// handles), comparing keys by pointer: O(labels), no allocation.
func valueOf(ls []selector.Label, key unique.Handle[string]) (unique.Handle[string], bool) {
	for i := range ls {
		if ls[i].Key == key {
			return ls[i].Value, true
		}
	}
	return unique.Handle[string]{}, false
}

// hasAllKeys is upstream's nodeLabelsMatchSpreadConstraints over handles.
func hasAllKeys(ls []selector.Label, cs []Constraint) bool {
	for i := range cs {
		if _, ok := valueOf(ls, cs[i].key); !ok {
			return false
		}
	}
	return true
}

// domains counts per topology domain (a label value as a handle): a
// short list compared by pointer while there are few domains (zones,
// regions), a map beyond that (hostnames). The zero value is empty. Not
// safe for concurrent writes; reads of a built one are.
type domains struct {
	small []domain
	big   map[unique.Handle[string]]int
}

type domain struct {
	v unique.Handle[string]
	n int
}

const smallDomains = 8

// add adds k to domain v, creating it.
func (d *domains) add(v unique.Handle[string], k int) {
	if d.big != nil {
		d.big[v] += k
		return
	}
	for i := range d.small {
		if d.small[i].v == v {
			d.small[i].n += k
			return
		}
	}
	if len(d.small) < smallDomains {
		d.small = append(d.small, domain{v, k})
		return
	}
	d.big = make(map[unique.Handle[string]]int, 2*smallDomains)
	for _, e := range d.small {
		d.big[e.v] = e.n
	}
	d.small = nil
	d.big[v] += k
}

// get returns domain v's count (0 for a domain not there).
func (d *domains) get(v unique.Handle[string]) int {
	if d.big != nil {
		return d.big[v]
	}
	for i := range d.small {
		if d.small[i].v == v {
			return d.small[i].n
		}
	}
	return 0
}

// size is the number of domains.
func (d *domains) size() int {
	if d.big != nil {
		return len(d.big)
	}
	return len(d.small)
}

// min returns the smallest count, or math.MaxInt32 with no domain.
func (d *domains) min() int {
	lo, _ := d.bounds()
	return lo
}

// bounds returns the smallest and the largest count, or math.MaxInt32
// and math.MinInt with no domain.
func (d *domains) bounds() (lo, hi int) {
	lo, hi = math.MaxInt32, math.MinInt
	for _, e := range d.small {
		lo, hi = min(lo, e.n), max(hi, e.n)
	}
	for _, n := range d.big {
		lo, hi = min(lo, n), max(hi, n)
	}
	return lo, hi
}

// each calls fn for every domain and its count, in no particular order.
func (d *domains) each(fn func(v unique.Handle[string], n int)) {
	for _, e := range d.small {
		fn(e.v, e.n)
	}
	for v, n := range d.big {
		fn(v, n)
	}
}
