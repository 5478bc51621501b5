package parity

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
)

func diffPod(name, node string, prio int32, port int32) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: map[string]string{"app": "x"}}}
	p.Spec.NodeName = node
	p.Spec.Priority = &prio
	p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}}}}
	if port != 0 {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{HostPort: port, ContainerPort: port, Protocol: v1.ProtocolTCP}}
	}
	st := metav1.Now()
	p.Status.StartTime = &st
	return p
}

func diffNode(name string) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourcePods: resource.MustParse("110")}
	return n
}

// ourPreempt runs schedkit's Preempt for pre on nodes and bound pods.
func ourPreempt(t *testing.T, nodes []*v1.Node, bound []*v1.Pod, pre *v1.Pod, opts framework.PreemptOptions) (framework.Preemption, error) {
	c := snapshot.NewCache()
	for _, n := range nodes {
		require.NoError(t, c.AddNode(n))
	}
	for _, p := range bound {
		require.NoError(t, c.AddPod(p))
	}
	s, err := framework.New(framework.Config{})
	require.NoError(t, err)
	return s.Preempt(c.Snapshot(), snapshot.MustPodInfo(pre), opts)
}

// TestPreemptDifferenceSharedHostPort: upstream's used host ports are a
// set, so evicting one of two pods declaring port 8080 frees the port
// although the other (not a victim: equal priority) still uses it, and
// upstream preempts for a pod that then cannot run. schedkit counts
// ports as a multiset (snapshot's documented difference) and finds no
// candidate.
func TestPreemptDifferenceSharedHostPort(t *testing.T) {
	ctx := context.Background()
	u, err := NewPreemptUpstream(ctx)
	require.NoError(t, err)
	nodes := []*v1.Node{diffNode("n1")}
	bound := []*v1.Pod{diffPod("low", "n1", 0, 8080), diffPod("peer", "n1", 50, 8080)}
	pre := diffPod("pre", "", 50, 8080)
	require.NoError(t, u.Load(nodes, bound, nil))
	up := u.Preempt(ctx, pre, nil)
	require.Equal(t, "n1", up.Node, "upstream preempts")
	require.Equal(t, []string{"low"}, up.Victims)

	res, err := ourPreempt(t, nodes, bound, pre, framework.PreemptOptions{})
	require.NoError(t, err)
	require.False(t, res.Found())
	require.Equal(t, "preemption: 0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.", res.Message)
}

// TestPreemptDifferenceInvalidPDBSelector: upstream lets a PDB whose
// selector does not parse match nothing (the victim is not protected);
// schedkit reports it, naming the PDB and field.
func TestPreemptDifferenceInvalidPDBSelector(t *testing.T) {
	ctx := context.Background()
	u, err := NewPreemptUpstream(ctx)
	require.NoError(t, err)
	nodes := []*v1.Node{diffNode("n1")}
	bound := []*v1.Pod{diffPod("low", "n1", 0, 0), diffPod("low2", "n1", 0, 0)}
	pre := diffPod("pre", "", 50, 0)
	pdb := &policy.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: "default"},
		Spec: policy.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}}}
	require.NoError(t, u.Load(nodes, bound, nil))
	up := u.Preempt(ctx, pre, []*policy.PodDisruptionBudget{pdb})
	require.Equal(t, "n1", up.Node)
	require.Equal(t, int64(0), up.NumPDBViolations, "upstream: the broken PDB protects nothing")

	_, err = ourPreempt(t, nodes, bound, pre, framework.PreemptOptions{Objects: preemptObjects{pdbs: []*policy.PodDisruptionBudget{pdb}}})
	require.ErrorIs(t, err, framework.ErrInvalidConfig)
	require.ErrorContains(t, err, "PodDisruptionBudget default/broken: spec.selector")
}
