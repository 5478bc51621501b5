package snapshot_test

import (
	"math/rand/v2"
	"testing"
	"unique"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// sameKeyTermPod: like randomTermPod, but 1-5 terms drawn from 4
// templates (three static, one not), so pods often hold several terms
// with the same key in one kind and across kinds; every term selects
// app=a, so some match the pod holding them.
func sameKeyTermPod(r *rand.Rand, name string) *v1.Pod {
	ns := []string{"default", "team"}[r.IntN(2)]
	app := []string{"a", "b"}[r.IntN(2)]
	p := snapshottest.MakePod(name).Namespace(ns).Label("app", app).Obj()
	if r.IntN(5) == 0 {
		return p
	}
	aff := &v1.Affinity{PodAffinity: &v1.PodAffinity{}, PodAntiAffinity: &v1.PodAntiAffinity{}}
	for range 1 + r.IntN(5) {
		term := v1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			TopologyKey:   "zone",
		}
		switch r.IntN(4) {
		case 0:
			term.Namespaces = []string{"default", "team"}
		case 1:
			term.NamespaceSelector = &metav1.LabelSelector{}
		case 2:
			term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}
		case 3:
			term.TopologyKey = v1.LabelHostname
			term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{}}
		}
		w := v1.WeightedPodAffinityTerm{Weight: int32(1 + r.IntN(3)), PodAffinityTerm: term}
		switch r.IntN(4) {
		case 0:
			aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
		case 1:
			aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
		case 2:
			aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, w)
		default:
			aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, w)
		}
	}
	p.Spec.Affinity = aff
	return p
}

// TestAffinityIndexSameKeyTerms is TestAffinityIndexMatchesScan with
// sameKeyTermPod's pods: a view is counted per term group (kind and key),
// so a key held by several terms of a pod, in one kind or several, and
// terms leaving while others with the key stay, must keep the views
// equal to interpod.ScanIndex's (a reviewer's test).
func TestAffinityIndexSameKeyTerms(t *testing.T) {
	requireIndexSequencesMatchScan(t, indexSequences{
		pod: sameKeyTermPod, stream: 11, podsPerNode: func(r *rand.Rand) int { return r.IntN(3) },
		nodePods: 2, forkSteps: 150, cacheSteps: 120, cacheNames: 10,
	})
}

// TestAffinityViewSameKeyTwoKinds: a pod holding a key twice in
// required affinity and once in preferred anti-affinity, matching
// itself, is counted once in the key's view (created by its first term);
// a second pod holding the key three times in another kind keeps the
// view when the first leaves; relabelling, node removal and Revert move
// the view's totals; the view goes when the last group with the key does
// (a reviewer's test).
func TestAffinityViewSameKeyTwoKinds(t *testing.T) {
	term := v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, TopologyKey: "zone"}
	pod := func(name string, req, prefAnti, reqAnti int) *v1.Pod {
		p := snapshottest.MakePod(name).Label("app", "a").Obj()
		a := &v1.Affinity{PodAffinity: &v1.PodAffinity{}, PodAntiAffinity: &v1.PodAntiAffinity{}}
		for range req {
			a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
		}
		for range reqAnti {
			a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
		}
		for range prefAnti {
			a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, v1.WeightedPodAffinityTerm{Weight: 5, PodAffinityTerm: term})
		}
		p.Spec.Affinity = a
		return p
	}
	nodes := []*v1.Node{snapshottest.MakeNode("n0").Label("zone", "z0").Obj(), snapshottest.MakeNode("n1").Label("zone", "z1").Obj()}
	snap := snapshottest.Snapshot(t, nodes)
	f := snap.Fork()
	views := func() map[string]int64 {
		m := map[string]int64{}
		interpod.IndexOf(f).MatchViews(func(tm *interpod.Term, d interpod.Domains) bool {
			d.Each(func(v unique.Handle[string], n int64) bool { m[v.Value()] += n; return true })
			m["#views"]++
			return true
		})
		return m
	}
	p1, p2 := pod("p1", 2, 1, 0), pod("p2", 0, 0, 3)
	require.NoError(t, f.AddPod(p1, "n0"))
	requireIndexMatchesScan(t, f, "p1")
	require.Equal(t, map[string]int64{"#views": 1, "z0": 1}, views())
	f.Fork()
	require.NoError(t, f.AddPod(p2, "n1"))
	requireIndexMatchesScan(t, f, "p2")
	require.Equal(t, map[string]int64{"#views": 1, "z0": 1, "z1": 1}, views())
	require.NoError(t, f.RemovePod(snapshot.KeyOf(p1), "n0"))
	requireIndexMatchesScan(t, f, "-p1")
	require.Equal(t, map[string]int64{"#views": 1, "z1": 1}, views())
	require.NoError(t, f.UpdateNode(snapshottest.MakeNode("n1").Label("zone", "z9").Obj()))
	requireIndexMatchesScan(t, f, "relabel")
	require.Equal(t, map[string]int64{"#views": 1, "z9": 1}, views())
	require.NoError(t, f.RemoveNode("n1"))
	requireIndexMatchesScan(t, f, "-n1")
	require.Equal(t, map[string]int64{}, views())
	require.NoError(t, f.Revert())
	requireIndexMatchesScan(t, f, "revert")
	require.Equal(t, map[string]int64{"#views": 1, "z0": 1}, views())
	require.NoError(t, f.RemovePod(snapshot.KeyOf(p1), "n0"))
	require.Equal(t, map[string]int64{}, views())
	requireIndexMatchesScan(t, f, "empty")
}
