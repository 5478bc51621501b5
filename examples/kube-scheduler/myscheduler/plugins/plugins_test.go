package plugins

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/framework/kubescheduler"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

func nodeInfo(t *testing.T, n *v1.Node, pods ...*v1.Pod) *snapshot.NodeInfo {
	t.Helper()
	c := snapshot.NewCache()
	require.NoError(t, c.AddNode(n))
	for _, p := range pods {
		require.NoError(t, c.AddPod(p))
	}
	return c.Snapshot().Get(n.Name)
}

func TestPreferLabel(t *testing.T) {
	s := &PreferLabel{Key: "example.com/preferred", Value: "true"}
	nodes := []*snapshot.NodeInfo{
		nodeInfo(t, snapshottest.MakeNode("yes").Capacity("cpu", "4").Label("example.com/preferred", "true").Obj()),
		nodeInfo(t, snapshottest.MakeNode("other-value").Capacity("cpu", "4").Label("example.com/preferred", "false").Obj()),
		nodeInfo(t, snapshottest.MakeNode("no-label").Capacity("cpu", "4").Obj()),
	}
	ps, err := s.Prepare(snapshot.MustPodInfo(snapshottest.MakePod("p").Obj()), nil)
	require.NoError(t, err)
	out := make([]int64, len(nodes))
	ps.Score(nodes, out)
	assert.Equal(t, []int64{100, 0, 0}, out)
	assert.Zero(t, testing.AllocsPerRun(100, func() { ps.Score(nodes, out) }), "Score allocates nothing")
}

func TestLicenseBudget(t *testing.T) {
	lic := func(name, node string) *v1.Pod {
		return snapshottest.MakePod(name).Label(LicensedLabel, "true").Req("cpu", "100m").Node(node).Obj()
	}
	plain := func(name, node string) *v1.Pod { return snapshottest.MakePod(name).Req("cpu", "100m").Node(node).Obj() }
	budget2 := snapshottest.MakeNode("b2").Capacity("cpu", "8", "pods", "110").Label(BudgetLabel, "2").Obj()
	tests := []struct {
		name   string
		node   *snapshot.NodeInfo
		pod    *v1.Pod
		reject bool
	}{
		{"room left", nodeInfo(t, budget2, lic("a", "b2"), plain("x", "b2")), lic("p", ""), false},
		{"budget used", nodeInfo(t, budget2, lic("a", "b2"), lic("b", "b2")), lic("p", ""), true},
		{"unlicensed pod passes a full node", nodeInfo(t, budget2, lic("a", "b2"), lic("b", "b2")), plain("p", ""), false},
		{"zero budget", nodeInfo(t, snapshottest.MakeNode("b0").Capacity("cpu", "8", "pods", "110").Label(BudgetLabel, "0").Obj()), lic("p", ""), true},
		{"no budget label: no limit", nodeInfo(t, snapshottest.MakeNode("free").Capacity("cpu", "8", "pods", "110").Obj(), lic("a", "free"), lic("b", "free")), lic("p", ""), false},
		{"malformed budget: no limit", nodeInfo(t, snapshottest.MakeNode("bad").Capacity("cpu", "8", "pods", "110").Label(BudgetLabel, "two").Obj(), lic("a", "bad")), lic("p", ""), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pre, err := LicenseBudget{}.PreFilter(snapshot.MustPodInfo(tc.pod))
			require.NoError(t, err)
			if pre.Filter == nil {
				assert.False(t, tc.reject)
				return
			}
			reasons := pre.Filter.Filter(tc.node, nil)
			if !tc.reject {
				assert.Empty(t, reasons)
				return
			}
			require.Len(t, reasons, 1)
			assert.Equal(t, MsgBudget, reasons[0].Message())
		})
	}
}

// TestFactories: strict args (a typo is an error naming the field), and
// the plugins declare what they read so upstream may batch pods.
func TestFactories(t *testing.T) {
	ctx := context.Background()
	pl, err := NewPreferLabel(ctx, &k8sruntime.Unknown{Raw: []byte(`{"key": "zone", "value": "a"}`)}, nil)
	require.NoError(t, err)
	sp := pl.(*kubescheduler.ScorePlugin)
	assert.Equal(t, &PreferLabel{Key: "zone", Value: "a"}, sp.Scorer())
	_, err = NewPreferLabel(ctx, &k8sruntime.Unknown{Raw: []byte(`{"kye": "zone"}`)}, nil)
	require.ErrorIs(t, err, kubescheduler.ErrInvalidArgs)
	assert.Contains(t, err.Error(), "PreferLabel args: kye: unknown field")
	_, err = NewLicenseBudget(ctx, &k8sruntime.Unknown{Raw: []byte(`{"budget": 3}`)}, nil)
	require.ErrorIs(t, err, kubescheduler.ErrInvalidArgs)

	p := snapshottest.MakePod("p").Label(LicensedLabel, "true").Obj()
	_, st := sp.SignPod(ctx, p)
	assert.True(t, st.IsSuccess(), "PreferLabel signs")
	fl, err := NewLicenseBudget(ctx, nil, nil)
	require.NoError(t, err)
	frags, st := fl.(*kubescheduler.FilterPlugin).SignPod(ctx, p)
	require.True(t, st.IsSuccess(), "LicenseBudget signs")
	assert.Contains(t, fmt.Sprint(frags), LicensedLabel)
}

// profile is the myscheduler profile's filters and scorers as schedkit
// types: upstream's default filters plus the budget, and the default
// scorers plus PreferLabel at weight 5 (as deploy/scheduler-config.yaml).
func profile(t testing.TB) framework.Config {
	p, err := score.NewProfile(append(score.DefaultProfile().Scorers(),
		score.Weighted{Scorer: &PreferLabel{Key: "example.com/preferred", Value: "true"}, Weight: 5})...)
	require.NoError(t, err)
	return framework.Config{Filters: append(framework.DefaultFilters(), LicenseBudget{}), Profile: p, Seed: 1}
}

// TestBudgetIsAFilter reproduces issue 19's stranded pods: one preferred
// node with a budget of 2 and two plain nodes; 12 licensed pods. As a
// Filter the budget sends the pods past the preferred node once it is
// full: all 12 placed, 2 on the preferred node.
func TestBudgetIsAFilter(t *testing.T) {
	ledger := reserve.New()
	require.NoError(t, ledger.AddNode(snapshottest.MakeNode("preferred").Capacity("cpu", "16", "memory", "64Gi", "pods", "110").
		Label("example.com/preferred", "true").Label(BudgetLabel, "2").Obj()))
	for _, n := range []string{"plain-1", "plain-2"} {
		require.NoError(t, ledger.AddNode(snapshottest.MakeNode(n).Capacity("cpu", "16", "memory", "64Gi", "pods", "110").Label(BudgetLabel, "8").Obj()))
	}
	sched, err := framework.New(profile(t))
	require.NoError(t, err)
	loop := framework.NewLoop(sched, ledger, nil)
	for i := range 12 {
		require.NoError(t, loop.Add(snapshottest.MakePod(fmt.Sprintf("p%02d", i)).Label(LicensedLabel, "true").Req("cpu", "500m", "memory", "1Gi").Obj()))
	}
	attempts, err := loop.ScheduleAll(context.Background())
	require.NoError(t, err)
	on := map[string]int{}
	for _, a := range attempts {
		if !a.Bound() {
			t.Fatalf("%s: %s", a.Pod.Key(), a.Diagnosis.Message())
		}
		on[a.Node]++
	}
	assert.Equal(t, 2, on["preferred"], "the preferred node up to its budget")
	assert.Equal(t, 10, on["plain-1"]+on["plain-2"])
	assert.Empty(t, loop.Unschedulable())
}
