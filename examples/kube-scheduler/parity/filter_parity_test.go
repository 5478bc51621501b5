package parity

import (
	"context"
	"fmt"
	"github.com/schedkit/schedkit/internal/resname"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
)

// filterPair is one schedkit filter and the upstream plugin it must equal.
type filterPair struct {
	name   string
	ours   framework.Filter
	plugin string
	args   runtime.Object
}

func filterPairs() []filterPair {
	enforced := &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{
			{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpNotIn, Values: []string{"zone-c"}}}},
			{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "gpu", Operator: v1.NodeSelectorOpExists}}},
		},
	}}
	return []filterPair{
		{name: "NodeName", ours: framework.NewNodeName(), plugin: names.NodeName},
		{name: "NodeUnschedulable", ours: framework.NewNodeUnschedulable(), plugin: names.NodeUnschedulable},
		{name: "TaintToleration", ours: framework.NewTaintToleration(), plugin: names.TaintToleration},
		{name: "NodeAffinity", ours: must(framework.NewNodeAffinity(nil)), plugin: names.NodeAffinity},
		{name: "NodeAffinity/enforced", ours: must(framework.NewNodeAffinity(enforced)), plugin: names.NodeAffinity,
			args: &configv1.NodeAffinityArgs{AddedAffinity: enforced}},
		{name: "NodePorts", ours: framework.NewNodePorts(), plugin: names.NodePorts},
		{name: "NodeResourcesFit", ours: mustFilter(framework.NewNodeResourcesFit(nil, nil)), plugin: names.NodeResourcesFit},
		{name: "NodeResourcesFit/ignored", ours: mustFilter(framework.NewNodeResourcesFit([]string{string(ResourceFoo)}, []string{"nvidia.com"})),
			plugin: names.NodeResourcesFit,
			args:   &configv1.NodeResourcesFitArgs{IgnoredResources: []string{string(ResourceFoo)}, IgnoredResourceGroups: []string{"nvidia.com"}}},
	}
}

// must unwraps a constructor result in a table; a bad table is a test bug.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// ourFilter runs one schedkit filter like upstream's harness runs a plugin:
// PreFilter (a nil Filter passes every node; Reject rejects every node as
// UnschedulableAndUnresolvable), then Filter on every node, narrowing not
// applied.
func ourFilter(f framework.Filter, pi *snapshot.PodInfo, nodes []*snapshot.NodeInfo) (FilterResult, error) {
	pre, err := f.PreFilter(pi)
	if err != nil {
		return FilterResult{Verdicts: make([]Verdict, len(nodes))}, err
	}
	return ourVerdicts(pre, nodes), nil
}

// ourVerdicts is the rest of ourFilter, after PreFilter.
func ourVerdicts(pre framework.PreFilterResult, nodes []*snapshot.NodeInfo) FilterResult {
	res := FilterResult{Verdicts: make([]Verdict, len(nodes))}
	if pre.Reject != "" {
		for i := range res.Verdicts {
			res.Verdicts[i] = Verdict{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{pre.Reject}}
		}
		return res
	}
	if pre.NodeNames != nil {
		res.NodeNames = slices.Sorted(slices.Values(slices.Clone(pre.NodeNames)))
		res.NodeNames = slices.Compact(res.NodeNames)
	}
	if pre.Filter == nil {
		return res
	}
	buf := make([]framework.Reason, 0, 16)
	for i, ni := range nodes {
		rs := pre.Filter.Filter(ni, buf[:0])
		if len(rs) == 0 {
			continue
		}
		v := Verdict{Code: fwk.Unschedulable}
		for j := range rs {
			if rs[j].Unresolvable {
				v.Code = fwk.UnschedulableAndUnresolvable
			}
			v.Reasons = append(v.Reasons, rs[j].Message())
		}
		res.Verdicts[i] = v
	}
	return res
}

// sameVerdict compares codes exactly and reasons as multisets: upstream's
// NodeResourcesFit lists scalar resources in map order (random), ours by
// ResourceID.
func sameVerdict(a, b Verdict) bool {
	if a.Code != b.Code || len(a.Reasons) != len(b.Reasons) {
		return false
	}
	x, y := slices.Sorted(slices.Values(a.Reasons)), slices.Sorted(slices.Values(b.Reasons))
	return slices.Equal(x, y)
}

type filterParity struct {
	u       *Upstream
	pairs   []filterPair
	plugins []fwk.Plugin
}

func newFilterParity(t testing.TB) *filterParity {
	ctx := context.Background()
	u, err := NewUpstream(ctx)
	require.NoError(t, err)
	fp := &filterParity{u: u, pairs: filterPairs()}
	for _, p := range fp.pairs {
		pl, err := u.Plugin(ctx, p.plugin, p.args)
		require.NoError(t, err, p.name)
		fp.plugins = append(fp.plugins, pl)
	}
	return fp
}

// check compares every pair on one case; it returns a message per differing
// pair and the number of (pair, node) rejections seen, for coverage.
func (fp *filterParity) check(cs Case) (map[string]string, map[string]int, error) {
	ctx := context.Background()
	upCase := CountedOnceCaseForUpstream(cs) // deliberate difference: overhead counted once
	fp.u.Load(upCase.Nodes, upCase.Bound)
	snap, err := ourSnapshot(cs)
	if err != nil {
		return nil, nil, err
	}
	nodes := make([]*snapshot.NodeInfo, len(cs.Nodes))
	for i, n := range cs.Nodes {
		nodes[i] = snap.Get(n.Name)
	}
	pi, err := snapshot.NewPodInfo(cs.Pod)
	if err != nil {
		return nil, nil, err
	}
	diffs, rejected := map[string]string{}, map[string]int{}
	for i, p := range fp.pairs {
		up, err := fp.u.Filter(ctx, fp.plugins[i], upCase.Pod)
		if err != nil {
			return nil, nil, fmt.Errorf("%s upstream: %w", p.name, err)
		}
		ours, err := ourFilter(p.ours, pi, nodes)
		if err != nil {
			return nil, nil, fmt.Errorf("%s ours: %w", p.name, err)
		}
		if !slices.Equal(ours.NodeNames, up.NodeNames) {
			diffs[p.name] = fmt.Sprintf("%s PreFilter NodeNames: ours %q, upstream %q", p.name, ours.NodeNames, up.NodeNames)
			continue
		}
		for j := range nodes {
			if !sameVerdict(ours.Verdicts[j], up.Verdicts[j]) {
				diffs[p.name] = fmt.Sprintf("%s on %s: ours %v, upstream %v", p.name, cs.Nodes[j].Name, ours.Verdicts[j], up.Verdicts[j])
				break
			}
			if up.Verdicts[j].Code != fwk.Success {
				rejected[p.name]++
			}
		}
	}
	return diffs, rejected, nil
}

// TestParityFilters: the six upstream filters (and two argument variants)
// on 10,000 seeded cases of 6 nodes: identical status codes and reasons on
// every node, identical PreFilter node sets.
func TestParityFilters(t *testing.T) {
	fp := newFilterParity(t)
	g := NewGen(paritySeed+3, DefaultConfig())
	failures, rejected := map[string]int{}, map[string]int{}
	pendingResized, pendingDiffers := 0, 0
	for c := 0; c < parityCases; c++ {
		cs := g.Case()
		if resname.HasResizeStatus(cs.Pod) {
			pendingResized++
			if r := snapshot.MustPodInfo(cs.Pod).Requests(); !r.Pending.Equal(&r.Requested) {
				pendingDiffers++
			}
		}
		diffs, rej, err := fp.check(cs)
		require.NoError(t, err, "case %d", c)
		for name, d := range diffs {
			if failures[name] == 0 {
				t.Errorf("case %d %s\npod: %s\nnodes: %s\nbound: %s", c, d, dump(cs.Pod), dump(cs.Nodes), dump(cs.Bound))
			}
			failures[name]++
		}
		for name, n := range rej {
			rejected[name] += n
		}
	}
	// The pending pod is judged on its spec, as upstream's PreFilter.
	t.Logf("pending pods with resize status: %d (their request without status differs in %d)", pendingResized, pendingDiffers)
	require.Greater(t, pendingDiffers, 100, "the generator must give pending pods status that changes their request")
	for _, p := range fp.pairs {
		t.Logf("%-26s %d cases (%d node rejections), %d differ", p.name, parityCases, rejected[p.name], failures[p.name])
		require.Greater(t, rejected[p.name], 100, "%s: the generator must make it reject nodes", p.name)
	}
}

// FuzzParityFilters: any seed and cluster size give identical verdicts.
func FuzzParityFilters(f *testing.F) {
	for _, seed := range []uint64{0, 1, paritySeed, 1 << 40} {
		f.Add(seed, uint8(6))
	}
	fp := newFilterParity(f)
	f.Fuzz(func(t *testing.T, seed uint64, nodes uint8) {
		cfg := DefaultConfig()
		cfg.Nodes = 1 + int(nodes%16)
		cfg.PNodeName = 0.2
		cs := NewGen(seed, cfg).Case()
		diffs, _, err := fp.check(cs)
		require.NoError(t, err)
		require.Empty(t, diffs, "pod: %s\nnodes: %s\nbound: %s", dump(cs.Pod), dump(cs.Nodes), dump(cs.Bound))
	})
}

// mustFilter returns f, panicking on err (arguments fixed in the test).
func mustFilter(f framework.Filter, err error) framework.Filter {
	if err != nil {
		panic(err)
	}
	return f
}
