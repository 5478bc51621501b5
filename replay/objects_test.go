package replay_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestRunObjectsSpreadDeployment: with the Deployment's ReplicaSet among
// Input.Objects, the default filters and profile spread its replicas by
// upstream's system defaults (PodTopologySpread finds the ReplicaSet on
// the ledger's snapshot); without it, every replica goes to the big node,
// which the resource scorers prefer. A bad object is an input error.
func TestRunObjectsSpreadDeployment(t *testing.T) {
	nodes := []*v1.Node{
		snapshottest.MakeNode("big").Label(v1.LabelHostname, "big").Allocatable("cpu", "64", "memory", "128Gi", "pods", "110").Obj(),
		snapshottest.MakeNode("small-1").Label(v1.LabelHostname, "small-1").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
		snapshottest.MakeNode("small-2").Label(v1.LabelHostname, "small-2").Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").Obj(),
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-5d8f"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	run := func(objs ...runtime.Object) map[string]int {
		in := &replay.Input{Nodes: nodes, Batch: true, Objects: objs}
		for i := range 6 {
			p := snapshottest.MakePod(fmt.Sprintf("web-5d8f-%d", i)).Label("app", "web").Req("cpu", "500m", "memory", "512Mi").Obj()
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d8f", Controller: new(true)}}
			in.Arrivals = append(in.Arrivals, arrival(t, p))
		}
		rep, err := replay.Run(context.Background(), in, replay.Config{})
		require.NoError(t, err)
		per := map[string]int{}
		for _, p := range rep.Placements {
			per[p.Node]++
		}
		return per
	}
	assert.Equal(t, map[string]int{"big": 6}, run(), "no ReplicaSet: not spread")
	spread := run(rs)
	assert.Equal(t, 6, spread["big"]+spread["small-1"]+spread["small-2"])
	assert.NotZero(t, spread["small-1"], "spread: %v", spread)
	assert.NotZero(t, spread["small-2"], "spread: %v", spread)

	_, err := replay.Run(context.Background(), &replay.Input{Nodes: nodes, Objects: []runtime.Object{&appsv1.ReplicaSet{}}}, replay.Config{})
	require.ErrorIs(t, err, replay.ErrInput)
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	assert.Contains(t, err.Error(), "metadata.name")
}
