package snapshot_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

var benchSizes = []int{1000, 5000, 15000}

const podsPerNode = 30

// benchCache builds n nodes with 30 pods each.
func benchCache(b testing.TB, n int, opts ...snapshot.CacheOption) (*snapshot.Cache, []*v1.Pod) {
	b.Helper()
	c := snapshot.NewCache(opts...)
	tmpl := st.MakePod("tmpl").Req("cpu", "100m", "memory", "256Mi").Obj()
	pi := snapshot.MustPodInfo(tmpl)
	_ = pi
	var extra []*v1.Pod
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		if err := c.AddNode(st.MakeNode(name).Capacity("cpu", "64", "memory", "256Gi", "pods", "110").Obj()); err != nil {
			b.Fatal(err)
		}
		for j := range podsPerNode {
			p := tmpl.DeepCopy()
			p.Name = fmt.Sprintf("p-%d-%d", i, j)
			p.Spec.NodeName = name
			if err := c.AddPod(p); err != nil {
				b.Fatal(err)
			}
		}
		p := tmpl.DeepCopy()
		p.Name = fmt.Sprintf("extra-%d", i)
		p.Spec.NodeName = name
		extra = append(extra, p)
	}
	return c, extra
}

func BenchmarkForkAddPodRevert(b *testing.B) {
	pi := snapshot.MustPodInfo(st.MakePod("new").Req("cpu", "1", "memory", "1Gi").Obj())
	for _, n := range benchSizes {
		// Built once per size, on the first run of the sub-benchmark
		// (b.Run runs its function several times while it sizes b.N),
		// so that -bench filters skip the sizes they do not select; the
		// build's garbage is collected before timing (forkAddPodRevert).
		var snap *snapshot.Snapshot
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			if snap == nil {
				c, _ := benchCache(b, n)
				snap = c.Snapshot()
			}
			forkAddPodRevert(b, snap, pi)
		})
	}
}

// BenchmarkForkAddNodeRevert is a what-if node addition: the first name
// written in a layer copies the name index's delta (up to 32 + n/8
// entries).
func BenchmarkForkAddNodeRevert(b *testing.B) {
	for _, n := range benchSizes {
		c, _ := benchCache(b, n)
		snap := c.Snapshot()
		node := st.MakeNode("extra-node").Capacity("cpu", "64", "memory", "256Gi", "pods", "110").Obj()
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			f := snap.Fork()
			runtime.GC()
			b.ReportAllocs()
			for b.Loop() {
				f.Fork()
				if err := f.AddNode(node); err != nil {
					b.Fatal(err)
				}
				if err := f.Revert(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCacheSnapshot(b *testing.B) {
	for _, changes := range []int{1, 100} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("changes=%d/nodes=%d", changes, n), func(b *testing.B) {
				c, extra := benchCache(b, n)
				pis := make([]*snapshot.PodInfo, len(extra))
				for i, p := range extra {
					pis[i] = snapshot.MustPodInfo(p)
				}
				c.Snapshot()
				runtime.GC() // the build's garbage is not the loop's
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					// `changes` pod events on distinct nodes, then a snapshot;
					// add and remove alternate so the cache stays the same size.
					for range changes {
						pi := pis[i%n]
						if (i/n)%2 == 0 {
							_ = c.AddPodInfo(pi)
						} else {
							c.RemovePod(pi.Key())
						}
						i += 13
					}
					_ = c.Snapshot()
				}
			})
		}
	}
}

var sink int64

func BenchmarkIterateNodes(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			c, _ := benchCache(b, n)
			snap := c.Snapshot()
			b.ReportAllocs()
			for b.Loop() {
				var s int64
				for _, ni := range snap.Nodes() {
					s += ni.Free(snapshot.CPU)
				}
				sink = s
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}

// BenchmarkMemoryPerNode reports the heap a cache holds per node (30 pods
// each, PodInfos included), with full records (the default) and with
// lean ones (LeanPods).
func BenchmarkMemoryPerNode(b *testing.B) {
	modes := []struct {
		name string
		opts []snapshot.CacheOption
	}{{"full", nil}, {"lean", []snapshot.CacheOption{snapshot.LeanPods()}}}
	for _, mode := range modes {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("pods=%s/nodes=%d", mode.name, n), func(b *testing.B) {
				for b.Loop() {
					var m0, m1 runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&m0)
					c, _ := benchCache(b, n, mode.opts...)
					snap := c.Snapshot()
					runtime.GC()
					runtime.ReadMemStats(&m1)
					runtime.KeepAlive(snap)
					b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/float64(n), "bytes/node")
				}
			})
		}
	}
}

func TestIterationAndForkAllocs(t *testing.T) {
	c := snapshot.NewCache()
	for i := range 200 {
		_ = c.AddNode(st.MakeNode(fmt.Sprintf("n%d", i)).Capacity("cpu", "4").Obj())
	}
	snap := c.Snapshot()
	allocs := testing.AllocsPerRun(100, func() {
		var s int64
		for _, ni := range snap.Nodes() {
			s += ni.Free(snapshot.CPU)
		}
		for i := range snap.NumNodes() {
			s += snap.Node(i).Requested().MilliCPU()
		}
		_, _ = snap.Index("n7")
		sink = s
	})
	if allocs != 0 {
		t.Errorf("iterating a snapshot allocates %v times, want 0", allocs)
	}
}

// A Fork → AddPodInfo → Revert loop allocates nothing once warm: Revert
// keeps the layer's copies (tree header, chunk, NodeInfo and its pod
// slices) and the next layer copies into them. A snapshot taken in a layer
// stops that reuse (it shares the copies), and the loop allocates again.
func TestForkAddPodRevertAllocatesNothing(t *testing.T) {
	c, _ := benchCache(t, 1000)
	snap := c.Snapshot()
	pi := snapshot.MustPodInfo(st.MakePod("new").Req("cpu", "1", "memory", "1Gi").Obj())
	f := snap.Fork()
	i := 0
	cycle := func() {
		f.Fork()
		if err := f.AddPodInfo(pi, snap.Node(i%1000).Name()); err != nil {
			t.Fatal(err)
		}
		if err := f.Revert(); err != nil {
			t.Fatal(err)
		}
		i += 7919
	}
	for range 2000 { // every chunk and node shape has been copied once
		cycle()
	}
	require.Zero(t, testing.AllocsPerRun(1000, cycle))
	withSnapshot := testing.AllocsPerRun(100, func() {
		f.Fork()
		require.NoError(t, f.AddPodInfo(pi, snap.Node(0).Name()))
		_ = f.Snapshot()
		require.NoError(t, f.Revert())
	})
	require.Positive(t, withSnapshot)
}
