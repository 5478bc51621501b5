package framework

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// refScheduler is a deliberately simple scheduling cycle written straight
// from upstream's findNodesThatFitPod / findNodesThatPassFilters /
// FitError.Error: no chunks, no workers, no reuse.
type refScheduler struct {
	next    int
	pct     int32
	filters []Filter
	profile *score.Profile
}

type refResult struct {
	evaluated int
	totals    map[string]int64 // feasible node -> total
	message   string           // "" when feasible
}

func (r *refScheduler) schedule(t *testing.T, snap *snapshot.Snapshot, pod *snapshot.PodInfo) refResult {
	numAll := snap.NumNodes()
	if numAll == 0 {
		return refResult{message: "no nodes available to schedule pods"}
	}
	var checks []PodFilter
	var allowed map[string]bool
	var narrowing []string
	for _, f := range r.filters {
		res, err := f.PreFilter(pod)
		require.NoError(t, err)
		if res.Reject != "" {
			return refResult{message: fmt.Sprintf("0/%d nodes are available: %s.", numAll, res.Reject)}
		}
		if res.NodeNames != nil {
			narrowing = append(narrowing, f.Name())
			next := map[string]bool{}
			for _, n := range res.NodeNames {
				if allowed == nil || allowed[n] {
					next[n] = true
				}
			}
			allowed = next
			if len(allowed) == 0 {
				sort.Strings(narrowing)
				msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", narrowing)
				if len(narrowing) == 1 {
					msg = "node(s) didn't satisfy plugin " + narrowing[0]
				}
				return refResult{message: fmt.Sprintf("0/%d nodes are available: %s.", numAll, msg)}
			}
		}
		if res.Filter != nil {
			checks = append(checks, res.Filter)
		}
	}
	var nodes []*snapshot.NodeInfo
	if allowed == nil {
		for _, ni := range snap.Nodes() {
			nodes = append(nodes, ni)
		}
	} else {
		var names []string
		for n := range allowed {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if ni := snap.Get(n); ni != nil {
				nodes = append(nodes, ni)
			}
		}
	}
	want := numFeasibleNodesToFind(r.pct, len(nodes))
	if len(r.profile.Scorers()) == 0 {
		want = min(want, 1)
	}
	var feasible []*snapshot.NodeInfo
	counts := map[string]int{}
	evaluated := 0
	for i := 0; i < len(nodes) && len(feasible) < want; i++ {
		ni := nodes[(r.next+i)%len(nodes)]
		evaluated++
		ok := true
		for _, c := range checks {
			if rs := c.Filter(ni, nil); len(rs) > 0 {
				for _, x := range rs {
					counts[x.Message()]++
				}
				ok = false
				break
			}
		}
		if ok {
			feasible = append(feasible, ni)
		}
	}
	r.next = (r.next + evaluated) % numAll
	if len(feasible) == 0 {
		if allowed != nil && len(nodes) < numAll {
			sort.Strings(narrowing)
			counts[fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", narrowing)] += numAll - len(nodes)
		}
		var parts []string
		for m, c := range counts {
			parts = append(parts, fmt.Sprintf("%d %s", c, m))
		}
		sort.Strings(parts)
		return refResult{evaluated: evaluated, message: fmt.Sprintf("0/%d nodes are available: %s.", numAll, strings.Join(parts, ", "))}
	}
	totals := make([]int64, len(feasible))
	require.NoError(t, r.profile.Score(pod, snap, feasible, totals))
	out := refResult{evaluated: evaluated, totals: map[string]int64{}}
	for i, ni := range feasible {
		out.totals[ni.Name()] = totals[i]
	}
	return out
}

// TestCycleAgainstReference compares the cycle with the reference on
// random clusters and pods, for several percentages and parallelisms: the
// nodes filtered, the feasible set's best total, the chosen node being one
// of the best, the next start index and the diagnosis text.
func TestCycleAgainstReference(t *testing.T) {
	for _, numNodes := range []int{0, 3, 150, 700, 1300} {
		for _, pct := range []int32{0, 7, 33, 100} {
			for _, par := range []int{1, 3} {
				t.Run(fmt.Sprintf("nodes=%d/pct=%d/parallelism=%d", numNodes, pct, par), func(t *testing.T) {
					checkAgainstReference(t, uint64(numNodes)*131+uint64(pct), numNodes, pct, par, 60)
				})
			}
		}
	}
}

// FuzzCycleAgainstReference is TestCycleAgainstReference over fuzzed
// seeds, sizes, percentages and parallelism.
func FuzzCycleAgainstReference(f *testing.F) {
	f.Add(uint64(1), uint16(250), uint8(0), uint8(1))
	f.Add(uint64(2), uint16(130), uint8(100), uint8(3))
	f.Add(uint64(3), uint16(0), uint8(5), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, numNodes uint16, pct, par uint8) {
		checkAgainstReference(t, seed, int(numNodes%600), int32(pct%101), int(par%4), 15)
	})
}

func checkAgainstReference(t *testing.T, seed uint64, numNodes int, pct int32, par, numPods int) {
	r := rand.New(rand.NewPCG(seed, 9))
	nodes := genCluster(seed, numNodes)
	// prefill: random bound pods so that many nodes are full
	f := snapshottest.Snapshot(t, nodes).Fork()
	if numNodes > 0 {
		for i, p := range genPods(seed+1, numNodes*6) {
			p.Name = fmt.Sprintf("bound-%d", i)
			require.NoError(t, f.AddPodInfo(snapshot.MustPodInfo(p), nodes[r.IntN(numNodes)].Name))
		}
	}
	snap := f.Snapshot()

	pods := podInfos(genPods(seed+2, numPods))
	// some pods with node names and name affinity, existing or not
	for i := 0; i < len(pods); i += 7 {
		p := pods[i].Pod().DeepCopy()
		names := []string{"ghost"}
		if numNodes > 0 {
			names = append(names, nodes[r.IntN(numNodes)].Name)
		}
		switch i % 3 {
		case 0:
			p = mkPod(p.Name).Req("cpu", "100m").RequiredNodeName(names[r.IntN(len(names))]).Obj()
		case 1:
			p.Spec.NodeName = names[r.IntN(len(names))]
		default:
			p = mkPod(p.Name).Req("cpu", "64").Obj() // fits nowhere
		}
		pods[i] = snapshot.MustPodInfo(p)
	}

	s := mustNew(t, Config{PercentageOfNodesToScore: pct, Parallelism: par, Seed: seed})
	ref := &refScheduler{pct: pct, filters: DefaultFilters(), profile: score.DefaultProfile()}
	for _, pod := range pods {
		want := ref.schedule(t, snap, pod)
		d, err := s.SchedulePod(snap, pod)
		require.NoError(t, err)
		if want.message != "" {
			require.NotNil(t, d.Diagnosis, "pod %s scheduled on %s, reference: %s", pod.Key(), d.Node, want.message)
			require.Equal(t, want.message, d.Diagnosis.Message(), "pod %s", pod.Key())
		} else {
			require.Nil(t, d.Diagnosis, "pod %s", pod.Key())
			require.Len(t, want.totals, d.Feasible, "pod %s feasible", pod.Key())
			best := slices.Max(mapValues(want.totals))
			require.Equal(t, best, d.Total, "pod %s total", pod.Key())
			require.Equal(t, best, want.totals[d.Node], "pod %s: node %s is not among the best", pod.Key(), d.Node)
		}
		require.Equal(t, want.evaluated, d.Evaluated, "pod %s evaluated", pod.Key())
		require.Equal(t, ref.next, s.next, "pod %s next start index", pod.Key())
	}
}

func mapValues(m map[string]int64) []int64 {
	var out []int64
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
