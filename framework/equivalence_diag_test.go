package framework

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// diagTemplates are pods that fit a growing share of genCluster's nodes
// less and less as it fills: cpu, memory or both too large for most nodes
// (one or two Insufficient reasons per node), a selector on one zone,
// a toleration of genCluster's taint, and small pods that fill nodes.
func diagTemplates() []*v1.Pod {
	return []*v1.Pod{
		mkPod("cpu").Req("cpu", "12", "memory", "1Gi").Obj(),
		mkPod("both").Req("cpu", "20", "memory", "100Gi").Obj(),
		mkPod("mem").Req("cpu", "1", "memory", "60Gi").Obj(),
		mkPod("zone").Req("cpu", "6", "memory", "8Gi").NodeSelector("topology.kubernetes.io/zone", "b").Obj(),
		mkPod("tol").Req("cpu", "10", "memory", "8Gi").Toleration("dedicated", v1.TolerationOpEqual, "gpu", v1.TaintEffectNoSchedule).Obj(),
		mkPod("small").Req("cpu", "2", "memory", "4Gi").Obj(),
		mkPod("small").Req("cpu", "3", "memory", "2Gi").Obj(),
	}
}

// TestEquivalenceDiagnosisFromCache: an unschedulable pod of a cached
// class gets exactly the Diagnosis (every count, its first node and that
// node's reason, the plugins), Feasible and Evaluated of a scheduler
// without the cache, on a cluster filling up and changing (nodes updated,
// pods removed) between pods; and the cache did serve diagnoses.
func TestEquivalenceDiagnosisFromCache(t *testing.T) {
	seeds := uint64(24)
	if testing.Short() {
		seeds = 8
	}
	// Even seeds score every node, odd ones the adaptive share.
	for seed := range seeds {
		pct := int32(100 * (1 - seed%2))
		t.Run(fmt.Sprintf("seed=%d/pct=%d", seed, pct), func(t *testing.T) { checkDiagnosisFromCache(t, seed, pct) })
	}
}

func checkDiagnosisFromCache(t *testing.T, seed uint64, pct int32) {
	r := rand.New(rand.NewPCG(seed, 7))
	cache := snapshot.NewCache()
	for _, n := range genCluster(seed, 50+r.IntN(250)) {
		require.NoError(t, cache.AddNode(n))
	}
	f := cache.Snapshot().Fork()
	cached := mustNew(t, Config{PercentageOfNodesToScore: pct, Seed: seed})
	plain := mustNew(t, Config{PercentageOfNodesToScore: pct, Seed: seed, EquivalenceClasses: -1})
	require.True(t, cached.nodeLocal)
	tpls := diagTemplates()
	var bound []snapshot.PodKey
	var boundOn []string
	diagnosed := 0
	for step := range 1500 {
		switch k := r.IntN(30); {
		case k == 0 && len(bound) > 0:
			j := r.IntN(len(bound))
			require.NoError(t, f.RemovePod(bound[j], boundOn[j]))
			bound, boundOn = append(bound[:j], bound[j+1:]...), append(boundOn[:j], boundOn[j+1:]...)
		case k == 1:
			n := f.Node(r.IntN(f.NumNodes())).Node().DeepCopy()
			n.Spec.Unschedulable = !n.Spec.Unschedulable
			require.NoError(t, f.UpdateNode(n))
		}
		p := tpls[r.IntN(len(tpls))].DeepCopy()
		p.Name = fmt.Sprintf("%s-%d", p.Name, step)
		pi := snapshot.MustPodInfo(p)
		want, err := plain.SchedulePod(f, pi)
		require.NoError(t, err)
		got, err := cached.SchedulePod(f, pi)
		require.NoError(t, err)
		require.Equal(t, want.Diagnosis, got.Diagnosis, "seed %d step %d pod %s", seed, step, p.Name)
		require.Equal(t, outcomeOf(want), outcomeOf(got), "seed %d step %d pod %s", seed, step, p.Name)
		if want.Diagnosis != nil {
			diagnosed++
		}
		if want.Scheduled() {
			require.NoError(t, f.AddPodInfo(want.Pod, want.Node))
			bound, boundOn = append(bound, pi.Key()), append(boundOn, want.Node)
		}
	}
	require.Positive(t, diagnosed)
	require.Positive(t, cached.EquivalenceStats().Diagnosed)
}

// countingFilter is a node-local filter that passes every node and
// counts the nodes it is asked about.
type countingFilter struct{ calls *atomic.Int64 }

func (countingFilter) Name() string    { return "Counting" }
func (countingFilter) NodeLocal() bool { return true }
func (c countingFilter) PreFilter(*snapshot.PodInfo) (PreFilterResult, error) {
	return PreFilterResult{Filter: PodFilterFunc(func(_ *snapshot.NodeInfo, rs []Reason) []Reason {
		c.calls.Add(1)
		return rs
	})}, nil
}

// TestEquivalenceDiagnosisFiltersChangedNodes: once a class has been
// diagnosed, the next unschedulable pod of the class filters only the
// nodes changed since and the first node of each kind of reason — not
// all 2,000 nodes again (before: 2,000 filter calls per pod) — and gets
// the uncached scheduler's Diagnosis.
func TestEquivalenceDiagnosisFiltersChangedNodes(t *testing.T) {
	cache := snapshot.NewCache()
	const numNodes = 2000
	for i := range numNodes {
		w := mkNode(fmt.Sprintf("node-%05d", i)).Capacity("cpu", "8", "memory", "32Gi", "pods", "110")
		if i%10 == 3 {
			w.Taint("dedicated", "gpu", v1.TaintEffectNoSchedule)
		}
		require.NoError(t, cache.AddNode(w.Obj()))
	}
	f := cache.Snapshot().Fork()
	var calls atomic.Int64
	cfg := Config{Filters: append([]Filter{countingFilter{&calls}}, DefaultFilters()...)}
	cached := mustNew(t, cfg)
	cfg.EquivalenceClasses = -1
	plain := mustNew(t, cfg)
	huge := func(i int) *snapshot.PodInfo {
		return snapshot.MustPodInfo(mkPod(fmt.Sprintf("huge-%d", i)).Req("cpu", "16").Obj())
	}
	schedule := func(pi *snapshot.PodInfo) int64 {
		want, err := plain.SchedulePod(f, pi)
		require.NoError(t, err)
		calls.Store(0)
		got, err := cached.SchedulePod(f, pi)
		require.NoError(t, err)
		require.NotNil(t, got.Diagnosis)
		require.Equal(t, want.Diagnosis, got.Diagnosis)
		require.Equal(t, outcomeOf(want), outcomeOf(got))
		return calls.Load()
	}
	schedule(huge(0)) // fills the class's entry: every node filtered
	require.LessOrEqual(t, schedule(huge(1)), int64(2), "nothing changed: one node per kind of reason")
	// Three nodes change: they are filtered again, plus the first node of
	// each kind.
	for i, node := range []string{"node-00010", "node-00500", "node-01999"} {
		small := snapshot.MustPodInfo(mkPod(fmt.Sprintf("small-%d", i)).Req("cpu", "1").Obj())
		require.NoError(t, f.AddPodInfo(small, node))
	}
	require.LessOrEqual(t, schedule(huge(2)), int64(3+3+2), "the cached scan and the diagnosis each filter the 3 changed nodes")
	require.Equal(t, uint64(3), cached.EquivalenceStats().Diagnosed) // the first one filled the entry
}
