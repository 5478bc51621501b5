package whatif_test

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
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/whatif"
)

// drainPods gives the pods of a random cluster what the drain rules read:
// owners (ReplicaSet, DaemonSet, none), safe-to-evict annotations, local
// storage, the kube-system namespace, labels PDBs select, terminating
// pods.
func drainPods(r *rand.Rand, pods []*v1.Pod) {
	yes := true
	for _, p := range pods {
		p.Labels = map[string]string{"app": fmt.Sprintf("a%d", r.IntN(3))}
		switch r.IntN(6) {
		case 0:
		case 1:
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "ds", Controller: &yes}}
		default:
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs", Controller: &yes}}
		}
		switch r.IntN(10) {
		case 0:
			p.Annotations = map[string]string{whatif.SafeToEvictAnnotation: "true"}
		case 1:
			p.Annotations = map[string]string{whatif.SafeToEvictAnnotation: "false"}
		case 2:
			p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
		case 3:
			p.Namespace = metav1.NamespaceSystem
		case 4:
			del := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			p.DeletionTimestamp = &del
		}
	}
}

// drainSummary is a drain answer as text, pods by key.
func drainSummary(ds []whatif.NodeDrain) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%s removable=%v risky=%v block=%q", d.Node, d.Removable, d.Risky, d.Block)
		if d.BlockingPod != nil {
			fmt.Fprintf(&b, " blocking=%s/%s", d.BlockingPod.Namespace, d.BlockingPod.Name)
		}
		for _, m := range d.Moved {
			fmt.Fprintf(&b, " moved %s->%s", m.Pod.Key(), m.Node)
		}
		for _, p := range d.Skipped {
			fmt.Fprintf(&b, " skipped %s/%s", p.Namespace, p.Name)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestDrainLeanEqualsFull: Drain and RemovableNodes give the same answer
// on a cache of lean records as on one of full records.
func TestDrainLeanEqualsFull(t *testing.T) {
	blocks := 0
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 5))
		nodes, pods := randomCluster(r, 4+r.IntN(8))
		drainPods(r, pods)
		one := intstr.FromInt32(1)
		pdbs := pdbList{{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
			Spec:   policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a1"}}},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: int32(r.IntN(2))}}}
		full, lean := snapshot.NewCache(), snapshot.NewCache(snapshot.LeanPods())
		names := make([]string, len(nodes))
		for i, n := range nodes {
			names[i] = n.Name
			require.NoError(t, full.AddNode(n))
			require.NoError(t, lean.AddNode(n))
		}
		for _, p := range pods {
			require.NoError(t, full.AddPod(p))
			require.NoError(t, lean.AddPod(p))
		}
		for _, f := range []func(*snapshot.Fork, []string, whatif.PDBLister, framework.Config) ([]whatif.NodeDrain, error){whatif.Drain, whatif.RemovableNodes} {
			want, err := f(full.Snapshot().Fork(), names, pdbs, framework.Config{})
			require.NoError(t, err)
			got, err := f(lean.Snapshot().Fork(), names, pdbs, framework.Config{})
			require.NoError(t, err)
			require.Equal(t, drainSummary(want), drainSummary(got), "seed %d", seed)
			for _, d := range want {
				if d.Block != "" {
					blocks++
				}
			}
		}
	}
	require.Greater(t, blocks, 50, "the rules block often enough to be tested")
}
