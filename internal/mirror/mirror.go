package mirror

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/prefetch"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
)

// Source reads one entry of the mirrored list. Node may return nil (the
// entry is skipped); a pod listed under a node must be bound to it
// (spec.nodeName), as every pod of upstream's NodeInfo is.
type Source[N comparable] struct {
	Node       func(N) *v1.Node
	Generation func(N) int64
	NumPods    func(N) int
	Pod        func(N, int) *v1.Pod
}

// Methods is the Source of an entry type with upstream's NodeInfo methods
// (k8s.io/kube-scheduler/framework.NodeInfo and PodInfo: Node,
// GetGeneration, GetPods, GetPod), so an adapter needs no accessors.
func Methods[N interface {
	comparable
	Node() *v1.Node
	GetGeneration() int64
	GetPods() []P
}, P interface{ GetPod() *v1.Pod }]() Source[N] {
	return Source[N]{Node: N.Node, Generation: N.GetGeneration,
		NumPods: func(n N) int { return len(n.GetPods()) },
		Pod:     func(n N, i int) *v1.Pod { return n.GetPods()[i].GetPod() }}
}

// Mirror mirrors a list of N into a snapshot.Cache. The zero value is not
// usable; call [New]. A Mirror references no entry of the list after Sync
// returns except through node and pod objects and the previous list (for
// the next comparison).
type Mirror[N comparable] struct {
	src     Source[N]
	mu      sync.Mutex // serialises Sync
	cache   *snapshot.Cache
	byName  map[string]*entry
	pending []*entry // rebuilt since the last publish
	removed int      // nodes removed since the last publish
	epoch   uint64
	prev    []N // the list of the last successful Sync
	prevGen []int64
	moved   []int32 // positions in prev whose entry was rebuilt since the last publish
	cur     atomic.Pointer[view[N]]
	ledger  atomic.Pointer[reserve.Ledger]
	seed    maphash.Seed
	syncs   atomic.Uint64               // Sync calls, for res
	synced  atomic.Uint64               // syncs when the last successful Sync returned
	res     atomic.Pointer[resolved[N]] // the last candidates Score resolved
	near    hints                       // list positions, for lookup
	nearC   hints                       // candidate indexes, for Scores.Of
}

// view is what a Sync publishes, immutable: the snapshot and the synced
// list with each position's entry and an open-addressed table from list
// entry to position (rebuilt only when the list's entries move, hashing
// the entry itself: no node read, no map).
type view[N comparable] struct {
	snap  *snapshot.Snapshot
	list  []N
	ents  chunked // ents.at(pos): list[pos]'s entry's NodeInfo and generation; none without a node
	table []tslot // value: position; len a power of two ≥ 2 len(list)
	dups  bool    // list holds an entry twice (find answers its first position)
	ids   identity
}

// identity is how a view's table hashes and compares the entries of its
// list (set by [view.index] and kept while the list's entries stay).
type identity struct {
	seed maphash.Seed
	// addr: the table hashes an entry's address word mixed with salt (see
	// hash), not its value with maphash.
	addr bool
	salt uint64
	// exact: a hash match is an entry match, so a probe reads no list
	// entry: addr holds, the hash is a bijection of the address word,
	// and every entry has the type word tw (0 for a pointer N; an
	// interface's type word, which equal interfaces share).
	exact bool
	tw    uintptr
}

// tslot is a slot of a view's table: a listed entry's full hash and its
// position + 1 (0: empty), 16 bytes, so that a probe compares hashes in
// the slot it loads.
type tslot struct {
	h  uint64
	p1 int32
}

// find returns n's position in v.list, or -1: one hash of n (its
// identity: for a pointer or an interface holding one, the address) and
// a probe of v.table, no read of n's node. A hash match is checked
// exactly: with v.ids.exact by n's type word (a register compare), else
// by comparing n with the list entry.
func (v *view[N]) find(n N) int {
	t := v.table
	if len(t) == 0 {
		return -1
	}
	h := v.hash(n)
	mask := uint64(len(t) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t[i]
		if s.p1 == 0 {
			return -1
		}
		if s.h == h {
			p := int(s.p1 - 1)
			if v.ids.exact {
				if typeWord(n) == v.ids.tw {
					return p
				}
			} else if v.list[p] == n {
				return p
			}
		}
	}
}

// hash is n's hash for the table: with addr, a mix of n's address word
// (a pointer's value, an interface's data word) and a salt drawn from the
// seed, a few instructions and a bijection of the word; else maphash of n.
func (v *view[N]) hash(n N) uint64 {
	if v.ids.addr {
		// The address word is N's last word: a pointer's only one, an
		// interface's data word (on 32-bit targets too: both words are
		// uintptr-sized).
		w := *(*uintptr)(unsafe.Add(unsafe.Pointer(&n), unsafe.Sizeof(n)-unsafe.Sizeof(uintptr(0))))
		return mix64(uint64(w) ^ v.ids.salt)
	}
	return maphash.Comparable(v.ids.seed, n)
}

// typeWord is n's first word when N is two words wide — the type word
// of an interface, which is the only two-word N the table treats as
// addressed — else 0. Called for an interface N or an addressed one.
func typeWord[N comparable](n N) uintptr {
	if unsafe.Sizeof(n) == 2*unsafe.Sizeof(uintptr(0)) {
		return *(*uintptr)(unsafe.Pointer(&n))
	}
	return 0
}

// mix64 is MurmurHash3's 64-bit finaliser, a bijection: every input bit
// reaches the low bits the table's mask keeps (an address's low bits are
// zeros).
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	return x ^ x>>33
}

// addressed reports whether entries equal as values are exactly those
// with the same address word, so that hash may hash the word: N is a
// pointer, or an interface whose every entry in list holds a pointer (or
// nil) — an entry equal to one of them holds the same pointer, while an
// interface holding a value keeps it boxed, equal values at different
// addresses. O(len(list)) for an interface, O(1) otherwise.
func addressed[N comparable](list []N) bool {
	switch reflect.TypeFor[N]().Kind() {
	case reflect.Pointer, reflect.UnsafePointer:
		return true
	case reflect.Interface:
		for _, n := range list {
			if t := reflect.TypeOf(any(n)); t != nil && t.Kind() != reflect.Pointer && t.Kind() != reflect.UnsafePointer {
				return false
			}
		}
		return true
	}
	return false
}

// index sets v.ids for v.list and fills v.table. O(len(list)).
func (v *view[N]) index() {
	v.ids.addr, v.ids.salt = addressed(v.list), maphash.Comparable(v.ids.seed, uint64(0))
	v.ids.exact, v.ids.tw = v.ids.addr, 0
	if v.ids.addr && reflect.TypeFor[N]().Kind() == reflect.Interface {
		// Exact only when every entry has one dynamic type: then an
		// interface with the address word and type word of an entry is
		// that entry. A nil entry (type word 0) or a second type makes
		// probes compare list entries.
		for i, n := range v.list {
			w := typeWord(n)
			if i == 0 {
				v.ids.tw = w
			}
			if w == 0 || w != v.ids.tw {
				v.ids.exact = false
				break
			}
		}
	}
	size := 16
	for size < 2*len(v.list) {
		size *= 2
	}
	v.table = make([]tslot, size)
	v.dups = false
	mask := uint64(len(v.table) - 1)
	for p, n := range v.list {
		h := v.hash(n)
		i := h & mask
		for ; v.table[i].p1 != 0; i = (i + 1) & mask {
			if s := v.table[i]; s.h == h && (v.ids.exact || v.list[s.p1-1] == n) {
				v.dups = true // find answers the first position
			}
		}
		v.table[i] = tslot{h, int32(p) + 1}
	}
}

// chunkBits sets the size of a [chunked] array's chunks: 1<<chunkBits
// entries.
const chunkBits = 8

// slot is what a view keeps of a position's entry: what a look-up reads,
// in the view's own contiguous memory, so that checking a generation
// costs no load of the entry. The zero slot is no entry.
type slot struct {
	ours *snapshot.NodeInfo
	gen  int64
}

// slotOf returns e's slot (the zero slot for nil).
func slotOf(e *entry) slot {
	if e == nil {
		return slot{}
	}
	return slot{e.ours, e.gen}
}

// chunked is an immutable array of slots in chunks of 1<<chunkBits, so
// that a view patched at a few positions shares the chunks it does not
// change with the view before: a patch copies the chunk pointers
// (O(len/256)) and the chunks it writes, not the whole array.
type chunked [][]slot

// at returns the slot at position p (0 ≤ p < the length it was made
// with). O(1), two loads.
func (c chunked) at(p int) slot { return c[p>>chunkBits][p&(1<<chunkBits-1)] }

// makeChunked returns an array of n zero slots. O(n).
func makeChunked(n int) chunked {
	c := make(chunked, (n+1<<chunkBits-1)>>chunkBits)
	for i := range c {
		c[i] = make([]slot, min(1<<chunkBits, n-i<<chunkBits))
	}
	return c
}

// patched returns a copy of c with set(p) stored at each position p of
// ps; c is unchanged. Chunks without such a position are shared.
// O(len/256 + 256 per chunk written).
func (c chunked) patched(ps []int32, set func(p int) slot) chunked {
	out := append(chunked(nil), c...)
	for _, p := range ps {
		i := p >> chunkBits
		if len(out[i]) > 0 && &out[i][0] == &c[i][0] {
			out[i] = append([]slot(nil), c[i]...)
		}
		out[i][p&(1<<chunkBits-1)] = set(int(p))
	}
	return out
}

// entry is one mirrored node; never changed once published, except epoch,
// which only Sync reads.
type entry struct {
	node  *v1.Node
	gen   int64
	epoch uint64
	ours  *snapshot.NodeInfo
	pods  map[*v1.Pod]*snapshot.PodInfo
}

// Devices is the DeviceDecoder the kube-scheduler adapters read nodes and
// pods with: openb.Devices (the Alibaba GPU sharing scheduler's
// annotations, else nvidia.com/gpu), as schedkit's adapters always have.
var Devices = openb.Devices

// New returns an empty Mirror reading entries through src and the devices
// of their nodes and pods with dec (nil: snapshot.NvidiaDevices).
func New[N comparable](src Source[N], dec snapshot.DeviceDecoder) *Mirror[N] {
	m := &Mirror[N]{src: src, cache: snapshot.NewCacheWithDevices(dec), byName: map[string]*entry{}, seed: maphash.MakeSeed()}
	m.cur.Store(&view[N]{snap: m.cache.Snapshot(), ids: identity{seed: m.seed}})
	return m
}

// SetLedger makes l (nil: none) the ledger [Mirror.Score] and
// [Mirror.Filter] consult: the ledger of the scheduler profile the mirror
// serves. Safe for concurrent use.
func (m *Mirror[N]) SetLedger(l *reserve.Ledger) { m.ledger.Store(l) }

// Ledger returns the ledger set by [Mirror.SetLedger], or nil.
func (m *Mirror[N]) Ledger() *reserve.Ledger { return m.ledger.Load() }

// Current returns the snapshot of the last successful Sync (empty before).
func (m *Mirror[N]) Current() *snapshot.Snapshot { return m.cur.Load().snap }

// Sync makes the mirror hold exactly the nodes of list (entries without a
// node are skipped) with their pods, and returns the new snapshot (the
// previous one when nothing changed). Errors — a pod or node that does not
// parse, a pod listed under a node it is not bound to — name the node and
// the pod; after an error the published snapshot and look-ups are as
// before the call, and the next Sync completes the work.
func (m *Mirror[N]) Sync(list []N) (*snapshot.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.syncs.Add(1)
	m.moved = m.moved[:0]
	if m.changedInPlace(list) {
		// prev already holds list, and prevGen changes only at the
		// rebuilt positions, once all of them succeeded (after an error
		// the next Sync finds them again).
		for _, i := range m.moved {
			if err := m.rebuild(list[i]); err != nil {
				return nil, err
			}
		}
		for _, i := range m.moved {
			m.prevGen[i] = m.src.Generation(list[i])
		}
		snap := m.publish(false)
		m.synced.Store(m.syncs.Load())
		return snap, nil
	}
	m.epoch++
	for _, n := range list {
		node := m.src.Node(n)
		if node == nil {
			continue
		}
		if e := m.byName[node.Name]; e != nil && e.gen == m.src.Generation(n) && e.node == node {
			e.epoch = m.epoch
			continue
		}
		if err := m.rebuild(n); err != nil {
			m.forgetList()
			return nil, err
		}
	}
	for name, e := range m.byName {
		if e.epoch != m.epoch {
			if err := m.removeNode(name, e); err != nil {
				m.forgetList()
				return nil, err
			}
		}
	}
	m.prev = append(m.prev[:0], list...)
	m.prevGen = m.prevGen[:0]
	for _, n := range list {
		m.prevGen = append(m.prevGen, m.src.Generation(n))
	}
	snap := m.publish(true)
	m.synced.Store(m.syncs.Load())
	return snap, nil
}

// forgetList drops the list of the last successful Sync after a Sync
// of another list failed part way: the cache may then hold nodes of
// neither list (added, not yet removed), so the next Sync must compare
// by name (not in place), SyncLazy must sync, and refresh, which would
// publish the cache, refuses.
func (m *Mirror[N]) forgetList() { m.prev, m.prevGen = nil, nil }

// Full reports whether the last call of Sync or SyncLazy read every
// entry, and no call has begun since: a Sync that succeeded (or a
// SyncLazy that did one). Safe for concurrent use.
func (m *Mirror[N]) Full() bool {
	s := m.syncs.Load()
	return m.synced.Load() == s && m.syncs.Load() == s
}

// SyncLazy is [Mirror.Sync] for callers that read the mirror only
// through look-ups of listed entries ([Mirror.Lookup], [Mirror.Score],
// [Filtering.Check]) and scorers that ignore the snapshot beyond the
// nodes they score: when list holds the entries of the last successful
// Sync in the same order — an identity comparison per entry, no entry
// read (see sameEntries) — it returns the published snapshot at once and
// leaves each entry whose generation changed to be rebuilt when it is
// looked up (see [Mirror.Lookup]); otherwise (the first call, a node added or
// removed, the entries moved) it is Sync. The published snapshot may
// then lag the list in the nodes not looked up since; the node set is
// the list's. O(len(list)) comparisons of contiguous memory.
func (m *Mirror[N]) SyncLazy(list []N) (*snapshot.Snapshot, error) {
	m.mu.Lock()
	if m.prev == nil || len(list) != len(m.prev) || m.synced.Load() == 0 || !sameEntries(list, m.prev) {
		m.mu.Unlock()
		return m.Sync(list)
	}
	defer m.mu.Unlock()
	// A new round: Score resolves candidates again and reads their
	// generations (synced stays behind syncs).
	m.syncs.Add(1)
	return m.cur.Load().snap, nil
}

// sameEntries reports whether a and b (of equal length) hold the same
// entries. For a pointer or interface N it compares their memory, one
// vectorised pass: equal words are equal entries, and an interface
// holding a non-pointer value boxed twice (equal, at two addresses) only
// makes it report false, which costs the caller a full Sync. Otherwise
// it compares entry by entry.
func sameEntries[N comparable](a, b []N) bool {
	if len(a) == 0 {
		return true
	}
	switch reflect.TypeFor[N]().Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Interface:
		size := int(unsafe.Sizeof(a[0])) * len(a)
		return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), size), unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), size))
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// changedInPlace reports whether list holds the entries of the previous
// Sync in the same order (upstream's snapshot updates a changed NodeInfo
// in place, so this holds until a node is added or removed) and, if so,
// leaves in m.moved the positions whose generation changed: one pass
// over list with an identity comparison and a generation read per entry.
func (m *Mirror[N]) changedInPlace(list []N) bool {
	if m.prev == nil || len(list) != len(m.prev) {
		return false
	}
	prev, gens := m.prev[:len(list)], m.prevGen[:len(list)]
	for i, n := range list {
		if n != prev[i] {
			m.moved = m.moved[:0]
			return false
		}
		if m.src.Generation(n) != gens[i] {
			m.moved = append(m.moved, int32(i))
		}
	}
	return true
}

// publish stores a new view when something changed since the last one:
// listed, the list's entries moved (their positions are indexed again,
// O(len(list)) with a look-up by name each); else only the rebuilt
// positions are patched (O(len(list)/256) chunk pointers and a chunk of
// 256 entries per rebuilt position copied, no look-up).
func (m *Mirror[N]) publish(listed bool) *snapshot.Snapshot {
	old := m.cur.Load()
	if len(m.pending) == 0 && m.removed == 0 && !listed {
		return old.snap
	}
	snap := m.cache.Snapshot()
	for _, e := range m.pending {
		if m.byName[e.node.Name] != e {
			continue // replaced again, or removed, before this publish
		}
		e.ours = snap.Get(e.node.Name)
	}
	v := &view[N]{snap: snap, list: old.list, table: old.table, dups: old.dups, ids: old.ids}
	if listed {
		v.list = append([]N(nil), m.prev...)
		v.ents = makeChunked(len(v.list))
		for p, n := range v.list {
			// An entry whose generation is not the listed one (the list
			// names a node twice) is left out: looked up, it is converted.
			if node := m.src.Node(n); node != nil {
				if e := m.byName[node.Name]; e != nil && e.gen == m.prevGen[p] {
					v.ents[p>>chunkBits][p&(1<<chunkBits-1)] = slotOf(e)
				}
			}
		}
		v.index()
	} else {
		v.ents = old.ents.patched(m.moved, func(p int) slot {
			if node := m.src.Node(v.list[p]); node != nil {
				// As above: an entry at another generation is left out.
				if e := m.byName[node.Name]; e != nil && e.gen == m.prevGen[p] {
					return slotOf(e)
				}
				return slot{}
			}
			return old.ents.at(p)
		})
	}
	m.pending, m.removed, m.moved = m.pending[:0], 0, m.moved[:0]
	m.cur.Store(v)
	return snap
}

// removeNode takes the node and its pods out of the cache.
func (m *Mirror[N]) removeNode(name string, e *entry) error {
	for _, pi := range e.pods {
		m.cache.RemovePod(pi.Key())
	}
	if err := m.cache.RemoveNode(name); err != nil {
		return err
	}
	delete(m.byName, name)
	m.removed++
	return nil
}

// rebuild brings the node of n up to date in the cache: the node object
// replaced if it changed, pods removed and added by object identity (only
// new pods are parsed). It changes nothing when n's pods do not parse.
// O(pods on the node).
func (m *Mirror[N]) rebuild(n N) error {
	node := m.src.Node(n)
	if node == nil {
		return nil
	}
	e := m.byName[node.Name]
	var prev map[*v1.Pod]*snapshot.PodInfo
	if e != nil {
		prev = e.pods
	}
	pods, err := m.podInfos(n, node, prev)
	if err != nil {
		return err
	}
	for pod, pi := range pods {
		if pod.Spec.NodeName != node.Name {
			return fmt.Errorf("mirror: node %s lists pod %s, which is bound to %q: %w", node.Name, pi.Key(), pod.Spec.NodeName, snapshot.ErrInvalidObject)
		}
	}
	if e == nil || e.node != node {
		if err := m.cache.AddNode(node); err != nil {
			return fmt.Errorf("mirror: %w", err)
		}
	}
	for pod, pi := range prev {
		if _, still := pods[pod]; !still {
			if on, _ := m.cache.PodNode(pi.Key()); on == node.Name {
				m.cache.RemovePod(pi.Key())
			}
		}
	}
	for pod, pi := range pods {
		if _, had := prev[pod]; !had {
			// A pod the cache still has on another node moved here in the
			// host's snapshot: the host forgot it there (an assumed pod
			// whose bind failed) and assumed it here, with the same uid,
			// which snapshot.Cache refuses as a report. The host's list
			// holds a pod on one node only, so the other node's entry is
			// stale until its own rebuild in this Sync, which then leaves
			// the pod alone (it removes only pods the cache has there).
			if on, ok := m.cache.PodNode(pi.Key()); ok && on != node.Name {
				m.cache.RemovePod(pi.Key())
			}
			if err := m.cache.AddPodInfo(pi); err != nil {
				return fmt.Errorf("mirror: node %s: %w", node.Name, err) // not reached: bound and parsed above
			}
		}
	}
	ne := &entry{node: node, gen: m.src.Generation(n), epoch: m.epoch, pods: pods}
	m.byName[node.Name] = ne
	m.pending = append(m.pending, ne)
	return nil
}

// PodInfo parses pod with the mirror's DeviceDecoder.
func (m *Mirror[N]) PodInfo(pod *v1.Pod) (*snapshot.PodInfo, error) {
	return snapshot.DecodePodInfo(pod, m.cur.Load().snap.DeviceDecoder())
}

// podInfos parses the pods of n, reusing those in prev.
func (m *Mirror[N]) podInfos(n N, node *v1.Node, prev map[*v1.Pod]*snapshot.PodInfo) (map[*v1.Pod]*snapshot.PodInfo, error) {
	k := m.src.NumPods(n)
	out := make(map[*v1.Pod]*snapshot.PodInfo, k)
	for i := range k {
		pod := m.src.Pod(n, i)
		pi := prev[pod]
		if pi == nil {
			var err error
			if pi, err = m.PodInfo(pod); err != nil {
				return nil, fmt.Errorf("mirror: node %s: %w", node.Name, err)
			}
		}
		out[pod] = pi
	}
	return out, nil
}

// Lookup returns the mirrored NodeInfo of n when n is an entry of the last
// synced list, else nil. An entry changed in place since it was mirrored
// (a new generation: a pod assumed, bound or deleted, a node update) is
// rebuilt and published first, as a Sync would ([Mirror.refresh]); nil
// if that fails (the caller converts n, which names the error). An
// unchanged entry costs a check of the calling goroutine's hint (see
// hints: the entry at its last answer's position or the next one) or,
// when that misses, a hash of n and a probe; then one generation read:
// no lock, no allocation.
func (m *Mirror[N]) Lookup(n N) *snapshot.NodeInfo {
	ours, _ := m.lookup(n)
	return ours
}

// lookup is Lookup with n's position in the last synced list (-1 with
// nil): the hint's positions checked, else a hash of n and a probe
// ([view.find]); then one generation read.
func (m *Mirror[N]) lookup(n N) (*snapshot.NodeInfo, int) {
	v := m.cur.Load()
	c := m.near.cursor()
	p := int(c.Load())
	if k := len(v.list); p >= k || v.list[p] != n {
		if p++; p == k {
			p = 0
		}
		if p >= k || v.list[p] != n {
			if p = v.find(n); p < 0 {
				return nil, -1
			}
		}
		c.Store(int32(p))
	}
	e := v.ents.at(p)
	if e.ours == nil {
		return nil, -1
	}
	if g := m.src.Generation(n); e.gen != g {
		if e = m.refresh(p, n, g); e.ours == nil {
			return nil, -1
		}
	}
	return e.ours, p
}

// prefetchHead asks the processor for the head of the NodeInfo at
// position p of the published view (nothing when p is past the end or
// holds no node): a hint, no wait. O(1).
func (m *Mirror[N]) prefetchHead(p int) {
	if v := m.cur.Load(); p < len(v.list) {
		if e := v.ents.at(p); e.ours != nil {
			prefetch.Head(e.ours)
		}
	}
}

// refresh brings the entry n, listed at position p of the published view
// with a mirrored generation other than g, up to date and publishes it:
// what a Sync does for that position alone (rebuild, then a view patched
// at p). It returns the new entry's slot, or the zero slot when n is no
// longer listed at p or does not rebuild (the published view is then unchanged). Serialised
// with Sync by the mutex; O(pods on the node + len(list)/256).
func (m *Mirror[N]) refresh(p int, n N, g int64) slot {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.cur.Load()
	if p >= len(v.list) || v.list[p] != n || p >= len(m.prev) || m.prev[p] != n {
		return slot{}
	}
	if e := v.ents.at(p); e.ours != nil && e.gen == g {
		return e // refreshed since the caller looked
	}
	node := m.src.Node(n)
	if node == nil || m.rebuild(n) != nil {
		return slot{}
	}
	m.prevGen[p] = m.byName[node.Name].gen
	m.moved = append(m.moved[:0], int32(p))
	m.publish(false)
	if e := m.cur.Load().ents.at(p); e.ours != nil && e.gen == g {
		return e
	}
	return slot{} // changed again meanwhile: the caller converts it
}

// Convert returns schedkit's NodeInfo for n: the mirrored one when
// [Mirror.Lookup] finds it (which refreshes a listed entry changed since
// it was mirrored); otherwise — an entry altered for one call, with pods
// added (nominated, not yet bound) or removed (preemption victims) — a
// NodeInfo built from n alone, reusing the pods the mirror already
// parsed, which changes nothing in the mirror. Allocates O(pods) off the
// look-up path; errors name the node and pod.
func (m *Mirror[N]) Convert(n N) (*snapshot.NodeInfo, error) {
	if ours := m.Lookup(n); ours != nil {
		return ours, nil
	}
	node := m.src.Node(n)
	if node == nil {
		return nil, fmt.Errorf("mirror: %w: entry without a node", snapshot.ErrNodeNotFound)
	}
	pods, err := m.podInfos(n, node, m.lastPublished(node.Name))
	if err != nil {
		return nil, err
	}
	pis := make([]*snapshot.PodInfo, 0, len(pods))
	for i := range m.src.NumPods(n) {
		pis = append(pis, pods[m.src.Pod(n, i)])
	}
	f := snapshot.Empty().Fork()
	if err := f.AddNodeInfo(node, pis...); err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	return f.Get(node.Name), nil
}

// lastPublished returns the pods the published snapshot holds on the node
// called name, by object (nil for an unknown node): a name look-up and
// O(pods on the node).
func (m *Mirror[N]) lastPublished(name string) map[*v1.Pod]*snapshot.PodInfo {
	ni := m.cur.Load().snap.Get(name)
	if ni == nil {
		return nil
	}
	pods := make(map[*v1.Pod]*snapshot.PodInfo, ni.NumPods())
	for _, pi := range ni.Pods() {
		pods[pi.Pod()] = pi
	}
	return pods
}
