package whatif_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
	"github.com/schedkit/schedkit/whatif"
)

// scaleUpCase: one existing node "old" (2 CPU, 1 used); pending: "fits"
// (1 CPU, fits old), five "web" pods of a ReplicaSet (2 CPU, 4Gi) and
// "huge" (64 CPU, fits no template). Groups: small (4 CPU, 8Gi,
// priority 5) and large (16 CPU, 32Gi, priority 10), 10 nodes each.
func scaleUpCase() (*v1.Node, []*v1.Pod, []whatif.NodeGroup) {
	old := snapshottest.MakeNode("old").Capacity("cpu", "2", "memory", "4Gi", "pods", "110").Obj()
	pending := []*v1.Pod{snapshottest.MakePod("fits").Req("cpu", "1").Obj()}
	for i := range 5 {
		pending = append(pending, owned(snapshottest.MakePod(fmt.Sprintf("web-%d", i)).Req("cpu", "2", "memory", "4Gi").Obj(), "ReplicaSet", "web"))
	}
	pending = append(pending, snapshottest.MakePod("huge").Req("cpu", "64").Obj())
	groups := []whatif.NodeGroup{
		{Name: "small", Template: snapshottest.MakeNode("t").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj(), MaxNodes: 10, Priority: 5},
		{Name: "large", Template: snapshottest.MakeNode("t").Capacity("cpu", "16", "memory", "32Gi", "pods", "110").Obj(), MaxNodes: 10, Priority: 10},
	}
	return old, pending, groups
}

func names(ps []whatif.Placement) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Pod.Key().Name)
	}
	return out
}

// TestScaleUpArithmetic checks the estimate and the expanders.
//
// "fits" goes on old (1 CPU free); no group is needed for it.
// Order against small: huge scores 64/4 = 16, web 2/4 + 4/8 = 1: huge
// first. huge fits no fresh small node: the node added for it
// (small-new-0) stays empty and huge stays pending; the webs fill
// small-new-0 (2 × 2 CPU = 4), small-new-1 (2) and small-new-2 (1):
// 3 nodes with pods. large: 16/2 = 8 webs per node, 1 node.
//
// least-waste: small: cpu (3 × 4000 − 5 × 2000) / 12000 = 1/6, memory
// (3 × 8Gi − 5 × 4Gi) / 24Gi = 1/6, total 1/3; large: (16000 −
// 10000) / 16000 + (32Gi − 20Gi) / 32Gi = 0.375 + 0.375 = 0.75: small.
// priority: large (10 > 5). most-pods: 5 and 5, a tie (see
// TestScaleUpExpanderTie).
func TestScaleUpArithmetic(t *testing.T) {
	old, pending, groups := scaleUpCase()
	f := forkOf(t, []*v1.Node{old}, []*v1.Pod{snapshottest.MakePod("used").Req("cpu", "1").Node("old").Obj()})
	before := contentOf(f)
	got, err := whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{})
	require.NoError(t, err)
	assert.Equal(t, before, contentOf(f))
	assert.Equal(t, 0, f.Depth())

	require.Len(t, got.Existing, 1)
	assert.Equal(t, "default/fits -> old", got.Existing[0].String())
	small, large := got.Groups[0], got.Groups[1]
	assert.Equal(t, 3, small.NodesAdded)
	assert.Equal(t, []string{"web-0", "web-1", "web-2", "web-3", "web-4"}, names(small.Placed))
	require.Len(t, small.Pending, 1)
	assert.Equal(t, "huge", small.Pending[0].Pod.Key().Name)
	assert.Contains(t, small.Pending[0].Diagnosis.Message(), "1 Insufficient cpu")
	perNode := map[string]int{}
	for _, p := range small.Placed {
		perNode[p.Node]++
	}
	assert.Equal(t, map[string]int{"small-new-0": 2, "small-new-1": 2, "small-new-2": 1}, perNode)
	assert.InDelta(t, 1.0/3, small.Waste, 1e-12)

	assert.Equal(t, 1, large.NodesAdded)
	assert.Len(t, large.Placed, 5)
	assert.InDelta(t, 0.75, large.Waste, 1e-12)

	assert.Equal(t, 0, got.Chosen)
	assert.Equal(t, "least-waste: small (waste 0.3333)", got.Why)

	got, err = whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{Expander: whatif.ExpanderPriority})
	require.NoError(t, err)
	assert.Equal(t, 1, got.Chosen)
	assert.Equal(t, "priority: large (priority 10)", got.Why)
}

// TestScaleUpExpanderTie: most-pods sees 5 and 5; the random fallback
// picks with the seed: the same seed the same group, and over seeds both.
func TestScaleUpExpanderTie(t *testing.T) {
	old, pending, groups := scaleUpCase()
	f := forkOf(t, []*v1.Node{old}, nil)
	seen := map[int]bool{}
	for seed := range uint64(16) {
		cfg := whatif.ScaleUpConfig{Expander: whatif.ExpanderMostPods, Seed: seed}
		a, err := whatif.ScaleUp(f, pending, groups, cfg)
		require.NoError(t, err)
		b, err := whatif.ScaleUp(f, pending, groups, cfg)
		require.NoError(t, err)
		assert.Equal(t, a.Chosen, b.Chosen, "seed %d", seed)
		assert.Contains(t, a.Why, fmt.Sprintf("chosen at random (seed %d) among [small large] (5 pods)", seed))
		seen[a.Chosen] = true
	}
	assert.Equal(t, map[int]bool{0: true, 1: true}, seen)
}

// TestScaleUpLimits: small may add 2 nodes: small-new-0 (added for huge,
// which does not fit it) takes web-0 and web-1, small-new-1 web-2 and
// web-3; web-4 needs a third node: node limit. With a clock that
// advances 1s per read and MaxDuration 1.5s: start t0; the first add
// reads t0+1s (<= 1.5s, added, for huge), web-0 and web-1 fill it; the
// next add reads t0+2s > 1.5s: web-2..web-4 pending by the time limit.
func TestScaleUpLimits(t *testing.T) {
	old, pending, groups := scaleUpCase()
	groups = groups[:1]
	f := forkOf(t, []*v1.Node{old}, nil)
	groups[0].MaxNodes = 2
	got, err := whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{})
	require.NoError(t, err)
	ge := got.Groups[0]
	assert.Equal(t, 2, ge.NodesAdded)
	assert.Equal(t, []string{"web-0", "web-1", "web-2", "web-3"}, names(ge.Placed))
	assert.Equal(t, []string{"huge", "web-4"}, names(ge.Pending))
	assert.Equal(t, "node limit: group small may add 2 node(s)", ge.Pending[1].Why)

	groups[0].MaxNodes = 10
	t0 := time.Unix(0, 0)
	reads := 0
	clock := func() time.Time { reads++; return t0.Add(time.Duration(reads-1) * time.Second) }
	got, err = whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{MaxDuration: 1500 * time.Millisecond, Now: clock})
	require.NoError(t, err)
	ge = got.Groups[0]
	assert.Equal(t, 1, ge.NodesAdded)
	assert.Equal(t, []string{"web-0", "web-1"}, names(ge.Placed))
	assert.Equal(t, []string{"huge", "web-2", "web-3", "web-4"}, names(ge.Pending))
	assert.Equal(t, "time limit: the estimate ran longer than 1.5s", ge.Pending[1].Why)
	assert.Equal(t, "time limit: the estimate ran longer than 1.5s", ge.Pending[3].Why)
}

// TestScaleUpNoGroupFits: only huge pending: every group adds an empty
// node that does not take it; no group is chosen.
func TestScaleUpNoGroupFits(t *testing.T) {
	old, pending, groups := scaleUpCase()
	f := forkOf(t, []*v1.Node{old}, nil)
	got, err := whatif.ScaleUp(f, pending[len(pending)-1:], groups, whatif.ScaleUpConfig{})
	require.NoError(t, err)
	assert.Equal(t, -1, got.Chosen)
	assert.Equal(t, "no node group places a pending pod", got.Why)
	for _, ge := range got.Groups {
		assert.Equal(t, 0, ge.NodesAdded)
		assert.Equal(t, []string{"huge"}, names(ge.Pending))
	}
}

// TestScaleUpFirstFitArithmetic: n identical pods of c milli-CPU on a
// template of C milli-CPU (memory and pods ample) need ceil(n /
// floor(C / c)) nodes — the bin-packing lower bound, which first-fit
// meets for equal items — on random values.
func TestScaleUpFirstFitArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 40 {
		n, c, capacity := 1+r.IntN(60), 100*(1+r.IntN(20)), 1000*(1+r.IntN(16))
		if c > capacity {
			c = capacity
		}
		var pending []*v1.Pod
		for i := range n {
			pending = append(pending, owned(snapshottest.MakePod(fmt.Sprintf("p-%d", i)).Req("cpu", fmt.Sprintf("%dm", c)).Obj(), "ReplicaSet", "rs"))
		}
		groups := []whatif.NodeGroup{{Name: "g", Template: snapshottest.MakeNode("t").Capacity("cpu", fmt.Sprintf("%dm", capacity), "memory", "1Ti", "pods", "1000").Obj(), MaxNodes: 1000}}
		f := forkOf(t, nil, nil)
		got, err := whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{Scheduler: framework.Config{Seed: uint64(n)}})
		require.NoError(t, err)
		per := capacity / c
		want := (n + per - 1) / per
		assert.Equal(t, want, got.Groups[0].NodesAdded, "n=%d c=%dm C=%dm", n, c, capacity)
		assert.Len(t, got.Groups[0].Placed, n)
	}
}

func TestScaleUpErrors(t *testing.T) {
	old, pending, groups := scaleUpCase()
	f := forkOf(t, []*v1.Node{old}, nil)
	before := contentOf(f)
	for name, c := range map[string]struct {
		pending []*v1.Pod
		groups  []whatif.NodeGroup
		cfg     whatif.ScaleUpConfig
		msg     string
	}{
		"nil pod":        {pending: []*v1.Pod{nil}, groups: groups, msg: "pending[0] is nil"},
		"no name":        {pending: pending, groups: []whatif.NodeGroup{{Template: groups[0].Template}}, msg: "groups[0].Name is empty"},
		"repeated":       {pending: pending, groups: []whatif.NodeGroup{groups[0], groups[0]}, msg: `groups[1]: group "small" repeats`},
		"nil template":   {pending: pending, groups: []whatif.NodeGroup{{Name: "x"}}, msg: "group x: Template is nil"},
		"negative max":   {pending: pending, groups: []whatif.NodeGroup{{Name: "x", Template: groups[0].Template, MaxNodes: -1}}, msg: "group x: MaxNodes -1 is negative"},
		"no clock":       {pending: pending, groups: groups, cfg: whatif.ScaleUpConfig{MaxDuration: time.Second}, msg: "Now is nil"},
		"bad expander":   {pending: pending, groups: groups, cfg: whatif.ScaleUpConfig{Expander: 9}, msg: "Expander Expander(9) is unknown"},
		"negative limit": {pending: pending, groups: groups, cfg: whatif.ScaleUpConfig{MaxNodes: -2}, msg: "MaxNodes -2 is negative"},
	} {
		_, err := whatif.ScaleUp(f, c.pending, c.groups, c.cfg)
		assert.ErrorIs(t, err, whatif.ErrInvalidInput, name)
		assert.ErrorContains(t, err, c.msg, name)
	}
	// A new node's name taken by an existing node is skipped
	// (TestScaleUpSkipsTakenNames).
	clash := []whatif.NodeGroup{{Name: "old", Template: groups[0].Template, MaxNodes: 1}}
	taken := forkOf(t, []*v1.Node{snapshottest.MakeNode("old-new-0").Capacity("cpu", "1").Obj()}, nil)
	got, err := whatif.ScaleUp(taken, pending[1:2], clash, whatif.ScaleUpConfig{})
	require.NoError(t, err)
	require.Len(t, got.Groups[0].Placed, 1)
	assert.Equal(t, "old-new-1", got.Groups[0].Placed[0].Node)
	assert.Equal(t, 0, taken.Depth())
	assert.Equal(t, before, contentOf(f))
	assert.Equal(t, 0, f.Depth())
}

// TestScaleUpEmptyLastNode: with room for one new node, huge adds it and
// does not fit; huge-2 (another class) then finds the last node added
// still empty, so the estimator adds no node for it (no fresh node would
// take it) and it is pending by its diagnosis, not by the node limit;
// the webs then use that node: web-0 and web-1 (2 × 2 of 4 CPU) placed,
// web-2 stopped by the limit.
func TestScaleUpEmptyLastNode(t *testing.T) {
	old, pending, groups := scaleUpCase()
	pending = append(pending, snapshottest.MakePod("huge-2").Req("cpu", "32").Obj())
	groups = groups[:1]
	groups[0].MaxNodes = 1
	got, err := whatif.ScaleUp(forkOf(t, []*v1.Node{old}, nil), pending, groups, whatif.ScaleUpConfig{})
	require.NoError(t, err)
	ge := got.Groups[0]
	assert.Equal(t, []string{"web-0", "web-1"}, names(ge.Placed))
	assert.Equal(t, []string{"huge", "huge-2", "web-2", "web-3", "web-4"}, names(ge.Pending))
	require.NotNil(t, ge.Pending[1].Diagnosis)
	assert.Contains(t, ge.Pending[1].Diagnosis.Message(), "1 Insufficient cpu")
	assert.Equal(t, "node limit: group small may add 1 node(s)", ge.Pending[2].Why)
}

// TestScaleUpPendingMessage: huge (64 CPU) fits no fresh small node
// (4 CPU). Its diagnosis comes from the cycle on the node just added
// (small-new-0), the other node (old) excluded: the message says so in
// the estimate's words, as huge-2's does for the nodes the estimate did
// not add, and names no internal plugin (it said "1 node(s) didn't
// satisfy plugin(s) [LastNewNode]").
func TestScaleUpPendingMessage(t *testing.T) {
	old, pending, groups := scaleUpCase()
	huge2 := pending[len(pending)-1].DeepCopy()
	huge2.Name = "huge-2"
	pending = append(pending, huge2)
	got, err := whatif.ScaleUp(forkOf(t, []*v1.Node{old}, nil), pending, groups[:1], whatif.ScaleUpConfig{})
	require.NoError(t, err)
	ge := got.Groups[0]
	require.Equal(t, []string{"huge", "huge-2"}, names(ge.Pending))
	assert.Equal(t, "default/huge: 0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were not the last node added by the scale-up estimate.", ge.Pending[0].String())
	assert.Equal(t, "default/huge-2: 0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were not added by the scale-up estimate.", ge.Pending[1].String())
	for _, p := range ge.Pending {
		assert.NotContains(t, p.String(), "LastNewNode")
	}
}

// TestScaleUpWasteFromAllocatable: templates giving status.allocatable
// only (no status.capacity) score as scaleUpCase's templates with both:
// small 1/3, large 0.75, small chosen; a template with neither cpu nor
// memory is an error naming the group and the resource under
// least-waste, and is accepted by the other expanders.
func TestScaleUpWasteFromAllocatable(t *testing.T) {
	old, pending, groups := scaleUpCase()
	for i := range groups {
		groups[i].Template.Status.Capacity = nil
	}
	f := forkOf(t, []*v1.Node{old}, []*v1.Pod{snapshottest.MakePod("used").Req("cpu", "1").Node("old").Obj()})
	got, err := whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{})
	require.NoError(t, err)
	assert.InDelta(t, 1.0/3, got.Groups[0].Waste, 1e-12)
	assert.InDelta(t, 0.75, got.Groups[1].Waste, 1e-12)
	assert.Equal(t, 0, got.Chosen)
	assert.Equal(t, "least-waste: small (waste 0.3333)", got.Why)

	before := contentOf(f)
	for _, c := range []struct {
		template *v1.Node
		msg      string
	}{
		{snapshottest.MakeNode("t").Obj(), "group bare: Template has no cpu in status.capacity or status.allocatable"},
		{snapshottest.MakeNode("t").Allocatable("cpu", "4", "pods", "110").Obj(), "group bare: Template has no memory in status.capacity or status.allocatable"},
	} {
		bad := append(groups[:1:1], whatif.NodeGroup{Name: "bare", Template: c.template, MaxNodes: 1})
		_, err = whatif.ScaleUp(f, pending, bad, whatif.ScaleUpConfig{})
		assert.ErrorIs(t, err, whatif.ErrInvalidInput)
		assert.ErrorContains(t, err, c.msg)
		_, err = whatif.ScaleUp(f, pending, bad, whatif.ScaleUpConfig{Expander: whatif.ExpanderMostPods})
		assert.NoError(t, err)
	}
	assert.Equal(t, before, contentOf(f))
	assert.Equal(t, 0, f.Depth())
}
