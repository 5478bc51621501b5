package mirror

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
	// b's pods change: same node object, new generation.
	b.addPod(pod("p", "1"))
	ours, slot := m.lookup(b)
	assert.Nil(t, ours, "stale until synced")
	assert.Equal(t, -1, slot)
	_, err = m.Sync([]*fakeNode{a, b, c})
	require.NoError(t, err)
	ours, _ = m.lookup(b)
	require.NotNil(t, ours)
	assert.Equal(t, int64(1000), ours.Requested().MilliCPU())
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
	ours, _ := m.lookup(a)
	assert.Nil(t, ours, "a's new generation is not published")

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

// The mirror's snapshot equals one built from scratch from the list, over
// a random sequence of pod adds and removes, node adds, updates and
// removals.
func TestSyncMatchesFromScratch(t *testing.T) {
	m := New(src, nil)
	var list []*fakeNode
	for step := range 300 {
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
					list = append(list[:i], list[i+1:]...)
				} else {
					old := list[i]
					nn := newNode(old.node.Name, "16", old.gen+1)
					nn.pods = old.pods
					list[i] = nn
				}
			}
		}
		got, err := m.Sync(list)
		require.NoError(t, err)
		f := snapshot.Empty().Fork()
		for _, n := range list {
			var pis []*snapshot.PodInfo
			for _, p := range n.pods {
				pi, err := snapshot.NewPodInfo(p)
				require.NoError(t, err)
				pis = append(pis, pi)
			}
			require.NoError(t, f.AddNodeInfo(n.node, pis...))
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
	assert.True(t, m.cur.Load().addr, "a list of pointers is hashed by address")
	assert.Same(t, m.Current().Get("b"), m.Lookup(pb))
	assert.Nil(t, m.Lookup(&pointed{b}), "another pointer is another entry")

	m = New(ifaceSrc, nil)
	_, err = m.Sync([]entryOf{pa, boxed{b, 7}})
	require.NoError(t, err)
	assert.False(t, m.cur.Load().addr, "a boxed value: hashed by value")
	for range 3 {
		again := entryOf(boxed{b, 7}) // equal, boxed anew
		assert.Same(t, m.Current().Get("b"), m.Lookup(again))
		assert.Same(t, m.Current().Get("a"), m.Lookup(pa))
	}
	assert.Nil(t, m.Lookup(boxed{b, 8}))
}
