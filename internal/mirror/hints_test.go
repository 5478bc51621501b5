package mirror

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/score"
)

// hintNodes returns n nodes whose cpu (1..n cores) tells their scores
// apart.
func hintNodes(n int) []*fakeNode {
	nodes := make([]*fakeNode, n)
	for i := range nodes {
		nodes[i] = newNode(fmt.Sprintf("n%02d", i), fmt.Sprint(i+1), 1)
	}
	return nodes
}

// visits are look-up orders over a list of n entries: a run from a
// rotated start with each entry looked up twice (two plugins per node,
// kube-scheduler's order), reversed, and random with repeats.
func visits(rng *rand.Rand, n int) [][]int {
	var rotated, reversed, random []int
	start := rng.IntN(n)
	for i := range n {
		p := (start + i) % n
		rotated = append(rotated, p, p)
		reversed = append(reversed, n-1-i)
	}
	for range 3 * n {
		random = append(random, rng.IntN(n))
	}
	return [][]int{rotated, reversed, random}
}

// Lookup answers with the entry's own node whatever the calling
// goroutine's hint says: in order, reversed, at random, and after a Sync
// of a shorter, reordered list (the hints then point past the end or at
// other entries) and of a list naming an entry twice.
func TestLookupHints(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	nodes := hintNodes(40)
	m := New(src, nil)
	check := func(list []*fakeNode) {
		t.Helper()
		_, err := m.Sync(list)
		require.NoError(t, err)
		for _, order := range visits(rng, len(list)) {
			for _, p := range order {
				require.Same(t, m.Current().Get(list[p].node.Name), m.Lookup(list[p]), "position %d", p)
			}
		}
	}
	check(nodes)
	short := append([]*fakeNode(nil), nodes[:25]...)
	rng.Shuffle(len(short), func(i, j int) { short[i], short[j] = short[j], short[i] })
	check(short)
	assert.Nil(t, m.Lookup(nodes[30]), "no longer listed")
	check(append(short, short[3]))
	check(nodes)
}

// Scores.Of answers each candidate's own score whatever the hint says:
// candidates in list order, shuffled, with an entry listed twice and an
// altered entry (converted, not held), visited in several orders, and
// after a new cycle whose candidates are fewer and in another order.
func TestScoresOfHints(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	nodes := hintNodes(30)
	m := synced(t, nodes...)
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	p := podInfo(t, pod("p", "1"))
	// want: each node's score on its own (a one-candidate cycle).
	want := map[string]int64{}
	for _, n := range nodes {
		sc, err := m.Score(la, p, []*fakeNode{n}, nil)
		require.NoError(t, err)
		want[n.node.Name], err = sc.Of(n)
		require.NoError(t, err)
	}
	altered := nodes[5].clone()
	altered.gen++
	altered.addPod(pod("extra", "1"))
	cycles := [][]*fakeNode{
		append([]*fakeNode(nil), nodes...),
		append(append([]*fakeNode(nil), nodes[:20]...), nodes[7], altered),
		append([]*fakeNode(nil), nodes[10:]...),
	}
	rng.Shuffle(len(cycles[1]), func(i, j int) { cycles[1][i], cycles[1][j] = cycles[1][j], cycles[1][i] })
	rng.Shuffle(len(cycles[2]), func(i, j int) { cycles[2][i], cycles[2][j] = cycles[2][j], cycles[2][i] })
	for ci, cands := range cycles {
		_, err := m.SyncLazy(nodes)
		require.NoError(t, err)
		sc, err := m.Score(la, p, cands, nil)
		require.NoError(t, err)
		for _, order := range visits(rng, len(cands)) {
			for _, i := range order {
				got, err := sc.Of(cands[i])
				require.NoError(t, err)
				w := want[cands[i].node.Name]
				if cands[i] == altered {
					// n05 (6 cores) with the extra pod and p: cpu
					// (6000-2000)*100/6000 = 66, memory
					// (8Gi-2Gi)*100/8Gi = 75 → (66+75)/2 = 70.
					w = 70
				}
				require.Equal(t, w, got, "cycle %d, candidate %d (%s)", ci, i, cands[i].node.Name)
			}
		}
	}
}

// Goroutines told apart: each walks its own run of the list, two
// look-ups per entry, at once (for -race), every answer its entry's
// node; and the cursors of goroutines alive at once mostly differ (16
// goroutines, 64 slots: a few share at most).
func TestLookupHintsConcurrent(t *testing.T) {
	nodes := hintNodes(64)
	m := synced(t, nodes...)
	const workers = 16
	var wg, ready sync.WaitGroup
	var mu sync.Mutex
	cursors := map[uintptr]bool{}
	ready.Add(workers)
	for w := range workers {
		wg.Go(func() {
			mu.Lock()
			cursors[uintptr(unsafe.Pointer(m.near.cursor()))] = true
			mu.Unlock()
			// All alive at once: a goroutine that has ended may leave
			// its stack, and so its cursor, to the next one.
			ready.Done()
			ready.Wait()
			for round := range 200 {
				for i := range 16 {
					n := nodes[(w*4+round+i)%len(nodes)]
					for range 2 {
						if got := m.Lookup(n); got != m.Current().Get(n.node.Name) {
							t.Errorf("worker %d: Lookup(%s) = %v", w, n.node.Name, got)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
	assert.GreaterOrEqual(t, len(cursors), workers/2, "goroutines share few cursors")
}

// A list naming an entry twice: a candidate found at the entry's second
// position (by the in-order fast path of resolve) is still found by
// index (at the first position, which view.find answers), so Of answers
// from the batch without converting (no allocation). And Of checks its
// hint against the mirror's copy of the list, not the caller's slice: a
// slice changed after Score changes no answer.
func TestScoresOfListNamingAnEntryTwice(t *testing.T) {
	a, b := newNode("a", "4", 1), newNode("b", "8", 1)
	m := synced(t, a, b, a)
	require.True(t, m.cur.Load().dups)
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	cands := []*fakeNode{b, a}
	sc, err := m.Score(la, podInfo(t, pod("p", "1")), cands, nil)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2}, sc.r.pos, "a found at its second position")
	assert.Equal(t, 1, sc.r.index(a))
	assert.Equal(t, 0, sc.r.index(b))
	// a: cpu (4000-1000)*100/4000 = 75, memory 87 → 81;
	// b: cpu (8000-1000)*100/8000 = 87, memory 87 → 87.
	want := map[*fakeNode]int64{a: 81, b: 87}
	cands[0], cands[1] = cands[1], cands[0]
	for range 3 {
		for _, n := range []*fakeNode{a, b, a, a, b} {
			got, err := sc.Of(n)
			require.NoError(t, err)
			require.Equal(t, want[n], got, n.node.Name)
		}
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = sc.Of(a) }))
}
