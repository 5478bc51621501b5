package parity

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// ipaPair is one InterPodAffinity configuration on both sides.
type ipaPair struct {
	name     string
	ours     score.InterPodAffinityArgs // Namespaces set per case
	upstream *configv1.InterPodAffinityArgs
	plugin   fwk.Plugin
}

// nsLister is the namespaces of a case by name (the lookup h-objects
// puts on snapshot's store).
type nsLister map[string]*v1.Namespace

func (l nsLister) Namespace(name string) *v1.Namespace { return l[name] }

type ipaParity struct {
	u     *SpreadUpstream
	pairs []ipaPair
}

func newIPAParity(t testing.TB) *ipaParity {
	ctx := context.Background()
	u, err := NewSpreadUpstream(ctx)
	require.NoError(t, err)
	ip := &ipaParity{u: u, pairs: []ipaPair{
		{name: "Default", upstream: nil},
		{name: "Hard7Ignore", ours: score.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo(int32(7)), IgnorePreferredTermsOfExistingPods: true},
			upstream: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo(int32(7)), IgnorePreferredTermsOfExistingPods: true}},
		{name: "Hard0", ours: score.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo(int32(0))},
			upstream: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo(int32(0))}},
	}}
	for i := range ip.pairs {
		ip.pairs[i].plugin, err = u.IPAPlugin(ctx, ip.pairs[i].upstream)
		require.NoError(t, err, ip.pairs[i].name)
	}
	return ip
}

// ipaStats counts what the cases exercised, so the suite can require
// that the generator reaches every path.
type ipaStats struct {
	affinity, anti, existing, rejected, filterSkip, self, apiInvalid int
	scored, scoreSkip, distinct, negative                            int
}

// load gives upstream the case as the API server would have stored it.
func (ip *ipaParity) load(cs IPACase) error {
	ip.u.Load(cs.Nodes, AdmittedAll(cs.Bound))
	return ip.u.LoadNamespaces(cs.Namespaces)
}

// check compares one pair on one case: filter verdicts on every node,
// then raw and normalised scores on the candidates, with schedkit given
// the pods as written (admitted: false) or as the API server stores
// them (true). invalid (ipaInvalid): the API server would not store the
// case; then only schedkit's parse is checked. It returns "" or the first
// difference.
func (ip *ipaParity) check(cs IPACase, p *ipaPair, admitted, invalid bool, st *ipaStats) (string, error) {
	ctx := context.Background()
	ourCase := cs.Case
	if admitted {
		ourCase.Bound = AdmittedAll(cs.Bound)
	}
	ourPod := cs.Pod
	if admitted {
		ourPod = Admitted(cs.Pod)
	}
	upPod := Admitted(cs.Pod)
	// A case the API server would not store (an invalid selector, a bad
	// matchLabelKeys): schedkit rejects its pods when it parses them,
	// where upstream's plugin meets them at PreFilter
	// (TestDifferenceInvalidPodRejectedAtParse); nothing to compare.
	if invalid {
		st.apiInvalid++
		_, d, err := parseAgrees(append([]*v1.Pod{ourPod}, ourCase.Bound...)...)
		return d, err
	}
	snap, err := ourSnapshot(ourCase)
	if err != nil {
		return "", err
	}
	lister := nsLister{}
	for _, ns := range cs.Namespaces {
		lister[ns.Name] = ns
	}
	args := p.ours
	args.Namespaces = lister
	f, err := framework.NewInterPodAffinity(args)
	if err != nil {
		return "", err
	}
	s, err := score.NewInterPodAffinity(args)
	if err != nil {
		return "", err
	}
	pi, err := snapshot.NewPodInfo(ourPod)
	if err != nil {
		return "", err
	}
	nodes := make([]*snapshot.NodeInfo, len(cs.Nodes))
	for i, n := range cs.Nodes {
		nodes[i] = snap.Get(n.Name)
	}

	// Filter.
	up, upErr := ip.u.Filter(ctx, p.plugin, upPod)
	pre, ourErr := framework.RunPreFilter(f, pi, snap)
	if (upErr != nil) != (ourErr != nil) {
		return fmt.Sprintf("PreFilter error: ours %v, upstream %v", ourErr, upErr), nil
	}
	if upErr != nil {
		return "", fmt.Errorf("upstream PreFilter: %w", upErr)
	}
	if pre.Filter == nil && pre.Reject == "" {
		st.filterSkip++
	}
	if pre.Reject != "" {
		st.rejected++
	}
	ours := ourVerdicts(pre, nodes)
	for j := range nodes {
		if !sameVerdict(ours.Verdicts[j], up.Verdicts[j]) {
			return fmt.Sprintf("filter on %s: ours %v, upstream %v", cs.Nodes[j].Name, ours.Verdicts[j], up.Verdicts[j]), nil
		}
		if pre.Reject != "" || len(up.Verdicts[j].Reasons) == 0 {
			continue
		}
		switch up.Verdicts[j].Reasons[0] {
		case "node(s) didn't match pod affinity rules":
			st.affinity++
		case "node(s) didn't match pod anti-affinity rules":
			st.anti++
		case "node(s) didn't satisfy existing pods anti-affinity rules":
			st.existing++
		}
	}
	if pre.Filter != nil && hasRequiredAffinity(cs.Pod) && selfOnly(cs, up) {
		st.self++
	}
	if pre.Reject != "" {
		return "", nil // upstream never scores a pod its PreFilter rejects
	}

	// Score.
	cands := make([]*snapshot.NodeInfo, len(cs.Candidates))
	for i, c := range cs.Candidates {
		cands[i] = nodes[c]
	}
	upS, upErr := ip.u.ScoreOn(ctx, p.plugin, upPod, cs.Candidates)
	ps, ourErr := s.Prepare(pi, snap)
	if (upErr != nil) != (ourErr != nil) {
		return fmt.Sprintf("score error: ours %v, upstream %v", ourErr, upErr), nil
	}
	if upErr != nil {
		return "", fmt.Errorf("upstream score: %w", upErr)
	}
	if (ps == nil) != upS.Skipped {
		return fmt.Sprintf("score skipped: ours %v, upstream %v", ps == nil, upS.Skipped), nil
	}
	if ps == nil {
		st.scoreSkip++
		return "", nil
	}
	st.scored++
	raw := make([]int64, len(cands))
	ps.Score(cands, raw)
	if !slices.Equal(raw, upS.Raw) {
		return fmt.Sprintf("raw scores of %v: ours %v, upstream %v", cs.Candidates, raw, upS.Raw), nil
	}
	norm := slices.Clone(raw)
	if err := ps.(score.Normalizer).Normalize(cands, norm); err != nil {
		return "", err
	}
	if !slices.Equal(norm, upS.Normalized) {
		return fmt.Sprintf("normalised scores of %v: ours %v, upstream %v", cs.Candidates, norm, upS.Normalized), nil
	}
	if len(slices.Compact(slices.Sorted(slices.Values(norm)))) > 1 {
		st.distinct++
	}
	if slices.Min(raw) < 0 {
		st.negative++
	}
	return "", nil
}

func hasRequiredAffinity(p *v1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}

// selfOnly reports a case where the pod's affinity is satisfied only as
// the first pod of its group: the pod starts a group (its first required
// affinity term selects a label no bound pod has) and passes some node.
// ipaInvalid: whether the API server would refuse some pod of cs, as
// written or as it stores it (APIInvalid).
func ipaInvalid(cs IPACase) (bool, error) {
	pods := append([]*v1.Pod{cs.Pod, Admitted(cs.Pod)}, cs.Bound...)
	bad, _, err := APIInvalid(append(pods, AdmittedAll(cs.Bound)...)...)
	return bad != nil, err
}

func selfOnly(cs IPACase, up FilterResult) bool {
	if cs.Pod.Labels[LabelGroup] != "first" {
		return false
	}
	for _, v := range up.Verdicts {
		if v.Code == fwk.Success {
			return true
		}
	}
	return false
}

// ipaConfig: clusters of 8 nodes with up to 6 pods each.
func ipaConfig() Config {
	cfg := DefaultConfig()
	cfg.Nodes = 8
	return cfg
}

// TestParityInterPodAffinity: upstream's own InterPodAffinity (three
// argument sets) against schedkit's filter and scorer on 10,000 seeded
// cases of 8 nodes, schedkit given the pods both as written and as the
// API server stores them: the same status code and reason on every
// node, the same PreFilter rejection, the same Skip, the same raw and
// normalised score on every candidate.
func TestParityInterPodAffinity(t *testing.T) {
	ip := newIPAParity(t)
	g := NewGen(paritySeed+15, ipaConfig())
	stats := make([]ipaStats, len(ip.pairs))
	failures := make([]int, len(ip.pairs))
	for c := 0; c < parityCases; c++ {
		cs := g.IPACase()
		require.NoError(t, ip.load(cs))
		invalid, err := ipaInvalid(cs)
		require.NoError(t, err)
		for i := range ip.pairs {
			for _, admitted := range []bool{false, true} {
				st := &stats[i]
				if admitted {
					st = &ipaStats{}
				}
				d, err := ip.check(cs, &ip.pairs[i], admitted, invalid, st)
				require.NoError(t, err, "case %d", c)
				if d == "" {
					continue
				}
				if failures[i] < 3 {
					t.Errorf("case %d %s admitted=%v: %s\npod: %s\nnodes: %s\nbound: %s\nnamespaces: %s\ncandidates: %v", c, ip.pairs[i].name, admitted, d, dump(cs.Pod), dump(cs.Nodes), dump(cs.Bound), dump(cs.Namespaces), cs.Candidates)
				}
				failures[i]++
			}
		}
	}
	for i, p := range ip.pairs {
		s := stats[i]
		t.Logf("%-11s %d cases, %d differ; filter: %d affinity, %d anti-affinity, %d existing anti-affinity rejections, %d first-of-group passes, %d rejected pods, %d skipped, %d invalid for the API server; score: %d scored (%d with distinct scores, %d with negative raw), %d skipped",
			p.name, parityCases, failures[i], s.affinity, s.anti, s.existing, s.self, s.rejected, s.filterSkip, s.apiInvalid, s.scored, s.distinct, s.negative, s.scoreSkip)
		require.Zero(t, failures[i], p.name)
		require.Greater(t, s.affinity, 1000, p.name)
		require.Greater(t, s.anti, 1000, p.name)
		require.Greater(t, s.existing, 300, p.name)
		require.Greater(t, s.self, 50, p.name)
		require.Greater(t, s.apiInvalid, 100, p.name)
		require.Greater(t, s.filterSkip, 300, p.name)
		require.Greater(t, s.scored, 2000, p.name)
		require.Greater(t, s.distinct, 1000, p.name)
		require.Greater(t, s.negative, 300, p.name)
		require.Greater(t, s.scoreSkip, 300, p.name)
	}
}

// FuzzParityInterPodAffinity: any seed and cluster size give the same
// verdicts and scores.
func FuzzParityInterPodAffinity(f *testing.F) {
	for _, seed := range []uint64{0, 1, paritySeed, 1 << 40} {
		f.Add(seed, uint8(8))
	}
	ip := newIPAParity(f)
	f.Fuzz(func(t *testing.T, seed uint64, nodes uint8) {
		cfg := ipaConfig()
		cfg.Nodes = 1 + int(nodes%16)
		cs := NewGen(seed, cfg).IPACase()
		require.NoError(t, ip.load(cs))
		invalid, err := ipaInvalid(cs)
		require.NoError(t, err)
		for i := range ip.pairs {
			for _, admitted := range []bool{false, true} {
				d, err := ip.check(cs, &ip.pairs[i], admitted, invalid, &ipaStats{})
				require.NoError(t, err)
				require.Empty(t, d, "%s admitted=%v\npod: %s\nnodes: %s\nbound: %s\nnamespaces: %s\ncandidates: %v", ip.pairs[i].name, admitted, dump(cs.Pod), dump(cs.Nodes), dump(cs.Bound), dump(cs.Namespaces), cs.Candidates)
			}
		}
	})
}
