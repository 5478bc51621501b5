package framework

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

func mustNew(t testing.TB, cfg Config) *Scheduler {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	return s
}

func TestNumFeasibleNodesToFind(t *testing.T) {
	tests := []struct {
		percentage int32
		nodes      int
		want       int
	}{
		{0, 0, 0},
		{0, 50, 50},     // below 100: every node
		{0, 99, 99},     // below 100: every node
		{0, 100, 100},   // 50 - 0 = 50 %: 50, raised to 100
		{0, 1000, 420},  // 50 - 1000/125 = 42 %
		{0, 5000, 500},  // 50 - 40 = 10 %
		{0, 5625, 281},  // 50 - 45 = 5 %
		{0, 15000, 750}, // 50 - 120 < 5: floor 5 %
		{100, 5000, 5000},
		{1, 1000, 100},  // 10, raised to 100
		{30, 1000, 300}, // fixed
		{10, 99, 99},    // small clusters are searched whole
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("pct=%d/nodes=%d", tc.percentage, tc.nodes), func(t *testing.T) {
			assert.Equal(t, tc.want, numFeasibleNodesToFind(tc.percentage, tc.nodes))
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		msg  string
	}{
		{name: "percentage above 100", cfg: Config{PercentageOfNodesToScore: 101}, msg: "percentageOfNodesToScore 101"},
		{name: "negative percentage", cfg: Config{PercentageOfNodesToScore: -1}, msg: "percentageOfNodesToScore -1"},
		{name: "negative parallelism", cfg: Config{Parallelism: -2}, msg: "parallelism -2"},
		{name: "nil filter", cfg: Config{Filters: []Filter{nodeNamePlugin{}, nil}}, msg: "filters[1] is nil"},
		{name: "bad filter args", cfg: Config{Filters: []Filter{&nodeResourcesFitPlugin{IgnoredResourceGroups: []string{"a/b"}}}}, msg: "filters[0]: NodeResourcesFit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	_, err := New(Config{})
	require.NoError(t, err)
}

func TestSchedulePodPicksHighestTotal(t *testing.T) {
	nodes := []*v1.Node{
		mkNode("small").Capacity("cpu", "2", "memory", "4Gi", "pods", "110").Obj(),
		mkNode("big").Capacity("cpu", "16", "memory", "32Gi", "pods", "110").Obj(),
		mkNode("tainted").Capacity("cpu", "64", "memory", "256Gi", "pods", "110").Taint("x", "", v1.TaintEffectNoSchedule).Obj(),
	}
	snap := snapshottest.Snapshot(t, nodes)
	pod := snapshot.MustPodInfo(mkPod("p").Req("cpu", "1", "memory", "2Gi").Obj())
	s := mustNew(t, Config{Breakdown: true})
	d, err := s.SchedulePod(snap, pod)
	require.NoError(t, err)
	require.True(t, d.Scheduled(), "diagnosis: %v", d.Diagnosis)
	assert.Equal(t, "big", d.Node)
	assert.Equal(t, 2, d.Feasible)
	assert.Equal(t, 3, d.Evaluated)
	require.NotNil(t, d.Breakdown)
	assert.Equal(t, d.Total, d.Breakdown.Total, "breakdown total")
	assert.Equal(t, "big", d.Breakdown.Node)

	// The total is the profile's for that node among the feasible ones.
	feasible := []*snapshot.NodeInfo{snap.Get("small"), snap.Get("big")}
	totals := make([]int64, 2)
	require.NoError(t, score.DefaultProfile().Score(pod, snap, feasible, totals))
	assert.Equal(t, totals[1], d.Total)
	assert.Greater(t, totals[1], totals[0])
}

func TestSchedulePodUnschedulable(t *testing.T) {
	five := func() []*v1.Node {
		var ns []*v1.Node
		for i := range 5 {
			ns = append(ns, mkNode(fmt.Sprintf("n%d", i)).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj())
		}
		return ns
	}
	tests := []struct {
		name    string
		nodes   []*v1.Node
		bound   []*v1.Pod
		pod     *v1.Pod
		want    string
		plugins []string
	}{
		{
			name:    "required affinity names a node that does not exist",
			nodes:   five(),
			pod:     mkPod("p").Req("cpu", "1").RequiredNodeName("ghost").Obj(),
			want:    "0/5 nodes are available: 5 node(s) didn't satisfy plugin(s) [NodeAffinity].",
			plugins: []string{"NodeAffinity"},
		},
		{
			name:    "spec.nodeName names a node that does not exist",
			nodes:   five(),
			pod:     mkPod("p").Req("cpu", "1").Node("ghost").Obj(),
			want:    "0/5 nodes are available: 5 node(s) didn't satisfy plugin(s) [NodeName].",
			plugins: []string{"NodeName"},
		},
		{
			name:    "nodeName and affinity name different nodes",
			nodes:   five(),
			pod:     mkPod("p").Node("n1").RequiredNodeName("n2").Obj(),
			want:    "0/5 nodes are available: node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously.",
			plugins: []string{"NodeAffinity", "NodeName"},
		},
		{
			name:    "affinity names an existing node that is full",
			nodes:   five(),
			bound:   []*v1.Pod{mkPod("hog").Req("cpu", "4").Node("n3").Obj()},
			pod:     mkPod("p").Req("cpu", "1").RequiredNodeName("n3").Obj(),
			want:    "0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't satisfy plugin(s) [NodeAffinity].",
			plugins: []string{"NodeAffinity", "NodeResourcesFit"},
		},
		// A metadata.name field selector with two values is refused when
		// the pod is parsed, as the API server refuses it
		// (snapshot's TestInvalidSchedulingFieldsRejected).
		{
			name:  "conflicting name requirements",
			nodes: five(),
			pod: func() *v1.Pod {
				p := mkPod("p").Obj()
				p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{fieldsTerm(req("metadata.name", v1.NodeSelectorOpIn, "n1"), req("metadata.name", v1.NodeSelectorOpIn, "n2"))},
				}}}
				return p
			}(),
			want:    "0/5 nodes are available: pod affinity terms conflict.",
			plugins: []string{"NodeAffinity"},
		},
		{
			name: "empty cluster",
			pod:  mkPod("p").Obj(),
			want: "no nodes available to schedule pods",
		},
		{
			name: "taints and resources, first failing filter wins",
			nodes: []*v1.Node{
				mkNode("t1").Capacity("cpu", "1", "pods", "110").Taint("a", "", v1.TaintEffectNoSchedule).Obj(),
				mkNode("t2").Capacity("cpu", "1", "pods", "110").Taint("a", "", v1.TaintEffectNoExecute).Obj(),
				mkNode("c1").Capacity("cpu", "1", "memory", "1Gi", "pods", "110").Obj(),
				mkNode("c2").Capacity("cpu", "1", "memory", "1Gi", "pods", "110").Obj(),
				mkNode("c3").Capacity("cpu", "1", "memory", "8Gi", "pods", "110").Unschedulable().Obj(),
			},
			pod:     mkPod("p").Req("cpu", "2", "memory", "2Gi").Obj(),
			want:    "0/5 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu, 2 Insufficient memory, 2 node(s) had untolerated taint(s).",
			plugins: []string{"NodeResourcesFit", "NodeUnschedulable", "TaintToleration"},
		},
	}
	for _, tc := range tests {
		for _, par := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/parallelism=%d", tc.name, par), func(t *testing.T) {
				snap := snapshottest.Snapshot(t, tc.nodes, tc.bound...)
				s := mustNew(t, Config{Parallelism: par})
				var d Decision
				require.NotPanics(t, func() {
					var err error
					d, err = s.SchedulePod(snap, snapshot.MustPodInfo(tc.pod))
					require.NoError(t, err)
				})
				require.False(t, d.Scheduled(), "scheduled on %s", d.Node)
				require.NotNil(t, d.Diagnosis)
				assert.Equal(t, tc.want, d.Diagnosis.Message())
				assert.Equal(t, tc.plugins, d.Diagnosis.UnschedulablePlugins)
				assert.Equal(t, len(tc.nodes), d.Diagnosis.NumAllNodes)
			})
		}
	}
}

func TestSchedulePodDiagnosisDetails(t *testing.T) {
	nodes := []*v1.Node{
		mkNode("n1").Capacity("cpu", "4", "pods", "110").Obj(),
		mkNode("n2").Capacity("cpu", "1", "pods", "110").Obj(),
	}
	snap := snapshottest.Snapshot(t, nodes, mkPod("b").Req("cpu", "3").Node("n1").Obj())
	for _, detail := range []bool{false, true} {
		d, err := mustNew(t, Config{NodeReasons: detail}).SchedulePod(snap, snapshot.MustPodInfo(mkPod("p").Req("cpu", "2").Obj()))
		require.NoError(t, err)
		require.NotNil(t, d.Diagnosis)
		byNode := map[string]Reason{}
		if detail {
			for _, r := range d.Diagnosis.Reasons {
				byNode[r.Node] = r
			}
		} else {
			// Counts: one kind each (resolvable or not), its first node's reason.
			assert.Nil(t, d.Diagnosis.Reasons, "per-node reasons only when asked")
			for _, c := range d.Diagnosis.Counts {
				assert.Equal(t, 1, c.Count)
				assert.Equal(t, "Insufficient cpu", c.Message)
				byNode[c.Reason.Node] = c.Reason
			}
		}
		// n1: 2000 > 4000-3000, resolvable; n2: 2000 > 1000, unresolvable.
		assert.Equal(t, Reason{Plugin: "NodeResourcesFit", Node: "n1", Code: CodeInsufficientResource, Insufficient: snapshot.Insufficient{Resource: snapshot.CPU, Requested: 2000, Used: 3000, Capacity: 4000}}, byNode["n1"], "NodeReasons %v", detail)
		assert.Equal(t, Reason{Plugin: "NodeResourcesFit", Node: "n2", Code: CodeInsufficientResource, Insufficient: snapshot.Insufficient{Resource: snapshot.CPU, Requested: 2000, Used: 0, Capacity: 1000}, Unresolvable: true}, byNode["n2"], "NodeReasons %v", detail)
		assert.Equal(t, "0/2 nodes are available: 2 Insufficient cpu.", d.Diagnosis.Message())
	}
}

func TestPercentageOfNodesToScore(t *testing.T) {
	nodes := genCluster(7, 1000)
	for i, n := range nodes { // no taints or cordons: every node is feasible
		n.Spec.Taints, n.Spec.Unschedulable = nil, false
		nodes[i] = n
	}
	snap := snapshottest.Snapshot(t, nodes)
	pod := snapshot.MustPodInfo(mkPod("p").Req("cpu", "100m").Obj())
	tests := []struct {
		pct           int32
		wantEvaluated int
	}{
		{0, 420},    // adaptive: 50 - 1000/125 = 42 %
		{100, 1000}, // every node
		{5, 100},    // 50, raised to the minimum of 100
		{50, 500},
	}
	for _, tc := range tests {
		for _, par := range []int{1, 3} {
			t.Run(fmt.Sprintf("pct=%d/parallelism=%d", tc.pct, par), func(t *testing.T) {
				s := mustNew(t, Config{PercentageOfNodesToScore: tc.pct, Parallelism: par})
				d, err := s.SchedulePod(snap, pod)
				require.NoError(t, err)
				assert.Equal(t, tc.wantEvaluated, d.Evaluated)
				assert.Equal(t, tc.wantEvaluated, d.Feasible)
				// the next cycle starts where this one stopped (upstream nextStartNodeIndex)
				assert.Equal(t, tc.wantEvaluated%1000, s.next)
				_, err = s.SchedulePod(snap, pod)
				require.NoError(t, err)
				assert.Equal(t, (2*tc.wantEvaluated)%1000, s.next)
			})
		}
	}

	// A profile with no scorers stops at the first feasible node.
	s := mustNew(t, Config{Profile: score.MustProfile()})
	d, err := s.SchedulePod(snap, pod)
	require.NoError(t, err)
	assert.Equal(t, 1, d.Evaluated)
	assert.Equal(t, "node-00000", d.Node)
	d, err = s.SchedulePod(snap, pod)
	require.NoError(t, err)
	assert.Equal(t, "node-00001", d.Node, "rotating start index")
}

// TestSelectHostUniform: ties are broken uniformly and by the seed alone.
func TestSelectHostUniform(t *testing.T) {
	totals := []int64{5, 9, 3, 9, 9, 1, 9}
	counts := map[int]int{}
	for seed := range uint64(4000) {
		s := mustNew(t, Config{Seed: seed})
		i := s.selectHost(totals)
		require.Equal(t, int64(9), totals[i])
		counts[i]++
		s2 := mustNew(t, Config{Seed: seed})
		require.Equal(t, i, s2.selectHost(totals), "seed %d not deterministic", seed)
	}
	require.Len(t, counts, 4)
	for i, c := range counts {
		// 1000 expected each; 6 sigma of a binomial(4000, 1/4) is ~165.
		assert.InDelta(t, 1000, c, 165, "node %d chosen %d times", i, c)
	}
	assert.Equal(t, 2, mustNew(t, Config{}).selectHost([]int64{1, 2, 3, 2}))
}

// TestScheduleReserveRefused: if another reserver takes the capacity
// between the snapshot and the hold, the decision is a diagnosis.
func TestScheduleReserveRefused(t *testing.T) {
	ledger := reserve.New()
	require.NoError(t, ledger.AddNode(mkNode("n1").Capacity("cpu", "2", "pods", "110").Obj()))
	thief := snapshot.MustPodInfo(mkPod("thief").Req("cpu", "2").Obj())
	steal := filterFunc{name: "Thief", pre: func(*snapshot.PodInfo) (PreFilterResult, error) {
		_, err := ledger.Reserve(thief, "n1")
		return PreFilterResult{}, err
	}}
	s := mustNew(t, Config{Filters: append(DefaultFilters(), steal)})
	d, err := s.Schedule(ledger, snapshot.MustPodInfo(mkPod("p").Req("cpu", "1").Obj()))
	require.NoError(t, err)
	require.False(t, d.Scheduled())
	assert.Equal(t, "0/1 nodes are available: 1 Insufficient cpu.", d.Diagnosis.Message())
	_, _, held := ledger.PodPhase(snapshot.PodKey{Namespace: "default", Name: "p"})
	assert.False(t, held)
}

// A pod the ledger already holds, scheduled again: its own hold fills
// its node, the cycle chooses another, the ledger refuses the second
// hold; the Decision is not Scheduled (a caller that looks at it before
// the error must not bind) and the first hold stays.
func TestScheduleHeldPodAgain(t *testing.T) {
	ledger := reserve.New()
	require.NoError(t, ledger.AddNode(mkNode("a").Capacity("cpu", "2", "pods", "110").Obj()))
	require.NoError(t, ledger.AddNode(mkNode("b").Capacity("cpu", "4", "pods", "110").Obj()))
	web := snapshot.MustPodInfo(mkPod("web").Req("cpu", "2").Obj())
	unfit, err := ledger.Reserve(web, "a")
	require.NoError(t, err)
	require.Empty(t, unfit)
	d, err := mustNew(t, Config{}).Schedule(ledger, web)
	require.ErrorIs(t, err, reserve.ErrConflict)
	assert.False(t, d.Scheduled())
	assert.Empty(t, d.Node)
	h, held := ledger.Hold(web.Key())
	require.True(t, held)
	assert.Equal(t, "a", h.Node)
}

// flakyScorer prepares once; later Prepares fail (Explain prepares again).
type flakyScorer struct{ calls int }

func (f *flakyScorer) Name() string { return "Flaky" }
func (f *flakyScorer) Prepare(*snapshot.PodInfo, score.Cluster) (score.PodScorer, error) {
	if f.calls++; f.calls > 1 {
		return nil, errors.New("second prepare fails")
	}
	return score.PodScorerFunc(func(_ []*snapshot.NodeInfo, out []int64) { clear(out) }), nil
}

// An Explain that fails after a node was chosen (Config.Breakdown) leaves
// no Scheduled Decision, from SchedulePod or from Schedule, and no hold.
func TestExplainErrorNotScheduled(t *testing.T) {
	ledger := reserve.New()
	require.NoError(t, ledger.AddNode(mkNode("a").Capacity("cpu", "4", "pods", "110").Obj()))
	web := snapshot.MustPodInfo(mkPod("web").Req("cpu", "1").Obj())
	s := mustNew(t, Config{Breakdown: true, Profile: score.MustProfile(score.Weighted{Scorer: &flakyScorer{}, Weight: 1})})
	d, err := s.Schedule(ledger, web)
	require.ErrorContains(t, err, "second prepare fails")
	assert.False(t, d.Scheduled())
	assert.Empty(t, d.Node)
	_, held := ledger.Hold(web.Key())
	assert.False(t, held)

	s = mustNew(t, Config{Breakdown: true, Profile: score.MustProfile(score.Weighted{Scorer: &flakyScorer{}, Weight: 1})})
	d, err = s.SchedulePod(ledger.Snapshot(), web)
	require.ErrorContains(t, err, "second prepare fails")
	assert.False(t, d.Scheduled())
}

func TestCustomFilterAndErrors(t *testing.T) {
	nodes := []*v1.Node{mkNode("old").Capacity("pods", "10").Label("gen", "1").Obj(), mkNode("new").Capacity("pods", "10").Label("gen", "2").Obj()}
	snap := snapshottest.Snapshot(t, nodes)
	gen := filterFunc{name: "Generation", pre: func(*snapshot.PodInfo) (PreFilterResult, error) {
		return PreFilterResult{Filter: PodFilterFunc(func(ni *snapshot.NodeInfo, rs []Reason) []Reason {
			if ni.Node().Labels["gen"] != "2" {
				rs = append(rs, Reason{Text: "node(s) are too old"})
			}
			return rs
		})}, nil
	}}
	s := mustNew(t, Config{Filters: []Filter{gen}})
	d, err := s.SchedulePod(snap, snapshot.MustPodInfo(mkPod("p").Obj()))
	require.NoError(t, err)
	assert.Equal(t, "new", d.Node)

	d, err = s.SchedulePod(snapshottest.Snapshot(t, nodes[:1]), snapshot.MustPodInfo(mkPod("p").Obj()))
	require.NoError(t, err)
	assert.Equal(t, "0/1 nodes are available: 1 node(s) are too old.", d.Diagnosis.Message())
	assert.Equal(t, []string{"Generation"}, d.Diagnosis.UnschedulablePlugins)

	boom := errors.New("boom")
	bad := filterFunc{name: "Bad", pre: func(*snapshot.PodInfo) (PreFilterResult, error) { return PreFilterResult{}, boom }}
	_, err = mustNew(t, Config{Filters: []Filter{bad}}).SchedulePod(snap, snapshot.MustPodInfo(mkPod("p").Obj()))
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "filter Bad: pod default/p")

	_, err = s.SchedulePod(snap, nil)
	require.ErrorIs(t, err, ErrInvalidPod)
}

type filterFunc struct {
	name string
	pre  func(*snapshot.PodInfo) (PreFilterResult, error)
}

func (f filterFunc) Name() string                                           { return f.name }
func (f filterFunc) PreFilter(p *snapshot.PodInfo) (PreFilterResult, error) { return f.pre(p) }
