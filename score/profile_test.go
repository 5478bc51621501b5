package score_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// Upstream's published vectors: kube-scheduler v1.37.2
// framework/plugins/helper/normalize_score_test.go TestDefaultNormalizeScore.
func TestDefaultNormalizeUpstreamVectors(t *testing.T) {
	tests := []struct {
		reverse      bool
		scores, want []int64
	}{
		{false, []int64{1, 2, 3, 4}, []int64{25, 50, 75, 100}},               // 100×s/4
		{true, []int64{1, 2, 3, 4}, []int64{75, 50, 25, 0}},                  // 100 − 100×s/4
		{false, []int64{1000, 10, 20, 30}, []int64{100, 1, 2, 3}},            // 100×s/1000
		{true, []int64{1000, 10, 20, 30}, []int64{0, 99, 98, 97}},            // 100 − 100×s/1000
		{false, []int64{1, 1, 1, 1}, []int64{100, 100, 100, 100}},            // 100×1/1
		{false, []int64{1000, 1, 1, 1}, []int64{100, 0, 0, 0}},               // 100×1/1000 = 0
		{true, []int64{0, 1, 1, 1}, []int64{100, 0, 0, 0}},                   // 100 − 100×s/1
		{false, []int64{0, 0, 0, 0}, []int64{0, 0, 0, 0}},                    // max 0: unchanged
		{true, []int64{0, 0, 0, 0}, []int64{100, 100, 100, 100}},             // max 0, reverse: all 100
		{false, []int64{math.MaxInt64, math.MaxInt64 / 2}, []int64{100, 49}}, // no overflow in 100×s
	}
	for i, tc := range tests {
		t.Run(fmt.Sprintf("case_%d", i), func(t *testing.T) {
			s := append([]int64(nil), tc.scores...)
			score.DefaultNormalize(s, tc.reverse)
			require.Equal(t, tc.want, s)
		})
	}
}

// constant scores every node c (no preparation), for profile tests.
func constant(name string, c int64) score.Scorer {
	return score.PerNode(name, func(*snapshot.PodInfo, *snapshot.NodeInfo) int64 { return c })
}

func TestNewProfile(t *testing.T) {
	p, err := score.NewProfile(score.Weighted{Scorer: constant("a", 1)}, score.Weighted{Scorer: constant("b", 1), Weight: 3})
	require.NoError(t, err)
	ws := p.Scorers()
	require.Equal(t, int64(1), ws[0].Weight, "weight 0 becomes 1")
	require.Equal(t, int64(3), ws[1].Weight)

	for _, tc := range []struct {
		name    string
		entries []score.Weighted
		msg     string
	}{
		{"negative weight", []score.Weighted{{Scorer: constant("a", 1), Weight: -1}}, `scorer "a": weight -1 is negative`},
		{"nil scorer", []score.Weighted{{}}, "entry 0: scorer is nil"},
		{"duplicate name", []score.Weighted{{Scorer: constant("a", 1)}, {Scorer: constant("a", 2)}}, `scorer "a" appears twice`},
		{"weight × MaxScore overflows", []score.Weighted{{Scorer: constant("a", 1), Weight: math.MaxInt64/100 + 1}}, "could overflow"},
		// MaxInt64/100 × 100 leaves 7 < 100 for the next scorer.
		{"total overflows", []score.Weighted{{Scorer: constant("a", 1), Weight: math.MaxInt64 / 100}, {Scorer: constant("b", 1)}}, `scorer "b": weight 1: total score of the profile could overflow`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := score.NewProfile(tc.entries...)
			require.ErrorIs(t, err, score.ErrInvalidConfig)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

// profileCluster is 300 nodes (more than one 128-node chunk) of varied size
// and use, with taints, labels and images, and a pod touching every
// default scorer.
func profileCluster(t *testing.T) (*snapshot.Snapshot, []*snapshot.NodeInfo, *v1.Pod) {
	t.Helper()
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range 300 {
		n := node(fmt.Sprintf("n%03d", i), "cpu", fmt.Sprint(4+i%13), "memory", fmt.Sprintf("%dGi", 8+i%29))
		n.Labels["zone"] = fmt.Sprintf("z%d", i%3)
		if i%7 == 0 {
			n.Spec.Taints = []v1.Taint{prefer("spot", "true")}
		}
		if i%5 == 0 {
			n.Status.Images = []v1.ContainerImage{{Names: []string{"app:v1"}, SizeBytes: 500 * mb}}
		}
		nodes = append(nodes, n)
		pods = append(pods, pod(n.Name, req("cpu", fmt.Sprintf("%dm", 100*(i%31)), "memory", fmt.Sprintf("%dMi", 97*(i%17)))))
	}
	snap, infos := cluster(t, nodes, pods...)
	incoming := pod("", req("cpu", "1500m", "memory", "3Gi"))
	incoming.Spec.Containers[0].Image = "app:v1"
	incoming.Spec.Affinity = &v1.Affinity{NodeAffinity: preferred(term(5, in("zone", "z1")))}
	return snap, infos, incoming
}

func TestProfileScoreMatchesScorers(t *testing.T) {
	snap, nodes, p := profileCluster(t)
	prof := score.DefaultProfile()
	totals := make([]int64, len(nodes)+3)
	for i := range totals {
		totals[i] = -7 // Score overwrites totals[:len(nodes)] only
	}
	require.NoError(t, prof.Score(podInfo(t, p), snap, nodes, totals))
	require.Equal(t, []int64{-7, -7, -7}, totals[len(nodes):])

	// Reference: each scorer on its own over all nodes, weighted and summed.
	want := make([]int64, len(nodes))
	for _, w := range prof.Scorers() {
		got, skipped := final(t, w.Scorer, p, snap, nodes)
		if skipped {
			continue
		}
		for i := range want {
			want[i] += w.Weight * got[i]
		}
	}
	require.Equal(t, want, totals[:len(nodes)])

	// Explain's total and rows agree with Score for every node.
	for i := range nodes {
		e, err := prof.Explain(podInfo(t, p), snap, nodes, i)
		require.NoError(t, err)
		require.Equalf(t, totals[i], e.Total, "Explain(%s).Total", nodes[i].Name())
		var sum int64
		for _, r := range e.Scores {
			require.Equal(t, r.Weight*r.Normalized, r.Contribution)
			sum += r.Contribution
		}
		require.Equal(t, e.Total, sum)
	}
}

func TestProfileSkippedScorer(t *testing.T) {
	// BalancedAllocation skips a best-effort pod; LeastAllocated then alone: 100 on an empty node.
	snap, nodes := cluster(t, []*v1.Node{node("n", "cpu", "4", "memory", "8Gi")})
	prof := score.MustProfile(score.Weighted{Scorer: mustLeast(t)}, score.Weighted{Scorer: mustBalanced(t), Weight: 5})
	totals := make([]int64, 1)
	require.NoError(t, prof.Score(podInfo(t, pod("")), snap, nodes, totals))
	require.Equal(t, int64(100), totals[0])
	e, err := prof.Explain(podInfo(t, pod("")), snap, nodes, 0)
	require.NoError(t, err)
	require.True(t, e.Scores[1].Skipped)
	require.Equal(t, int64(0), e.Scores[1].Contribution)
}

func TestProfileOutOfRange(t *testing.T) {
	snap, nodes := cluster(t, []*v1.Node{node("n1", "cpu", "1"), node("n2", "cpu", "1")})
	for _, bad := range []int64{101, -1} {
		prof := score.MustProfile(score.Weighted{Scorer: constant("ok", 50)}, score.Weighted{Scorer: constant("bad", bad)})
		err := prof.Score(podInfo(t, pod("")), snap, nodes, make([]int64, 2))
		require.ErrorIs(t, err, score.ErrScoreOutOfRange)
		require.ErrorContains(t, err, fmt.Sprintf(`scorer "bad" gave node n1 the score %d`, bad))
		_, err = prof.Explain(podInfo(t, pod("")), snap, nodes, 1)
		require.ErrorIs(t, err, score.ErrScoreOutOfRange)
		require.ErrorContains(t, err, "node n2")
	}

	// A normalising scorer whose result leaves the range: negative preferred
	// weights normalise to negative scores (upstream fails the cycle too).
	// A pod with one is refused at parse, as by the API server; the
	// scheduler's added affinity can still have one.
	na, err := score.NewNodeAffinity(preferred(term(-3, in("k", "v"))))
	require.NoError(t, err)
	nodes2 := []*v1.Node{labelled("a", map[string]string{"k": "v"}), labelled("b", nil)}
	snap2, infos := cluster(t, nodes2)
	prof := score.MustProfile(score.Weighted{Scorer: na})
	err = prof.Score(podInfo(t, pod("")), snap2, infos, make([]int64, 2))
	require.ErrorIs(t, err, score.ErrScoreOutOfRange)
	require.ErrorContains(t, err, `scorer "NodeAffinity" gave node a the score -3`)
}

func TestProfilePrepareError(t *testing.T) {
	na, err := score.NewNodeAffinity(nil)
	require.NoError(t, err)
	snap, nodes := cluster(t, []*v1.Node{labelled("a", nil)})
	p := affinityPod(preferred(term(1, v1.NodeSelectorRequirement{Key: "k", Operator: v1.NodeSelectorOpGt, Values: []string{"x"}})))
	err = score.MustProfile(score.Weighted{Scorer: na}).Score(podInfo(t, p), snap, nodes, make([]int64, 1))
	require.ErrorIs(t, err, score.ErrInvalidPod)
	require.ErrorContains(t, err, `scorer "NodeAffinity": pod default/incoming`)
	require.ErrorContains(t, err, "for 'Gt', 'Lt' operators, the value must be an integer")
}

func TestProfileEdges(t *testing.T) {
	snap, nodes := cluster(t, []*v1.Node{node("n", "cpu", "1")})
	var empty score.Profile
	totals := []int64{9}
	require.NoError(t, empty.Score(podInfo(t, pod("")), snap, nodes, totals))
	require.Equal(t, []int64{0}, totals, "the zero Profile scores 0")

	require.NoError(t, score.DefaultProfile().Score(podInfo(t, pod("")), snap, nil, nil), "no candidates")
	require.Panics(t, func() { _ = score.DefaultProfile().Score(podInfo(t, pod("")), snap, nodes, nil) })
	_, err := score.DefaultProfile().Explain(podInfo(t, pod("")), snap, nodes, 1)
	require.ErrorContains(t, err, "node index 1 out of range")
}

func TestProfileConcurrent(t *testing.T) {
	snap, nodes, p := profileCluster(t)
	prof := score.DefaultProfile()
	pi := podInfo(t, p)
	want := make([]int64, len(nodes))
	require.NoError(t, prof.Score(pi, snap, nodes, want))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got := make([]int64, len(nodes))
			for range 20 {
				if err := prof.Score(pi, snap, nodes, got); err != nil {
					t.Error(err)
					return
				}
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("concurrent Score(%s) = %d, want %d", nodes[i].Name(), got[i], want[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// Explain with a nil pod or a nil candidate is an error, as Score's.
func TestExplainNilArguments(t *testing.T) {
	snap, nodes := cluster(t, []*v1.Node{imageNode("n", image{400 * mb, []string{"a:latest"}})})
	_, err := score.DefaultProfile().Explain(nil, snap, nodes, 0)
	require.ErrorIs(t, err, score.ErrInvalidPod)
	pod := podInfo(t, imagePod([]string{"a"}, nil))
	_, err = score.DefaultProfile().Explain(pod, snap, []*snapshot.NodeInfo{nodes[0], nil}, 0)
	require.ErrorIs(t, err, score.ErrInvalidConfig)
}

// The profile's fused LeastAllocated+BalancedAllocation pass equals the two
// scorers run on their own, weighted and summed, on clusters of up to 300
// nodes (several blocks and chunks) that mix realistic nodes with edge
// cases (no, zero, 1 or near-MaxInt64 allocatable; pods without requests,
// so NonZeroRequested differs from Requested; over-committed nodes), for
// unit and other weights, with another scorer in between.
func TestProfileFusedPairMatchesScorers(t *testing.T) {
	la := func(rs ...score.ResourceSpec) score.Scorer { return mustScorer(score.NewLeastAllocated(rs...)) }
	ba := mustScorer(score.NewBalancedAllocation())
	profiles := []struct {
		name    string
		entries []score.Weighted
	}{
		{"unit", []score.Weighted{{Scorer: la()}, {Scorer: ba}}},
		{"profile weights", []score.Weighted{{Scorer: ba, Weight: 5}, {Scorer: score.NewTaintToleration()}, {Scorer: la(), Weight: 2}}},
		{"resource weights", []score.Weighted{{Scorer: la(score.ResourceSpec{Name: "memory", Weight: 7}, score.ResourceSpec{Name: "cpu", Weight: 3})}, {Scorer: ba}}},
		{"largest weights", []score.Weighted{{Scorer: la(score.ResourceSpec{Name: "cpu", Weight: 100}, score.ResourceSpec{Name: "memory", Weight: 100})}, {Scorer: ba, Weight: 100}}},
	}
	for seed := range uint64(40) {
		// Odd seeds without the AVX2 loop (the scalar loop every
		// processor without AVX2 runs).
		restore := score.SetVecKernel(seed%2 == 0)
		t.Cleanup(restore) // if the seed fails; restored below otherwise
		r := rand.New(rand.NewPCG(seed, 0xf05e))
		snap, nodes, pod := mixedCluster(t, r, 1+r.IntN(300))
		for _, pr := range profiles {
			prof := score.MustProfile(pr.entries...)
			got := make([]int64, len(nodes))
			require.NoError(t, prof.Score(pod, snap, nodes, got))
			want := make([]int64, len(nodes))
			for _, w := range prof.Scorers() {
				ps, err := w.Scorer.Prepare(pod, snap)
				require.NoError(t, err)
				if ps == nil {
					continue
				}
				out := make([]int64, len(nodes))
				ps.Score(nodes, out)
				if nz, ok := ps.(score.Normalizer); ok {
					require.NoError(t, nz.Normalize(nodes, out))
				}
				for i := range want {
					want[i] += w.Weight * out[i]
				}
			}
			for i := range want {
				require.Equalf(t, want[i], got[i], "seed %d, %s: total(%s) = %d, want %d", seed, pr.name, nodes[i].Name(), got[i], want[i])
			}
		}
		restore()
	}
}

// mixedCluster is n nodes, most with realistic cpu and memory and 0–4
// bound pods (some containers without requests, some over-committing the
// node), about one in 40 with an edge-case allocatable and one in 40 with
// 32 TiB of memory or more; and an incoming
// pod with cpu and memory requests (either possibly absent).
func mixedCluster(t *testing.T, r *rand.Rand, n int) (*snapshot.Snapshot, []*snapshot.NodeInfo, *snapshot.PodInfo) {
	c := snapshot.NewCache()
	requests := func(cpu, mem int64) v1.ResourceList {
		rl := v1.ResourceList{}
		if r.IntN(6) > 0 {
			rl[v1.ResourceCPU] = qty(snapshot.CPU, r.Int64N(cpu))
		}
		if r.IntN(6) > 0 {
			rl[v1.ResourceMemory] = qty(snapshot.Memory, r.Int64N(mem))
		}
		return rl
	}
	for i := range n {
		cpu, mem := 1000+r.Int64N(128000), int64(1<<30)+r.Int64N(1<<40)
		if r.IntN(40) == 0 {
			// 32 TiB or more: too large for the vector loop's exact
			// float64 arithmetic, scored by the scalar one.
			mem = 1<<45 + r.Int64N(1<<50)
		}
		alloc := v1.ResourceList{v1.ResourceCPU: qty(snapshot.CPU, cpu), v1.ResourceMemory: qty(snapshot.Memory, mem)}
		if r.IntN(40) == 0 {
			alloc = randomList(r)
		}
		node := snapshottest.MakeNode(fmt.Sprintf("n%03d", i)).Taint("t", "1", v1.TaintEffectPreferNoSchedule).Obj()
		node.Status.Allocatable = alloc
		require.NoError(t, c.AddNode(node))
		for j := range r.IntN(5) {
			p := snapshottest.MakePod(fmt.Sprintf("p%d-%d", i, j)).Node(node.Name).Obj()
			p.Spec.Containers = []v1.Container{{Name: "a", Resources: v1.ResourceRequirements{Requests: requests(cpu/2, mem/2)}}}
			if r.IntN(3) == 0 {
				p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "b"})
			}
			require.NoError(t, c.AddPod(p))
		}
	}
	snap := c.Snapshot()
	nodes := make([]*snapshot.NodeInfo, 0, n)
	for _, ni := range snap.Nodes() {
		nodes = append(nodes, ni)
	}
	in := snapshottest.MakePod("incoming").Obj()
	in.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: requests(16000, 64<<30)}}}
	return snap, nodes, snapshot.MustPodInfo(in)
}
