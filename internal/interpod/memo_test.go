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

// TestMemoMatchesFresh: a cluster changes step by step (pods of
// replicaTemplates added and removed, nodes added, relabelled and
// removed; up to a few hundred nodes, so that the index's tries have
// inner nodes and leaves split and merge), and after each step a
// replica's Score is prepared on a Snapshot, released into the memo, and
// the next one of the same recipe is brought up to date by diffing the
// tries (Immutable): on every node its raw score equals that of a Score
// built from scratch on the same Snapshot; the same for the Filter's
// verdict (memoised for pods without required affinity terms). Forks of the Snapshots
// (mutable: never memoised) are prepared and written in between, and
// their Snapshots (Fork.Snapshot) used too, so that a trie node a Fork
// recycles or writes in place under a memoised Score fails here. The
// memo must have served most of the Scores and Filters it could.
func TestMemoMatchesFresh(t *testing.T) {
	tmpls := replicaTemplates()
	served, prepared := 0, 0
	servedF, preparedF := 0, 0
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
		lastF := map[string]*interpod.Filter{}
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
				freshF := interpod.NewFilter(pod, terms, nil, ix, false, snap.NumNodes(), snap.Node)
				f := interpod.NewFilter(pod, terms, nil, ix, true, snap.NumNodes(), snap.Node)
				fresh := interpod.NewScore(pod, terms, 1, false, nil, ix, false, snap.NumNodes(), snap.Node)
				s := interpod.NewScore(pod, terms, 1, false, nil, ix, true, snap.NumNodes(), snap.Node)
				require.Equal(t, []bool{freshF == nil, fresh == nil}, []bool{f == nil, s == nil}, msg)
				// Memoised Filters: no required affinity terms, and
				// anti-affinity counts the index keeps (static terms).
				memoable := f != nil
				if terms != nil {
					memoable = memoable && len(terms.RequiredAffinity) == 0
					for i := range terms.RequiredAntiAffinity {
						memoable = memoable && terms.RequiredAntiAffinity[i].Static()
					}
				}
				app := pod.Labels["app"]
				if memoable {
					preparedF++
					if f == lastF[app] {
						servedF++
					}
				}
				if s != nil {
					prepared++
					if s == last[app] {
						served++
					}
				}
				lastF[app], last[app] = f, s
				wantV, wantR := answersOf(snap, freshF, fresh)
				gotV, gotR := answersOf(snap, f, s)
				require.Equal(t, wantV, gotV, "%s: verdicts per node", msg)
				require.Equal(t, wantR, gotR, "%s: raw scores per node", msg)
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
	require.Greater(t, servedF, preparedF/2, "Filters the memo served")
}

// TestMemoConcurrent: goroutines prepare and release Filters and Scores of the same
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
	type want struct {
		raw      []int64
		verdicts []interpod.Result
	}
	wants := make([][]want, len(snaps))
	terms := make([]*interpod.Terms, len(tmpls))
	for k, tmpl := range tmpls {
		terms[k] = interpod.TermsOf(snapshot.MustPodInfo(tmpl))
	}
	for j, snap := range snaps {
		for k, tmpl := range tmpls {
			ix := interpod.IndexOf(snap)
			var w want
			w.verdicts, w.raw = answersOf(snap,
				interpod.NewFilter(tmpl, terms[k], nil, ix, false, snap.NumNodes(), snap.Node),
				interpod.NewScore(tmpl, terms[k], 1, false, nil, ix, false, snap.NumNodes(), snap.Node))
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
				ix := interpod.IndexOf(snap)
				verdicts, got := answersOf(snap,
					interpod.NewFilter(tmpls[k], terms[k], nil, ix, true, snap.NumNodes(), snap.Node),
					interpod.NewScore(tmpls[k], terms[k], 1, false, nil, ix, true, snap.NumNodes(), snap.Node))
				if w := wants[j][k]; fmt.Sprint(verdicts, got) != fmt.Sprint(w.verdicts, w.raw) {
					done <- fmt.Errorf("snapshot %d template %d: verdicts %v raw %v, want %v %v", j, k, verdicts, got, w.verdicts, w.raw)
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

// TestMemoRebuilds covers the memo's way out: a Score (Filter) memoised
// on one cluster and asked for on an unrelated one (no trie node
// shared: the difference passes half a build, so it is rebuilt), and a
// replica moved across 300 nodes one step at a time (each step leaves
// a zero entry in the memoised tables, until a table holds more than
// twice its values and is rebuilt). Every step's verdicts and raw
// scores equal a fresh build's.
func TestMemoRebuilds(t *testing.T) {
	tmpls := replicaTemplates()
	web, api := tmpls[0], tmpls[2] // required hostname anti-affinity; preferred hostname affinity
	check := func(snap *snapshot.Snapshot, msg string) {
		t.Helper()
		ix := interpod.IndexOf(snap)
		for _, tmpl := range []*v1.Pod{web, api} {
			terms := interpod.TermsOf(snapshot.MustPodInfo(tmpl))
			wantV, wantR := answersOf(snap,
				interpod.NewFilter(tmpl, terms, nil, ix, false, snap.NumNodes(), snap.Node),
				interpod.NewScore(tmpl, terms, 1, false, nil, ix, false, snap.NumNodes(), snap.Node))
			gotV, gotR := answersOf(snap,
				interpod.NewFilter(tmpl, terms, nil, ix, true, snap.NumNodes(), snap.Node),
				interpod.NewScore(tmpl, terms, 1, false, nil, ix, true, snap.NumNodes(), snap.Node))
			require.Equal(t, wantV, gotV, "%s %s: verdicts per node", msg, tmpl.Name)
			require.Equal(t, wantR, gotR, "%s %s: raw scores per node", msg, tmpl.Name)
		}
	}
	cluster := func(prefix string, n int) *snapshot.Cache {
		c := snapshot.NewCache()
		for i := range n {
			name := fmt.Sprint(prefix, i)
			require.NoError(t, c.AddNode(snapshottest.MakeNode(name).Label(v1.LabelHostname, name).Label(v1.LabelTopologyZone, fmt.Sprint("z", i%3)).Obj()))
			for j, tmpl := range []*v1.Pod{web, api} {
				p := tmpl.DeepCopy()
				p.Name = fmt.Sprintf("%s-%d-%d", prefix, i, j)
				p.UID = types.UID(p.Name)
				p.Spec.NodeName = name
				require.NoError(t, c.AddPod(p))
			}
		}
		return c
	}
	check(cluster("a", 200).Snapshot(), "cluster a")
	check(cluster("b", 200).Snapshot(), "cluster b, unrelated")

	c := snapshot.NewCache()
	for i := range 300 {
		name := fmt.Sprint("m", i)
		require.NoError(t, c.AddNode(snapshottest.MakeNode(name).Label(v1.LabelHostname, name).Obj()))
	}
	var keys []snapshot.PodKey
	for step := range 300 {
		for _, k := range keys {
			c.RemovePod(k)
		}
		keys = keys[:0]
		for j, tmpl := range []*v1.Pod{web, api} {
			p := tmpl.DeepCopy()
			p.Name = fmt.Sprintf("moved-%d-%d", step, j)
			p.UID = types.UID(p.Name)
			p.Spec.NodeName = fmt.Sprint("m", step)
			require.NoError(t, c.AddPod(p))
			keys = append(keys, snapshot.KeyOf(p))
		}
		check(c.Snapshot(), fmt.Sprint("step ", step))
	}
}

// answersOf is f's verdict and s's raw score on every node of snap (nil
// for a nil f or s); it releases both.
func answersOf(snap *snapshot.Snapshot, f *interpod.Filter, s *interpod.Score) (verdicts []interpod.Result, raw []int64) {
	for i := range snap.NumNodes() {
		ni := snap.Node(i)
		if f != nil {
			verdicts = append(verdicts, f.Check(headOf(ni), ni.Labels()))
		}
		if s != nil {
			raw = append(raw, s.Raw(headOf(ni), ni.Labels()))
		}
	}
	f.Release()
	s.Release()
	return verdicts, raw
}
