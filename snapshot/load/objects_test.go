package load_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load"
)

// kubectlList is what `kubectl get ns,svc,rc,rs,sts,pc,pdb,deploy -o yaml`
// prints (trimmed): a v1 List mixing kinds of four API groups.
const kubectlList = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: shop, labels: {team: web}}
- apiVersion: v1
  kind: Service
  metadata: {name: web, namespace: shop}
  spec: {selector: {app: web}, ports: [{port: 80}]}
- apiVersion: v1
  kind: ReplicationController
  metadata: {name: old, namespace: shop}
  spec: {selector: {app: old}}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata: {name: web-5d8f, namespace: shop}
  spec:
    selector: {matchLabels: {app: web, pod-template-hash: 5d8f}}
- apiVersion: apps/v1
  kind: StatefulSet
  metadata: {name: db}
  spec:
    selector: {matchExpressions: [{key: app, operator: In, values: [db]}]}
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: high}
  value: 1000
  preemptionPolicy: Never
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: web, namespace: shop}
  spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: shop}
`

// TestReadClusterObjects: the objects a Cache takes come out in
// Others, in input order (a StatefulSet without a namespace in
// "default"), Deployments are skipped, and everything feeds a Cache.
func TestReadClusterObjects(t *testing.T) {
	objs, err := load.Read(strings.NewReader(kubectlList), "list.yaml")
	require.NoError(t, err)
	require.Len(t, objs.Others, 7)
	assert.IsType(t, &v1.Namespace{}, objs.Others[0])
	assert.IsType(t, &v1.Service{}, objs.Others[1])
	assert.IsType(t, &v1.ReplicationController{}, objs.Others[2])
	assert.IsType(t, &appsv1.ReplicaSet{}, objs.Others[3])
	assert.Equal(t, "default", objs.Others[4].(*appsv1.StatefulSet).Namespace)
	assert.Equal(t, v1.PreemptNever, *objs.Others[5].(*schedulingv1.PriorityClass).PreemptionPolicy)
	assert.Equal(t, int32(1), objs.Others[6].(*policyv1.PodDisruptionBudget).Spec.MinAvailable.IntVal)
	assert.Equal(t, map[schema.GroupVersionKind]int{{Group: "apps", Version: "v1", Kind: "Deployment"}: 1}, objs.Skipped)

	c := snapshot.NewCache()
	for _, o := range objs.Others {
		require.NoError(t, c.AddObject(o))
	}
	s := c.Snapshot()
	assert.Equal(t, "web", s.Namespace("shop").Labels["team"])
	assert.Len(t, s.Services("shop"), 1)
	assert.NotNil(t, s.ReplicaSet("shop", "web-5d8f"))
	assert.NotNil(t, s.StatefulSet("default", "db"))
	assert.NotNil(t, s.PriorityClass("high"))
	assert.Len(t, s.PodDisruptionBudgets("shop"), 1)
}

// TestReadClusterObjectsErrors: a bad selector, a missing name and a
// duplicate are errors naming file, line, item, object and field; nothing
// is returned.
func TestReadClusterObjectsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		sentinel error
		msg      string
	}{
		{"bad operator", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs, namespace: shop}\nspec:\n  selector: {matchExpressions: [{key: app, operator: Near}]}\n",
			load.ErrInvalidObject, `in.yaml:5: document 1: ReplicaSet "shop/rs": spec.selector: load: invalid object: Invalid value: "Near" is not a valid label selector operator`},
		{"bad service selector", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: 'no spaces'}}\n",
			load.ErrInvalidObject, `in.yaml:4: document 1: Service "default/web": spec.selector: load: invalid object: Invalid value: "no spaces"`},
		{"no name", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {namespace: shop}\n",
			load.ErrMissingName, `in.yaml:3: document 1: PodDisruptionBudget "shop/": metadata.name: load: missing metadata.name`},
		{"duplicate", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
			load.ErrDuplicate, `in.yaml:7: document 2: Namespace "a": metadata.name: load: duplicate object: also at in.yaml:1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := load.Read(strings.NewReader(tc.in), "in.yaml")
			require.ErrorIs(t, err, tc.sentinel)
			var le *load.Error
			require.True(t, errors.As(err, &le))
			assert.Contains(t, err.Error(), tc.msg)
			assert.Empty(t, objs.Others)
		})
	}
}
