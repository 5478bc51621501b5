package score_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

func ipaWeighted(w int32, key, app string) v1.WeightedPodAffinityTerm {
	return v1.WeightedPodAffinityTerm{Weight: w, PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: key,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
}

// ipaScores prepares s for pod over nodes and bound and returns the raw
// and normalised scores of every node, or nil, nil when skipped.
func ipaScores(t *testing.T, args score.InterPodAffinityArgs, pod *v1.Pod, nodes []*v1.Node, bound ...*v1.Pod) (raw, norm []int64) {
	t.Helper()
	s, err := score.NewInterPodAffinity(args)
	require.NoError(t, err)
	snap := snapshottest.Snapshot(t, nodes, bound...)
	ps, err := s.Prepare(snapshot.MustPodInfo(pod), snap)
	require.NoError(t, err)
	if ps == nil {
		return nil, nil
	}
	var all []*snapshot.NodeInfo
	for _, n := range nodes {
		all = append(all, snap.Get(n.Name))
	}
	raw = make([]int64, len(all))
	ps.Score(all, raw)
	norm = append([]int64(nil), raw...)
	require.NoError(t, ps.(score.Normalizer).Normalize(all, norm))
	return raw, norm
}

func ipaNodes() []*v1.Node {
	return []*v1.Node{
		snapshottest.MakeNode("n1").Label(v1.LabelHostname, "n1").Label(v1.LabelTopologyZone, "a").Obj(),
		snapshottest.MakeNode("n2").Label(v1.LabelHostname, "n2").Label(v1.LabelTopologyZone, "a").Obj(),
		snapshottest.MakeNode("n3").Label(v1.LabelHostname, "n3").Label(v1.LabelTopologyZone, "b").Obj(),
		snapshottest.MakeNode("n4").Label(v1.LabelHostname, "n4").Obj(),
	}
}

// TestIPAScore works the arithmetic of upstream's PreScore, Score and
// NormalizeScore.
func TestIPAScore(t *testing.T) {
	web := func(name, node string) *v1.Pod {
		return snapshottest.MakePod(name).Label("app", "web").Node(node).Obj()
	}
	db := func(name, node string) *v1.Pod {
		return snapshottest.MakePod(name).Label("app", "db").Node(node).Obj()
	}

	t.Run("preferred terms of the incoming pod", func(t *testing.T) {
		// Affinity to web over zone (weight 10), anti-affinity to db per
		// hostname (weight 4). web on n1 and n3: zone a +10, zone b +10;
		// db on n2: hostname n2 −4.
		// raw: n1 = 10, n2 = 10 − 4 = 6, n3 = 10, n4 = 0 (no zone);
		// min 0, max 10: n1 100×10/10 = 100, n2 100×6/10 = 60, n3 100,
		// n4 0.
		pod := snapshottest.MakePod("p").Label("app", "api").Obj()
		pod.Spec.Affinity = &v1.Affinity{
			PodAffinity:     &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{ipaWeighted(10, v1.LabelTopologyZone, "web")}},
			PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{ipaWeighted(4, v1.LabelHostname, "db")}},
		}
		raw, norm := ipaScores(t, score.InterPodAffinityArgs{}, pod, ipaNodes(), web("w1", "n1"), web("w3", "n3"), db("d2", "n2"))
		assert.Equal(t, []int64{10, 6, 10, 0}, raw)
		assert.Equal(t, []int64{100, 60, 100, 0}, norm)
	})

	t.Run("existing pods' terms and hardPodAffinityWeight", func(t *testing.T) {
		// The incoming web pod has no terms. A db pod on n1 requires
		// affinity to web over zone: + hardPodAffinityWeight (5) to zone
		// a. A cache pod on n3 prefers anti-affinity to web per hostname
		// (weight 30): hostname n3 −30.
		// raw: n1 = 5, n2 = 5, n3 = −30, n4 = 0; min −30, max 5, diff 35:
		// n1 = 100×35/35 = 100, n2 = 100, n3 = 0, n4 = int(100×30/35) = 85.
		dbp := db("d1", "n1")
		dbp.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{ipaWeighted(1, v1.LabelTopologyZone, "web").PodAffinityTerm}}}
		cache := snapshottest.MakePod("c3").Label("app", "cache").Node("n3").Obj()
		cache.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{ipaWeighted(30, v1.LabelHostname, "web")}}}
		pod := snapshottest.MakePod("p").Label("app", "web").Obj()
		raw, norm := ipaScores(t, score.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo(int32(5))}, pod, ipaNodes(), dbp, cache)
		assert.Equal(t, []int64{5, 5, -30, 0}, raw)
		assert.Equal(t, []int64{100, 100, 0, 85}, norm)

		// hardPodAffinityWeight 0 ignores the db pod's required term:
		// raw n3 = −30, others 0; min −30, max 0: n3 0, others 100.
		raw, norm = ipaScores(t, score.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo(int32(0))}, pod, ipaNodes(), dbp, cache)
		assert.Equal(t, []int64{0, 0, -30, 0}, raw)
		assert.Equal(t, []int64{100, 100, 0, 100}, norm)

		// ignorePreferredTermsOfExistingPods: the pod has no preferred
		// terms of its own, so it is not scored at all (Skip).
		raw, _ = ipaScores(t, score.InterPodAffinityArgs{IgnorePreferredTermsOfExistingPods: true}, pod, ipaNodes(), dbp, cache)
		assert.Nil(t, raw)
	})

	t.Run("nothing matches: skipped", func(t *testing.T) {
		pod := snapshottest.MakePod("p").Label("app", "web").Obj()
		raw, _ := ipaScores(t, score.InterPodAffinityArgs{}, pod, ipaNodes(), db("d1", "n1"))
		assert.Nil(t, raw)
	})
}

func TestIPAScoreArgs(t *testing.T) {
	_, err := score.NewInterPodAffinity(score.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo(int32(-1))})
	require.ErrorIs(t, err, score.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]")
}

func ptrTo[T any](v T) *T { return &v }

// TestIPAExplainReleasesTables: Explain hands InterPodAffinity's pooled
// tables back when it returns, so a later Explain (or Score) of another
// pod reuses them. Explaining pod A, then pod B (different terms, so
// different counts in the reused tables), then A again must give A's
// first answer, row for row, and agree with a scorer prepared afresh.
func TestIPAExplainReleasesTables(t *testing.T) {
	ipa, err := score.NewInterPodAffinity(score.InterPodAffinityArgs{})
	require.NoError(t, err)
	prof := score.MustProfile(score.Weighted{Scorer: ipa, Weight: 2})
	nodes := ipaNodes()
	web := snapshottest.MakePod("w1").Label("app", "web").Node("n1").Obj()
	web3 := snapshottest.MakePod("w3").Label("app", "web").Node("n3").Obj()
	db := snapshottest.MakePod("d2").Label("app", "db").Node("n2").Obj()
	snap := snapshottest.Snapshot(t, nodes, web, web3, db)
	var infos []*snapshot.NodeInfo
	for _, n := range nodes {
		infos = append(infos, snap.Get(n.Name))
	}
	a := snapshottest.MakePod("a").Label("app", "api").Obj()
	a.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{ipaWeighted(10, v1.LabelTopologyZone, "web")}}}
	b := snapshottest.MakePod("b").Label("app", "api").Obj()
	b.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{ipaWeighted(7, v1.LabelHostname, "db")}}}

	explainAll := func(p *v1.Pod) []score.Explanation {
		var out []score.Explanation
		for i := range infos {
			e, err := prof.Explain(snapshot.MustPodInfo(p), snap, infos, i)
			require.NoError(t, err)
			out = append(out, *e)
		}
		return out
	}
	first := explainAll(a)
	// A: zone a (n1, n2) and zone b (n3) have a web pod: raw 10, 10,
	// 10, 0 (n4 has no zone); normalised 100, 100, 100, 0; × 2.
	_, norm := ipaScores(t, score.InterPodAffinityArgs{}, a, nodes, web, web3, db)
	require.Equal(t, []int64{100, 100, 100, 0}, norm)
	for i, e := range first {
		assert.Equal(t, 2*norm[i], e.Total, e.Node)
	}
	// B: db on n2 only: raw 0, −7, 0, 0; normalised 100, 0, 100, 100.
	for i, e := range explainAll(b) {
		assert.Equal(t, 2*[]int64{100, 0, 100, 100}[i], e.Total, e.Node)
	}
	assert.Equal(t, first, explainAll(a))
}

// TestIPAExplainNilCluster: as Profile.Score's doc says, a nil cluster
// makes InterPodAffinity skip the pod (it counts pods across the
// cluster); with the snapshot it scores. An index out of range names
// Profile.Explain and the pod.
func TestIPAExplainNilCluster(t *testing.T) {
	ipa, err := score.NewInterPodAffinity(score.InterPodAffinityArgs{})
	require.NoError(t, err)
	prof := score.MustProfile(score.Weighted{Scorer: ipa, Weight: 2})
	nodes := ipaNodes()
	snap := snapshottest.Snapshot(t, nodes, snapshottest.MakePod("w1").Label("app", "web").Node("n1").Obj())
	infos := []*snapshot.NodeInfo{snap.Get("n1"), snap.Get("n2")}
	a := snapshottest.MakePod("a").Obj()
	a.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{ipaWeighted(10, v1.LabelHostname, "web")}}}
	pi := snapshot.MustPodInfo(a)

	e, err := prof.Explain(pi, nil, infos, 0)
	require.NoError(t, err)
	assert.True(t, e.Scores[0].Skipped)
	assert.Equal(t, int64(0), e.Total)
	// With the cluster: n1 holds the web pod, raw 10 against n2's 0:
	// normalised 100, × 2.
	e, err = prof.Explain(pi, snap, infos, 0)
	require.NoError(t, err)
	assert.False(t, e.Scores[0].Skipped)
	assert.Equal(t, int64(200), e.Total)

	_, err = prof.Explain(pi, snap, infos, 2)
	require.EqualError(t, err, "score: Profile.Explain: pod default/a: node index 2 out of range [0, 2)")
}
