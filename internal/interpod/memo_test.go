package interpod_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestMemoScoreMatchesFresh: a cluster changes step by step (pods of
// replicaTemplates added and removed, nodes added, relabelled and
// removed; up to a few hundred nodes, so that the index's tries have
// inner nodes and leaves split and merge), and after each step a
// replica's Score is prepared on a Snapshot, released into the memo, and
// the next one of the same recipe is brought up to date by diffing the
// tries (Immutable): on every node its raw score equals that of a Score
// built from scratch on the same Snapshot. Forks of the Snapshots
// (mutable: never memoised) are prepared and written in between, and
// their Snapshots (Fork.Snapshot) used too, so that a trie node a Fork
// recycles or writes in place under a memoised Score fails here. The
// memo must have served most of the Scores.
func TestMemoScoreMatchesFresh(t *testing.T) {
	tmpls := replicaTemplates()
	served, prepared := 0, 0
	for seed := range uint64(24) {
		r := rand.New(rand.NewPCG(seed, 31))
		c := snapshot.NewCache()
		var nodes []string
		var pods []snapshot.PodKey
		big := 1 + r.IntN(300)
		addNode := func(name string) {
			w := snapshottest.MakeNode(name).Label(v1.LabelHostname, []string{name, "shared"}[min(r.IntN(20), 1)])
			if r.IntN(5) > 0 {
				w.Label(v1.LabelTopologyZone, []string{"z0", "z1", "z2", ""}[r.IntN(4)])
			}
			if r.IntN(4) > 0 {
				w.Label("rack", fmt.Sprint("r", r.IntN(2)))
			}
			require.NoError(t, c.AddNode(w.Obj()))
		}
		next := 0
		addPod := func() {
			p := tmpls[r.IntN(len(tmpls))].DeepCopy()
			if r.IntN(4) == 0 {
				p.Spec.Affinity = nil
			}
			next++
			p.Name = fmt.Sprintf("p%d", next)
			p.UID = types.UID(p.Name)
			p.Spec.NodeName = nodes[r.IntN(len(nodes))]
			require.NoError(t, c.AddPod(p))
			pods = append(pods, snapshot.KeyOf(p))
		}
		for i := range big {
			nodes = append(nodes, fmt.Sprint("n", i))
			addNode(nodes[i])
		}
		for range 2 * big {
			addPod()
		}
		last := map[string]*interpod.Score{}
		for step := range 40 {
			switch op := r.IntN(10); {
			case op < 5:
				for range 1 + r.IntN(3) {
					addPod()
				}
			case op < 8 && len(pods) > 0:
				k := r.IntN(len(pods))
				c.RemovePod(pods[k])
				pods = append(pods[:k], pods[k+1:]...)
			case op < 9:
				name := fmt.Sprint("m", step)
				nodes = append(nodes, name)
				addNode(name)
			default:
				if len(nodes) > 1 {
					k := r.IntN(len(nodes))
					require.NoError(t, c.RemoveNode(nodes[k]))
					nodes = append(nodes[:k], nodes[k+1:]...)
				}
			}
			snap := c.Snapshot()
			var forked *snapshot.Fork
			if step%5 == 4 {
				// A Fork's Snapshot, then the Fork written and reverted
				// and prepared on (mutable), while that Snapshot's Score
				// is in the memo.
				f := snap.Fork()
				f.Fork()
				p := tmpls[r.IntN(len(tmpls))].DeepCopy()
				p.Name, p.UID = "forked", "forked"
				require.NoError(t, f.AddPod(p, nodes[r.IntN(len(nodes))]))
				snap = f.Snapshot()
				forked = f
			}
			ix := interpod.IndexOf(snap)
			require.True(t, interpod.Immutable(snap))
			for _, tmpl := range tmpls {
				pod := tmpl.DeepCopy()
				pod.Name = "incoming"
				terms := interpod.TermsOf(snapshot.MustPodInfo(pod))
				msg := fmt.Sprintf("seed %d step %d pod %s", seed, step, pod.Labels["app"])
				fresh := interpod.NewScore(pod, terms, 1, false, nil, ix, false, snap.NumNodes(), snap.Node)
				s := interpod.NewScore(pod, terms, 1, false, nil, ix, true, snap.NumNodes(), snap.Node)
				require.Equal(t, fresh == nil, s == nil, msg)
				if s == nil {
					continue
				}
				for i := range snap.NumNodes() {
					ni := snap.Node(i)
					require.Equal(t, fresh.Raw(headOf(ni), ni.Labels()), s.Raw(headOf(ni), ni.Labels()), "%s node %s", msg, ni.Name())
				}
				prepared++
				if s == last[pod.Labels["app"]] {
					served++
				}
				last[pod.Labels["app"]] = s
				fresh.Release()
				s.Release()
			}
			if forked != nil {
				// Written in place and recycled under the memo's Scores.
				for i := range 3 {
					forked.Fork()
					q := tmpls[r.IntN(len(tmpls))].DeepCopy()
					q.Name = fmt.Sprint("forked", i)
					q.UID = types.UID(q.Name)
					require.NoError(t, forked.AddPod(q, nodes[r.IntN(len(nodes))]))
					ix := interpod.IndexOf(forked)
					require.False(t, interpod.Immutable(forked))
					pod := tmpls[r.IntN(len(tmpls))].DeepCopy()
					pod.Name = "incoming"
					terms := interpod.TermsOf(snapshot.MustPodInfo(pod))
					interpod.NewScore(pod, terms, 1, false, nil, ix, false, forked.NumNodes(), forked.Node).Release()
					require.NoError(t, forked.Revert())
				}
				require.NoError(t, forked.Revert())
			}
		}
	}
	require.Greater(t, served, prepared/2, "Scores the memo served")
}

// TestMemoConcurrent: goroutines prepare and release Scores of the same
// recipes on Snapshots of one chain, in any order (so that the memo's
// Scores are diffed forwards and backwards), concurrently: every raw
// score equals the one built from scratch for that Snapshot. Under
// -race this also checks that a Score is never in the memo and in use
// at once.
func TestMemoConcurrent(t *testing.T) {
	tmpls := replicaTemplates()
	r := rand.New(rand.NewPCG(7, 7))
	c := snapshot.NewCache()
	var nodes []string
	for i := range 150 {
		nodes = append(nodes, fmt.Sprint("n", i))
		require.NoError(t, c.AddNode(snapshottest.MakeNode(nodes[i]).Label(v1.LabelHostname, nodes[i]).
			Label(v1.LabelTopologyZone, fmt.Sprint("z", i%3)).Label("rack", fmt.Sprint("r", i%2)).Obj()))
	}
	var snaps []*snapshot.Snapshot
	for i := range 400 {
		p := tmpls[r.IntN(len(tmpls))].DeepCopy()
		p.Name, p.UID = fmt.Sprint("p", i), types.UID(fmt.Sprint("p", i))
		p.Spec.NodeName = nodes[r.IntN(len(nodes))]
		require.NoError(t, c.AddPod(p))
		if i >= 300 && i%10 == 0 {
			snaps = append(snaps, c.Snapshot())
		}
	}
	type want struct{ raw []int64 }
	wants := make([][]want, len(snaps))
	terms := make([]*interpod.Terms, len(tmpls))
	for k, tmpl := range tmpls {
		terms[k] = interpod.TermsOf(snapshot.MustPodInfo(tmpl))
	}
	for j, snap := range snaps {
		for k, tmpl := range tmpls {
			var w want
			if s := interpod.NewScore(tmpl, terms[k], 1, false, nil, interpod.IndexOf(snap), false, snap.NumNodes(), snap.Node); s != nil {
				for i := range snap.NumNodes() {
					ni := snap.Node(i)
					w.raw = append(w.raw, s.Raw(headOf(ni), ni.Labels()))
				}
			}
			wants[j] = append(wants[j], w)
		}
	}
	done := make(chan error, 4)
	for g := range 4 {
		go func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 150 {
				j, k := r.IntN(len(snaps)), r.IntN(len(tmpls))
				snap := snaps[j]
				s := interpod.NewScore(tmpls[k], terms[k], 1, false, nil, interpod.IndexOf(snap), true, snap.NumNodes(), snap.Node)
				var got []int64
				if s != nil {
					for i := range snap.NumNodes() {
						ni := snap.Node(i)
						got = append(got, s.Raw(headOf(ni), ni.Labels()))
					}
					s.Release()
				}
				if fmt.Sprint(got) != fmt.Sprint(wants[j][k].raw) {
					done <- fmt.Errorf("snapshot %d template %d: got %v, want %v", j, k, got, wants[j][k].raw)
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		require.NoError(t, <-done)
	}
}
