package score_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/shareddata"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// dataDir is shareddata.Dir: ../shared/data/<sub>, or a skip.
var dataDir = shareddata.Dir

func readCSV(tb testing.TB, path string) [][]string {
	tb.Helper()
	f, err := os.Open(path)
	require.NoError(tb, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(tb, err)
	return rows[1:] // header
}

func atoi(tb testing.TB, s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	require.NoError(tb, err)
	return v
}

type openbCluster struct {
	cache *snapshot.Cache
	nodes []*v1.Node
	pods  []*v1.Pod // pending, in trace order
}

// loadOpenb reads the Alibaba openb trace (1523 nodes; the default pod
// list): nodes with cpu, memory and whole GPUs; pods with cpu and memory,
// and nvidia.com/gpu only for whole-GPU pods (GPU sharing is the gpushare
// package's business, not these scorers').
func loadOpenb(tb testing.TB, maxPods int) *openbCluster {
	dir := filepath.Join(dataDir(tb, "alibaba-clusterdata-gpu-v2023"), "csv")
	c := &openbCluster{cache: snapshot.NewCache()}
	for _, r := range readCSV(tb, filepath.Join(dir, "openb_node_list_all_node.csv")) {
		alloc := v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(atoi(tb, r[1]), resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(atoi(tb, r[2])<<20, resource.BinarySI),
			v1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
		}
		if g := atoi(tb, r[3]); g > 0 {
			alloc["nvidia.com/gpu"] = *resource.NewQuantity(g, resource.DecimalSI)
		}
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: r[0], Labels: map[string]string{"gpu-model": r[4]}},
			Status: v1.NodeStatus{Allocatable: alloc, Capacity: alloc}}
		require.NoError(tb, c.cache.AddNode(n))
		c.nodes = append(c.nodes, n)
	}
	for i, r := range readCSV(tb, filepath.Join(dir, "openb_pod_list_default.csv")) {
		if i == maxPods {
			break
		}
		req := v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(atoi(tb, r[1]), resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(atoi(tb, r[2])<<20, resource.BinarySI),
		}
		if g, milli := atoi(tb, r[3]), atoi(tb, r[4]); g > 0 && milli == 1000 {
			req["nvidia.com/gpu"] = *resource.NewQuantity(g, resource.DecimalSI)
		}
		c.pods = append(c.pods, &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: r[0], Namespace: "default"},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "app", Resources: v1.ResourceRequirements{Requests: req}}}},
		})
	}
	return c
}

// fits is a plain resource fit check for the replay (the real filter is
// the framework's).
func fits(pi *snapshot.PodInfo, n *snapshot.NodeInfo) bool {
	req := pi.Requested()
	for id := range snapshot.ResourceID(req.Len()) {
		if q := req.Get(id); q > 0 && q > n.Free(id) {
			return false
		}
	}
	return n.NumPods() < int(n.Allocatable().AllowedPodNumber())
}

// Replays the head of the openb trace with the default profile: every
// score in range, the highest-scoring fitting node takes the pod, and
// Explain reproduces the winner's total.
func TestOpenbReplay(t *testing.T) {
	c := loadOpenb(t, 1500)
	prof := score.DefaultProfile()
	totals := make([]int64, len(c.nodes))
	placed := 0
	for i, p := range c.pods {
		snap := c.cache.Snapshot()
		pi := snapshot.MustPodInfo(p)
		var cands []*snapshot.NodeInfo
		for _, n := range snap.Nodes() {
			if fits(pi, n) {
				cands = append(cands, n)
			}
		}
		if len(cands) == 0 {
			continue
		}
		require.NoError(t, prof.Score(pi, snap, cands, totals))
		best := 0
		for j, v := range totals[:len(cands)] {
			if v < 0 || v > 800 { // weights 3+2+1+1+1 = 8
				t.Fatalf("pod %s: total %d on %s, want [0, 800]", p.Name, v, cands[j].Name())
			}
			if v > totals[best] {
				best = j
			}
		}
		if i%100 == 0 {
			e, err := prof.Explain(pi, snap, cands, best)
			require.NoError(t, err)
			require.Equal(t, totals[best], e.Total, "Explain(%s, %s)", p.Name, cands[best].Name())
		}
		bound := p.DeepCopy()
		bound.Spec.NodeName = cands[best].Name()
		require.NoError(t, c.cache.AddPod(bound))
		placed++
	}
	require.Greater(t, placed, 1000, "most of the first 1500 trace pods fit")
	t.Logf("placed %d of %d pods on %d nodes", placed, len(c.pods), len(c.nodes))
}

// BenchmarkOpenb scores one trace pod against all 1523 real nodes after
// the first 3000 trace pods were placed (best fit by MostAllocated).
func BenchmarkOpenb(b *testing.B) {
	c := loadOpenb(b, 4000)
	most := mustScorer(score.NewMostAllocated())
	packer := score.MustProfile(score.Weighted{Scorer: most})
	totals := make([]int64, len(c.nodes))
	for _, p := range c.pods[:3000] {
		snap := c.cache.Snapshot()
		pi := snapshot.MustPodInfo(p)
		var cands []*snapshot.NodeInfo
		for _, n := range snap.Nodes() {
			if fits(pi, n) {
				cands = append(cands, n)
			}
		}
		if len(cands) == 0 {
			continue
		}
		require.NoError(b, packer.Score(pi, snap, cands, totals))
		best := 0
		for j := range cands {
			if totals[j] > totals[best] {
				best = j
			}
		}
		bound := p.DeepCopy()
		bound.Spec.NodeName = cands[best].Name()
		require.NoError(b, c.cache.AddPod(bound))
	}
	snap := c.cache.Snapshot()
	var nodes []*snapshot.NodeInfo
	for _, n := range snap.Nodes() {
		nodes = append(nodes, n)
	}
	pi := snapshot.MustPodInfo(c.pods[3500])
	for _, pr := range []struct {
		name string
		p    *score.Profile
	}{
		{"LeastAllocated+BalancedAllocation", score.MustProfile(
			score.Weighted{Scorer: mustScorer(score.NewLeastAllocated())},
			score.Weighted{Scorer: mustScorer(score.NewBalancedAllocation())})},
		{"Default", score.DefaultProfile()},
	} {
		b.Run(fmt.Sprintf("%s/nodes=%d", pr.name, len(nodes)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := pr.p.Score(pi, snap, nodes, totals); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(nodes)), "ns/node")
		})
	}
}

// The OpenShift Insights sample: real nodes (master taints, labels) and
// real multi-container pods (memory-only requests, no requests): every
// default-profile score is in range and Explain agrees with Score.
func TestOpenShiftSample(t *testing.T) {
	dir := dataDir(t, "openshift-insights-archive-sample")
	var nodes []*v1.Node
	var pods []*v1.Pod
	read := func(sub string, into func([]byte)) {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			into(data)
			return nil
		})
		require.NoError(t, err)
	}
	read("node", func(b []byte) {
		var n v1.Node
		require.NoError(t, json.Unmarshal(b, &n))
		nodes = append(nodes, &n)
	})
	read("pod", func(b []byte) {
		var p v1.Pod
		require.NoError(t, json.Unmarshal(b, &p))
		pods = append(pods, &p)
	})
	require.NotEmpty(t, nodes)
	require.NotEmpty(t, pods)
	c := snapshot.NewCache()
	for _, n := range nodes {
		require.NoError(t, c.AddNode(n))
	}
	snap := c.Snapshot()
	var infos []*snapshot.NodeInfo
	for _, n := range snap.Nodes() {
		infos = append(infos, n)
	}
	prof := score.DefaultProfile()
	totals := make([]int64, len(infos))
	for _, p := range pods {
		pi, err := snapshot.NewPodInfo(p)
		require.NoError(t, err)
		require.NoErrorf(t, prof.Score(pi, snap, infos, totals), "pod %s", pi.Key())
		for i := range infos {
			e, err := prof.Explain(pi, snap, infos, i)
			require.NoError(t, err)
			require.Equal(t, totals[i], e.Total, "Explain(%s, %s)", pi.Key(), infos[i].Name())
		}
	}
}
