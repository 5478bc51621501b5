package framework

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestEquivalenceMovedAcrossRevert: a class that looked at a fork's nodes
// sees them again after the fork's Revert (their versions come back, older
// than those it saw), whether or not another class looked in between; and
// a class that did not look at the fork keeps its results. Every decision
// (feasible count included) equals the uncached reference, at 100 % and
// at 30 % of nodes to score.
func TestEquivalenceMovedAcrossRevert(t *testing.T) {
	for _, pct := range []int32{100, 30} {
		for _, between := range []bool{false, true} {
			t.Run(fmt.Sprintf("pct=%d/between=%v", pct, between), func(t *testing.T) {
				var nodes []*v1.Node
				for i := range 130 { // three blocks
					nodes = append(nodes, mkNode(fmt.Sprintf("node-%03d", i)).Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj())
				}
				f := snapshottest.Snapshot(t, nodes).Fork()
				cfg := Config{PercentageOfNodesToScore: pct, Seed: 5}
				cached := mustNew(t, cfg)
				cfg.EquivalenceClasses = -1
				ref := mustNew(t, opaque(t, cfg))
				small, big, other := mkPod("small").Req("cpu", "1").Obj(), mkPod("big").Req("cpu", "3").Obj(), mkPod("other").Req("cpu", "2").Obj()
				step := 0
				decide := func(tpl *v1.Pod) Decision {
					step++
					p := tpl.DeepCopy()
					p.Name = fmt.Sprint(p.Name, step)
					return decideBoth(t, ref, cached, f, snapshot.MustPodInfo(p))
				}
				decide(small)
				decide(big)
				decide(other) // looks only before the fork
				f.Fork()
				for i := range 64 { // block 0 full
					require.NoError(t, f.AddPod(mkPod(fmt.Sprint("fill", i)).Req("cpu", "4").Obj(), fmt.Sprintf("node-%03d", i)))
				}
				require.Equal(t, 130-64, decide(small).Feasible)
				decide(big)
				require.NoError(t, f.Revert())
				if between {
					decide(big) // the caps table sees block 0 move back
				}
				all := 130 // every node is free again
				if pct < 100 {
					all = 100 // numFeasibleNodesToFind's minimum
				}
				require.Equal(t, all, decide(small).Feasible, "block 0 is free again")
				require.Equal(t, all, decide(other).Feasible)
				decide(big)
				st := cached.EquivalenceStats()
				require.Equal(t, uint64(3), st.Filled)
				require.Equal(t, uint64(step-3), st.Cached)
			})
		}
	}
}

// perNodeBytes is the memory of e's per-node and per-block numeric
// slices (capacities: what stays allocated), its ranking's and its
// diagnosis's included, found by reflection so that no slice is left out.
func perNodeBytes(e *classEntry) int {
	var walk func(v reflect.Value) int
	walk = func(v reflect.Value) int {
		total := 0
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				total += walk(v.Field(i))
			}
		case reflect.Slice:
			switch el := v.Type().Elem(); el.Kind() {
			case reflect.Bool, reflect.Int16, reflect.Uint16, reflect.Int32, reflect.Uint32, reflect.Int64, reflect.Uint64:
				total += v.Cap() * int(el.Size())
			case reflect.Slice:
				for i := range v.Len() {
					total += walk(v.Index(i))
				}
			}
		}
		return total
	}
	return walk(reflect.ValueOf(e).Elem())
}

// TestEquivalenceEntryBytesPerNode: a class entry of the cached cycle
// holds 8 bytes per node for its plain total and 8 per normalising scorer
// (TaintToleration: one with the default profile and a pod asking for no
// preferred affinity), plus a diagnosed class's 2 bytes of reason kind,
// plus a few words per block of 64 nodes — no node versions and no byte
// per verdict.
func TestEquivalenceEntryBytesPerNode(t *testing.T) {
	const n = 64 * 100
	var nodes []*v1.Node
	for i := range n {
		nodes = append(nodes, mkNode(fmt.Sprintf("node-%05d", i)).Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj())
	}
	f := snapshottest.Snapshot(t, nodes).Fork()
	s := mustNew(t, Config{PercentageOfNodesToScore: 30, Seed: 1})
	for i := range 3 {
		d, err := s.SchedulePod(f, snapshot.MustPodInfo(mkPod(fmt.Sprint("p", i)).Req("cpu", "1").Obj()))
		require.NoError(t, err)
		require.True(t, d.Scheduled())
	}
	d, err := s.SchedulePod(f, snapshot.MustPodInfo(mkPod("huge").Req("cpu", "5").Obj()))
	require.NoError(t, err)
	require.False(t, d.Scheduled())
	d, err = s.SchedulePod(f, snapshot.MustPodInfo(mkPod("huge2").Req("cpu", "5").Obj()))
	require.NoError(t, err)
	require.False(t, d.Scheduled())
	require.Equal(t, uint64(2), s.EquivalenceStats().Diagnosed, "both huge pods are diagnosed from their class")
	require.Len(t, s.classes.entries, 2)
	perBlock := 64 // ample: block versions, ticks, verdict bits, counts
	for _, e := range s.classes.entries {
		require.Len(t, e.raw, 1)
		want := (8 + 8*len(e.raw)) * n
		if e.diag.valid {
			want += 2 * n
		}
		got := perNodeBytes(e)
		require.LessOrEqual(t, got, want+perBlock*n/64, "class entry: %d bytes for %d nodes (%.1f per node)", got, n, float64(got)/n)
	}
}
