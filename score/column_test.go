package score_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// hiddenCluster shows a Snapshot or Fork through score.Cluster only: it
// is neither type, so Profile.Score finds no block view for it and reads
// every node's own line (the path without the column).
type hiddenCluster struct{ score.Cluster }

// columnNode is a node with cpu and memory allocatable drawn as in real
// clusters: absent, zero, tiny, realistic, or (huge) 2^56 or more, which
// the fused loop hands to the general per-node methods.
func columnNode(r *rand.Rand, name string) *snapshottest.NodeWrapper {
	amt := func(unit string, real int64) string {
		switch r.IntN(8) {
		case 0:
			return ""
		case 1:
			return "0"
		case 2:
			return fmt.Sprint(1+r.Int64N(4), unit)
		case 3:
			if r.IntN(4) == 0 {
				return fmt.Sprint(int64(1)<<56 + r.Int64N(1<<56))
			}
		}
		return fmt.Sprint(1+r.Int64N(real), unit)
	}
	kv := []string{"pods", "110"}
	if c := amt("m", 96000); c != "" {
		kv = append(kv, "cpu", c)
	}
	if m := amt("", 512<<30); m != "" {
		kv = append(kv, "memory", m)
	}
	return snapshottest.MakeNode(name).Capacity(kv...)
}

func columnPod(r *rand.Rand, name string) *snapshottest.PodWrapper {
	p := snapshottest.MakePod(name)
	if r.IntN(4) > 0 {
		p = p.Req("cpu", fmt.Sprint(r.Int64N(16000), "m"), "memory", fmt.Sprint(r.Int64N(64<<30)))
	}
	return p
}

// candidates draws a candidate list over the nodes of c, in view order:
// all of them in order (the column's common case), a subset from a
// rotating offset (a cycle's feasible nodes), a shuffle, a list with a
// repeated node, one with a node of another snapshot (foreign), or a
// short run of nodes — the last four fall back to the NodeInfos' lines
// in part or whole.
func candidates(r *rand.Rand, c score.Cluster, foreign *snapshot.NodeInfo) ([]*snapshot.NodeInfo, string) {
	n := c.NumNodes()
	all := make([]*snapshot.NodeInfo, n)
	for i := range all {
		all[i] = c.Node(i)
	}
	switch k := r.IntN(7); {
	case k <= 1 || n == 0:
		return all, "all"
	case k == 6:
		off := r.IntN(n)
		few := all[off : off+min(n-off, 1+r.IntN(max(1, n/5)))]
		return few, fmt.Sprintf("%d nodes from %d (too few for the column)", len(few), off)
	case k == 2:
		off := r.IntN(n)
		var out []*snapshot.NodeInfo
		for i := range n {
			if r.IntN(3) > 0 {
				out = append(out, all[(off+i)%n])
			}
		}
		return out, fmt.Sprintf("rotated subset from %d", off)
	case k == 3:
		r.Shuffle(n, func(i, j int) { all[i], all[j] = all[j], all[i] })
		return all, "shuffled"
	case k == 4:
		i := r.IntN(n)
		return append(all[:i+1:i+1], all[i:]...), fmt.Sprintf("node %d twice", i)
	default:
		i := r.IntN(n)
		all[i] = foreign
		return all, fmt.Sprintf("foreign node at %d", i)
	}
}

// Profile.Score reads the fused LeastAllocated + BalancedAllocation pair's
// lines from the pooled run's column (contiguous copies revalidated by
// block version) when the cluster is a Snapshot or Fork: the totals equal
// those of the same profile reading every NodeInfo's own line (the
// cluster hidden behind score.Cluster), through a random walk of Fork
// changes (pods added and removed, nodes added, updated and removed,
// nested Fork / Revert / Commit), scoring the base snapshot and the
// fork in turn with one profile (one column switching between them), on
// every kind of candidate list.
func TestColumnMatchesNodeInfos(t *testing.T) {
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 99))
		c := snapshot.NewCache()
		numNodes := 1 + r.IntN(300)
		for i := range numNodes {
			require.NoError(t, c.AddNode(columnNode(r, fmt.Sprintf("n%03d", i)).Obj()))
			for j := range r.IntN(4) {
				require.NoError(t, c.AddPod(columnPod(r, fmt.Sprintf("b-%d-%d", i, j)).Node(fmt.Sprintf("n%03d", i)).Obj()))
			}
		}
		base := c.Snapshot()
		other := snapshot.NewCache()
		require.NoError(t, other.AddNode(columnNode(r, "n000").Obj()))
		foreign := other.Snapshot().Node(0)

		wc, wm, wLA, wBA := int64(1), int64(1), int64(1), int64(1)
		if seed%2 == 1 {
			wc, wm, wLA, wBA = 1+r.Int64N(100), 1+r.Int64N(100), 1+r.Int64N(10), 1+r.Int64N(10)
		}
		la, err := score.NewLeastAllocated(score.ResourceSpec{Name: "cpu", Weight: wc}, score.ResourceSpec{Name: "memory", Weight: wm})
		require.NoError(t, err)
		ba, err := score.NewBalancedAllocation()
		require.NoError(t, err)
		prof := score.MustProfile(score.Weighted{Scorer: la, Weight: wLA}, score.Weighted{Scorer: ba, Weight: wBA})

		check := func(step int, what string, cl score.Cluster) {
			t.Helper()
			pod := snapshot.MustPodInfo(columnPod(r, "incoming").Obj())
			cands, kind := candidates(r, cl, foreign)
			got := make([]int64, len(cands))
			want := make([]int64, len(cands))
			require.NoError(t, prof.Score(pod, cl, cands, got))
			require.NoError(t, prof.Score(pod, hiddenCluster{cl}, cands, want))
			require.Equal(t, want, got, "seed %d step %d (%s), %s, %d candidates: %s", seed, step, what, kind, len(cands), pod.Key())
		}

		f := base.Fork()
		extra := 0
		for step := range 120 {
			n := f.NumNodes()
			// Half the changes hit one of the first three nodes, so that
			// a node changes again in the layer that already changed it
			// (in place) after the column copied it.
			pick := func() int {
				if r.IntN(2) == 0 {
					return r.IntN(min(n, 3))
				}
				return r.IntN(n)
			}
			name := func() string { return f.Node(pick()).Name() }
			var what string
			switch op := r.IntN(10); {
			case op <= 2 && n > 0:
				node := name()
				what = "add pod on " + node
				require.NoError(t, f.AddPod(columnPod(r, fmt.Sprintf("s-%d", step)).Obj(), node))
			case op == 3 && n > 0:
				ni := f.Node(pick())
				pods := ni.Pods()
				if len(pods) == 0 {
					continue
				}
				what = "remove a pod from " + ni.Name()
				require.NoError(t, f.RemovePod(pods[r.IntN(len(pods))].Key(), ni.Name()))
			case op == 4:
				what = "add a node"
				require.NoError(t, f.AddNode(columnNode(r, fmt.Sprintf("x%03d", extra)).Obj()))
				extra++
			case op == 5 && n > 0:
				node := name()
				what = "update node " + node
				require.NoError(t, f.UpdateNode(columnNode(r, node).Obj()))
			case op == 6 && n > 1:
				node := name()
				what = "remove node " + node
				require.NoError(t, f.RemoveNode(node))
			case op == 7:
				what = "fork"
				f.Fork()
			case op == 8 && f.Depth() > 0:
				what = "revert"
				require.NoError(t, f.Revert())
			case op == 9 && f.Depth() > 0:
				what = "commit"
				require.NoError(t, f.Commit())
			default:
				what = "no change"
			}
			check(step, what, f)
			if step%5 == 0 {
				check(step, "the base snapshot", base)
			}
		}
	}
}

// A nil candidate is an error naming its index whichever way the fused
// pair would read the nodes: a whole-view-sized list (the column's
// case, which skips the nil check when every candidate is located), a
// rotated subset, and a short list.
func TestProfileScoreNilNodeWithColumn(t *testing.T) {
	c := snapshot.NewCache()
	for i := range 130 {
		require.NoError(t, c.AddNode(snapshottest.MakeNode(fmt.Sprintf("n%03d", i)).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	}
	snap := c.Snapshot()
	prof := score.DefaultProfile()
	pod := snapshot.MustPodInfo(snapshottest.MakePod("p").Req("cpu", "100m", "memory", "128Mi").Obj())
	all := make([]*snapshot.NodeInfo, snap.NumNodes())
	for i := range all {
		all[i] = snap.Node(i)
	}
	totals := make([]int64, len(all))
	require.NoError(t, prof.Score(pod, snap, all, totals)) // warm the column
	for _, tc := range []struct {
		name  string
		nodes []*snapshot.NodeInfo
		nilAt int
	}{
		{"whole view", all, 77},
		{"rotated subset", append(append([]*snapshot.NodeInfo{}, all[60:]...), all[:10]...), 3},
		{"short list", all[:5], 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := append([]*snapshot.NodeInfo{}, tc.nodes...)
			nodes[tc.nilAt] = nil
			err := prof.Score(pod, snap, nodes, totals)
			require.ErrorIs(t, err, score.ErrInvalidConfig)
			require.ErrorContains(t, err, fmt.Sprintf("nodes[%d] is nil", tc.nilAt))
		})
	}
}
