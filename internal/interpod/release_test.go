package interpod_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestReleasedReuseMatchesFresh: on random clusters, a sequence of pods
// (the replica templates, on the index's counts and on counting alike)
// prepared each on the storage the previous one released gives, on
// every node, the verdict and raw score of a Filter and Score prepared
// on new storage; and the released storage was reused. A table not
// emptied by Release (a stale slot, count or key) fails here.
func TestReleasedReuseMatchesFresh(t *testing.T) {
	tmpls := replicaTemplates()
	reusedF, reusedS, nF, nS := 0, 0, 0, 0
	var lastF *interpod.Filter
	var lastS *interpod.Score
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 29))
		nodes, pods := randomCluster(r, tmpls)
		snap := snapshottest.Snapshot(t, nodes, pods...)
		ixs := []interpod.Index{interpod.IndexOf(snap), scanOnly{interpod.ScanIndex(snap.NumNodes(), snap.Node)}}
		for step := range 12 {
			pod := tmpls[r.IntN(len(tmpls))].DeepCopy()
			pod.Name = "incoming"
			terms := interpod.TermsOf(snapshot.MustPodInfo(pod))
			ix := ixs[r.IntN(2)]
			hard := int32(r.IntN(3))
			msg := fmt.Sprintf("seed %d step %d pod %s", seed, step, pod.Labels["app"])

			var want []any
			answers := func(f *interpod.Filter, s *interpod.Score) (out []any) {
				for i := range snap.NumNodes() {
					ni := snap.Node(i)
					if f != nil {
						out = append(out, f.Check(headOf(ni), ni.Labels()))
					}
					if s != nil {
						out = append(out, s.Raw(headOf(ni), ni.Labels()))
					}
				}
				return out
			}
			interpod.FreshPools()
			want = answers(interpod.NewFilter(pod, terms, nil, ix, false, snap.NumNodes(), snap.Node),
				interpod.NewScore(pod, terms, hard, false, nil, ix, false, snap.NumNodes(), snap.Node))
			interpod.FreshPools()
			if lastF != nil {
				lastF.Release()
				lastF.Release() // a second Release is a no-op
			}
			if lastS != nil {
				lastS.Release()
			}
			f := interpod.NewFilter(pod, terms, nil, ix, false, snap.NumNodes(), snap.Node)
			s := interpod.NewScore(pod, terms, hard, false, nil, ix, false, snap.NumNodes(), snap.Node)
			require.Equal(t, want, answers(f, s), msg)
			if f != nil && lastF != nil {
				nF++
				if f == lastF {
					reusedF++
				}
			}
			if s != nil && lastS != nil {
				nS++
				if s == lastS {
					reusedS++
				}
			}
			lastF, lastS = f, s
		}
	}
	// sync.Pool may drop a Put (always under the race detector's
	// randomisation for a quarter of them); most are reused.
	require.Greater(t, reusedF, nF/2, "released Filters reused")
	require.Greater(t, reusedS, nS/2, "released Scores reused")
}
