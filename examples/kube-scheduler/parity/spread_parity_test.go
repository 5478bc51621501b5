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

// spreadPair is one PodTopologySpread configuration on both sides.
type spreadPair struct {
	name string
	ours score.PodTopologySpreadArgs // Workloads set per case
	// viaCache: our side reads the objects from the snapshot of a Cache
	// they were fed to (Workloads nil; objects_parity_test.go), not from
	// a WorkloadIndex.
	viaCache bool
	upstream *configv1.PodTopologySpreadArgs
	plugin   fwk.Plugin
}

// listDefaults are List default constraints with every knob a default
// constraint may set: a DoNotSchedule zone constraint with minDomains
// above the 3 zones, a hostname and a rack ScheduleAnyway one, the rack one
// honouring taints.
func listDefaults() []v1.TopologySpreadConstraint {
	return []v1.TopologySpreadConstraint{
		{TopologyKey: v1.LabelTopologyZone, MaxSkew: 2, WhenUnsatisfiable: v1.DoNotSchedule, MinDomains: ptrTo(int32(4))},
		{TopologyKey: v1.LabelHostname, MaxSkew: 1, WhenUnsatisfiable: v1.ScheduleAnyway},
		{TopologyKey: LabelRack, MaxSkew: 3, WhenUnsatisfiable: v1.ScheduleAnyway, NodeTaintsPolicy: ptrTo(v1.NodeInclusionPolicyHonor)},
	}
}

type spreadParity struct {
	u     *SpreadUpstream
	pairs []spreadPair
}

func newSpreadParity(t testing.TB) *spreadParity {
	ctx := context.Background()
	u, err := NewSpreadUpstream(ctx)
	require.NoError(t, err)
	sp := &spreadParity{u: u, pairs: []spreadPair{
		{name: "System", upstream: nil},
		{name: "System (Cache)", upstream: nil, viaCache: true},
		{name: "List", ours: score.PodTopologySpreadArgs{DefaultConstraints: listDefaults(), DefaultingType: "List"},
			upstream: &configv1.PodTopologySpreadArgs{DefaultConstraints: listDefaults(), DefaultingType: configv1.ListDefaulting}},
	}}
	for i := range sp.pairs {
		sp.pairs[i].plugin, err = u.SpreadPlugin(ctx, sp.pairs[i].upstream)
		require.NoError(t, err, sp.pairs[i].name)
	}
	return sp
}

// spreadStats counts what the cases exercised, so the suite can require
// that the generator reaches every path.
type spreadStats struct {
	skew, missingLabel, filterErr, filterSkip int
	scored, scoreSkip, scoreErr, defaulted    int
	ignoredNodes, distinctNormalized          int
	rejected                                  int // objects the Cache refused (viaCache)
	apiInvalid                                int // cases the API server would not store
}

// check compares one pair on one case: filter verdicts on every node,
// then raw and normalised scores on the candidates. It returns "" or the
// first difference.
func (sp *spreadParity) check(cs SpreadCase, p *spreadPair, st *spreadStats) (string, error) {
	ctx := context.Background()
	// A pod the API server would not store (an invalid selector, maxSkew
	// 0, a duplicate constraint): schedkit rejects it when it parses it,
	// where upstream's plugin meets it at PreFilter
	// (TestDifferenceInvalidPodRejectedAtParse); nothing to compare.
	pods := append([]*v1.Pod{cs.Pod}, cs.Bound...)
	if bad, _, err := APIInvalid(pods...); err != nil || bad != nil {
		if err != nil {
			return "", err
		}
		st.apiInvalid++
		_, d, err := parseAgrees(pods...)
		return d, err
	}
	snap, err := ourSnapshot(cs.Case)
	if err != nil {
		return "", err
	}
	args := p.ours
	if p.viaCache {
		var rejected int
		if snap, rejected, err = cacheSnapshot(cs); err != nil {
			return "", err
		}
		st.rejected += rejected
	} else {
		wl, err := snapshot.NewWorkloadIndex(snapshot.WorkloadObjects{Services: cs.Services, ReplicationControllers: cs.ReplicationControllers, ReplicaSets: cs.ReplicaSets, StatefulSets: cs.StatefulSets})
		if err != nil {
			return "", err
		}
		args.Workloads = wl
	}
	f, err := framework.NewPodTopologySpread(args)
	if err != nil {
		return "", err
	}
	s, err := score.NewPodTopologySpread(args)
	if err != nil {
		return "", err
	}
	pi, err := snapshot.NewPodInfo(cs.Pod)
	if err != nil {
		return "", err
	}
	nodes := make([]*snapshot.NodeInfo, len(cs.Nodes))
	for i, n := range cs.Nodes {
		nodes[i] = snap.Get(n.Name)
	}

	// Filter.
	up, upErr := sp.u.Filter(ctx, p.plugin, cs.Pod)
	pre, ourErr := f.(framework.ClusterFilter).PreFilterCluster(pi, snap)
	if (upErr != nil) != (ourErr != nil) {
		return fmt.Sprintf("PreFilter error: ours %v, upstream %v", ourErr, upErr), nil
	}
	if upErr != nil {
		st.filterErr++
	} else {
		if pre.Filter == nil {
			st.filterSkip++
		}
		ours := ourVerdicts(pre, nodes)
		for j := range nodes {
			if !sameVerdict(ours.Verdicts[j], up.Verdicts[j]) {
				return fmt.Sprintf("filter on %s: ours %v, upstream %v", cs.Nodes[j].Name, ours.Verdicts[j], up.Verdicts[j]), nil
			}
			switch {
			case up.Verdicts[j].Code == fwk.UnschedulableAndUnresolvable:
				st.missingLabel++
			case up.Verdicts[j].Code != fwk.Success:
				st.skew++
			}
		}
	}

	// Score.
	cands := make([]*snapshot.NodeInfo, len(cs.Candidates))
	for i, c := range cs.Candidates {
		cands[i] = nodes[c]
	}
	upS, upErr := sp.u.ScoreOn(ctx, p.plugin, cs.Pod, cs.Candidates)
	ps, ourErr := s.Prepare(pi, snap)
	if (upErr != nil) != (ourErr != nil) {
		return fmt.Sprintf("score error: ours %v, upstream %v", ourErr, upErr), nil
	}
	if upErr != nil {
		st.scoreErr++
		return "", nil
	}
	if (ps == nil) != upS.Skipped {
		return fmt.Sprintf("score skipped: ours %v, upstream %v", ps == nil, upS.Skipped), nil
	}
	if ps == nil {
		st.scoreSkip++
		return "", nil
	}
	st.scored++
	if len(cs.Pod.Spec.TopologySpreadConstraints) == 0 {
		st.defaulted++
	}
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
	for i := range norm {
		if norm[i] == 0 && raw[i] == 0 {
			st.ignoredNodes++
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(norm)))) > 1 {
		st.distinctNormalized++
	}
	return "", nil
}

func (sp *spreadParity) load(cs SpreadCase) error {
	sp.u.Load(cs.Nodes, cs.Bound)
	return sp.u.LoadWorkloads(cs.Services, cs.ReplicationControllers, cs.ReplicaSets, cs.StatefulSets)
}

// spreadConfig: clusters of 8 nodes with up to 6 pods each.
func spreadConfig() Config {
	cfg := DefaultConfig()
	cfg.Nodes = 8
	return cfg
}

// TestParityPodTopologySpread: upstream's own PodTopologySpread (System
// and List defaulting) against schedkit's filter and scorer on 10,000
// seeded cases of 8 nodes: the same status code and reason on every node,
// the same PreFilter errors, the same Skip; in the cases the API server
// would refuse, schedkit's parse rejects the same pods, the same raw and normalised
// score on every candidate.
func TestParityPodTopologySpread(t *testing.T) {
	sp := newSpreadParity(t)
	g := NewGen(paritySeed+14, spreadConfig())
	stats := make([]spreadStats, len(sp.pairs))
	failures := make([]int, len(sp.pairs))
	for c := 0; c < parityCases; c++ {
		cs := g.SpreadCase()
		require.NoError(t, sp.load(cs))
		for i := range sp.pairs {
			d, err := sp.check(cs, &sp.pairs[i], &stats[i])
			require.NoError(t, err, "case %d", c)
			if d == "" {
				continue
			}
			if failures[i] == 0 {
				t.Errorf("case %d %s: %s\npod: %s\nnodes: %s\nbound: %s\ncandidates: %v", c, sp.pairs[i].name, d, dump(cs.Pod), dump(cs.Nodes), dump(cs.Bound), cs.Candidates)
			}
			failures[i]++
		}
	}
	for i, p := range sp.pairs {
		s := stats[i]
		t.Logf("%-7s %d cases, %d differ; %d invalid for the API server; filter: %d skew and %d missing-label rejections, %d skipped, %d errors; score: %d scored (%d by default constraints, %d with distinct scores, %d zero nodes), %d skipped, %d errors",
			p.name, parityCases, failures[i], s.apiInvalid, s.skew, s.missingLabel, s.filterSkip, s.filterErr, s.scored, s.defaulted, s.distinctNormalized, s.ignoredNodes, s.scoreSkip, s.scoreErr)
		require.Greater(t, s.skew, 1000, p.name)
		require.Greater(t, s.missingLabel, 1000, p.name)
		require.Greater(t, s.apiInvalid, 50, p.name)
		require.Greater(t, s.scored, 2000, p.name)
		require.Greater(t, s.defaulted, 500, p.name)
		require.Greater(t, s.distinctNormalized, 1000, p.name)
		require.Greater(t, s.ignoredNodes, 500, p.name)
		if p.viaCache {
			t.Logf("%s: the Cache refused %d objects (invalid selectors)", p.name, s.rejected)
			require.Greater(t, s.rejected, 100, p.name)
		}
	}
}

// FuzzParityPodTopologySpread: any seed and cluster size give the same
// verdicts and scores.
func FuzzParityPodTopologySpread(f *testing.F) {
	for _, seed := range []uint64{0, 1, paritySeed, 1 << 40} {
		f.Add(seed, uint8(8))
	}
	sp := newSpreadParity(f)
	f.Fuzz(func(t *testing.T, seed uint64, nodes uint8) {
		cfg := spreadConfig()
		cfg.Nodes = 1 + int(nodes%16)
		cs := NewGen(seed, cfg).SpreadCase()
		require.NoError(t, sp.load(cs))
		for i := range sp.pairs {
			d, err := sp.check(cs, &sp.pairs[i], &spreadStats{})
			require.NoError(t, err)
			require.Empty(t, d, "%s\npod: %s\nnodes: %s\nbound: %s\ncandidates: %v", sp.pairs[i].name, dump(cs.Pod), dump(cs.Nodes), dump(cs.Bound), cs.Candidates)
		}
	})
}
