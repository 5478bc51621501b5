package snapshot_test

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// hostAntiPod: a pod labelled app=web with required hostname
// anti-affinity to app=web and a preferred zone affinity to app=db.
func hostAntiPod(name string) *v1.Pod {
	p := st.MakePod(name).Label("app", "web").Req("cpu", "100m", "memory", "256Mi").Obj()
	p.Spec.Affinity = &v1.Affinity{
		PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: v1.LabelHostname}}},
		PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 5,
			PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: "zone"}}}}}
	return p
}

// affinityBenchSnapshot: benchCache's n nodes of 30 plain pods, each
// labelled with hostname and one of 3 zones, plus an anti-affine web
// replica (hostAntiPod) on every fifth node: the affinity index holds two
// groups, of n/5 hostname domains and 3 zone domains.
func affinityBenchSnapshot(tb testing.TB, n int) *snapshot.Snapshot {
	c, _ := benchCache(tb, n)
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		require.NoError(tb, c.UpdateNode(st.MakeNode(name).Capacity("cpu", "64", "memory", "256Gi", "pods", "110").
			Label(v1.LabelHostname, name).Label("zone", fmt.Sprint("z", i%3)).Obj()))
		if i%5 == 0 {
			p := hostAntiPod(fmt.Sprintf("web-%d", i))
			p.Spec.NodeName = name
			require.NoError(tb, c.AddPod(p))
		}
	}
	return c.Snapshot()
}

// affinePod: a self-affine db replica, labelled app=db with required
// zone affinity to app=db. Its term has the key of hostAntiPod's
// preferred term (kind and weight are not part of a key), whose view
// exists; a term with a key no pod holds would create its view by
// matching every pod (O(nodes + pods), see affinity_index.go).
func affinePod(name string) *v1.Pod {
	p := st.MakePod(name).Label("app", "db").Req("cpu", "100m", "memory", "256Mi").Obj()
	p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: "zone"}}}}
	return p
}

// forkBenchPods are the pods Fork+AddPod+Revert is measured with: one
// without terms (the affinity index is not touched), an anti-affine web
// replica (hostAntiPod: two terms, each changing its term group, and the
// hostname view of app=web counting it) and a self-affine db replica
// (affinePod: a new term group; the zone view of app=db counts it).
func forkBenchPods() []struct {
	kind string
	pi   *snapshot.PodInfo
} {
	return []struct {
		kind string
		pi   *snapshot.PodInfo
	}{
		{"plain", snapshot.MustPodInfo(st.MakePod("new").Req("cpu", "1", "memory", "1Gi").Obj())},
		{"anti", snapshot.MustPodInfo(hostAntiPod("new"))},
		{"affinity", snapshot.MustPodInfo(affinePod("new"))},
	}
}

// BenchmarkForkAddPodRevertAffinity is BenchmarkForkAddPodRevert on a
// cluster whose affinity index (and the spread index: every pod has a
// spread class) is populated, for each of forkBenchPods. A change copies
// a leaf of each small groups or views map it touches, from the Fork's
// recycler, and puts its totals in the groups' patches (no copy of a
// totals trie: termGroup).
func BenchmarkForkAddPodRevertAffinity(b *testing.B) {
	for _, n := range benchSizes {
		// Built on the first sub-benchmark run (b.Run runs its function
		// again to size b.N; forkAddPodRevert collects the build's
		// garbage before timing), so that -bench filters skip the
		// sizes they do not select.
		var snap *snapshot.Snapshot
		for _, p := range forkBenchPods() {
			b.Run(fmt.Sprintf("pod=%s/nodes=%d", p.kind, n), func(b *testing.B) {
				if snap == nil {
					snap = affinityBenchSnapshot(b, n)
				}
				forkAddPodRevert(b, snap, p.pi)
			})
		}
	}
}

// forkAddPodRevert times Fork, AddPodInfo(pi) on a node 7919 nodes
// after the last, Revert, on a Fork of snap. The node names are read
// before the timer starts, as a caller holds the name it places a pod
// on: reading it from a random NodeInfo in the loop timed a cache miss
// of the benchmark's own (about 200 ns at 15,000 nodes); AddPodInfo's
// look-up of the name (hashing the name's bytes, finding the node)
// stays timed. cpu-ns/op is the process's CPU time per cycle (GC
// included), which a loaded machine inflates less than ns/op.
func forkAddPodRevert(b *testing.B, snap *snapshot.Snapshot, pi *snapshot.PodInfo) {
	n := snap.NumNodes()
	names := make([]string, n)
	for i := range names {
		names[i] = snap.Node(i).Name()
	}
	f := snap.Fork()
	runtime.GC()
	b.ReportAllocs()
	i := 0
	c0 := cpuNanos()
	for b.Loop() {
		f.Fork()
		if err := f.AddPodInfo(pi, names[i%n]); err != nil {
			b.Fatal(err)
		}
		if err := f.Revert(); err != nil {
			b.Fatal(err)
		}
		i += 7919
	}
	b.ReportMetric(float64(cpuNanos()-c0)/float64(b.N), "cpu-ns/op")
}

// cpuNanos is the process's user+system CPU time in nanoseconds.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestForkAddPodRevertAffinityAllocs: with the affinity and spread
// indexes populated, a warm Fork+AddPod+Revert loop allocates nothing,
// for a pod without terms and for pods with (anti-)affinity terms, at
// 500 and 3,000 nodes: the index's trie nodes a layer copies come back to
// the Fork's recycler on Revert, and the node's list of pods with
// affinity is copied into the recycled NodeInfo's own buffer.
func TestForkAddPodRevertAffinityAllocs(t *testing.T) {
	for _, n := range []int{500, 3000} {
		snap := affinityBenchSnapshot(t, n)
		f := snap.Fork()
		for _, p := range forkBenchPods() {
			i := 0
			cycle := func() {
				f.Fork()
				require.NoError(t, f.AddPodInfo(p.pi, snap.Node(i%n).Name()))
				require.NoError(t, f.Revert())
				i += 7919
			}
			for range 2000 { // every node shape has been copied once
				cycle()
			}
			require.Zero(t, testing.AllocsPerRun(1000, cycle), "pod=%s nodes=%d", p.kind, n)
		}
	}
}
