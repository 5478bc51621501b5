package score_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// replica is a pod of the Deployment "web" (owned by ReplicaSet web-rs),
// bound to node if node is not "".
func replica(name, node string) *v1.Pod {
	p := snapshottest.MakePod(name).Label("app", "web").Label("pod-template-hash", "h1").Node(node).Obj()
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-rs", Controller: new(true)}}
	return p
}

func spreadNodes() []*v1.Node {
	return []*v1.Node{
		snapshottest.MakeNode("n1").Label(v1.LabelHostname, "n1").Label(v1.LabelTopologyZone, "a").Obj(),
		snapshottest.MakeNode("n2").Label(v1.LabelHostname, "n2").Label(v1.LabelTopologyZone, "a").Obj(),
		snapshottest.MakeNode("n3").Label(v1.LabelHostname, "n3").Label(v1.LabelTopologyZone, "b").Obj(),
		snapshottest.MakeNode("n4").Label(v1.LabelHostname, "n4").Obj(), // no zone label
	}
}

// spreadBound: replicas n1 2, n2 0, n3 1, n4 1.
func spreadBound() []*v1.Pod {
	return []*v1.Pod{replica("r1", "n1"), replica("r2", "n1"), replica("r3", "n3"), replica("r4", "n4")}
}

func webWorkloads(t *testing.T) snapshot.Workloads {
	t.Helper()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-rs"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "h1"}}}}
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	wl, err := snapshot.NewWorkloadIndex(snapshot.WorkloadObjects{Services: []*v1.Service{svc}, ReplicaSets: []*appsv1.ReplicaSet{rs}})
	require.NoError(t, err)
	return wl
}

// TestPodTopologySpreadSystemDefaults: a Deployment's pod without
// constraints is spread by the system defaults (hostname maxSkew 3, zone
// maxSkew 5) over the selector of its Service and ReplicaSet; a node
// without the zone label is scored on hostname alone.
func TestPodTopologySpreadSystemDefaults(t *testing.T) {
	snap, nodes := cluster(t, spreadNodes(), spreadBound()...)
	s, err := score.NewPodTopologySpread(score.PodTopologySpreadArgs{Workloads: webWorkloads(t)})
	require.NoError(t, err)
	ps, err := s.Prepare(podInfo(t, replica("incoming", "")), snap)
	require.NoError(t, err)
	require.NotNil(t, ps)
	// System defaults ignore no node. Weights over the 4 candidates:
	//   hostname: ln(4 + 2) = 1.791759; zone: values a, b and "" (n4):
	//   ln(3 + 2) = 1.609438.
	// Zone counts: a = 2 + 0, b = 1 (n4's pod is in the "" domain).
	//   n1: 2×1.791759 + (3−1) + 2×1.609438 + (5−1) = 12.802 → 13
	//   n2: 0 + 2 + 2×1.609438 + 4 = 9.219 → 9
	//   n3: 1.791759 + 2 + 1.609438 + 4 = 9.401 → 9
	//   n4: 1.791759 + 2 (no zone term) = 3.792 → 4
	raw := make([]int64, 4)
	ps.Score(nodes, raw)
	assert.Equal(t, []int64{13, 9, 9, 4}, raw)
	// Normalised: 100 × (max + min − s) / max, max 13, min 4:
	//   n1 100×4/13 = 30, n2 and n3 100×8/13 = 61, n4 100×13/13 = 100.
	require.NoError(t, ps.(score.Normalizer).Normalize(nodes, raw))
	assert.Equal(t, []int64{30, 61, 61, 100}, raw)
	assert.Contains(t, ps.(score.Explainer).Explain(nodes[3]), "topology.kubernetes.io/zone: missing")

	// Without the Service and ReplicaSet there is no default selector:
	// the pod is skipped.
	s, err = score.NewPodTopologySpread(score.PodTopologySpreadArgs{})
	require.NoError(t, err)
	got, skipped := final(t, s, replica("incoming", ""), snap, nodes)
	assert.True(t, skipped, "%v", got)
}

// TestPodTopologySpreadOwnConstraint: with the pod's own constraint a
// node without its topology key is ignored (score 0).
func TestPodTopologySpreadOwnConstraint(t *testing.T) {
	snap, nodes := cluster(t, spreadNodes(), spreadBound()...)
	s, err := score.NewPodTopologySpread(score.PodTopologySpreadArgs{Workloads: webWorkloads(t)})
	require.NoError(t, err)
	pod := replica("incoming", "")
	pod.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	// n4 lacks the zone: ignored. Weight ln(2 + 2) = 1.386294 (zones a, b
	// among the others). Counts a 2, b 1.
	//   raw n1 = n2 = round(2×1.386294 + 0) = 3, n3 = round(1.386294) = 1, n4 0
	//   final (max 3, min 1): n1 = n2 = 100×(3+1−3)/3 = 33, n3 = 100×3/3 = 100, n4 0
	got, skipped := final(t, s, pod, snap, nodes)
	require.False(t, skipped)
	assert.Equal(t, []int64{33, 33, 100, 0}, got)

	// A DoNotSchedule-only pod has nothing to score.
	pod.Spec.TopologySpreadConstraints[0].WhenUnsatisfiable = v1.DoNotSchedule
	_, skipped = final(t, s, pod, snap, nodes)
	assert.True(t, skipped)

	// In a Profile (weight 2, as upstream's default profile): totals are
	// 2 × the final scores.
	pod.Spec.TopologySpreadConstraints[0].WhenUnsatisfiable = v1.ScheduleAnyway
	p := score.MustProfile(score.Weighted{Scorer: s, Weight: 2})
	totals := make([]int64, 4)
	require.NoError(t, p.Score(podInfo(t, pod), snap, nodes, totals))
	assert.Equal(t, []int64{66, 66, 200, 0}, totals)
	_, nodeLocal := any(s).(interface{ NodeLocal() bool })
	assert.False(t, nodeLocal, "a node's score depends on other nodes' pods")
}

// TestPodTopologySpreadBadSelector: a malformed labelSelector is rejected
// by NewPodInfo naming the field (it failed Prepare before NewPodInfo
// validated the constraints).
func TestPodTopologySpreadBadSelector(t *testing.T) {
	pod := replica("incoming", "")
	pod.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway,
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}},
	}}
	_, err := snapshot.NewPodInfo(pod)
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	assert.Contains(t, err.Error(), "spec.topologySpreadConstraints[0].labelSelector")
}
