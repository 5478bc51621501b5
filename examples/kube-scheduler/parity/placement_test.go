package parity

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// placementStats counts one placement parity run.
type placementStats struct {
	// Pods compared; Unique: upstream's best node was unique (or the only
	// feasible one); Ties: several nodes shared the best total;
	// Unschedulable: no node fit, on both sides.
	Pods, Unique, Ties, Unschedulable int
	// Deleted: placed pods deleted on both sides (Deletes); NodeEvents:
	// nodes removed or added between cycles.
	Deleted, NodeEvents int
	// Mismatches: schedkit chose another node than a unique best, a node
	// outside a tied best, or scheduled where upstream found no node (or
	// the reverse). The test fails on any.
	Mismatches int
	// VectorDiffs: pods whose feasible nodes or weighted totals differ
	// between the two sides anywhere (not only at the best node).
	VectorDiffs int
	// Details describes the first mismatches and vector differences.
	Details []string
}

func (s *placementStats) add(o placementStats) {
	s.Pods += o.Pods
	s.Unique += o.Unique
	s.Ties += o.Ties
	s.Unschedulable += o.Unschedulable
	s.Deleted += o.Deleted
	s.NodeEvents += o.NodeEvents
	s.Mismatches += o.Mismatches
	s.VectorDiffs += o.VectorDiffs
	s.Details = append(s.Details, o.Details...)
}

func (s placementStats) String() string {
	return fmt.Sprintf("%d pods: %d unique best, %d ties, %d unschedulable on both, %d deleted, %d node events; %d mismatches, %d score-vector differences",
		s.Pods, s.Unique, s.Ties, s.Unschedulable, s.Deleted, s.NodeEvents, s.Mismatches, s.VectorDiffs)
}

// schedkitVector is schedkit's full cycle for one pod, computed outside the
// Scheduler for comparison: every filter of cfg on every node, then cfg's
// profile on every feasible node (nil: the defaults, as a Scheduler).
type schedkitVector struct {
	feasible []*snapshot.NodeInfo
	totals   map[string]int64
	best     []string
}

func schedkitCycle(cfg framework.Config, snap *snapshot.Snapshot, pi *snapshot.PodInfo) (schedkitVector, error) {
	var v schedkitVector
	allowed := make([]bool, snap.NumNodes())
	for i := range allowed {
		allowed[i] = true
	}
	var prepared []framework.PodFilter
	filters := cfg.Filters
	if filters == nil {
		filters = framework.DefaultFilters()
	}
	profile := cfg.Profile
	if profile == nil {
		profile = score.DefaultProfile()
	}
	for _, f := range filters {
		r, err := framework.RunPreFilter(f, pi, snap)
		if err != nil {
			return v, err
		}
		if r.Reject != "" {
			return v, nil
		}
		if r.NodeNames != nil {
			for i := range allowed {
				allowed[i] = allowed[i] && slices.Contains(r.NodeNames, snap.Node(i).Name())
			}
		}
		if r.Filter != nil {
			prepared = append(prepared, r.Filter)
		}
	}
	var reasons []framework.Reason
	for i, ni := range snap.Nodes() {
		if !allowed[i] {
			continue
		}
		ok := true
		for _, f := range prepared {
			if reasons = f.Filter(ni, reasons[:0]); len(reasons) > 0 {
				ok = false
				break
			}
		}
		if ok {
			v.feasible = append(v.feasible, ni)
		}
	}
	totals := make([]int64, len(v.feasible))
	if err := profile.Score(pi, snap, v.feasible, totals); err != nil {
		return v, err
	}
	v.totals = make(map[string]int64, len(v.feasible))
	for i, ni := range v.feasible {
		v.totals[ni.Name()] = totals[i]
	}
	v.best = argmax(v.totals)
	return v, nil
}

// placementRun schedules w's pods one at a time on both sides and compares
// each choice with upstream's full score vector.
//
// Upstream: PlacementUpstream.Cycle (every node filtered, every feasible
// node scored, and the scheduler's own SchedulePod, whose choice must lie
// in the best set — a check on this harness). schedkit: a framework.Loop
// over a reserve.Ledger with cfg's filters and profile (the zero Config:
// DefaultFilters, score.DefaultProfile), percentageOfNodesToScore 100 and
// seed as its tie-breaking seed; the ledger is fed the nodes and objects
// as informer events.
//
// Both sides then hold the pod on schedkit's node: on a tie schedkit's
// seeded pick is one of upstream's best nodes, so upstream could have
// made it, and the states stay identical pod after pod. A mismatch is
// counted and the run goes on from schedkit's choice (still identical
// states), so one run reports every mismatch. w.Deletes, w.RemoveNodes and
// w.AddNodes delete placed pods and delete and add nodes on both (the
// scheduler cache; the ledger) between cycles.
func placementRun(ctx context.Context, w PlacementWorkload, cfg framework.Config, seed uint64, maxDetails int) (placementStats, error) {
	var st placementStats
	up, err := NewPlacementUpstream(ctx)
	if err != nil {
		return st, err
	}
	defer up.Close()
	ledger := reserve.New()
	cfg.PercentageOfNodesToScore, cfg.Seed = 100, seed
	sched, err := framework.New(cfg)
	if err != nil {
		return st, err
	}
	loop := framework.NewLoop(sched, ledger, nil)
	nodes := map[string]*v1.Node{}
	addNode := func(n *v1.Node) error {
		nodes[n.Name] = n
		up.AddNode(n)
		return ledger.AddNode(n)
	}
	for _, n := range w.Nodes {
		if err := addNode(n); err != nil {
			return st, err
		}
	}
	for _, o := range w.Objects {
		if err := up.AddObject(o); err != nil {
			return st, err
		}
		if err := ledger.AddObject(o); err != nil {
			return st, err
		}
	}
	detail := func(format string, args ...any) {
		if len(st.Details) < maxDetails {
			st.Details = append(st.Details, fmt.Sprintf("%s seed %d pod %d: ", w.Name, seed, st.Pods-1)+fmt.Sprintf(format, args...))
		}
	}
	placed := make([]string, len(w.Pods))
	for i, pod := range w.Pods {
		st.Pods++
		uc, err := up.Cycle(ctx, pod)
		if err != nil {
			return st, err
		}
		if uc.Chosen != "" && !slices.Contains(uc.Best, uc.Chosen) || (uc.Chosen == "") != (len(uc.Best) == 0) {
			return st, fmt.Errorf("%s pod %s/%s: upstream's SchedulePod chose %q, its best nodes are %v (harness error)", w.Name, pod.Namespace, pod.Name, uc.Chosen, uc.Best)
		}
		pi, err := snapshot.NewPodInfo(pod)
		if err != nil {
			return st, err
		}
		snap := ledger.Snapshot()
		sv, err := schedkitCycle(cfg, snap, pi)
		if err != nil {
			return st, err
		}
		if d := placementVectorDiff(uc, sv); d != "" {
			st.VectorDiffs++
			detail("pod %s/%s score vectors differ: %s", pod.Namespace, pod.Name, d)
		}
		if err := loop.Add(pod); err != nil {
			return st, err
		}
		a, ok, err := loop.ScheduleOne(ctx)
		if err != nil {
			return st, err
		}
		if !ok {
			return st, fmt.Errorf("%s pod %s/%s: the loop's queue was empty", w.Name, pod.Namespace, pod.Name)
		}
		got := a.Node
		switch {
		case len(uc.Best) == 0 && got == "":
			st.Unschedulable++
		case len(uc.Best) == 0:
			st.Mismatches++
			detail("pod %s/%s: upstream finds no node (%s), schedkit chose %s", pod.Namespace, pod.Name, uc.Rejection, got)
		case got == "":
			st.Mismatches++
			detail("pod %s/%s: upstream's best %v, schedkit finds no node: %v", pod.Namespace, pod.Name, uc.Best, a.Diagnosis)
		case len(uc.Best) == 1:
			st.Unique++
			if got != uc.Best[0] {
				st.Mismatches++
				detail("pod %s/%s: upstream's unique best %s (total %d), schedkit chose %s (upstream total %d; schedkit's best %v)\n\tupstream %s: %v\n\tupstream %s: %v",
					pod.Namespace, pod.Name, uc.Best[0], uc.Totals[uc.Best[0]], got, uc.Totals[got], sv.best,
					uc.Best[0], uc.Plugins[uc.Best[0]], got, uc.Plugins[got])
			}
		default:
			st.Ties++
			if !slices.Contains(uc.Best, got) {
				st.Mismatches++
				detail("pod %s/%s: upstream's best %v (total %d), schedkit chose %s (upstream total %d)",
					pod.Namespace, pod.Name, uc.Best, uc.Totals[uc.Best[0]], got, uc.Totals[got])
			}
		}
		if got != "" {
			if err := up.Place(pod, got); err != nil {
				return st, err
			}
			placed[i] = got
		}
		if j, ok := w.Deletes[i]; ok && placed[j] != "" {
			if err := up.Remove(w.Pods[j], placed[j]); err != nil {
				return st, err
			}
			if !ledger.RemovePod(snapshot.KeyOf(w.Pods[j])) {
				return st, fmt.Errorf("%s: the ledger does not hold pod %s/%s", w.Name, w.Pods[j].Namespace, w.Pods[j].Name)
			}
			placed[j] = ""
			st.Deleted++
		}
		for _, name := range w.RemoveNodes[i] {
			if err := up.RemoveNode(nodes[name]); err != nil {
				return st, err
			}
			if err := ledger.RemoveNode(name); err != nil {
				return st, err
			}
			delete(nodes, name)
			st.NodeEvents++
		}
		for _, n := range w.AddNodes[i] {
			if err := addNode(n); err != nil {
				return st, err
			}
			st.NodeEvents++
		}
	}
	return st, nil
}

// placementVectorDiff describes how schedkit's cycle differs from upstream's:
// feasible sets, then totals (compared only when upstream scored, that is
// with two or more feasible nodes); "" when they agree.
func placementVectorDiff(uc UpstreamCycle, sv schedkitVector) string {
	names := make([]string, len(sv.feasible))
	for i, ni := range sv.feasible {
		names[i] = ni.Name()
	}
	slices.Sort(names)
	if !slices.Equal(names, uc.Feasible) {
		return fmt.Sprintf("feasible: upstream %d nodes, schedkit %d (%s)", len(uc.Feasible), len(names), setDiff(uc.Feasible, names))
	}
	if uc.Totals == nil {
		return ""
	}
	var diffs []string
	for _, n := range names {
		if uc.Totals[n] != sv.totals[n] {
			diffs = append(diffs, fmt.Sprintf("%s upstream %d schedkit %d", n, uc.Totals[n], sv.totals[n]))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	if len(diffs) > 3 {
		diffs = append(diffs[:3], fmt.Sprintf("... %d nodes in all", len(diffs)))
	}
	return "totals: " + strings.Join(diffs, "; ")
}

func setDiff(a, b []string) string {
	var onlyA, onlyB []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			onlyA = append(onlyA, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			onlyB = append(onlyB, x)
		}
	}
	return fmt.Sprintf("only upstream %v, only schedkit %v", onlyA, onlyB)
}

// placementSeeds are the fixed seeds of TestPlacementParity and the node
// count each runs at (scheduler_perf's 500Nodes shapes scaled down).
var placementSeeds = []struct {
	seed  uint64
	nodes int
}{{1, 50}, {2, 120}, {3, 200}}

// TestPlacementParity: upstream's scheduler and schedkit's Loop, on
// scheduler_perf's TopologySpreading, PreferredTopologySpreading,
// DefaultTopologySpreading (with a Service, and with Deployment-owned
// pods), SchedulingPodAntiAffinity, SchedulingPodAffinity,
// SchedulingPreferredPodAffinity and SchedulingPreferredPodAntiAffinity
// at 50-200 nodes, choose the same node for every pod whose best node is
// unique, a best node on ties, and agree on unschedulable pods.
func TestPlacementParity(t *testing.T) {
	seeds := placementSeeds
	if testing.Short() {
		seeds = seeds[:1]
	}
	var total placementStats
	for _, s := range seeds {
		ws, err := PlacementWorkloads(s.nodes, s.seed)
		require.NoError(t, err)
		for _, w := range ws {
			t.Run(fmt.Sprintf("%s/nodes=%d/seed=%d", w.Name, s.nodes, s.seed), func(t *testing.T) {
				st, err := placementRun(context.Background(), w, framework.Config{}, s.seed, 10)
				require.NoError(t, err)
				t.Log(st)
				for _, d := range st.Details {
					t.Log(d)
				}
				requirePlacementParity(t, st)
				require.Equal(t, len(w.Pods), st.Pods)
				total.add(st)
			})
		}
	}
	t.Logf("all workloads: %s", total)
}

// TestPlacementWorkloadsShapes pins what the workloads hold, so a
// template change upstream cannot silently empty the comparison.
func TestPlacementWorkloadsShapes(t *testing.T) {
	ws, err := PlacementWorkloads(10, 1)
	require.NoError(t, err)
	byName := map[string]PlacementWorkload{}
	for _, w := range ws {
		byName[w.Name] = w
		require.Len(t, w.Nodes, 10, w.Name)
		for _, n := range w.Nodes {
			require.Equal(t, n.Name, n.Labels[v1.LabelHostname], w.Name)
			require.False(t, n.Status.Allocatable.Cpu().IsZero(), "%s: node %s has no allocatable cpu (API defaulting)", w.Name, n.Name)
		}
	}
	require.Len(t, byName, 8)
	ts := byName["TopologySpreading"]
	require.Len(t, ts.Pods, 40)
	require.Equal(t, v1.DoNotSchedule, ts.Pods[39].Spec.TopologySpreadConstraints[0].WhenUnsatisfiable)
	require.Equal(t, "moon-2", ts.Nodes[1].Labels[v1.LabelTopologyZone])
	require.Equal(t, v1.ScheduleAnyway, byName["PreferredTopologySpreading"].Pods[39].Spec.TopologySpreadConstraints[0].WhenUnsatisfiable)
	dep := byName["DefaultTopologySpreadingDeployment"]
	require.Len(t, dep.Objects, 5) // namespaces service-ns and namespace-2, the Service, two ReplicaSets
	require.Equal(t, "ReplicaSet", dep.Pods[39].OwnerReferences[0].Kind)
	anti := byName["SchedulingPodAntiAffinity"]
	require.Len(t, anti.Pods, 15) // 2 init + 13 measured: 5 more than nodes
	require.NotNil(t, anti.Pods[0].Spec.Affinity.PodAntiAffinity)
	require.Equal(t, "zone1", byName["SchedulingPodAffinity"].Nodes[3].Labels[v1.LabelTopologyZone])
	require.NotEmpty(t, byName["SchedulingPreferredPodAffinity"].Pods[0].Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	require.NotEmpty(t, byName["SchedulingPreferredPodAntiAffinity"].Pods[0].Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	require.Equal(t, v1.DefaultSchedulerName, ts.Pods[0].Spec.SchedulerName, "API defaulting")

	// The mixed workload has every feature it claims.
	m, err := MixedPlacementWorkload(40, 400, 1)
	require.NoError(t, err)
	var nsSelector, minDomains, honor, tolerating, nodeAffinity, owned int
	for _, p := range m.Pods {
		if a := p.Spec.Affinity; a != nil && a.PodAffinity != nil {
			for _, t := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				if t.NamespaceSelector != nil {
					nsSelector++
				}
			}
		}
		if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
			nodeAffinity++
		}
		for _, c := range p.Spec.TopologySpreadConstraints {
			if c.MinDomains != nil {
				minDomains++
			}
			if c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
				honor++
			}
		}
		for _, t := range p.Spec.Tolerations {
			if t.Key == "dedicated" {
				tolerating++
			}
		}
		if len(p.OwnerReferences) > 0 {
			owned++
		}
	}
	for name, n := range map[string]int{"namespaceSelector": nsSelector, "minDomains": minDomains, "nodeTaintsPolicy Honor": honor,
		"tolerations": tolerating, "node affinity": nodeAffinity, "ReplicaSet-owned": owned,
		"deletions": len(m.Deletes), "node removals": len(m.RemoveNodes), "node additions": len(m.AddNodes)} {
		require.Positive(t, n, name)
	}
	require.Len(t, m.Nodes, 32)
}

// requirePlacementParity fails on any mismatch of choices (the must-show)
// and on any difference in the score vectors (stricter: every feasible
// node's weighted total, not only the best one's).
func requirePlacementParity(t testing.TB, st placementStats) {
	t.Helper()
	require.Zero(t, st.Mismatches, "choices differ where upstream's best node is unique (or schedkit left the best set): %s", strings.Join(st.Details, "\n"))
	require.Zero(t, st.VectorDiffs, "feasible nodes or totals differ: %s", strings.Join(st.Details, "\n"))
}

// TestPlacementParityMixed: the same comparison on MixedPlacementWorkload,
// every workload's pods interleaved on heterogeneous nodes, where most
// pods have a unique best node.
func TestPlacementParityMixed(t *testing.T) {
	runs := []struct {
		seed        uint64
		nodes, pods int
	}{{1, 30, 300}, {2, 60, 400}, {3, 100, 500}, {4, 150, 600}}
	if testing.Short() {
		runs = runs[:1]
	}
	var total placementStats
	for _, r := range runs {
		w, err := MixedPlacementWorkload(r.nodes, r.pods, r.seed)
		require.NoError(t, err)
		t.Run(fmt.Sprintf("nodes=%d/pods=%d/seed=%d", r.nodes, r.pods, r.seed), func(t *testing.T) {
			st, err := placementRun(context.Background(), w, framework.Config{}, r.seed, 10)
			require.NoError(t, err)
			t.Log(st)
			requirePlacementParity(t, st)
			require.Equal(t, r.pods, st.Pods)
			total.add(st)
		})
	}
	t.Logf("all runs: %s", total)
	require.Greater(t, total.Unique, total.Pods/2, "the mixed workload should mostly have a unique best node")
	require.Positive(t, total.Unschedulable)
	require.Positive(t, total.Deleted)
	require.Positive(t, total.NodeEvents)
}

// FuzzPlacementParity runs MixedPlacementWorkload with fuzzed sizes and
// seed through both schedulers: 2-41 nodes, 1-120 pods.
func FuzzPlacementParity(f *testing.F) {
	for _, s := range []struct {
		seed        uint64
		nodes, pods uint8
	}{{1, 3, 40}, {7, 10, 119}, {42, 0, 60}, {99, 39, 90}} {
		f.Add(s.seed, s.nodes, s.pods)
	}
	f.Fuzz(func(t *testing.T, seed uint64, nodes, pods uint8) {
		w, err := MixedPlacementWorkload(2+int(nodes)%40, 1+int(pods)%120, seed)
		require.NoError(t, err)
		st, err := placementRun(context.Background(), w, framework.Config{}, seed, 5)
		require.NoError(t, err)
		requirePlacementParity(t, st)
	})
}

// TestPlacementParityDetects shows the comparison can fail: schedkit with
// PodTopologySpread and InterPodAffinity at weight 1 instead of upstream's
// 2 on a mixed workload makes other choices where upstream's best node is
// unique, and other totals.
func TestPlacementParityDetects(t *testing.T) {
	ws := score.DefaultProfile().Scorers()
	for i := range ws {
		if n := ws[i].Scorer.Name(); n == score.PodTopologySpreadName || n == score.InterPodAffinityName {
			require.EqualValues(t, 2, ws[i].Weight, n)
			ws[i].Weight = 1
		}
	}
	profile, err := score.NewProfile(ws...)
	require.NoError(t, err)
	w, err := MixedPlacementWorkload(30, 200, 1)
	require.NoError(t, err)
	st, err := placementRun(context.Background(), w, framework.Config{Profile: profile}, 1, 3)
	require.NoError(t, err)
	t.Log(st)
	require.Positive(t, st.Mismatches)
	require.Positive(t, st.VectorDiffs)
	require.NotEmpty(t, st.Details)
}
