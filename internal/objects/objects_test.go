package objects

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestValidateNames: names and namespaces follow the API server's rule
// for each kind (a trial found Namespace "Bad_NS" accepted).
func TestValidateNames(t *testing.T) {
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	for _, tc := range []struct {
		obj  runtime.Object
		want string // "" = valid
	}{
		{&v1.Namespace{ObjectMeta: meta("", "team-a")}, ""},
		{&v1.Namespace{ObjectMeta: meta("", "Bad_NS")}, `Namespace Bad_NS: metadata.name: Invalid value: "Bad_NS": a lowercase RFC 1123 label`},
		{&v1.Namespace{ObjectMeta: meta("", "a.b")}, `metadata.name: Invalid value: "a.b"`},
		{&v1.Service{ObjectMeta: meta("default", "web")}, ""},
		{&v1.Service{ObjectMeta: meta("default", "1web")}, `metadata.name: Invalid value: "1web": a DNS-1035 label`},
		{&v1.Service{ObjectMeta: meta("Bad_NS", "web")}, `metadata.namespace: Invalid value: "Bad_NS"`},
		// The API server fills an empty namespace from the request's URL
		// and validation requires one; schedkit has no URL, so it refuses
		// (second trial: a pod "/p" was accepted).
		{&v1.Service{ObjectMeta: meta("", "web")}, `Service /web: metadata.namespace: Required value`},
		{&appsv1.ReplicaSet{ObjectMeta: meta("default", "web.v1")}, ""},
		{&appsv1.StatefulSet{ObjectMeta: meta("default", "web.v1")}, `metadata.name: Invalid value: "web.v1"`},
		{&schedulingv1.PriorityClass{ObjectMeta: meta("", "High")}, `metadata.name: Invalid value: "High"`},
		{&schedulingv1.PriorityClass{ObjectMeta: meta("", "system-node-critical"), Value: 2000001000}, ""},
	} {
		k, err := Validate(tc.obj)
		if tc.want == "" {
			require.NoError(t, err)
			assert.NotEmpty(t, k.Name)
			continue
		}
		require.Error(t, err, "%#v", tc.obj)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestPodNames: a pod's names as the API server checks them, one field
// error each. Before, an empty namespace and a malformed
// status.nominatedNodeName were accepted (second trial).
func TestPodNames(t *testing.T) {
	pod := func(ns, name, node, nominated string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.PodSpec{NodeName: node}, Status: v1.PodStatus{NominatedNodeName: nominated}}
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want string // "" = valid
	}{
		{"valid", pod("default", "p", "n1", "n2.example.com"), ""},
		{"empty namespace", pod("", "p", "", ""), "metadata.namespace: Required value"},
		{"bad namespace", pod("Bad_NS", "p", "", ""), `metadata.namespace: Invalid value: "Bad_NS"`},
		{"bad name", pod("default", "P", "", ""), `metadata.name: Invalid value: "P"`},
		{"bad nodeName", pod("default", "p", "Bad_Node", ""), `spec.nodeName: Invalid value: "Bad_Node"`},
		{"bad nominatedNodeName", pod("default", "p", "", "Bad_Node"), `status.nominatedNodeName: Invalid value: "Bad_Node"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := PodNames(tc.pod)
			if tc.want == "" {
				require.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1, "%v", errs)
			assert.Contains(t, errs.ToAggregate().Error(), tc.want)
		})
	}
}
