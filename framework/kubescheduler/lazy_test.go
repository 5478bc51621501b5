package kubescheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// Over many cycles in which the host's NodeInfos change in place (pods
// assumed and deleted, as upstream's snapshot updates them) and nodes
// come and go, the plugins of one handle — the filter and a
// LeastAllocated scorer, which sync lazily, and a scorer of the cluster's
// total requested CPU, which needs every node current — give every node of a cycle the same
// verdict and score as plugins made afresh for that cycle. The cycles
// run the lazy plugins alone, the full one alone, or both, in either
// order, and filter and score a random part of the nodes, so changed
// nodes go unread for several cycles.
func TestLazySyncCyclesMatchFreshPlugins(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	var nodes []*fakeNodeInfo
	newNode := func(i int) *fakeNodeInfo {
		n := node(fmt.Sprintf("n%d", i), fmt.Sprint(4+4*(i%3)), fmt.Sprintf("%dGi", 8+8*(i%2)))
		if i%3 == 0 {
			n.Status.Images = append(n.Status.Images, imageOf("img:v1", 600<<20))
		}
		return newNodeInfo(n, 1)
	}
	for i := range 40 {
		nodes = append(nodes, newNode(i))
	}
	h := &fakeHandle{lister: &fakeLister{}}
	list := func() {
		h.lister.nodes = h.lister.nodes[:0:0] // a new list, as upstream makes on a node add or remove
		for _, n := range nodes {
			h.lister.nodes = append(h.lister.nodes, n)
		}
	}
	list()
	fit, la, il := plugins(t, h)
	lazyRounds, made := 0, 0
	for cycle := range 400 {
		switch k := r.IntN(20); {
		case k == 0 && len(nodes) > 10:
			nodes = append(nodes[:3], nodes[4:]...)
			list()
		case k == 1:
			nodes = append(nodes, newNode(100+cycle))
			list()
		default:
			for range r.IntN(4) {
				n := nodes[r.IntN(len(nodes))]
				if len(n.pods) > 0 && r.IntN(3) == 0 {
					n.pods = n.pods[1:]
					n.gen++
				} else {
					made++
					n.addPod(pod(fmt.Sprintf("c%d", made), fmt.Sprintf("%dm", 100+r.IntN(900)), fmt.Sprintf("%dMi", 100+r.IntN(900))))
				}
			}
		}
		p := pod(fmt.Sprintf("in%d", cycle), fmt.Sprintf("%dm", 100+r.IntN(2000)), "1Gi")
		p.Spec.Containers[0].Image = "img:v1"
		cands := pick(r, h.lister.nodes)
		ffit, fla, fil := plugins(t, &fakeHandle{lister: &fakeLister{nodes: h.lister.nodes}})
		// 0: lazy only, 1: full only, 2: lazy then full, 3: full then
		// lazy, 4: the lazy scorer alone (no filter looked first)
		mode := r.IntN(5)
		if mode == 0 || mode == 4 {
			lazyRounds++
		}
		cs, fcs := newCycleState(), newCycleState()
		filter := func() {
			_, st := fit.PreFilter(ctx, cs, p, h.lister.nodes)
			require.True(t, st.IsSuccess(), st.AsError())
			_, st = ffit.PreFilter(ctx, fcs, p, h.lister.nodes)
			require.True(t, st.IsSuccess(), st.AsError())
			for _, n := range cands {
				got, want := fit.Filter(ctx, cs, p, n), ffit.Filter(ctx, fcs, p, n)
				require.Equal(t, want.Code(), got.Code(), "cycle %d %s", cycle, n.Node().Name)
				require.Equal(t, reasonsOf(want), reasonsOf(got), "cycle %d %s", cycle, n.Node().Name)
			}
		}
		scoreWith := func(sp, fresh *ScorePlugin) {
			require.True(t, sp.PreScore(ctx, cs, p, cands).IsSuccess())
			require.True(t, fresh.PreScore(ctx, fcs, p, cands).IsSuccess())
			for _, n := range cands {
				got, st := sp.Score(ctx, cs, p, n)
				require.True(t, st.IsSuccess(), st.AsError())
				want, st := fresh.Score(ctx, fcs, p, n)
				require.True(t, st.IsSuccess(), st.AsError())
				require.Equal(t, want, got, "cycle %d %s %s", cycle, sp.Name(), n.Node().Name)
			}
		}
		switch mode {
		case 0:
			filter()
			scoreWith(la, fla)
		case 1:
			scoreWith(il, fil)
		case 2:
			filter()
			scoreWith(la, fla)
			scoreWith(il, fil)
		case 3:
			scoreWith(il, fil)
			filter()
			scoreWith(la, fla)
		case 4:
			scoreWith(la, fla)
		}
	}
	assert.Greater(t, lazyRounds, 50)
	assert.True(t, fit.lazy && la.lazy && !il.lazy)
}

// plugins are SchedkitNodeResourcesFit, SchedkitScore (LeastAllocated)
// and a clusterCPU scorer, on h (one mirror).
func plugins(t *testing.T, h fwk.Handle) (*FilterPlugin, *ScorePlugin, *ScorePlugin) {
	pl, err := NewSchedkitFit(context.Background(), nil, h)
	require.NoError(t, err)
	sp, err := NewSchedkitScore(context.Background(), nil, h)
	require.NoError(t, err)
	return pl.(*FilterPlugin), sp.(*ScorePlugin), WrapScorer("total", clusterCPU{}, h)
}

// clusterCPU scores every node with the cluster's total requested
// milli-CPU (mod 101): a scorer that reads all nodes.
type clusterCPU struct{}

func (clusterCPU) Name() string { return "ClusterCPU" }
func (clusterCPU) Prepare(_ *snapshot.PodInfo, c score.Cluster) (score.PodScorer, error) {
	var sum int64
	for i := range c.NumNodes() {
		sum += c.Node(i).Requested().MilliCPU()
	}
	return score.PodScorerFunc(func(nodes []*snapshot.NodeInfo, out []int64) {
		for i := range nodes {
			out[i] = sum % 101
		}
	}), nil
}

// pick returns a random part of nodes in list order from a random start,
// wrapping, as a cycle's feasible nodes are.
func pick(r *rand.Rand, nodes []fwk.NodeInfo) []fwk.NodeInfo {
	var out []fwk.NodeInfo
	start := r.IntN(len(nodes))
	for i := range nodes {
		if r.IntN(3) > 0 {
			out = append(out, nodes[(start+i)%len(nodes)])
		}
	}
	return out
}

func imageOf(name string, size int64) v1.ContainerImage {
	return v1.ContainerImage{Names: []string{name}, SizeBytes: size}
}

func reasonsOf(st *fwk.Status) []string {
	if st == nil {
		return nil
	}
	return st.Reasons()
}

// Filters sync lazily, except one that would read the cluster (a
// framework.ClusterFilter); scorers only when they ignore the cluster.
func TestWhichPluginsSyncLazily(t *testing.T) {
	h := &fakeHandle{lister: &fakeLister{}}
	fit, la, total := plugins(t, h)
	assert.True(t, fit.lazy)
	assert.True(t, la.lazy)
	assert.False(t, total.lazy, "a custom scorer")
	pts, err := framework.NewPodTopologySpread(score.PodTopologySpreadArgs{})
	require.NoError(t, err)
	assert.False(t, WrapFilter("pts", pts, h).lazy, "a ClusterFilter")
	il, err := score.Config{Scorer: "ImageLocality"}.Build()
	require.NoError(t, err)
	assert.False(t, WrapScorer("il", il, h).lazy, "ImageLocality counts nodes per image")
}
