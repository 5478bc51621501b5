package mirror

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// synced is a mirror synced with nodes.
func synced(t *testing.T, nodes ...*fakeNode) *Mirror[*fakeNode] {
	t.Helper()
	m := New(src, nil)
	_, err := m.Sync(nodes)
	require.NoError(t, err)
	return m
}

func podInfo(t *testing.T, p *v1.Pod) *snapshot.PodInfo {
	t.Helper()
	pi, err := snapshot.NewPodInfo(p)
	require.NoError(t, err)
	return pi
}

// reservation holds cpu on a node for pods labelled app=owner.
func reservation(name, node, cpu string) reserve.Reservation {
	return reserve.Reservation{Name: name, Node: node,
		Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)},
		Owner:    reserve.Owner{Namespace: "default", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "owner"}}}}
}

// TestScore: candidates are scored in one pass, Of returns their scores by
// look-up without allocating, a node that was not a candidate (or was
// altered) is scored on its own, and a skipped pod gives nil.
func TestScore(t *testing.T) {
	empty, busy := newNode("empty", "4", 1), newNode("busy", "4", 1)
	busy.addPod(pod("b1", "3"))
	m := synced(t, empty, busy)
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	sc, err := m.Score(la, podInfo(t, pod("p", "1")), []*fakeNode{empty, busy}, nil)
	require.NoError(t, err)
	// empty: cpu (4000-1000)*100/4000 = 75, memory (8Gi-1Gi)*100/8Gi = 87 → 81
	// busy:  cpu (4000-4000)*100/4000 = 0,  memory (8Gi-2Gi)*100/8Gi = 75 → 37
	for n, want := range map[*fakeNode]int64{empty: 81, busy: 37} {
		got, err := sc.Of(n)
		require.NoError(t, err)
		assert.Equal(t, want, got, "Of(%s)", n.node.Name)
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = sc.Of(busy) }), "Of allocates nothing")

	// busy without its pod (a preemption victim removed, for this call):
	// scored on its own pods → 81.
	dry := busy.clone()
	dry.pods, dry.gen = nil, dry.gen+1
	got, err := sc.Of(dry)
	require.NoError(t, err)
	assert.Equal(t, int64(81), got)

	ba, err := score.NewBalancedAllocation()
	require.NoError(t, err)
	be := pod("be", "1")
	be.Spec.Containers[0].Resources.Requests = nil
	sc, err = m.Score(ba, podInfo(t, be), []*fakeNode{empty}, nil)
	require.NoError(t, err)
	assert.Nil(t, sc, "BalancedAllocation skips a best-effort pod")
}

// TestScoreReadsLedger: with a ledger set, the scores are those of the
// scorer run on the ledger's snapshot (a named reservation counts as
// requested).
func TestScoreReadsLedger(t *testing.T) {
	n1, n2 := newNode("n1", "4", 1), newNode("n2", "4", 1)
	m := synced(t, n1, n2)
	l := reserve.New()
	require.NoError(t, l.AddNode(n1.node))
	require.NoError(t, l.AddNode(n2.node))
	_, err := l.AddReservation(reservation("r", "n1", "2"))
	require.NoError(t, err)
	m.SetLedger(l)
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	pi := podInfo(t, pod("p", "1"))
	sc, err := m.Score(la, pi, []*fakeNode{n1, n2}, nil)
	require.NoError(t, err)
	snap := l.Snapshot()
	ps, err := la.Prepare(pi, snap)
	require.NoError(t, err)
	want := make([]int64, 2)
	ps.Score([]*snapshot.NodeInfo{snap.Get("n1"), snap.Get("n2")}, want)
	a, err := sc.Of(n1)
	require.NoError(t, err)
	b, err := sc.Of(n2)
	require.NoError(t, err)
	assert.Equal(t, want, []int64{a, b})
	assert.Less(t, a, b, "n1's reservation counts as requested")
}

// TestNormalize: the PodScorer's Normalizer rewrites the scores; a name
// not in the snapshot is an error.
func TestNormalize(t *testing.T) {
	clean, tainted := newNode("clean", "4", 1), newNode("tainted", "4", 1)
	tainted.node.Spec.Taints = []v1.Taint{{Key: "a", Effect: v1.TaintEffectPreferNoSchedule}, {Key: "b", Effect: v1.TaintEffectPreferNoSchedule}}
	m := synced(t, clean, tainted)
	sc, err := m.Score(score.NewTaintToleration(), podInfo(t, pod("p", "1")), []*fakeNode{clean, tainted}, nil)
	require.NoError(t, err)
	vals := []int64{0, 0}
	for i, n := range []*fakeNode{clean, tainted} {
		vals[i], err = sc.Of(n)
		require.NoError(t, err)
	}
	// raw: untolerated PreferNoSchedule taints 0 and 2; reversed over max 2.
	assert.Equal(t, []int64{0, 2}, vals)
	names := []string{"clean", "tainted"}
	at := func(i int) (string, *int64) { return names[i], &vals[i] }
	require.NoError(t, sc.Normalize(2, at))
	assert.Equal(t, []int64{100, 0}, vals)
	names[1] = "gone"
	vals = []int64{0, 2}
	require.ErrorIs(t, sc.Normalize(2, at), snapshot.ErrNodeNotFound)
	assert.Equal(t, []int64{0, 2}, vals, "unchanged after an error")
}

// TestFilterCheck: the filter's reasons; with the ledger, a node whose
// room a reservation takes is refused as Reserve would (but not for the
// reservation's owner, and not an altered entry); a passing node
// allocates nothing.
func TestFilterCheck(t *testing.T) {
	n1, n2, small := newNode("n1", "4", 1), newNode("n2", "4", 1), newNode("small", "500m", 1)
	m := synced(t, n1, n2, small)
	l := reserve.New()
	for _, n := range []*fakeNode{n1, n2, small} {
		require.NoError(t, l.AddNode(n.node))
	}
	_, err := l.AddReservation(reservation("r", "n1", "4"))
	require.NoError(t, err)
	m.SetLedger(l)
	fit := mustFilter(framework.NewNodeResourcesFit(nil, nil))
	other := podInfo(t, pod("other", "1"))

	f, pre, err := m.Filter(fit, other, true)
	require.NoError(t, err)
	require.NotNil(t, pre.Filter)
	check := func(n *fakeNode) []string {
		reasons, err := f.Check(n)
		require.NoError(t, err)
		var msgs []string
		for _, r := range reasons {
			msgs = append(msgs, r.Message())
		}
		return msgs
	}
	assert.Equal(t, []string{"Insufficient cpu"}, check(small), "the filter's own reason")
	assert.Equal(t, []string{"Insufficient cpu"}, check(n1), "the ledger's: the reservation takes n1's cpu")
	assert.Nil(t, check(n2))
	dry := n1.clone()
	dry.gen++
	assert.Nil(t, check(dry), "an altered entry is judged on its own pods")
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = f.Check(n2) }), "a passing node allocates nothing")

	owner := pod("owner", "2")
	owner.Labels = map[string]string{"app": "owner"}
	f, _, err = m.Filter(fit, podInfo(t, owner), true)
	require.NoError(t, err)
	assert.Nil(t, check(n1), "the owner draws on its reservation")

	f, _, err = m.Filter(fit, other, false)
	require.NoError(t, err)
	assert.Nil(t, check(n1), "without the ledger: the scheduler's nodes only")
}

// TestScoreResolvesOncePerSync: candidates in list order or any other give
// the same scores; the score plugins of one cycle share the candidates'
// resolution, and a Sync that brings a change makes the next Score see it
// (the same candidate slice is resolved again).
func TestScoreResolvesOncePerSync(t *testing.T) {
	a, b, c := newNode("a", "4", 1), newNode("b", "4", 1), newNode("c", "4", 1)
	m := synced(t, a, b, c)
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	pi := podInfo(t, pod("p", "1"))
	ordered, reversed := []*fakeNode{a, b, c}, []*fakeNode{c, b, a}
	sc1, err := m.Score(la, pi, ordered, nil)
	require.NoError(t, err)
	sc2, err := m.Score(la, pi, reversed, nil)
	require.NoError(t, err)
	for _, n := range ordered {
		v1, err := sc1.Of(n)
		require.NoError(t, err)
		v2, err := sc2.Of(n)
		require.NoError(t, err)
		assert.Equal(t, int64(81), v1, n.node.Name)
		assert.Equal(t, v1, v2, n.node.Name)
	}
	// b gets a pod; the same slice, after the Sync, reads it.
	b.addPod(pod("b1", "3"))
	_, err = m.Sync(ordered)
	require.NoError(t, err)
	sc3, err := m.Score(la, pi, ordered, nil)
	require.NoError(t, err)
	got, err := sc3.Of(b)
	require.NoError(t, err)
	assert.Equal(t, int64(37), got, "b scored with its new pod")
	got, err = sc3.Of(a)
	require.NoError(t, err)
	assert.Equal(t, int64(81), got)
}

// After a successful Sync, a candidate that is a listed entry is taken
// at its entry without reading its generation again; after a failed
// Sync, whose changes were not published, each generation is read, so
// an entry changed in place is converted and scored as it is, not as
// the view last saw it.
func TestScoreAfterFailedSyncReadsGenerations(t *testing.T) {
	a, b := newNode("a", "4", 1), newNode("b", "4", 1)
	m := synced(t, a, b)
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	pi := podInfo(t, pod("p", "1"))
	list := []*fakeNode{a, b}
	sc, err := m.Score(la, pi, list, nil)
	require.NoError(t, err)
	got, err := sc.Of(a)
	require.NoError(t, err)
	assert.Equal(t, int64(81), got)

	a.addPod(pod("a1", "3"))
	bad := pod("bad", "1")
	bad.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("-1")
	b.addPod(bad)
	_, err = m.Sync(list)
	require.Error(t, err)
	sc, err = m.Score(la, pi, list[:1], nil) // b does not convert
	require.NoError(t, err)
	got, err = sc.Of(a)
	require.NoError(t, err)
	assert.Equal(t, int64(37), got, "a scored with its new pod, though the view has the old a")
}

// A list naming a node twice at different generations: each entry is
// scored as it is (the one the mirror does not hold is converted), also
// when the Sync succeeded and generations are not read again.
func TestScoreListNamingANodeTwice(t *testing.T) {
	a := newNode("a", "4", 1)
	a2 := a.clone()
	a2.addPod(pod("a1", "3"))
	m := synced(t, a, a2)
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	sc, err := m.Score(la, podInfo(t, pod("p", "1")), []*fakeNode{a, a2}, nil)
	require.NoError(t, err)
	got, err := sc.Of(a)
	require.NoError(t, err)
	assert.Equal(t, int64(81), got)
	got, err = sc.Of(a2)
	require.NoError(t, err)
	assert.Equal(t, int64(37), got)
}

// mustFilter returns f, panicking on err (arguments fixed in the test).
func mustFilter(f framework.Filter, err error) framework.Filter {
	if err != nil {
		panic(err)
	}
	return f
}

// TestScoreInPieces: with a Parallel, a list longer than two pieces is
// found and scored in disjoint batches that together cover it once, run
// at once (for -race), and every candidate's score is the one a mirror
// synced alike gives scoring in one pass: for a plain scorer, with a
// ledger whose reservations count as requested, and after a lazy sync
// with entries changed in place (refreshed by the pieces at once), on a
// candidate list that is the synced list reordered with an altered
// entry (converted). Two candidates that do not convert, in different
// pieces: the error is the first one's, as in one pass.
func TestScoreInPieces(t *testing.T) {
	atLeastProcs(t, 2) // 3 pieces of n: maxPieces() is 2 at GOMAXPROCS 1
	const n = 3*scorePiece + 77
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	pi := podInfo(t, pod("p", "1"))
	par := func(pieces int, work func(int)) {
		var wg sync.WaitGroup
		for i := range pieces {
			wg.Go(func() { work(i) })
		}
		wg.Wait()
	}
	for _, mode := range []string{"plain", "ledger", "lazy"} {
		// setup returns a mirror of a new cluster and the candidates.
		setup := func() (*Mirror[*fakeNode], []*fakeNode) {
			nodes := make([]*fakeNode, n)
			for i := range nodes {
				nodes[i] = newNode(fmt.Sprintf("n%04d", i), fmt.Sprint(1+i%13), 1)
			}
			m := synced(t, nodes...)
			switch mode {
			case "ledger":
				l := reserve.New()
				for _, nd := range nodes {
					require.NoError(t, l.AddNode(nd.node))
				}
				for i := 0; i < n; i += 7 {
					_, err := l.AddReservation(reservation(fmt.Sprint("r", i), nodes[i].node.Name, "500m"))
					require.NoError(t, err)
				}
				m.SetLedger(l)
			case "lazy":
				for i := 0; i < n; i += 5 {
					nodes[i].addPod(pod(fmt.Sprint("q", i), "1"))
				}
				_, err := m.SyncLazy(nodes)
				require.NoError(t, err)
			}
			cands := append([]*fakeNode(nil), nodes...)
			rand.New(rand.NewPCG(3, 4)).Shuffle(n, func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
			cands[n/2] = newNode("altered", "16", 1)
			return m, cands
		}
		ms, serialCands := setup()
		serial, err := ms.Score(la, pi, serialCands, nil)
		require.NoError(t, err)
		m, cands := setup()
		var mu sync.Mutex
		covered := make([]int, n)
		batches := 0
		at := map[string]int{}
		for i, c := range cands {
			at[c.node.Name] = i
		}
		sc, err := m.Score(countingScorer{la, &mu, covered, &batches, at}, pi, cands, par)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, batches, 3, "%s: scored in pieces", mode)
		for i, c := range covered {
			require.Equal(t, 1, c, "%s: candidate %d scored once", mode, i)
		}
		for i, c := range cands {
			want, err := serial.Of(serialCands[i])
			require.NoError(t, err)
			got, err := sc.Of(c)
			require.NoError(t, err)
			require.Equal(t, want, got, "%s: candidate %d (%s)", mode, i, c.node.Name)
		}
	}

	m, cands := func() (*Mirror[*fakeNode], []*fakeNode) {
		nodes := make([]*fakeNode, n)
		for i := range nodes {
			nodes[i] = newNode(fmt.Sprintf("n%04d", i), "4", 1)
		}
		return synced(t, nodes...), nodes
	}()
	for _, i := range []int{n - 10, n / 4} {
		bad := newNode(fmt.Sprint("bad", i), "4", 1)
		p := pod(fmt.Sprint("neg", i), "1")
		p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("-1")
		bad.addPod(p)
		cands[i] = bad
	}
	// Pieces at once, and one by one first to last and last to first:
	// the first candidate's error every way.
	reversed := func(pieces int, work func(int)) {
		for i := pieces - 1; i >= 0; i-- {
			work(i)
		}
	}
	for _, p := range []Parallel{par, inOrder, reversed} {
		_, err = m.Score(la, pi, cands, p)
		require.Error(t, err)
		assert.Contains(t, err.Error(), fmt.Sprint("neg", n/4))
		assert.NotContains(t, err.Error(), fmt.Sprint("neg", n-10))
	}
	// The piece holding the first failure left out: which candidate
	// fails first is unknown, so no candidate's error.
	withoutFirst := func(pieces int, work func(int)) {
		for i := 1; i < pieces; i++ {
			work(i)
		}
	}
	_, err = m.Score(la, pi, cands, withoutFirst)
	require.ErrorIs(t, err, ErrPiecesLeftOut)
}

// inOrder is a Parallel running the pieces one by one, first to last.
func inOrder(pieces int, work func(int)) {
	for i := range pieces {
		work(i)
	}
}

// TestInPieces: the ranges cover [0, k) once each; from 2·scorePiece
// on, min(⌊k/scorePiece⌋, 2·GOMAXPROCS) of them, of sizes that differ by
// at most one, each at least scorePiece; one range below (or without a
// Parallel).
func TestInPieces(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		for _, k := range []int{0, 1, 2*scorePiece - 1, 2 * scorePiece, 2*scorePiece + 1, 3*scorePiece - 1, 4*scorePiece + 1, 500, 1000, 5000, 15000, 150000} {
			for _, par := range []Parallel{nil, inOrder} {
				next, ranges, lo1, hi1 := 0, 0, k, 0
				all := inPieces(par, k, func(lo, hi int) {
					require.Equal(t, next, lo, "k=%d: ranges in order, no gap", k)
					lo1, hi1 = min(lo1, hi-lo), max(hi1, hi-lo)
					next = hi
					ranges++
				})
				require.True(t, all)
				require.Equal(t, k, next, "k=%d: covered", k)
				if par == nil || k < 2*scorePiece {
					require.Equal(t, 1, ranges, "k=%d: one range", k)
					continue
				}
				require.Equal(t, min(k/scorePiece, 2*procs), ranges, "procs=%d k=%d: pieces", procs, k)
				require.GreaterOrEqual(t, lo1, scorePiece, "procs=%d k=%d", procs, k)
				require.LessOrEqual(t, hi1-lo1, 1, "procs=%d k=%d: even sizes", procs, k)
			}
		}
	}
}

// TestScorePiecesLeftOut: a Parallel that leaves a piece out (as Until
// does once its context is done), or whose piece panicked and was
// recovered (as ParallelizeUntil does without ReallyCrash; before the
// piece's work or partway through a batch), when finding the
// candidates or when scoring them, fails Score with
// ErrPiecesLeftOut and keeps nothing half-found: the next Score of the
// same list, in one pass, gives every candidate its score.
func TestScorePiecesLeftOut(t *testing.T) {
	atLeastProcs(t, 2) // 3 pieces: partway's node in the middle of piece 1
	const n = 3 * scorePiece
	nodes := make([]*fakeNode, n)
	for i := range nodes {
		nodes[i] = newNode(fmt.Sprintf("n%04d", i), fmt.Sprint(1+i%13), 1)
	}
	la, err := score.NewLeastAllocated()
	require.NoError(t, err)
	pi := podInfo(t, pod("p", "1"))
	// leaky leaves piece 1 out of its call number bad (0: finding, 1:
	// scoring); panicky recovers a panic in piece 1's work there.
	leaky := func(bad int) Parallel {
		call := 0
		return func(pieces int, work func(int)) {
			for i := range pieces {
				if call != bad || i != 1 {
					work(i)
				}
			}
			call++
		}
	}
	panicky := func(bad int) Parallel {
		call := 0
		return func(pieces int, work func(int)) {
			for i := range pieces {
				func() {
					defer func() { _ = recover() }()
					if call == bad && i == 1 {
						panic("piece 1")
					}
					work(i)
				}()
			}
			call++
		}
	}
	// partway: a scorer that panics on a node in the middle of piece 1,
	// after scoring the batch's first nodes, under a pool that recovers.
	partway := score.PerNode("partway", func(_ *snapshot.PodInfo, nd *snapshot.NodeInfo) int64 {
		if nd.Name() == fmt.Sprintf("n%04d", scorePiece+scorePiece/2) {
			panic("partway")
		}
		return 1
	})
	recovering := func(pieces int, work func(int)) {
		for i := range pieces {
			func() {
				defer func() { _ = recover() }()
				work(i)
			}()
		}
	}
	for _, tc := range []struct {
		name   string
		par    Parallel
		scorer score.Scorer
	}{{"finding, left out", leaky(0), la}, {"scoring, left out", leaky(1), la}, {"finding, panicked", panicky(0), la}, {"scoring, panicked", panicky(1), la},
		{"scoring, panicked partway", recovering, partway}} {
		m := synced(t, nodes...)
		_, err := m.Score(tc.scorer, pi, nodes, tc.par)
		require.ErrorIs(t, err, ErrPiecesLeftOut, tc.name)
		sc, err := m.Score(la, pi, nodes, nil)
		require.NoError(t, err, tc.name)
		for _, nd := range nodes {
			got, err := sc.Of(nd)
			require.NoError(t, err)
			require.Equal(t, scratchScore(t, la, pi, nd), got, "%s: %s", tc.name, nd.node.Name)
		}
	}
}

// countingScorer is its Scorer, counting the batches its PodScorers
// score and how often each candidate (at: its index by node name) is in
// one.
type countingScorer struct {
	score.Scorer
	mu      *sync.Mutex
	covered []int
	batches *int
	at      map[string]int
}

func (c countingScorer) Prepare(pod *snapshot.PodInfo, cl score.Cluster) (score.PodScorer, error) {
	ps, err := c.Scorer.Prepare(pod, cl)
	if err != nil || ps == nil {
		return ps, err
	}
	return score.PodScorerFunc(func(nodes []*snapshot.NodeInfo, out []int64) {
		c.mu.Lock()
		*c.batches++
		for _, nd := range nodes {
			c.covered[c.at[nd.Name()]]++
		}
		c.mu.Unlock()
		ps.Score(nodes, out)
	}), nil
}

// atLeastProcs raises GOMAXPROCS to procs for the test (maxPieces
// follows it), restoring it after: a test that counts pieces must not
// depend on the machine's processor count (a container's CPU limit, -cpu).
func atLeastProcs(t *testing.T, procs int) {
	if old := runtime.GOMAXPROCS(0); old < procs {
		runtime.GOMAXPROCS(procs)
		t.Cleanup(func() { runtime.GOMAXPROCS(old) })
	}
}
