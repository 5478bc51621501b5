package framework

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// forkOnlyFit is NodeResourcesFit under another type: the same verdicts,
// but preemption does not recognise it, so its dry run takes the fork
// (remove the victims, run the filters, reprieve one by one).
type forkOnlyFit struct{ f Filter }

func (w forkOnlyFit) Name() string  { return w.f.Name() }
func (forkOnlyFit) NodeLocal() bool { return true }
func (w forkOnlyFit) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	res, err := w.f.PreFilter(pod)
	if res.Filter != nil {
		res.Filter = PodFilterFunc(res.Filter.Filter)
	}
	return res, err
}

// fastCase is a random preemption problem for the fast/fork comparison.
type fastCase struct {
	nodes []*v1.Node
	pods  []*v1.Pod
	objs  *objects
	noms  []*v1.Pod // nominated pods (status.nominatedNodeName set)
	pre   *v1.Pod
	opts  PreemptOptions
}

// genFastCase draws 1-8 nodes (cpu, memory, pods, sometimes an extended
// resource, some tainted, cordoned or in zone z1), pods with mixed
// priorities (some only through priorityClassName), requests, labels and
// start times (some unset), some with a host port; 0-3 PDBs; 0-2
// nominated pods; a preemptor (sometimes with a node selector, a
// toleration, a host port or the extended resource); sometimes sampled
// candidates.
func genFastCase(r *rand.Rand) fastCase {
	prios := []int32{-5, 0, 0, 10, 10, 50, 100}
	c := fastCase{objs: &objects{classes: map[string]*schedulingv1.PriorityClass{}}}
	for _, p := range prios {
		name := fmt.Sprintf("prio%d", p)
		c.objs.classes[name] = &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: p}
	}
	nn := 1 + r.IntN(8)
	for i := range nn {
		w := mkNode(fmt.Sprintf("n%d", i)).Label("zone", fmt.Sprintf("z%d", r.IntN(2)))
		kv := []string{"cpu", fmt.Sprintf("%dm", 1000*(1+r.IntN(4))), "memory", fmt.Sprintf("%dGi", 1+r.IntN(8)), "pods", fmt.Sprint(2 + r.IntN(6))}
		if r.IntN(3) == 0 {
			kv = append(kv, "example.com/foo", fmt.Sprint(r.IntN(5)))
		}
		w = w.Allocatable(kv...)
		switch r.IntN(12) {
		case 0:
			w = w.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
		case 1:
			w = w.Unschedulable()
		}
		c.nodes = append(c.nodes, w.Obj())
	}
	pod := func(name string) *v1.Pod {
		kv := []string{"cpu", fmt.Sprintf("%dm", 100*(1+r.IntN(15))), "memory", fmt.Sprintf("%dMi", 256*r.IntN(6))}
		if r.IntN(4) == 0 {
			kv = append(kv, "example.com/foo", fmt.Sprint(1+r.IntN(2)))
		}
		w := mkPod(name).Req(kv...)
		prio := prios[r.IntN(len(prios))]
		if r.IntN(4) == 0 {
			p := w.Obj()
			p.Spec.PriorityClassName = fmt.Sprintf("prio%d", prio)
			return p
		}
		return w.Priority(prio).Obj()
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	np := r.IntN(5 * nn)
	for i := range np {
		p := pod(fmt.Sprintf("p%d", i))
		p.Spec.NodeName = c.nodes[r.IntN(nn)].Name
		if r.IntN(8) > 0 {
			st := metav1.NewTime(t0.Add(time.Duration(r.IntN(20)) * time.Minute))
			p.Status.StartTime = &st
		}
		if r.IntN(3) > 0 {
			p.Labels = map[string]string{"app": fmt.Sprintf("a%d", r.IntN(3))}
		}
		if r.IntN(15) == 0 {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{HostPort: 8080 + int32(r.IntN(2)), ContainerPort: 80, Protocol: v1.ProtocolTCP}}
		}
		c.pods = append(c.pods, p)
	}
	for i := range r.IntN(4) {
		c.objs.pdbs = append(c.objs.pdbs, pdb(fmt.Sprintf("pdb%d", i), "app", fmt.Sprintf("a%d", r.IntN(3)), int32(r.IntN(3))))
	}
	for i := range r.IntN(3) {
		p := pod(fmt.Sprintf("nom%d", i))
		p.Status.NominatedNodeName = c.nodes[r.IntN(nn)].Name
		c.noms = append(c.noms, p)
	}
	c.pre = pod("preemptor")
	c.pre.Spec.Priority, c.pre.Spec.PriorityClassName = nil, fmt.Sprintf("prio%d", prios[3+r.IntN(len(prios)-3)])
	switch r.IntN(10) {
	case 0:
		c.pre.Spec.NodeSelector = map[string]string{"zone": "z0"}
	case 1:
		c.pre.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
	case 2:
		c.pre.Spec.Containers[0].Ports = []v1.ContainerPort{{HostPort: 8080, ContainerPort: 80, Protocol: v1.ProtocolTCP}}
	}
	if r.IntN(4) == 0 {
		c.opts = PreemptOptions{MinCandidateNodesPercentage: int32(r.IntN(60)), MinCandidateNodesAbsolute: int32(r.IntN(3)), Offset: r.IntN(10)}
	}
	c.opts.Objects = c.objs
	return c
}

// preemptWith runs the case's preemption with filters; it also reports
// whether the fit-arithmetic dry run applied.
func (c *fastCase) preemptWith(t *testing.T, filters []Filter) (Preemption, error, bool) {
	t.Helper()
	s, err := New(Config{Filters: filters})
	require.NoError(t, err)
	for _, p := range c.noms {
		prio, err := PodPriority(p, c.objs)
		require.NoError(t, err)
		s.Nominate(snapshot.MustPodInfo(p), prio, p.Status.NominatedNodeName)
	}
	sn := snap(t, c.nodes, c.pods...)
	pi := snapshot.MustPodInfo(c.pre)
	run, err := s.newPreemptRun(sn, pi, c.opts)
	require.NoError(t, err)
	require.NoError(t, run.prepare())
	res, err := s.Preempt(sn, pi, c.opts)
	return res, err, run.fast.ok
}

// TestPreemptFastMatchesFork: on 3,000 random clusters, the dry run by
// fit arithmetic (DefaultFilters) and the dry run on a fork with the
// filters re-run at each step (the same filters with NodeResourcesFit
// under a type preemption does not recognise) give the same node,
// victims in the same order, PDB violations and message, or the same
// error.
func TestPreemptFastMatchesFork(t *testing.T) {
	slow := DefaultFilters()
	for i, f := range slow {
		if _, ok := f.(*nodeResourcesFitPlugin); ok {
			slow[i] = forkOnlyFit{f}
		}
	}
	fastFound, fastNone := 0, 0
	for seed := range uint64(3000) {
		c := genFastCase(rand.New(rand.NewPCG(seed, 15)))
		got, gotErr, fast := c.preemptWith(t, DefaultFilters())
		want, wantErr, slowFast := c.preemptWith(t, slow)
		require.False(t, slowFast, "seed %d: the wrapped filter takes the fork", seed)
		if wantErr != nil {
			require.Error(t, gotErr, "seed %d: the fork's dry run failed with %v", seed, wantErr)
			continue
		}
		require.NoError(t, gotErr, "seed %d", seed)
		require.Equal(t, want.Node, got.Node, "seed %d: node (fork: %s)", seed, want.Message)
		require.Equal(t, keys(want.Victims), keys(got.Victims), "seed %d: victims", seed)
		require.Equal(t, want.NumPDBViolations, got.NumPDBViolations, "seed %d", seed)
		require.Equal(t, want.Message, got.Message, "seed %d", seed)
		require.Equal(t, want.Priority, got.Priority, "seed %d", seed)
		if fast && got.Found() {
			fastFound++
		} else if fast && got.Message != "" {
			fastNone++
		}
	}
	t.Logf("fit arithmetic applied: %d cases found a node, %d found none", fastFound, fastNone)
	require.Greater(t, fastFound, 500, "enough cases take the fit-arithmetic dry run and preempt")
	require.Greater(t, fastNone, 100, "enough cases take it and find no candidate")
}

// TestPreemptAllocsIndependentOfNodes: on the PreemptionBasic shape, a
// Preempt call examining every node allocates the same at 200 and 2,000
// nodes (the run's state and the result, not per node): the dry run
// reuses its scratch space and makes no fork layer.
func TestPreemptAllocsIndependentOfNodes(t *testing.T) {
	allocs := func(n int) float64 {
		c := snapshot.NewCache()
		for i := range n {
			node := mkNode(fmt.Sprintf("node-%d", i)).Allocatable("cpu", "4", "memory", "32Gi", "pods", "110").Obj()
			require.NoError(t, c.AddNode(node))
			for j := range 4 {
				require.NoError(t, c.AddPod(mkPod(fmt.Sprintf("low-%d-%d", i, j)).Req("cpu", "900m", "memory", "500Mi").Node(node.Name).Obj()))
			}
		}
		sn, high := c.Snapshot(), snapshot.MustPodInfo(mkPod("high").Req("cpu", "3000m", "memory", "500Mi").Priority(10).Obj())
		s := newSched(t)
		return testing.AllocsPerRun(5, func() {
			res, err := s.Preempt(sn, high, PreemptOptions{})
			if err != nil || len(res.Victims) != 3 {
				t.Fatalf("%+v %v", res, err)
			}
		})
	}
	small, large := allocs(200), allocs(2000)
	t.Logf("allocations per Preempt: %.0f at 200 nodes, %.0f at 2,000", small, large)
	require.Equal(t, small, large, "allocations do not grow with the nodes")
	require.LessOrEqual(t, large, 40.0)
}
