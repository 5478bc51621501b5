package whatif_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
	"github.com/schedkit/schedkit/whatif"
)

// pdbs is a PDBLister over a fixed list.
type pdbs []*policyv1.PodDisruptionBudget

func (l pdbs) PodDisruptionBudgets(ns string) []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	for _, p := range l {
		if p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

func pdb(name, app string, allowed int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

func rsPod(name, node, cpu string) *v1.Pod {
	return owned(snapshottest.MakePod(name).Req("cpu", cpu).Label("app", "web").Node(node).Obj(), "ReplicaSet", "web")
}

// drainCluster: n1 (4 CPU) runs web-a and web-b (1 CPU each, a
// ReplicaSet's), a DaemonSet pod and a mirror pod (no requests); n2
// (4 CPU) runs c (2 CPU, ReplicaSet); n3 (2 CPU) is empty. Free CPU:
// n1 2, n2 2, n3 2.
func drainCluster() ([]*v1.Node, []*v1.Pod) {
	nodes := []*v1.Node{
		snapshottest.MakeNode("n1").Capacity("cpu", "4", "pods", "110").Obj(),
		snapshottest.MakeNode("n2").Capacity("cpu", "4", "pods", "110").Obj(),
		snapshottest.MakeNode("n3").Capacity("cpu", "2", "pods", "110").Obj(),
	}
	ds := owned(snapshottest.MakePod("ds").Node("n1").Obj(), "DaemonSet", "agent")
	mirror := snapshottest.MakePod("static").Annotation(v1.MirrorPodAnnotationKey, "x").Node("n1").Obj()
	c := owned(snapshottest.MakePod("c").Req("cpu", "2").Node("n2").Obj(), "ReplicaSet", "other")
	return nodes, []*v1.Pod{rsPod("web-a", "n1", "1"), rsPod("web-b", "n1", "1"), ds, mirror, c}
}

func TestDrainRules(t *testing.T) {
	for _, tc := range []struct {
		name      string
		extra     *v1.Pod // added to n1
		pdbs      pdbs
		removable bool
		risky     bool
		block     whatif.Block
		blocking  string
	}{
		// web-a and web-b (1 CPU each) move to n2 and n3 (2 free each);
		// ds and static are skipped.
		{name: "removable", removable: true},
		// The PDB allows no disruption: web-a, the first pod it covers,
		// blocks (cluster-autoscaler's pdb rule: allowed < 1).
		{name: "PDB blocks", pdbs: pdbs{pdb("web", "web", 0)}, block: whatif.NotEnoughPdb, blocking: "web-a"},
		// The PDB allows 1 disruption and draining n1 evicts 2 web pods:
		// each pod passes the rule (1 >= 1), so n1 is removable, but
		// risky (2 > 1: one eviction at a time). It was blocked before.
		{name: "PDB allows one at a time", pdbs: pdbs{pdb("web", "web", 1)}, removable: true, risky: true},
		// 2 allowed, 2 evicted: 2 <= 2, not risky.
		{name: "PDB allows", pdbs: pdbs{pdb("web", "web", 2)}, removable: true},
		// safe-to-evict "true" comes before the pdb rule: a pod so
		// annotated moves although its PDB allows no disruption (risky:
		// 1 eviction > 0 allowed, as cluster-autoscaler's CanRemovePods
		// says). It was blocked before.
		{name: "safe-to-evict under an exhausted PDB", pdbs: pdbs{pdb("cache", "cache", 0)},
			extra: owned(snapshottest.MakePod("cache").Label("app", "cache").Annotation(whatif.SafeToEvictAnnotation, "true").Node("n1").Obj(), "ReplicaSet", "cache"), removable: true, risky: true},
		{name: "not replicated", extra: snapshottest.MakePod("bare").Node("n1").Obj(), block: whatif.NotReplicated, blocking: "bare"},
		// A controller of a kind cluster-autoscaler does not know to
		// replace pods (its default --skip-nodes-with-custom-controller-
		// pods): not replicated. It was movable before.
		{name: "custom controller", extra: owned(snapshottest.MakePod("canary").Node("n1").Obj(), "Rollout", "canary"), block: whatif.NotReplicated, blocking: "canary"},
		{name: "StatefulSet", extra: owned(snapshottest.MakePod("db-0").Node("n1").Obj(), "StatefulSet", "db"), removable: true},
		{name: "not replicated but safe-to-evict", extra: snapshottest.MakePod("bare").Annotation(whatif.SafeToEvictAnnotation, "true").Node("n1").Obj(), removable: true},
		{name: "safe-to-evict false", extra: owned(snapshottest.MakePod("pinned").Annotation(whatif.SafeToEvictAnnotation, "false").Node("n1").Obj(), "ReplicaSet", "x"), block: whatif.NotSafeToEvictAnnotation, blocking: "pinned"},
		{name: "kube-system without PDB", extra: owned(snapshottest.MakePod("dns").Namespace("kube-system").Node("n1").Obj(), "ReplicaSet", "dns"), block: whatif.UnmovableKubeSystemPod, blocking: "dns"},
		{name: "local storage", extra: withVolume(owned(snapshottest.MakePod("cache").Node("n1").Obj(), "ReplicaSet", "cache"), "scratch", ""), block: whatif.LocalStorageRequested, blocking: "cache"},
		{name: "memory emptyDir", extra: withVolume(owned(snapshottest.MakePod("cache").Node("n1").Obj(), "ReplicaSet", "cache"), "scratch", v1.StorageMediumMemory), removable: true},
		{name: "local storage allowed", extra: withVolume(owned(snapshottest.MakePod("cache").Annotation(whatif.SafeToEvictLocalVolumesAnnotation, "scratch").Node("n1").Obj(), "ReplicaSet", "cache"), "scratch", ""), removable: true},
		{name: "terminal pod skipped", extra: withPhase(snapshottest.MakePod("done").Node("n1").Obj(), v1.PodSucceeded), removable: true},
		// n1's pods in order: web-a, web-b (1 CPU each) go to n2 and n3
		// (2 free each), ds and static are skipped, then big (3 CPU)
		// fits neither n2 nor n3 (at most 2 - 0 free): 2 Insufficient cpu.
		{name: "no place", extra: owned(snapshottest.MakePod("big").Req("cpu", "3").Node("n1").Obj(), "ReplicaSet", "big"), block: whatif.NoPlaceToMovePods, blocking: "big"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes, pods := drainCluster()
			if tc.extra != nil {
				pods = append(pods, tc.extra)
			}
			f := forkOf(t, nodes, pods)
			before := contentOf(f)
			var lister whatif.PDBLister
			if tc.pdbs != nil {
				lister = tc.pdbs
			}
			got, err := whatif.Drain(f, []string{"n1"}, lister, framework.Config{})
			require.NoError(t, err)
			require.Len(t, got, 1)
			d := got[0]
			assert.Equal(t, before, contentOf(f))
			assert.Equal(t, tc.removable, d.Removable)
			assert.Equal(t, tc.risky, d.Risky)
			assert.Equal(t, tc.block, d.Block)
			if tc.blocking != "" {
				require.NotNil(t, d.BlockingPod)
				assert.Equal(t, tc.blocking, d.BlockingPod.Name)
			}
			if tc.removable {
				var skipped []string
				for _, p := range d.Skipped {
					skipped = append(skipped, p.Name)
				}
				assert.Subset(t, skipped, []string{"ds", "static"})
				for _, m := range d.Moved {
					assert.Contains(t, []string{"n2", "n3"}, m.Node, m.String())
				}
			}
			if tc.block == whatif.NoPlaceToMovePods {
				last := d.Moved[len(d.Moved)-1]
				assert.Equal(t, "", last.Node)
				assert.Equal(t, "0/2 nodes are available: 2 Insufficient cpu.", last.Diagnosis.Message())
			}
		})
	}
}

func withVolume(p *v1.Pod, name string, medium v1.StorageMedium) *v1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: medium}}})
	return p
}

func withPhase(p *v1.Pod, phase v1.PodPhase) *v1.Pod {
	p.Status.Phase = phase
	return p
}

// TestRemovableNodesGreedy: x, y, z have 2 CPU each and run one 1-CPU
// pod each. Alone, each is removable (its pod goes to a neighbour with 1
// free). Greedily: x goes first and its pod fills one neighbour (2/2);
// then whichever of y, z comes next either has 2 pods (needs 2 free, the
// other has 1) or has 1 pod and the other is full (0 free): only {x} is
// removable.
func TestRemovableNodesGreedy(t *testing.T) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for _, n := range []string{"x", "y", "z"} {
		nodes = append(nodes, snapshottest.MakeNode(n).Capacity("cpu", "2", "pods", "110").Obj())
		pods = append(pods, rsPod("p-"+n, n, "1"))
	}
	f := forkOf(t, nodes, pods)
	before := contentOf(f)
	alone, err := whatif.Drain(f, []string{"x", "y", "z"}, nil, framework.Config{})
	require.NoError(t, err)
	for _, d := range alone {
		assert.True(t, d.Removable, d.Node)
	}
	greedy, err := whatif.RemovableNodes(f, []string{"x", "y", "z"}, nil, framework.Config{})
	require.NoError(t, err)
	var removable []string
	for _, d := range greedy {
		if d.Removable {
			removable = append(removable, d.Node)
		} else {
			assert.Equal(t, whatif.NoPlaceToMovePods, d.Block, d.Node)
		}
	}
	assert.Equal(t, []string{"x"}, removable)
	assert.Equal(t, before, contentOf(f))
	assert.Equal(t, 0, f.Depth())
}

// TestRemovableNodesPDBBudget: the PDB allows 1 disruption and covers
// web pods on a and b (4 CPU each, 1 CPU pods; c has room). Alone, each
// is removable (1 <= 1); greedily a uses the budget and b is blocked
// (1 > 1 - 1 = 0).
func TestRemovableNodesPDBBudget(t *testing.T) {
	f := forkOf(t, nodesABC(), []*v1.Pod{rsPod("web-a", "a", "1"), rsPod("web-b", "b", "1")})
	l := pdbs{pdb("web", "web", 1)}
	alone, err := whatif.Drain(f, []string{"a", "b"}, l, framework.Config{})
	require.NoError(t, err)
	assert.True(t, alone[0].Removable)
	assert.True(t, alone[1].Removable)
	greedy, err := whatif.RemovableNodes(f, []string{"a", "b"}, l, framework.Config{})
	require.NoError(t, err)
	assert.True(t, greedy[0].Removable)
	assert.False(t, greedy[1].Removable)
	assert.Equal(t, whatif.NotEnoughPdb, greedy[1].Block)
}

func TestDrainErrors(t *testing.T) {
	nodes, pods := drainCluster()
	f := forkOf(t, nodes, pods)
	before := contentOf(f)
	_, err := whatif.Drain(f, []string{"n1", "nope"}, nil, framework.Config{})
	assert.ErrorIs(t, err, whatif.ErrInvalidInput)
	assert.ErrorContains(t, err, `nodes[1]: node "nope" is not in the cluster`)
	_, err = whatif.RemovableNodes(f, []string{"n1", "n1"}, nil, framework.Config{})
	assert.ErrorContains(t, err, `node "n1" repeats`)
	_, err = whatif.Drain(nil, nil, nil, framework.Config{})
	assert.ErrorIs(t, err, whatif.ErrInvalidInput)
	bad := pdb("bad", "web", 1)
	bad.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}
	_, err = whatif.Drain(f, []string{"n1"}, pdbs{bad}, framework.Config{})
	assert.ErrorContains(t, err, "PodDisruptionBudget default/bad: spec.selector")
	assert.Equal(t, before, contentOf(f))
	assert.Equal(t, 0, f.Depth())
}

// TestRemovableNodesPDBOverdrawn: the PDB allows 1 disruption and covers
// web-a1 and web-a2 on a and web-b on b (1 CPU pods, 4 CPU nodes, c
// empty). Greedily, a is removable (each pod passes: 1 >= 1) but risky
// (2 evictions > 1), and its two evictions overdraw the budget to
// 1 - 2 = -1, so b is blocked (web-b: -1 < 1), as cluster-autoscaler's
// remaining-PDB tracker answers. Alone, b is removable.
func TestRemovableNodesPDBOverdrawn(t *testing.T) {
	f := forkOf(t, nodesABC(), []*v1.Pod{rsPod("web-a1", "a", "1"), rsPod("web-a2", "a", "1"), rsPod("web-b", "b", "1")})
	l := pdbs{pdb("web", "web", 1)}
	greedy, err := whatif.RemovableNodes(f, []string{"a", "b"}, l, framework.Config{})
	require.NoError(t, err)
	assert.True(t, greedy[0].Removable)
	assert.True(t, greedy[0].Risky)
	assert.False(t, greedy[1].Removable)
	assert.Equal(t, whatif.NotEnoughPdb, greedy[1].Block)
	assert.Equal(t, "web-b", greedy[1].BlockingPod.Name)
	alone, err := whatif.Drain(f, []string{"b"}, l, framework.Config{})
	require.NoError(t, err)
	assert.True(t, alone[0].Removable)
	assert.False(t, alone[0].Risky)
}

// nodesABC are a, b and c, 4 CPU each.
func nodesABC() []*v1.Node {
	var out []*v1.Node
	for _, n := range []string{"a", "b", "c"} {
		out = append(out, snapshottest.MakeNode(n).Capacity("cpu", "4", "pods", "110").Obj())
	}
	return out
}
