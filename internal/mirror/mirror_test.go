package mirror

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// fakeNode is an entry of the mirrored list, as upstream's NodeInfo: a
// node, its pods, a generation bumped on every change.
type fakeNode struct {
	node *v1.Node
	pods []*v1.Pod
	gen  int64
}

func (n *fakeNode) addPod(p *v1.Pod) {
	p.Spec.NodeName = n.node.Name
	n.pods = append(n.pods, p)
	n.gen++
}

func (n *fakeNode) clone() *fakeNode {
	c := *n
	c.pods = append([]*v1.Pod(nil), n.pods...)
	return &c
}

var src = Source[*fakeNode]{
	Node:       func(n *fakeNode) *v1.Node { return n.node },
	Generation: func(n *fakeNode) int64 { return n.gen },
	NumPods:    func(n *fakeNode) int { return len(n.pods) },
	Pod:        func(n *fakeNode, i int) *v1.Pod { return n.pods[i] },
}

func newNode(name, cpu string, gen int64) *fakeNode {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}
	return &fakeNode{node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: rl, Capacity: rl}}, gen: gen}
}

func pod(name, cpu string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
}

func TestSyncRebuildsOnlyChangedNodes(t *testing.T) {
	a, b := newNode("a", "4", 10), newNode("b", "4", 20)
	m := New(src, nil)
	s1, err := m.Sync([]*fakeNode{a, b})
	require.NoError(t, err)
	require.Equal(t, 2, s1.NumNodes())
	a1, b1 := s1.Get("a"), s1.Get("b")

	// A pod assumed on b bumps its generation; a is unchanged.
	b.addPod(pod("assumed", "2"))
	s2, err := m.Sync([]*fakeNode{a, b})
	require.NoError(t, err)
	assert.Same(t, a1, s2.Get("a"), "unchanged node is not rebuilt")
	assert.NotSame(t, b1, s2.Get("b"))
	assert.Equal(t, int64(2000), s2.Get("b").Requested().MilliCPU())
	assert.Equal(t, int64(0), s1.Get("b").Requested().MilliCPU(), "earlier snapshots never change")

	// A node the list no longer holds leaves the mirror, with its pods.
	s3, err := m.Sync([]*fakeNode{b})
	require.NoError(t, err)
	assert.Nil(t, s3.Get("a"))
	assert.Equal(t, 1, s3.NumNodes())
	s4, err := m.Sync([]*fakeNode{a})
	require.NoError(t, err)
	assert.Equal(t, 0, s4.Get("a").NumPods())
	assert.Nil(t, s4.Get("b"))
	assert.Equal(t, 0, m.cache.NumPods(), "b's pod went with b")

	// An entry altered for one call (a nominated pod added, not bound) is
	// converted as it is, without touching the mirror.
	_, err = m.Sync([]*fakeNode{a, b})
	require.NoError(t, err)
	nominated := b.clone()
	nominated.pods = append(nominated.pods, pod("nominated", "1"))
	nominated.gen++
	got, err := m.Convert(nominated)
	require.NoError(t, err)
	assert.Equal(t, int64(3000), got.Requested().MilliCPU())
	assert.Equal(t, int64(2000), m.Current().Get("b").Requested().MilliCPU())
	ours, _ := m.lookup(b)
	assert.Same(t, m.Current().Get("b"), ours)
}

// TestSyncFollowsAPodMovedBetweenSyncs: the host forgets an assumed pod
// on node a (its bind failed) and assumes it on b, with the same uid,
// between two Syncs. The mirror follows whichever node the list gives
// first: were b rebuilt while the cache still had the pod on a,
// snapshot.Cache would refuse the same pod on another node, and Sync
// would fail.
func TestSyncFollowsAPodMovedBetweenSyncs(t *testing.T) {
	for _, bFirst := range []bool{false, true} {
		a, b := newNode("a", "4", 10), newNode("b", "4", 20)
		list := []*fakeNode{a, b}
		if bFirst {
			list = []*fakeNode{b, a}
		}
		m := New(src, nil)
		p := pod("p", "1")
		a.addPod(p)
		_, err := m.Sync(list)
		require.NoError(t, err)
		a.pods = nil
		a.gen++
		b.addPod(p.DeepCopy())
		s, err := m.Sync(list)
		require.NoError(t, err, "b first: %v", bFirst)
		assert.Equal(t, 0, s.Get("a").NumPods(), "b first: %v", bFirst)
		assert.Equal(t, int64(1000), s.Get("b").Requested().MilliCPU(), "b first: %v", bFirst)
		on, ok := m.cache.PodNode(snapshot.KeyOf(p))
		assert.True(t, ok)
		assert.Equal(t, "b", on)
	}
}

// Lookup finds a mirrored node by its node object and generation, after
// adds, pod changes, node updates and removals.
func TestLookup(t *testing.T) {
	a, b, c := newNode("a", "4", 1), newNode("b", "4", 1), newNode("c", "4", 1)
	m := New(src, nil)
	_, err := m.Sync([]*fakeNode{a, b, c})
	require.NoError(t, err)
	for _, n := range []*fakeNode{a, b, c} {
		ours, pos := m.lookup(n)
		require.NotNil(t, ours, n.node.Name)
		assert.Equal(t, n.node.Name, ours.Name())
		assert.Same(t, n, m.cur.Load().list[pos])
	}
	// b's pods change: same node object, new generation. A look-up
	// before the next Sync rebuilds b and publishes it; the others stay.
	before := m.Current()
	b.addPod(pod("p", "1"))
	ours, slot := m.lookup(b)
	require.NotNil(t, ours, "refreshed on look-up")
	assert.Equal(t, 1, slot)
	assert.Equal(t, int64(1000), ours.Requested().MilliCPU())
	assert.Same(t, m.Current().Get("b"), ours, "published")
	assert.Equal(t, int64(0), before.Get("b").Requested().MilliCPU(), "earlier snapshots never change")
	assert.Same(t, before.Get("a"), m.Current().Get("a"))
	again, _ := m.lookup(b)
	assert.Same(t, ours, again, "rebuilt once")
	podReads := 0
	m.src.NumPods = func(n *fakeNode) int { podReads++; return len(n.pods) }
	s1, err := m.Sync([]*fakeNode{a, b, c})
	require.NoError(t, err)
	assert.Same(t, m.Current(), s1)
	assert.Same(t, ours, s1.Get("b"))
	assert.Zero(t, podReads, "the Sync found nothing left to do")
	m.src = src
	// b's pod goes (deleted, or a preemption victim) and another comes.
	b.pods = b.pods[:0]
	b.addPod(pod("q", "2"))
	_, err = m.Sync([]*fakeNode{a, b, c})
	require.NoError(t, err)
	ours, _ = m.lookup(b)
	assert.Equal(t, int64(2000), ours.Requested().MilliCPU())
	assert.Equal(t, 1, ours.NumPods())
	// c's node object is replaced (an update from the informer).
	c2 := newNode("c", "8", 2)
	_, err = m.Sync([]*fakeNode{a, b, c2})
	require.NoError(t, err)
	ours, _ = m.lookup(c)
	assert.Nil(t, ours, "old node object")
	ours, _ = m.lookup(c2)
	require.NotNil(t, ours)
	assert.Equal(t, int64(8000), ours.Allocatable().MilliCPU())
	// a is removed; the others are still found; a new node is found.
	s, err := m.Sync([]*fakeNode{b, c2})
	require.NoError(t, err)
	ours, _ = m.lookup(a)
	assert.Nil(t, ours)
	for _, n := range []*fakeNode{b, c2} {
		ours, _ := m.lookup(n)
		assert.Same(t, s.Get(n.node.Name), ours, n.node.Name)
	}
	// Nothing changed: the same snapshot, no work.
	s2, err := m.Sync([]*fakeNode{b, c2})
	require.NoError(t, err)
	assert.Same(t, s, s2)
	d := newNode("d", "2", 1)
	_, err = m.Sync([]*fakeNode{b, c2, d})
	require.NoError(t, err)
	ours, slot = m.lookup(d)
	assert.Same(t, m.Current().Get("d"), ours)
	assert.Equal(t, 2, slot, "d's position in the list")

	allocs := testing.AllocsPerRun(100, func() { _, _ = m.lookup(b) })
	assert.Zero(t, allocs, "Lookup allocates nothing")
}

// A pod that does not parse, or is listed under a node it is not bound
// to, is an error naming node and pod; the published snapshot and
// look-ups stay as they were, and the next good Sync completes the work.
func TestSyncErrorsChangeNothingPublished(t *testing.T) {
	a, b := newNode("a", "4", 1), newNode("b", "4", 1)
	m := New(src, nil)
	s0, err := m.Sync([]*fakeNode{a, b})
	require.NoError(t, err)

	a.addPod(pod("good", "1"))
	bad := pod("bad", "1")
	bad.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("-1")
	b.addPod(bad)
	_, err = m.Sync([]*fakeNode{a, b})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "node b")
	assert.Contains(t, err.Error(), "default/bad")
	assert.Same(t, s0, m.Current())
	assert.Same(t, s0.Get("a"), m.cur.Load().ents.at(0).ours, "a's new generation is not published")
	// A look-up of a, which does rebuild, publishes it; b stays stale.
	ours, _ := m.lookup(a)
	assert.Equal(t, int64(1000), ours.Requested().MilliCPU())
	ours, _ = m.lookup(b)
	assert.Nil(t, ours, "b does not rebuild")
	got, err := m.Convert(b)
	assert.Nil(t, got)
	assert.ErrorContains(t, err, "default/bad", "converting names the pod")
	assert.Equal(t, 0, m.Current().Get("b").NumPods())

	b.pods = b.pods[:0]
	stray := pod("stray", "1")
	b.pods = append(b.pods, stray)
	stray.Spec.NodeName = "elsewhere"
	b.gen++
	_, err = m.Sync([]*fakeNode{a, b})
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	assert.Contains(t, err.Error(), `node b lists pod default/stray, which is bound to "elsewhere"`)

	b.pods = b.pods[:0]
	b.gen++
	s, err := m.Sync([]*fakeNode{a, b})
	require.NoError(t, err)
	assert.Equal(t, int64(1000), s.Get("a").Requested().MilliCPU())
	assert.Equal(t, 0, s.Get("b").NumPods())
	ours, _ = m.lookup(a)
	assert.Same(t, s.Get("a"), ours)
}

// randomStep changes list for step of a sequence: pod adds and removes
// (in place, bumping the generation), node adds, updates (a new entry
// for the same node) and removals (a new list).
func randomStep(step int, list []*fakeNode) []*fakeNode {
	switch step % 7 {
	case 0, 3:
		list = append(list, newNode(fmt.Sprintf("n%d", step), "8", 1))
	case 1, 4, 5:
		if len(list) > 0 {
			list[step%len(list)].addPod(pod(fmt.Sprintf("p%d", step), "100m"))
		}
	case 2:
		if len(list) > 1 {
			n := list[(step/2)%len(list)]
			if len(n.pods) > 0 {
				n.pods = n.pods[1:]
				n.gen++
			}
		}
	case 6:
		if len(list) > 2 {
			i := step % len(list)
			if step%3 == 0 {
				list = append(list[:i:i], list[i+1:]...)
			} else {
				old := list[i]
				nn := newNode(old.node.Name, "16", old.gen+1)
				nn.pods = old.pods
				list = append(list[:i:i], append([]*fakeNode{nn}, list[i+1:]...)...)
			}
		}
	}
	return list
}

// The mirror's snapshot equals one built from scratch from the list, over
// a random sequence of pod adds and removes, node adds, updates and
// removals.
func TestSyncMatchesFromScratch(t *testing.T) {
	m := New(src, nil)
	var list []*fakeNode
	for step := range 300 {
		list = randomStep(step, list)
		got, err := m.Sync(list)
		require.NoError(t, err)
		f := snapshot.Empty().Fork()
		for _, n := range list {
			addFromScratch(t, f, n)
		}
		want := f.Snapshot()
		require.Equal(t, want.NumNodes(), got.NumNodes(), "step %d", step)
		for _, n := range list {
			w, g := want.Get(n.node.Name), got.Get(n.node.Name)
			require.NotNil(t, g, "step %d: %s", step, n.node.Name)
			require.Equal(t, w.Requested(), g.Requested(), "step %d: %s", step, n.node.Name)
			require.Equal(t, w.Allocatable(), g.Allocatable(), "step %d: %s", step, n.node.Name)
			require.Equal(t, w.NumPods(), g.NumPods(), "step %d: %s", step, n.node.Name)
			ours, _ := m.lookup(n)
			require.Same(t, g, ours, "step %d: %s", step, n.node.Name)
		}
	}
}

// Lookups run on the framework's goroutines while Sync runs (go test -race).
func TestLookupConcurrentWithSync(t *testing.T) {
	a, b := newNode("a", "4", 1), newNode("b", "4", 1)
	m := New(src, nil)
	_, err := m.Sync([]*fakeNode{a, b})
	require.NoError(t, err)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					_, _ = m.lookup(a)
					_ = m.Current().NumNodes()
				}
			}
		})
	}
	for i := range 200 {
		b.addPod(pod(fmt.Sprintf("p%d", i), "1m"))
		_, err := m.Sync([]*fakeNode{a, b})
		require.NoError(t, err)
	}
	close(stop)
	wg.Wait()
	assert.Equal(t, 200, m.Current().Get("b").NumPods())
}

type methodsPod struct{ p *v1.Pod }

func (p methodsPod) GetPod() *v1.Pod { return p.p }

type methodsNode struct{ n *fakeNode }

func (m *methodsNode) Node() *v1.Node       { return m.n.node }
func (m *methodsNode) GetGeneration() int64 { return m.n.gen }
func (m *methodsNode) GetPods() []methodsPod {
	var out []methodsPod
	for _, p := range m.n.pods {
		out = append(out, methodsPod{p})
	}
	return out
}

// Methods reads an entry type with upstream's NodeInfo methods.
func TestMethods(t *testing.T) {
	n := newNode("a", "4", 3)
	n.addPod(pod("p", "1"))
	m := New(Methods[*methodsNode, methodsPod](), nil)
	e := &methodsNode{n}
	s, err := m.Sync([]*methodsNode{e})
	require.NoError(t, err)
	assert.Equal(t, int64(1000), s.Get("a").Requested().MilliCPU())
	assert.Same(t, s.Get("a"), m.Lookup(e))
}

// entryOf is an interface entry type, as upstream's fwk.NodeInfo; boxed
// holds a value that is not pointer-shaped, so equal entries are boxed at
// different addresses.
type entryOf interface{ fake() *fakeNode }

type boxed struct {
	n   *fakeNode
	tag int
}

func (b boxed) fake() *fakeNode { return b.n }

type pointed struct{ n *fakeNode }

func (p *pointed) fake() *fakeNode { return p.n }

var ifaceSrc = Source[entryOf]{
	Node:       func(e entryOf) *v1.Node { return e.fake().node },
	Generation: func(e entryOf) int64 { return e.fake().gen },
	NumPods:    func(e entryOf) int { return len(e.fake().pods) },
	Pod:        func(e entryOf, i int) *v1.Pod { return e.fake().pods[i] },
}

// Entries are found by value equality whatever they hold: the table hashes
// an entry's address only when every entry is a pointer (upstream's
// NodeInfos), where equal means same address; a list holding a boxed value
// is hashed by value, so an equal value boxed elsewhere is still found.
func TestLookupByAddressOrValue(t *testing.T) {
	a, b := newNode("a", "4", 1), newNode("b", "4", 1)
	pa, pb := &pointed{a}, &pointed{b}
	m := New(ifaceSrc, nil)
	_, err := m.Sync([]entryOf{pa, pb})
	require.NoError(t, err)
	assert.True(t, m.cur.Load().ids.addr, "a list of pointers is hashed by address")
	assert.Same(t, m.Current().Get("b"), m.Lookup(pb))
	assert.Nil(t, m.Lookup(&pointed{b}), "another pointer is another entry")

	m = New(ifaceSrc, nil)
	_, err = m.Sync([]entryOf{pa, boxed{b, 7}})
	require.NoError(t, err)
	assert.False(t, m.cur.Load().ids.addr, "a boxed value: hashed by value")
	for range 3 {
		again := entryOf(boxed{b, 7}) // equal, boxed anew
		assert.Same(t, m.Current().Get("b"), m.Lookup(again))
		assert.Same(t, m.Current().Get("a"), m.Lookup(pa))
	}
	assert.Nil(t, m.Lookup(boxed{b, 8}))
}

// aliased is a second pointer type of entryOf: a *aliased made from a
// *pointed has its address and another dynamic type.
type aliased struct{ n *fakeNode }

func (p *aliased) fake() *fakeNode { return p.n }

// An entry is found by its address and its dynamic type: an interface
// holding a pointer of another type at the same address is another entry
// (they are not ==), whether the list holds one pointer type (exact: a
// hash match is checked by type word alone) or two (a hash match is
// checked by comparing the list entry). The same holds for the candidate
// index of Score (resolved.index), whose table is probed the same way.
func TestLookupByAddressAndType(t *testing.T) {
	a, b, c := newNode("a", "4", 1), newNode("b", "4", 1), newNode("c", "4", 1)
	pa, pb := &pointed{a}, &pointed{b}
	aliasB := (*aliased)(unsafe.Pointer(pb))
	require.NotEqual(t, entryOf(pb), entryOf(aliasB))

	m := New(ifaceSrc, nil)
	_, err := m.Sync([]entryOf{pa, pb})
	require.NoError(t, err)
	assert.True(t, m.cur.Load().ids.exact, "one pointer type: exact")
	assert.Same(t, m.Current().Get("b"), m.Lookup(pb))
	assert.Nil(t, m.Lookup(aliasB), "same address, another type")
	r, err := m.resolve([]entryOf{pa, pb, pb}, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, r.index(pb), "listed twice: the first")
	assert.Equal(t, -1, r.index(aliasB))

	pc := &aliased{c}
	aliasC := (*pointed)(unsafe.Pointer(pc))
	m = New(ifaceSrc, nil)
	_, err = m.Sync([]entryOf{pa, pb, pc})
	require.NoError(t, err)
	v := m.cur.Load()
	assert.True(t, v.ids.addr, "pointers: hashed by address")
	assert.False(t, v.ids.exact, "two types: a hash match compares entries")
	assert.Same(t, m.Current().Get("b"), m.Lookup(pb))
	assert.Same(t, m.Current().Get("c"), m.Lookup(pc))
	assert.Nil(t, m.Lookup(aliasB))
	assert.Nil(t, m.Lookup(aliasC))
	r, err = m.resolve([]entryOf{pc, pb, pa}, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, -1, -1}, []int{r.index(pc), r.index(pb), r.index(pa), r.index(aliasB), r.index(aliasC)})
}

// SyncLazy over the same random sequence as TestSyncMatchesFromScratch:
// after each call and a look-up of every listed entry (what a cycle's
// filter does), each node equals one built from scratch; a list of the
// same entries costs no generation read, and a changed entry is rebuilt
// by its look-up.
func TestSyncLazyMatchesFromScratch(t *testing.T) {
	var reads int
	counting := src
	counting.Generation = func(n *fakeNode) int64 { reads++; return n.gen }
	m := New(counting, nil)
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	var list []*fakeNode
	lazyRounds := 0
	for step := range 300 {
		prevList := append([]*fakeNode(nil), list...)
		list = randomStep(step, list)
		same := len(prevList) == len(list) && step > 0
		for i := range prevList {
			same = same && prevList[i] == list[i]
		}
		reads = 0
		_, err := m.SyncLazy(list)
		require.NoError(t, err)
		if same {
			lazyRounds++
			assert.Zero(t, reads, "step %d: the same entries are not read", step)
		}
		if step%2 == 1 && len(list) > 0 {
			// Scoring the list first (no filter before it) reads each
			// candidate's generation and refreshes the changed ones.
			pi, err := snapshot.NewPodInfo(pod("incoming", "500m"))
			require.NoError(t, err)
			sc, err := m.Score(la, pi, list, nil)
			require.NoError(t, err)
			for _, n := range list {
				got, err := sc.Of(n)
				require.NoError(t, err)
				require.Equal(t, scratchScore(t, la, pi, n), got, "step %d: %s", step, n.node.Name)
				require.Equal(t, n.gen, m.cur.Load().ents.at(m.cur.Load().find(n)).gen, "step %d: %s published", step, n.node.Name)
			}
		}
		for _, n := range list {
			w := fromScratch(t, n)
			g, _ := m.lookup(n)
			require.NotNil(t, g, "step %d: %s", step, n.node.Name)
			require.Equal(t, w.Requested(), g.Requested(), "step %d: %s", step, n.node.Name)
			require.Equal(t, w.Allocatable(), g.Allocatable(), "step %d: %s", step, n.node.Name)
			require.Equal(t, w.NumPods(), g.NumPods(), "step %d: %s", step, n.node.Name)
			require.Same(t, m.Current().Get(n.node.Name), g, "step %d: %s is published", step, n.node.Name)
		}
		require.Equal(t, len(list), m.Current().NumNodes(), "step %d: the node set is the list's", step)
	}
	assert.Greater(t, lazyRounds, 120)
}

// fromScratch is n's node as a snapshot built from n alone holds it.
func fromScratch(t *testing.T, n *fakeNode) *snapshot.NodeInfo {
	f := snapshot.Empty().Fork()
	addFromScratch(t, f, n)
	return f.Snapshot().Get(n.node.Name)
}

// scratchScore is s's score of n's node built from scratch for pod pi.
func scratchScore(t *testing.T, s score.Scorer, pi *snapshot.PodInfo, n *fakeNode) int64 {
	ps, err := s.Prepare(pi, nil)
	require.NoError(t, err)
	out := make([]int64, 1)
	ps.Score([]*snapshot.NodeInfo{fromScratch(t, n)}, out)
	return out[0]
}

// addFromScratch adds n's node and pods to f, parsing every pod.
func addFromScratch(t *testing.T, f *snapshot.Fork, n *fakeNode) {
	var pis []*snapshot.PodInfo
	for _, p := range n.pods {
		pi, err := snapshot.NewPodInfo(p)
		require.NoError(t, err)
		pis = append(pis, pi)
	}
	require.NoError(t, f.AddNodeInfo(n.node, pis...))
}

// Look-ups of one changed entry from many goroutines (go test -race)
// rebuild it once and all return the rebuilt node, while other entries
// are looked up unchanged.
func TestConcurrentLookupsRefreshOnce(t *testing.T) {
	nodes := make([]*fakeNode, 64)
	for i := range nodes {
		nodes[i] = newNode(fmt.Sprintf("n%d", i), "8", 1)
	}
	m := New(src, nil)
	_, err := m.Sync(nodes)
	require.NoError(t, err)
	for round := range 20 {
		changed := nodes[round%len(nodes)]
		changed.addPod(pod(fmt.Sprintf("p%d", round), "1"))
		_, err := m.SyncLazy(nodes)
		require.NoError(t, err)
		before := m.Current()
		got := make([]*snapshot.NodeInfo, 8)
		var wg sync.WaitGroup
		for g := range got {
			wg.Go(func() {
				for _, n := range nodes[g:] {
					_, _ = m.lookup(n)
				}
				got[g], _ = m.lookup(changed)
			})
		}
		wg.Wait()
		for _, ni := range got {
			assert.Same(t, got[0], ni, "round %d", round)
		}
		assert.Equal(t, 1, got[0].NumPods()-before.Get(changed.node.Name).NumPods(), "round %d", round)
		for _, n := range nodes {
			if n != changed {
				assert.Same(t, before.Get(n.node.Name), m.Current().Get(n.node.Name), "round %d: %s untouched", round, n.node.Name)
			}
		}
	}
}

// sameEntries compares pointers and interfaces holding pointers by
// identity; an interface holding equal values boxed apart may report
// false (a full Sync, never a wrong answer), and other entry types
// compare by value.
func TestSameEntries(t *testing.T) {
	a, b, c := newNode("a", "1", 1), newNode("b", "1", 1), newNode("c", "1", 1)
	assert.True(t, sameEntries([]*fakeNode{a, b, c}, []*fakeNode{a, b, c}))
	assert.False(t, sameEntries([]*fakeNode{a, b, c}, []*fakeNode{a, c, b}))
	assert.False(t, sameEntries([]*fakeNode{a, b, c}, []*fakeNode{a, b, a.clone()}), "an equal node at another address is another entry")
	assert.True(t, sameEntries([]*fakeNode{}, []*fakeNode{}))
	type ifc interface{ fake() *fakeNode }
	pa, pb := &pointed{a}, &pointed{b}
	assert.True(t, sameEntries([]ifc{pa, pb}, []ifc{pa, pb}))
	assert.False(t, sameEntries([]ifc{pa, pb}, []ifc{pb, pa}))
	assert.False(t, sameEntries([]ifc{pa, pb}, []ifc{pa, &pointed{b}}))
	assert.False(t, sameEntries([]ifc{boxed{n: a}}, []ifc{&pointed{a}}), "other dynamic types")
	assert.True(t, sameEntries([]boxed{{n: a}, {n: b}}, []boxed{{n: a}, {n: b}}), "values compare by value")
	assert.False(t, sameEntries([]boxed{{n: a}, {n: b}}, []boxed{{n: a}, {n: c}}))
}

// Two callers that both saw the old view refresh the same entry: the
// second finds the first's work, with no second rebuild or publish (a
// last-look reviewer's test).
func TestRefreshOnce(t *testing.T) {
	a, b := newNode("a", "8", 1), newNode("b", "8", 1)
	reads := 0
	s := src
	s.NumPods = func(n *fakeNode) int { reads++; return len(n.pods) }
	m := New(s, nil)
	_, err := m.Sync([]*fakeNode{a, b})
	require.NoError(t, err)
	b.addPod(pod("p", "1"))
	p, g := m.cur.Load().find(b), b.gen
	reads = 0
	e1 := m.refresh(p, b, g)
	v1 := m.cur.Load()
	e2 := m.refresh(p, b, g) // a caller that loaded the view before the first published
	assert.Equal(t, e1, e2)
	assert.Same(t, v1, m.cur.Load(), "no second publish")
	assert.Equal(t, 1, reads, "rebuilt once")
}

// A Sync of a longer list that fails part way (d's pod does not parse)
// leaves c in the cache; when the host goes back to the list of the last
// successful Sync, neither the next Sync nor a look-up's refresh may
// publish c (a last-look reviewer's finding, older than SyncLazy).
func TestFailedSyncOfAnotherListLeavesNoNode(t *testing.T) {
	for _, next := range []string{"Sync", "SyncLazy", "refresh"} {
		a, b := newNode("a", "8", 1), newNode("b", "8", 1)
		m := New(src, nil)
		_, err := m.Sync([]*fakeNode{a, b})
		require.NoError(t, err)
		c, d := newNode("c", "8", 1), newNode("d", "8", 1)
		bad := pod("bad", "1")
		bad.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("-1")
		d.addPod(bad)
		_, err = m.Sync([]*fakeNode{a, b, c, d})
		require.Error(t, err)
		assert.False(t, m.Full())
		a.addPod(pod("p", "1"))
		switch next {
		case "Sync":
			_, err = m.Sync([]*fakeNode{a, b})
		case "SyncLazy":
			_, err = m.SyncLazy([]*fakeNode{a, b})
			assert.True(t, m.Full(), "it did a full Sync")
		case "refresh":
			assert.Nil(t, m.Lookup(a), "no refresh: the list is not known")
			var got *snapshot.NodeInfo
			got, err = m.Convert(a)
			require.NotNil(t, got, "converted")
			assert.Equal(t, int64(1000), got.Requested().MilliCPU())
		}
		require.NoError(t, err)
		assert.Nil(t, m.Current().Get("c"), "%s: c was never in a synced list", next)
		assert.Equal(t, 2, m.Current().NumNodes(), next)
	}
}

// A list naming one node twice, both entries changed in place and synced
// in place: each position keeps its own entry (the one at its
// generation) or none, so Score, which does not read generations again
// after a successful Sync, scores a as a (a last-look reviewer's
// finding).
func TestNodeTwiceSyncedInPlace(t *testing.T) {
	a := newNode("a", "4", 1)
	a2 := a.clone()
	a2.gen = 10
	m := New(src, nil)
	_, err := m.Sync([]*fakeNode{a, a2})
	require.NoError(t, err)
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	a.addPod(pod("x", "1"))  // a: 1 cpu of 4
	a2.addPod(pod("y", "3")) // a2: 3 cpu of 4
	_, err = m.Sync([]*fakeNode{a, a2})
	require.NoError(t, err)
	require.True(t, m.Full())
	pi, err := snapshot.NewPodInfo(pod("p", "1"))
	require.NoError(t, err)
	sc, err := m.Score(la, pi, []*fakeNode{a, a2}, nil)
	require.NoError(t, err)
	for _, n := range []*fakeNode{a, a2} {
		got, err := sc.Of(n)
		require.NoError(t, err)
		assert.Equal(t, scratchScore(t, la, pi, n), got, "gen %d", n.gen)
	}
}
