package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// TestWorkloadIndexRejectsBadObjects: a nil object, an empty name or a
// duplicate is an error naming the kind, index and object; good objects
// are found by namespace and name.
func TestWorkloadIndexRejectsBadObjects(t *testing.T) {
	good := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	for _, tc := range []struct {
		objs snapshot.WorkloadObjects
		want string
	}{
		{snapshot.WorkloadObjects{Services: []*v1.Service{good, nil}}, "WorkloadObjects.Services[1]: Service is nil"},
		{snapshot.WorkloadObjects{Services: []*v1.Service{good, good}}, "WorkloadObjects.Services[1]: Service default/web: metadata.name: listed twice"},
		{snapshot.WorkloadObjects{ReplicaSets: []*appsv1.ReplicaSet{{}}}, `WorkloadObjects.ReplicaSets[0]: ReplicaSet in namespace "": metadata.name is empty`},
		{snapshot.WorkloadObjects{StatefulSets: []*appsv1.StatefulSet{nil}}, "WorkloadObjects.StatefulSets[0]: StatefulSet is nil"},
		{snapshot.WorkloadObjects{ReplicationControllers: []*v1.ReplicationController{{ObjectMeta: metav1.ObjectMeta{Name: "rc"}}, {ObjectMeta: metav1.ObjectMeta{Name: "rc"}}}}, "WorkloadObjects.ReplicationControllers[1]: ReplicationController /rc: metadata.name: listed twice"},
		{snapshot.WorkloadObjects{PodDisruptionBudgets: []*policyv1.PodDisruptionBudget{{}}}, `WorkloadObjects.PodDisruptionBudgets[0]: PodDisruptionBudget in namespace "": metadata.name is empty`},
		{snapshot.WorkloadObjects{PriorityClasses: []*schedulingv1.PriorityClass{nil}}, "WorkloadObjects.PriorityClasses[0]: PriorityClass is nil"},
	} {
		w, err := snapshot.NewWorkloadIndex(tc.objs)
		require.ErrorIs(t, err, snapshot.ErrInvalidObject, tc.want)
		assert.Nil(t, w)
		assert.Equal(t, tc.want+": "+snapshot.ErrInvalidObject.Error(), err.Error())
	}
	w, err := snapshot.NewWorkloadIndex(snapshot.WorkloadObjects{Services: []*v1.Service{good}})
	require.NoError(t, err)
	assert.Equal(t, []*v1.Service{good}, w.Services("default"))
	assert.Nil(t, w.Services("other"))
	assert.Nil(t, w.ReplicaSet("default", "web"))
	assert.Nil(t, w.StatefulSet("default", "x"))
	assert.Nil(t, w.ReplicationController("default", "x"))
	assert.Nil(t, w.Namespace("default"))
	assert.Nil(t, w.PriorityClass("high"))
	assert.Nil(t, w.PodDisruptionBudgets("default"))
}
