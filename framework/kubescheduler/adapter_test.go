package kubescheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/internal/mirror"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
)

// The factories have upstream's
// PluginFactory signature exactly
// (k8s.io/kubernetes/pkg/scheduler/framework/runtime.PluginFactory).
var (
	_ func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) = NewSchedkitScore
	_ func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) = NewSchedkitFit
	_ func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) = NewSchedkitReserve
)

// cluster builds a handle whose lister holds nodes, as the scheduler's
// cycle snapshot would.
func cluster(nodes ...*fakeNodeInfo) *fakeHandle {
	l := &fakeLister{}
	for _, n := range nodes {
		l.nodes = append(l.nodes, n)
	}
	return &fakeHandle{lister: l}
}

func infos(h *fakeHandle) []fwk.NodeInfo { return h.lister.nodes }

func TestScorePluginLeastAllocated(t *testing.T) {
	empty := newNodeInfo(node("empty", "4", "8Gi"), 1)
	busy := newNodeInfo(node("busy", "4", "8Gi"), 1)
	busy.addPod(pod("b1", "3", "2Gi"))
	h := cluster(empty, busy)
	pl, err := NewSchedkitScore(context.Background(), nil, h)
	require.NoError(t, err)
	sp := pl.(*ScorePlugin)
	cs := newCycleState()
	p := pod("p", "1", "2Gi")
	require.True(t, sp.PreScore(context.Background(), cs, p, infos(h)).IsSuccess())
	// empty: cpu (4000-1000)*100/4000 = 75, memory (8Gi-2Gi)*100/8Gi = 75 → 75
	// busy:  cpu (4000-4000)*100/4000 = 0,  memory (8Gi-4Gi)*100/8Gi = 50 → 25
	for _, tc := range []struct {
		ni   *fakeNodeInfo
		want int64
	}{{empty, 75}, {busy, 25}} {
		got, st := sp.Score(context.Background(), cs, p, tc.ni)
		require.True(t, st.IsSuccess(), st.AsError())
		assert.Equal(t, tc.want, got, "Score(%s)", tc.ni.node.Name)
	}
	// A node PreScore did not see (not a candidate) is scored on its own.
	other := newNodeInfo(node("other", "8", "8Gi"), 1)
	got, st := sp.Score(context.Background(), cs, p, other)
	require.True(t, st.IsSuccess())
	// cpu (8000-1000)*100/8000 = 87, memory 75 → 81
	assert.Equal(t, int64(81), got)
}

func TestScorePluginSkipsBestEffortForBalancedAllocation(t *testing.T) {
	h := cluster(newNodeInfo(node("n", "4", "8Gi"), 1))
	pl, err := SchedkitScoreFactory("Balanced")(context.Background(), &ScoreArgs{Scorer: "BalancedAllocation"}, h)
	require.NoError(t, err)
	st := pl.(*ScorePlugin).PreScore(context.Background(), newCycleState(), pod("be", "", ""), infos(h))
	assert.True(t, st.IsSkip(), "best-effort pod: %v", st)
}

func TestScorePluginNormalizes(t *testing.T) {
	clean := newNodeInfo(node("clean", "4", "8Gi"), 1)
	tainted := newNodeInfo(node("tainted", "4", "8Gi"), 1)
	tainted.node.Spec.Taints = []v1.Taint{{Key: "a", Effect: v1.TaintEffectPreferNoSchedule}, {Key: "b", Effect: v1.TaintEffectPreferNoSchedule}}
	h := cluster(clean, tainted)
	pl, err := SchedkitScoreFactory("Taints")(context.Background(), &ScoreArgs{Scorer: "TaintToleration"}, h)
	require.NoError(t, err)
	sp := pl.(*ScorePlugin)
	cs := newCycleState()
	p := pod("p", "1", "1Gi")
	require.True(t, sp.PreScore(context.Background(), cs, p, infos(h)).IsSuccess())
	var list fwk.NodeScoreList
	for _, ni := range []*fakeNodeInfo{clean, tainted} {
		s, st := sp.Score(context.Background(), cs, p, ni)
		require.True(t, st.IsSuccess())
		list = append(list, fwk.NodeScore{Name: ni.node.Name, Score: s})
	}
	// raw: untolerated PreferNoSchedule taints 0 and 2; reversed over max 2:
	// clean 100 - 0*100/2 = 100, tainted 100 - 2*100/2 = 0
	assert.Equal(t, fwk.NodeScoreList{{Name: "clean", Score: 0}, {Name: "tainted", Score: 2}}, list)
	require.True(t, sp.ScoreExtensions().NormalizeScore(context.Background(), cs, p, list).IsSuccess())
	assert.Equal(t, fwk.NodeScoreList{{Name: "clean", Score: 100}, {Name: "tainted", Score: 0}}, list)
}

// Score on a mirrored node is a look-up: no copy of the node, no
// allocation.
func TestScoreAllocatesNothing(t *testing.T) {
	var nodes []*fakeNodeInfo
	for _, name := range []string{"a", "b", "c"} {
		n := newNodeInfo(node(name, "8", "16Gi"), 1)
		n.addPod(pod("on-"+name, "1", "1Gi"))
		nodes = append(nodes, n)
	}
	h := cluster(nodes...)
	ctx := context.Background()
	for _, scorer := range []string{"LeastAllocated", "BalancedAllocation", "DominantResource"} {
		pl, err := SchedkitScoreFactory(scorer)(ctx, &ScoreArgs{Scorer: scorer}, h)
		require.NoError(t, err)
		sp := pl.(*ScorePlugin)
		cs := newCycleState()
		p := pod("p", "500m", "1Gi")
		require.True(t, sp.PreScore(ctx, cs, p, infos(h)).IsSuccess())
		allocs := testing.AllocsPerRun(100, func() {
			_, _ = sp.Score(ctx, cs, p, nodes[1])
		})
		assert.Zero(t, allocs, "%s: Score allocations", scorer)
	}
}

func TestFilterPlugin(t *testing.T) {
	small := newNodeInfo(node("small", "500m", "4Gi"), 1)
	full := newNodeInfo(node("full", "2", "4Gi"), 1)
	full.addPod(pod("f1", "1500m", "1Gi"))
	roomy := newNodeInfo(node("roomy", "4", "8Gi"), 1)
	h := cluster(small, full, roomy)
	ctx := context.Background()
	pl, err := NewSchedkitFit(ctx, nil, h)
	require.NoError(t, err)
	fp := pl.(*FilterPlugin)
	cs := newCycleState()
	p := pod("p", "1", "1Gi")
	res, st := fp.PreFilter(ctx, cs, p, infos(h))
	require.True(t, st.IsSuccess())
	assert.Nil(t, res)

	// small: 1000m > 500m allocatable: unresolvable.
	st = fp.Filter(ctx, cs, p, small)
	assert.Equal(t, fwk.UnschedulableAndUnresolvable, st.Code())
	assert.Equal(t, []string{"Insufficient cpu"}, st.Reasons())
	// full: 1000m > 2000m - 1500m: preemption could help.
	st = fp.Filter(ctx, cs, p, full)
	assert.Equal(t, fwk.Unschedulable, st.Code())
	assert.Equal(t, []string{"Insufficient cpu"}, st.Reasons())
	assert.True(t, fp.Filter(ctx, cs, p, roomy).IsSuccess())
	// Preemption's view of full without its pod: fits.
	victimless := newNodeInfo(full.node, 99)
	assert.True(t, fp.Filter(ctx, cs, p, victimless).IsSuccess())

	allocs := testing.AllocsPerRun(100, func() { _ = fp.Filter(ctx, cs, p, roomy) })
	assert.Zero(t, allocs, "Filter on a passing node")

	// A best-effort pod is not checked: Skip.
	_, st = fp.PreFilter(ctx, newCycleState(), pod("be", "", ""), infos(h))
	assert.True(t, st.IsSuccess(), "best effort still counts pods: %v", st)
}

func TestFilterPluginNodeNameNarrowsAndTaintsReject(t *testing.T) {
	a := newNodeInfo(node("a", "1", "1Gi"), 1)
	b := newNodeInfo(node("b", "1", "1Gi"), 1)
	b.node.Spec.Taints = []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}
	h := cluster(a, b)
	ctx := context.Background()

	nn := WrapFilter("NN", framework.NewNodeName(), h)
	p := pod("p", "", "")
	p.Spec.NodeName = "a"
	res, st := nn.PreFilter(ctx, newCycleState(), p, infos(h))
	require.True(t, st.IsSuccess())
	assert.True(t, res.NodeNames.Has("a"))
	assert.Equal(t, 1, res.NodeNames.Len())

	tt := WrapFilter("TT", framework.NewTaintToleration(), h)
	cs := newCycleState()
	_, st = tt.PreFilter(ctx, cs, pod("q", "", ""), infos(h))
	require.True(t, st.IsSuccess())
	st = tt.Filter(ctx, cs, pod("q", "", ""), b)
	assert.Equal(t, fwk.UnschedulableAndUnresolvable, st.Code())
	assert.Equal(t, []string{"node(s) had untolerated taint(s)"}, st.Reasons())

	events, err := tt.EventsToRegister(ctx)
	require.NoError(t, err)
	assert.NotEmpty(t, events)
}

func TestReservePlugin(t *testing.T) {
	n := newNodeInfo(node("n", "2", "4Gi"), 1)
	h := cluster(n)
	ctx := context.Background()
	pl, err := NewSchedkitReserve(ctx, nil, h)
	require.NoError(t, err)
	rp := pl.(*ReservePlugin)
	require.NoError(t, rp.Ledger().AddNode(n.node))

	a, b := pod("a", "1500m", "1Gi"), pod("b", "1", "1Gi")
	require.True(t, rp.Reserve(ctx, newCycleState(), a, "n").IsSuccess())
	// 1000m > 2000m - 1500m held.
	st := rp.Reserve(ctx, newCycleState(), b, "n")
	assert.Equal(t, fwk.Unschedulable, st.Code())
	assert.Equal(t, []string{"Insufficient cpu"}, st.Reasons())
	// Upstream calls Unreserve on every reserve plugin after a failure,
	// including for pods this plugin never reserved.
	rp.Unreserve(ctx, newCycleState(), b, "n")
	rp.Unreserve(ctx, newCycleState(), a, "n")
	rp.Unreserve(ctx, newCycleState(), a, "n")
	require.True(t, rp.Reserve(ctx, newCycleState(), b, "n").IsSuccess(), "a's hold was released")
	rp.PostBind(ctx, newCycleState(), b, "n")
	ph, node, ok := rp.Ledger().PodPhase(snapshot.KeyOf(b))
	require.True(t, ok)
	assert.Equal(t, "n", node)
	assert.Equal(t, reserve.Confirmed, ph)
}

func TestReservePluginLearnsNodeFromScheduler(t *testing.T) {
	n := newNodeInfo(node("late", "2", "4Gi"), 1)
	h := cluster(n)
	pl, err := WrapLedger("R", reserve.New(), h)
	require.NoError(t, err)
	assert.True(t, pl.Reserve(context.Background(), newCycleState(), pod("p", "1", "1Gi"), "late").IsSuccess())
	st := pl.Reserve(context.Background(), newCycleState(), pod("q", "1", "1Gi"), "nowhere")
	assert.Equal(t, fwk.Error, st.Code())
	// The wrap chain names the plugin, the method, the pod and the node,
	// says "not found" once, and keeps the sentinels.
	err = st.AsError()
	assert.Equal(t, `kubescheduler: R: reserve: Ledger.Reserve: pod default/q: node "nowhere": reserve: node not found`, err.Error())
	assert.ErrorIs(t, err, reserve.ErrNodeNotFound)
	assert.ErrorIs(t, err, snapshot.ErrNodeNotFound)
}

// TestSignPod: pods of one template (names differ) sign alike, as the
// framework compares signatures (JSON); a different request, image,
// toleration or label signs differently.
func TestSignPod(t *testing.T) {
	sig := func(p *v1.Pod) string {
		t.Helper()
		sp, err := SchedkitScoreFactory("S")(context.Background(), &ScoreArgs{Scorer: "ImageLocality"}, nil)
		require.NoError(t, err)
		frags, st := sp.(fwk.SignPlugin).SignPod(context.Background(), p)
		require.True(t, st.IsSuccess())
		m := map[string]any{}
		for _, f := range frags {
			m[f.Key] = f.Value
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return string(b)
	}
	a := sig(pod("a", "1", "1Gi"))
	assert.Equal(t, a, sig(pod("b", "1", "1Gi")), "same template, same signature")
	for name, change := range map[string]func(*v1.Pod){
		"request":    func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("2") },
		"image":      func(p *v1.Pod) { p.Spec.Containers[0].Image = "nginx" },
		"toleration": func(p *v1.Pod) { p.Spec.Tolerations = []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}} },
		"label":      func(p *v1.Pod) { p.Labels = map[string]string{"app": "x"} },
		"node name":  func(p *v1.Pod) { p.Spec.NodeName = "n" },
	} {
		p := pod("c", "1", "1Gi")
		change(p)
		assert.NotEqual(t, a, sig(p), name)
	}
}

// A profile that lists the plugins under score / filter only (not
// multiPoint, preScore, preFilter) never calls PreScore or PreFilter: the
// plugins still give the right answers, on the slow path.
func TestWithoutPreScoreAndPreFilter(t *testing.T) {
	empty := newNodeInfo(node("empty", "4", "8Gi"), 1)
	small := newNodeInfo(node("small", "500m", "8Gi"), 1)
	h := cluster(empty, small)
	ctx := context.Background()
	pl, err := NewSchedkitScore(ctx, nil, h)
	require.NoError(t, err)
	got, st := pl.(*ScorePlugin).Score(ctx, newCycleState(), pod("p", "1", "2Gi"), empty)
	require.True(t, st.IsSuccess(), st.AsError())
	assert.Equal(t, int64(75), got) // as in TestScorePluginLeastAllocated

	fl, err := NewSchedkitFit(ctx, nil, h)
	require.NoError(t, err)
	st = fl.(*FilterPlugin).Filter(ctx, newCycleState(), pod("p", "1", "2Gi"), small)
	assert.Equal(t, fwk.UnschedulableAndUnresolvable, st.Code())
	assert.True(t, fl.(*FilterPlugin).Filter(ctx, newCycleState(), pod("p", "1", "2Gi"), empty).IsSuccess())
}

// TestReservePluginGPUShare: kube-scheduler records no device choice, so
// the plugin's ledger chooses (BestFit) for an annotated GPU-share pod
// instead of refusing it (a ledger without a chooser refuses it).
func TestReservePluginGPUShare(t *testing.T) {
	gn := node("g", "8", "16Gi")
	gn.Status.Allocatable[openb.ResourceGPUCount] = resource.MustParse("2")
	gn.Status.Allocatable[openb.ResourceGPUMilli] = resource.MustParse("2000")
	n := newNodeInfo(gn, 1)
	ctx := context.Background()
	pl, err := NewSchedkitReserve(ctx, nil, cluster(n))
	require.NoError(t, err)
	rp := pl.(*ReservePlugin)
	require.NoError(t, rp.Ledger().AddNode(gn))
	p := pod("share", "1", "1Gi")
	p.Annotations = map[string]string{openb.AnnotationGPUCount: "1", openb.AnnotationGPUMilli: "500"}
	require.True(t, rp.Reserve(ctx, newCycleState(), p, "g").IsSuccess())
	devs := rp.Ledger().Snapshot().Get("g").Devices()
	require.Len(t, devs, 2)
	assert.Equal(t, int64(1500), devs[0].FreeMilliGPU+devs[1].FreeMilliGPU, "one device lends 500 milli-GPU to the hold")
}

// TestScorePluginScoresInPieces: PreScore scores a long candidate list
// in pieces on the handle's Parallelizer, with the scores of a handle
// without one (scored in one pass); with the context done, or a piece
// left out, PreScore fails instead of leaving candidates unscored.
func TestScorePluginScoresInPieces(t *testing.T) {
	const n = 2000
	nodes := make([]*fakeNodeInfo, n)
	for i := range nodes {
		nodes[i] = newNodeInfo(node(fmt.Sprintf("n%04d", i), fmt.Sprint(2+i%7), "8Gi"), 1)
		if i%3 == 0 {
			nodes[i].addPod(pod(fmt.Sprintf("b%d", i), "1", "1Gi"))
		}
	}
	par, one := cluster(nodes...), cluster(nodes...)
	one.noParallelizer = true
	plugin := func(h *fakeHandle) *ScorePlugin {
		pl, err := NewSchedkitScore(context.Background(), nil, h)
		require.NoError(t, err)
		return pl.(*ScorePlugin)
	}
	sp, serial := plugin(par), plugin(one)
	p := pod("p", "1", "2Gi")
	cs, scs := newCycleState(), newCycleState()
	require.True(t, sp.PreScore(context.Background(), cs, p, infos(par)).IsSuccess())
	require.True(t, serial.PreScore(context.Background(), scs, p, infos(one)).IsSuccess())
	require.Positive(t, par.untils.Load(), "found and scored on the Parallelizer")
	for _, ni := range nodes {
		got, st := sp.Score(context.Background(), cs, p, ni)
		require.True(t, st.IsSuccess(), st.AsError())
		want, st := serial.Score(context.Background(), scs, p, ni)
		require.True(t, st.IsSuccess(), st.AsError())
		require.Equal(t, want, got, ni.node.Name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st := plugin(par).PreScore(ctx, newCycleState(), p, infos(par))
	require.False(t, st.IsSuccess())
	assert.ErrorIs(t, st.AsError(), context.Canceled)
	assert.ErrorIs(t, st.AsError(), mirror.ErrPiecesLeftOut)
	// A piece left out with the context live (a recovered panic): an
	// error naming the plugin and the pod, not the context's.
	leaky := cluster(nodes...)
	leaky.leaveOut = 1
	st = plugin(leaky).PreScore(context.Background(), newCycleState(), p, infos(leaky))
	require.False(t, st.IsSuccess())
	assert.NotErrorIs(t, st.AsError(), context.Canceled)
	assert.ErrorIs(t, st.AsError(), mirror.ErrPiecesLeftOut)
	assert.Contains(t, st.AsError().Error(), ScoreName)
	assert.Contains(t, st.AsError().Error(), "default/p")
}
