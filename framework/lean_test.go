package framework

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// leanCluster is a random cluster whose pods exercise what a lean record
// keeps: labels in two namespaces, owners, priorities, start times,
// terminating pods with a DisruptionTarget condition, host ports,
// tolerations, pod (anti-)affinity and spread constraints; PDBs on the
// labels.
func leanCluster(r *rand.Rand) (nodes []*v1.Node, pods []*v1.Pod, pdbs []*policyv1.PodDisruptionBudget) {
	nn := 2 + r.IntN(7)
	for i := range nn {
		w := mkNode(fmt.Sprintf("n%d", i)).Allocatable("cpu", fmt.Sprintf("%dm", 1000*(1+r.IntN(4))), "memory", "8Gi", "pods", fmt.Sprint(3+r.IntN(6))).
			Label("topology.kubernetes.io/zone", fmt.Sprintf("z%d", i%3)).Label("kubernetes.io/hostname", fmt.Sprintf("n%d", i))
		if r.IntN(6) == 0 {
			w.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
		}
		nodes = append(nodes, w.Obj())
	}
	for i := range r.IntN(5 * nn) {
		p := leanPod(r, fmt.Sprintf("p%d", i))
		p.Spec.NodeName = nodes[r.IntN(nn)].Name
		st := metav1.NewTime(time.Date(2026, 1, 1, 0, r.IntN(30), 0, 0, time.UTC))
		p.Status.StartTime = &st
		p.Status.Phase = v1.PodRunning
		if r.IntN(10) == 0 {
			del := metav1.NewTime(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC))
			p.DeletionTimestamp = &del
			p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
		}
		pods = append(pods, p)
	}
	for i := range r.IntN(3) {
		d := pdb(fmt.Sprintf("pdb%d", i), "app", fmt.Sprintf("a%d", r.IntN(3)), int32(r.IntN(2)))
		d.Namespace = []string{"default", "shop"}[r.IntN(2)]
		pdbs = append(pdbs, d)
	}
	return nodes, pods, pdbs
}

// leanPod is a pod with random scheduling features.
func leanPod(r *rand.Rand, name string) *v1.Pod {
	app := fmt.Sprintf("a%d", r.IntN(3))
	w := mkPod(name).Req("cpu", fmt.Sprintf("%dm", 100*(1+r.IntN(12)))).Priority(int32(r.IntN(5) * 10))
	if r.IntN(8) == 0 {
		w.HostPort("", 8080)
	}
	if r.IntN(5) == 0 {
		w.Toleration("dedicated", v1.TolerationOpEqual, "x", v1.TaintEffectNoSchedule)
	}
	p := w.Obj()
	p.Namespace = []string{"default", "shop"}[r.IntN(2)]
	p.Labels = map[string]string{"app": app}
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app, UID: "rs-" + "app", Controller: &yes}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("a%d", r.IntN(3))}}
	term := v1.PodAffinityTerm{LabelSelector: sel, TopologyKey: []string{"kubernetes.io/hostname", "topology.kubernetes.io/zone"}[r.IntN(2)]}
	switch r.IntN(6) {
	case 0:
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}
	case 1:
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 10, PodAffinityTerm: term}}}}
	case 2:
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
			WhenUnsatisfiable: []v1.UnsatisfiableConstraintAction{v1.DoNotSchedule, v1.ScheduleAnyway}[r.IntN(2)], LabelSelector: sel}}
	}
	return p
}

// decisionOf is what a scheduling cycle and, for an unschedulable pod,
// preemption decide, as text.
func decisionOf(t *testing.T, s *Scheduler, snap *snapshot.Snapshot, pi *snapshot.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (string, string) {
	t.Helper()
	d, err := s.SchedulePod(snap, pi)
	require.NoError(t, err)
	if d.Scheduled() {
		return fmt.Sprintf("node %s total %d feasible %d", d.Node, d.Total, d.Feasible), d.Node
	}
	pr, err := s.Preempt(snap, pi, PreemptOptions{Objects: &objects{pdbs: pdbs}})
	require.NoError(t, err)
	victims := make([]string, len(pr.Victims))
	for i, v := range pr.Victims {
		victims[i] = v.Key().String()
	}
	return fmt.Sprintf("unschedulable %q; preempt node %q victims %v pdb %d: %s", d.Diagnosis.Message(), pr.Node, victims, pr.NumPDBViolations, pr.Message), ""
}

// TestLeanDecisionsEqualFull: over random clusters, a Cache of lean
// records and one of full records give the same decisions — node, total,
// the unschedulable message, preemption's node, victims (in order) and
// PDB violations — for a sequence of pods, each placed on both before
// the next.
func TestLeanDecisionsEqualFull(t *testing.T) {
	placed, preempted := 0, 0
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 11))
		nodes, pods, pdbs := leanCluster(r)
		full, lean := snapshot.NewCache(), snapshot.NewCache(snapshot.LeanPods())
		for _, c := range []*snapshot.Cache{full, lean} {
			for _, n := range nodes {
				require.NoError(t, c.AddNode(n))
			}
			for _, p := range pods {
				require.NoError(t, c.AddPod(p))
			}
		}
		sf, sl := newSched(t), newSched(t)
		for k := range 4 {
			pod := leanPod(r, fmt.Sprintf("new%d", k))
			pod.Spec.Priority = ptrTo(int32(10 * r.IntN(6)))
			pi := snapshot.MustPodInfo(pod)
			want, node := decisionOf(t, sf, full.Snapshot(), pi, pdbs)
			got, _ := decisionOf(t, sl, lean.Snapshot(), pi, pdbs)
			require.Equal(t, want, got, "seed %d pod %d", seed, k)
			if node != "" {
				placed++
				b := pod.DeepCopy()
				b.Spec.NodeName = node
				require.NoError(t, full.AddPod(b))
				require.NoError(t, lean.AddPod(b))
			} else if !strings.Contains(got, `preempt node ""`) {
				preempted++
			}
		}
		for _, ni := range lean.Snapshot().Nodes() {
			for _, p := range ni.Pods() {
				require.False(t, p.Retained())
			}
		}
	}
	require.Greater(t, placed, 200, "enough pods placed")
	require.Greater(t, preempted, 20, "enough preemptions found")
}
