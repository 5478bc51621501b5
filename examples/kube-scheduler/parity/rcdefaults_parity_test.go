package parity

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1 "k8s.io/kubernetes/pkg/apis/core/v1"

	"github.com/schedkit/schedkit/snapshot/load"
)

// TestLoaderReplicationControllerDefaultsMatchUpstream: the loader
// defaults a ReplicationController's spec.selector and labels as the API
// server does (upstream's SetObjectDefaults_ReplicationController, run
// on the same decoded object): 2,000 random controllers with the
// selector, the labels and the template's labels each nil, empty or
// set, and a template or none. The selector is what system default
// spreading and the expansion read. 0 differences.
func TestLoaderReplicationControllerDefaultsMatchUpstream(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 2026))
	labelsOf := func() map[string]string {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return map[string]string{}
		}
		return map[string]string{"app": []string{"a", "b"}[rng.IntN(2)]}
	}
	compared := 0
	for i := range 2000 {
		rc := &v1.ReplicationController{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"},
			ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "default", Labels: labelsOf()},
			Spec:       v1.ReplicationControllerSpec{Selector: labelsOf()},
		}
		if rng.IntN(4) > 0 {
			rc.Spec.Template = &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labelsOf()}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "x"}}}}
		}
		js, err := json.Marshal(rc)
		require.NoError(t, err)
		objs, err := load.Read(bytes.NewReader(js), "rc.json")
		if err != nil {
			require.ErrorIs(t, err, load.ErrInvalidObject, "case %d", i) // a selector left empty
			continue
		}
		up := &v1.ReplicationController{}
		require.NoError(t, json.Unmarshal(js, up))
		corev1.SetObjectDefaults_ReplicationController(up)
		got := objs.Others[0].(*v1.ReplicationController)
		require.Equal(t, up.Spec.Selector, got.Spec.Selector, "case %d: %s", i, js)
		require.Equal(t, up.Labels, got.Labels, "case %d: %s", i, js)
		compared++
	}
	require.Greater(t, compared, 500)
}
