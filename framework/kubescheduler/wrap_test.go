package kubescheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// myArgs are a user's own plugin args.
type myArgs struct {
	LabelKey string `json:"labelKey"`
	Budget   int64  `json:"budget"`
}

// TestDecodeArgsForUserArgs: a user's own args decode strictly (a typo is
// an error naming the plugin and the field), defaults survive absent
// fields, and typed args from Go are taken as they are.
func TestDecodeArgsForUserArgs(t *testing.T) {
	args := myArgs{LabelKey: "example.com/fast", Budget: 4}
	require.NoError(t, DecodeArgs("MyPlugin", &k8sruntime.Unknown{Raw: []byte(`{"budget": 8}`)}, &args))
	assert.Equal(t, myArgs{LabelKey: "example.com/fast", Budget: 8}, args)

	err := DecodeArgs("MyPlugin", &k8sruntime.Unknown{Raw: []byte(`{"lablKey": "x"}`)}, &args)
	require.ErrorIs(t, err, ErrInvalidArgs)
	assert.Contains(t, err.Error(), "MyPlugin args: lablKey: unknown field")

	err = DecodeArgs("MyPlugin", &k8sruntime.Unknown{Raw: []byte("budget: lots\n")}, &args)
	require.ErrorIs(t, err, ErrInvalidArgs)
	assert.Contains(t, err.Error(), "MyPlugin args: budget: cannot use string as int64")

	require.NoError(t, DecodeArgs("MyPlugin", nil, &args))
	assert.Equal(t, int64(8), args.Budget, "no args: unchanged")
	require.NoError(t, DecodeArgs("MyPlugin", (*k8sruntime.Unknown)(nil), &args), "a typed nil is no args")

	// Strict as upstream's own args decoding: each is an error naming the
	// field, and args is left as it was.
	for raw, want := range map[string]string{
		`{"labelkey": "x"}`:                    "labelkey: unknown field",
		"LABELKEY: x\n":                        "LABELKEY: unknown field",
		`{"budget": 1, "budget": 2}`:           "budget: given twice",
		`{"budget": 1} {"budget": 2}`:          "MyPlugin args: ",
		`[1, 2]`:                               "(the args object): cannot use array",
		`{"labelKey": "y", "lablKey": "typo"}`: "lablKey: unknown field",
	} {
		before := args
		err := DecodeArgs("MyPlugin", &k8sruntime.Unknown{Raw: []byte(raw)}, &args)
		require.ErrorIs(t, err, ErrInvalidArgs, raw)
		assert.Contains(t, err.Error(), want, raw)
		assert.Equal(t, before, args, "%s: args unchanged after an error", raw)
	}
}

// labelScorer is a user's scorer: it reads a pod label that schedkit's
// signature does not cover.
type labelScorer struct{}

func (labelScorer) Name() string { return "LabelScorer" }
func (labelScorer) Prepare(pod *snapshot.PodInfo, _ score.Cluster) (score.PodScorer, error) {
	return nil, nil
}

type signedLabelScorer struct{ labelScorer }

func (signedLabelScorer) SignPod(pod *v1.Pod) ([]fwk.SignFragment, error) {
	if pod.Annotations["bad"] != "" {
		return nil, errors.New("cannot sign")
	}
	return []fwk.SignFragment{{Key: "example.com/tier", Value: pod.Annotations["tier"]}}, nil
}

// TestWrappedSignPod: a wrapped scorer or filter is left out of upstream's
// batching (SignPod refuses: Unschedulable) unless it declares what it
// reads; built-in plugins sign as before; a declared signature carries the
// user's fragments after schedkit's.
func TestWrappedSignPod(t *testing.T) {
	ctx := context.Background()
	h := cluster(newNodeInfo(node("n", "4", "8Gi"), 1))
	p := pod("p", "1", "1Gi")
	p.Annotations = map[string]string{"tier": "gold"}

	for _, sp := range []fwk.SignPlugin{
		WrapScorer("Mine", labelScorer{}, h),
		WrapScorer("MineToo", score.NewImageLocality(), h), // a built-in scorer under a name of the user's: still the user's plugin
		WrapFilter("MyFilter", budgetFilter{}, h),
	} {
		frags, st := sp.SignPod(ctx, p)
		assert.Equal(t, fwk.Unschedulable, st.Code(), sp.Name())
		assert.Contains(t, st.Message(), "PodSigner", sp.Name())
		assert.Nil(t, frags)
	}

	builtin, err := NewSchedkitScore(ctx, nil, h)
	require.NoError(t, err)
	base, st := builtin.(fwk.SignPlugin).SignPod(ctx, p)
	require.True(t, st.IsSuccess())
	frags, st := WrapScorer("Signed", signedLabelScorer{}, h).SignPod(ctx, p)
	require.True(t, st.IsSuccess(), st.AsError())
	assert.Equal(t, append(base, fwk.SignFragment{Key: "example.com/tier", Value: "gold"}), frags)
	p.Annotations["bad"] = "1"
	_, st = WrapScorer("Signed", signedLabelScorer{}, h).SignPod(ctx, p)
	assert.Equal(t, fwk.Error, st.Code())

	for _, f := range []func(context.Context, k8sruntime.Object, fwk.Handle) (fwk.Plugin, error){NewSchedkitScore, NewSchedkitFit} {
		pl, err := f(ctx, nil, h)
		require.NoError(t, err)
		frags, st := pl.(fwk.SignPlugin).SignPod(ctx, p)
		require.True(t, st.IsSuccess(), pl.Name())
		assert.Equal(t, base, frags, pl.Name())
	}
}

// budgetFilter is a user's filter that signs nothing.
type budgetFilter struct{}

func (budgetFilter) Name() string { return "Budget" }
func (budgetFilter) PreFilter(*snapshot.PodInfo) (framework.PreFilterResult, error) {
	return framework.PreFilterResult{}, nil
}

// reservation holds all of a node's cpu for pods labelled app=owner.
func reservation(name, nodeName, cpu string) reserve.Reservation {
	return reserve.Reservation{Name: name, Node: nodeName,
		Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)},
		Owner:    reserve.Owner{Namespace: "default", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "owner"}}}}
}

// TestFilterSeesLedger: with a ledger in the profile, the fit filter
// refuses a node whose room a named reservation (or a hold made through
// the ledger) takes, as Reserve would, and passes it for the
// reservation's owner; without the ledger check the filter passed the
// node and Reserve then refused it (issue 19: pods stranded).
func TestFilterSeesLedger(t *testing.T) {
	ctx := context.Background()
	n1 := newNodeInfo(node("n1", "4", "8Gi"), 1)
	n2 := newNodeInfo(node("n2", "4", "8Gi"), 1)
	h := cluster(n1, n2)
	rpl, err := NewSchedkitReserve(ctx, nil, h)
	require.NoError(t, err)
	rp := rpl.(*ReservePlugin)
	l := rp.Ledger()
	require.NoError(t, l.AddNode(n1.node))
	require.NoError(t, l.AddNode(n2.node))
	short, err := l.AddReservation(reservation("r", "n1", "4"))
	require.NoError(t, err)
	require.Empty(t, short)

	fpl, err := NewSchedkitFit(ctx, nil, h)
	require.NoError(t, err)
	fp := fpl.(*FilterPlugin)
	filter := func(p *v1.Pod, ni *fakeNodeInfo) *fwk.Status {
		cs := newCycleState()
		_, st := fp.PreFilter(ctx, cs, p, infos(h))
		require.True(t, st.IsSuccess(), st.AsError())
		return fp.Filter(ctx, cs, p, ni)
	}
	other := pod("other", "1", "1Gi")
	st := filter(other, n1)
	assert.Equal(t, fwk.Unschedulable, st.Code())
	assert.Equal(t, []string{"Insufficient cpu"}, st.Reasons())
	assert.Equal(t, rp.Reserve(ctx, newCycleState(), other, "n1").Reasons(), st.Reasons(), "the filter's verdict is Reserve's")
	assert.True(t, filter(other, n2).IsSuccess())
	// Preemption's dry run hands Filter a copy of the node with victims
	// removed (a new generation): judged on its own pods, not the ledger's.
	cs := newCycleState()
	_, st = fp.PreFilter(ctx, cs, other, infos(h))
	require.True(t, st.IsSuccess())
	dry := n1.clone()
	dry.gen++
	assert.True(t, fp.Filter(ctx, cs, other, dry).IsSuccess())

	owner := pod("owner", "2", "1Gi")
	owner.Labels = map[string]string{"app": "owner"}
	assert.True(t, filter(owner, n1).IsSuccess(), "the owner draws on its reservation")

	// A hold made through the ledger, by a pod the scheduler never saw.
	pi, err := snapshot.NewPodInfo(pod("held", "3500m", "1Gi"))
	require.NoError(t, err)
	reasons, err := l.Reserve(pi, "n2")
	require.NoError(t, err)
	require.Empty(t, reasons)
	assert.Equal(t, fwk.Unschedulable, filter(other, n2).Code())

	// A user's filter is not changed: it reads the scheduler's nodes.
	uf := WrapFilter("Mine", mustFilter(framework.NewNodeResourcesFit(nil, nil)), h)
	cs = newCycleState()
	_, st = uf.PreFilter(ctx, cs, other, infos(h))
	require.True(t, st.IsSuccess(), st.AsError())
	assert.True(t, uf.Filter(ctx, cs, other, n1).IsSuccess())
}

// TestScoreSeesLedger: with a ledger in the profile, schedkit scorers
// score the ledger's view (named reservations as placeholders), so a
// reservation counts as requested; the scores are those of the scorer run
// on Ledger.Snapshot directly.
func TestScoreSeesLedger(t *testing.T) {
	ctx := context.Background()
	n1 := newNodeInfo(node("n1", "4", "8Gi"), 1)
	n2 := newNodeInfo(node("n2", "4", "8Gi"), 1)
	h := cluster(n1, n2)
	spl, err := NewSchedkitScore(ctx, nil, h) // LeastAllocated
	require.NoError(t, err)
	sp := spl.(*ScorePlugin)
	p := pod("p", "1", "2Gi")
	scores := func() (int64, int64) {
		cs := newCycleState()
		require.True(t, sp.PreScore(ctx, cs, p, infos(h)).IsSuccess())
		a, st := sp.Score(ctx, cs, p, n1)
		require.True(t, st.IsSuccess(), st.AsError())
		b, st := sp.Score(ctx, cs, p, n2)
		require.True(t, st.IsSuccess(), st.AsError())
		return a, b
	}
	a, b := scores()
	assert.Equal(t, a, b, "no ledger: identical nodes score alike")

	rpl, err := NewSchedkitReserve(ctx, nil, h)
	require.NoError(t, err)
	l := rpl.(*ReservePlugin).Ledger()
	require.NoError(t, l.AddNode(n1.node))
	require.NoError(t, l.AddNode(n2.node))
	_, err = l.AddReservation(reservation("r", "n1", "2"))
	require.NoError(t, err)
	a, b = scores()
	assert.Less(t, a, b, "n1's reservation counts as requested")

	pi, err := snapshot.NewPodInfo(p)
	require.NoError(t, err)
	snap := l.Snapshot()
	ps, err := sp.Scorer().Prepare(pi, snap)
	require.NoError(t, err)
	want := make([]int64, 2)
	ps.Score([]*snapshot.NodeInfo{snap.Get("n1"), snap.Get("n2")}, want)
	assert.Equal(t, want, []int64{a, b})
}

// churnHandles creates n framework handles, each with schedkit's three
// plugins (as a profile has them) that have mirrored 20 nodes, and drops
// them; it returns the live heap before and after, each after GC.
func churnHandles(t *testing.T, n int) (before, after uint64) {
	ctx := context.Background()
	heap := func() uint64 {
		var ms runtime.MemStats
		for range 3 {
			runtime.GC() // a collection runs the cleanups; the next frees what they unlinked
			time.Sleep(5 * time.Millisecond)
		}
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	one := func(i int) {
		var nodes []*fakeNodeInfo
		for j := range 20 {
			nodes = append(nodes, newNodeInfo(node(fmt.Sprintf("h%d-n%d", i, j), "4", "8Gi"), 1))
		}
		h := cluster(nodes...)
		for _, f := range []func(context.Context, k8sruntime.Object, fwk.Handle) (fwk.Plugin, error){NewSchedkitReserve, NewSchedkitFit, NewSchedkitScore} {
			pl, err := f(ctx, nil, h)
			require.NoError(t, err)
			if sp, ok := pl.(*ScorePlugin); ok {
				require.True(t, sp.PreScore(ctx, newCycleState(), pod("p", "1", "1Gi"), infos(h)).IsSuccess())
			}
		}
	}
	before = heap()
	for i := range n {
		one(i)
	}
	return before, heap()
}

// TestHandlesDoNotGrowHeap: creating and dropping 1,000 framework handles
// with schedkit's plugins leaves the live heap where it was. A mirror kept
// per handle after the handle is gone (the process-wide map of issue 13)
// costs ~50 KB each here, 50 MB in all; the margin is 1 MiB.
func TestHandlesDoNotGrowHeap(t *testing.T) {
	before, after := churnHandles(t, 1000)
	t.Logf("live heap %d -> %d bytes after 1,000 handles", before, after)
	assert.Less(t, int64(after)-int64(before), int64(1<<20), "live heap grew by more than 1 MiB")
}

// TestProfileOwnedByPlugins: the plugins of one handle share one profile
// (one mirror, the ledger); the look-up table keeps no entry once they are
// gone.
func TestProfileOwnedByPlugins(t *testing.T) {
	h := cluster(newNodeInfo(node("n", "4", "8Gi"), 1))
	sp := WrapScorer("S", score.NewImageLocality(), h)
	fp := WrapFilter("F", framework.NewNodeName(), h)
	rp, err := WrapLedger("R", reserve.New(), h)
	require.NoError(t, err)
	require.Same(t, sp.m, fp.m, "plugins of one handle share a profile")
	require.Same(t, sp.m, rp.m)
	assert.Same(t, rp.Ledger(), sp.m.Ledger())
	assert.NotSame(t, sp.m, WrapScorer("S", score.NewImageLocality(), cluster()).m, "another handle, another profile")
	runtime.KeepAlive(h)

	count := func() int {
		n := 0
		mirrors.Range(func(_, _ any) bool { n++; return true })
		return n
	}
	churnHandles(t, 100)
	for deadline := time.Now().Add(10 * time.Second); count() > 0 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	assert.Zero(t, count(), "entries left after their plugins were dropped")
}

// mustFilter returns f, panicking on err (arguments fixed in the test).
func mustFilter(f framework.Filter, err error) framework.Filter {
	if err != nil {
		panic(err)
	}
	return f
}
