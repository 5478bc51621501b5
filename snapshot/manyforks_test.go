package snapshot_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// Many views of one node at once: forks of one snapshot, snapshots of
// forks and forks of those, nested layers reverted and committed in any
// order, each checked against its own reference after every change, so
// that a change one of them makes in memory another still reads (a pod
// array, its key hashes, a recycled copy) shows as a wrong pod list.
// TestForkInvariants follows one fork; these follow many.

// checkPods is viewOf plus HasPod for every listed pod (HasPod reads
// podHashes, the other array a claim writes).
func checkPods(t *testing.T, s reader, want map[string]nodeView, what string) {
	t.Helper()
	require.Equal(t, want, viewOf(t, s), what)
	for i := range s.NumNodes() {
		ni := s.Node(i)
		for _, p := range ni.Pods() {
			require.True(t, ni.HasPod(p.Key()), "%s: node %s lists %s but HasPod is false", what, ni.Name(), p.Key())
		}
	}
}

func checkManyForks(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	cache, ref := seedCache(t, rng)
	type frozen struct {
		snap *snapshot.Snapshot
		ref  *refModel
		view map[string]nodeView
	}
	type handle struct {
		f    *snapshot.Fork
		refs []*refModel // refs[d]: the reference at depth d; the last is current
	}
	frozens := []frozen{{cache.Snapshot(), ref, ref.view()}}
	var handles []*handle
	seq := 0
	for step := range 300 {
		what := fmt.Sprintf("seed %d step %d", seed, step)
		k := rng.IntN(24)
		if len(handles) == 0 || k == 0 {
			fr := frozens[rng.IntN(len(frozens))]
			handles = append(handles, &handle{f: fr.snap.Fork(), refs: []*refModel{fr.ref.clone()}})
			continue
		}
		h := handles[rng.IntN(len(handles))]
		cur := h.refs[len(h.refs)-1]
		switch {
		case k == 1: // a snapshot of the fork: frozen from now on
			r := cur.clone()
			frozens = append(frozens, frozen{h.f.Snapshot(), r, r.view()})
		case k <= 4:
			h.f.Fork()
			h.refs = append(h.refs, cur.clone())
		case k <= 7 && h.f.Depth() > 0:
			require.NoError(t, h.f.Revert())
			h.refs = h.refs[:len(h.refs)-1]
		case k <= 9 && h.f.Depth() > 0:
			require.NoError(t, h.f.Commit())
			h.refs = append(h.refs[:len(h.refs)-2], cur)
		default:
			seq++
			o := randomOp(rng, cur, seq)
			if o.kind == 3 && rng.IntN(2) == 0 {
				o = op{kind: 2, node: o.node, pod: st.MakePod(fmt.Sprintf("q%d", seq)).Req("cpu", "10m").Obj()}
			}
			applyFork(t, h.f, cur, o)
		}
		checkPods(t, h.f, h.refs[len(h.refs)-1].view(), what)
		if step%25 == 0 {
			for i, o := range handles {
				checkPods(t, o.f, o.refs[len(o.refs)-1].view(), fmt.Sprintf("%s fork %d", what, i))
			}
			for i, fr := range frozens {
				checkPods(t, fr.snap, fr.view, fmt.Sprintf("%s snapshot %d", what, i))
			}
		}
	}
	for i, fr := range frozens {
		checkPods(t, fr.snap, fr.view, fmt.Sprintf("seed %d: snapshot %d at the end", seed, i))
	}
}

func TestManyForksAndSnapshots(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { checkManyForks(t, seed) })
	}
}

func FuzzManyForksAndSnapshots(f *testing.F) {
	for _, s := range []uint64{0, 7, 1 << 33} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkManyForks(t, seed) })
}

// TestConcurrentForksOfOneSnapshot: goroutines fork one snapshot and add
// pods to the same few nodes; each keeps some pods (Commit) and discards
// others (Revert).
// Every goroutine sees exactly its own pods, and the snapshot none of
// them. Under -race, two forks writing the same memory are also reported.
func TestConcurrentForksOfOneSnapshot(t *testing.T) {
	c := snapshot.NewCache()
	const nodes = 4
	for i := range nodes {
		name := fmt.Sprintf("n%d", i)
		require.NoError(t, c.AddNode(st.MakeNode(name).Capacity("cpu", "64", "memory", "64Gi", "pods", "1000").Obj()))
		for j := range 5 { // 5 pods in an array of 8
			require.NoError(t, c.AddPod(st.MakePod(fmt.Sprintf("b%d-%d", i, j)).Req("cpu", "1m").Node(name).Obj()))
		}
	}
	snap := c.Snapshot()
	want := viewOf(t, snap)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for g := range errs {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			f := snap.Fork()
			kept := map[string][]string{}
			for i := range 3000 {
				node := fmt.Sprintf("n%d", rng.IntN(nodes))
				pi := snapshot.MustPodInfo(st.MakePod(fmt.Sprintf("g%d-%d", g, i)).Req("cpu", "1m").Obj())
				f.Fork()
				if err := f.AddPodInfo(pi, node); err != nil {
					errs[g] = err
					return
				}
				ni := f.Get(node)
				if got, exp := ni.NumPods(), 5+len(kept[node])+1; got != exp || !ni.HasPod(pi.Key()) {
					errs[g] = fmt.Errorf("goroutine %d: node %s has %d pods (HasPod %v), want %d", g, node, got, ni.HasPod(pi.Key()), exp)
					return
				}
				if rng.IntN(200) == 0 && len(kept[node]) < 20 {
					errs[g] = f.Commit()
					kept[node] = append(kept[node], pi.Key().String())
				} else {
					errs[g] = f.Revert()
				}
				if errs[g] != nil {
					return
				}
			}
			for node, pods := range kept {
				ni := f.Get(node)
				for _, k := range pods {
					if !ni.HasPod(snapshot.PodKey{Namespace: "default", Name: k[len("default/"):]}) {
						errs[g] = fmt.Errorf("goroutine %d: node %s lost %s", g, node, k)
						return
					}
				}
				for _, p := range ni.Pods() {
					if n := p.Key().Name; n[0] == 'g' && n[1] != byte('0'+g) {
						errs[g] = fmt.Errorf("goroutine %d: node %s holds another goroutine's pod %s", g, node, n)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, want, viewOf(t, snap), "the snapshot changed")
}

// Pods returns a slice whose capacity is its length: a caller that
// appends to it gets a copy instead of writing into the node's spare
// room, which the node's next pod in the same Fork layer (changed in
// place) takes. Before, the caller's append overwrote that pod.
func TestPodsCannotBeAppendedInPlace(t *testing.T) {
	c := snapshot.NewCache()
	require.NoError(t, c.AddNode(st.MakeNode("n").Capacity("cpu", "8", "pods", "110").Obj()))
	for j := range 5 {
		require.NoError(t, c.AddPod(st.MakePod(fmt.Sprint("p", j)).Req("cpu", "1m").Node("n").Obj()))
	}
	f := c.Snapshot().Fork()
	require.NoError(t, f.AddPodInfo(snapshot.MustPodInfo(st.MakePod("a").Obj()), "n"))
	pods := f.Get("n").Pods()
	require.Equal(t, len(pods), cap(pods))
	require.NoError(t, f.AddPodInfo(snapshot.MustPodInfo(st.MakePod("q").Obj()), "n"))
	_ = append(pods, snapshot.MustPodInfo(st.MakePod("stray").Obj()))
	ni := f.Get("n")
	require.True(t, ni.HasPod(snapshot.PodKey{Namespace: "default", Name: "q"}))
	require.False(t, ni.HasPod(snapshot.PodKey{Namespace: "default", Name: "stray"}))
	require.Len(t, ni.Pods(), 7)
}
