package informer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/informer"
)

func TestClassify(t *testing.T) {
	pod := func(name, node string, phase v1.PodPhase) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: v1.PodSpec{NodeName: node}, Status: v1.PodStatus{Phase: phase}}
	}
	cases := []struct {
		name string
		pod  *v1.Pod
		want informer.Kind
	}{
		{"running on a node", pod("p", "n1", v1.PodRunning), informer.Assigned},
		{"pending on a node (bound, not started)", pod("p", "n1", v1.PodPending), informer.Assigned},
		{"no phase on a node", pod("p", "n1", ""), informer.Assigned},
		{"unknown phase on a node", pod("p", "n1", v1.PodUnknown), informer.Assigned},
		{"pending, unbound", pod("p", "", v1.PodPending), informer.Unbound},
		{"succeeded on a node", pod("p", "n1", v1.PodSucceeded), informer.Terminal},
		{"failed on a node", pod("p", "n1", v1.PodFailed), informer.Terminal},
		{"failed, unbound", pod("p", "", v1.PodFailed), informer.Terminal},
	}
	for _, c := range cases {
		got, err := informer.Classify(c.pod)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, "%s: Classify = %v, want %v", c.name, got, c.want)
	}

	_, err := informer.Classify(nil)
	require.ErrorIs(t, err, informer.ErrBadPod)
	_, err = informer.Classify(pod("", "n1", v1.PodSucceeded))
	require.ErrorIs(t, err, informer.ErrBadPod)
	assert.Equal(t, `pod in namespace "ns": metadata.name is empty: pod cannot be keyed`, err.Error())

	// A key the API server refuses, for the kinds whose names no parser
	// checks; an Assigned pod's names are the parser's (NewPodInfo).
	for _, c := range []struct {
		name string
		pod  *v1.Pod
		want string
	}{
		{"unbound, namespace with underscore", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "Bad_NS", Name: "p"}},
			`pod Bad_NS/p: metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label`},
		{"unbound, name with a space", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "Bad Pod"}},
			`pod ns/Bad Pod: metadata.name: Invalid value: "Bad Pod": a lowercase RFC 1123 subdomain`},
		{"terminal, namespace with underscore", inNamespace(pod("p", "n1", v1.PodFailed), "Bad_NS"),
			`pod Bad_NS/p: metadata.namespace: Invalid value: "Bad_NS"`},
	} {
		_, err := informer.Classify(c.pod)
		require.ErrorIs(t, err, informer.ErrBadPod, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	got, err := informer.Classify(inNamespace(pod("p", "n1", v1.PodRunning), "Bad_NS"))
	require.NoError(t, err, "an Assigned pod's names are its parser's to check")
	assert.Equal(t, informer.Assigned, got)

	err = informer.UnbindError(pod("p", "", ""), "n1")
	require.ErrorIs(t, err, informer.ErrUnbind)
	assert.Equal(t, "pod ns/p: spec.nodeName is empty, but the pod is bound to node n1: spec.nodeName cannot be cleared", err.Error())
	assert.Equal(t, "Terminal", informer.Terminal.String())
	assert.Equal(t, "Kind(9)", informer.Kind(9).String())
}

// inNamespace returns p in namespace ns.
func inNamespace(p *v1.Pod, ns string) *v1.Pod {
	p.Namespace = ns
	return p
}

// MoveError names the pod, its uid, both nodes and the way out, once
// each, and wraps ErrMove.
func TestMoveError(t *testing.T) {
	err := informer.MoveError("ns", "p", "u-1", "n1", "n2")
	assert.Equal(t, "pod ns/p (uid u-1): spec.nodeName: reported on node n2, but the pod is bound to node n1 (upstream's scheduler cache takes this as corruption and exits); remove the pod first, or give a pod created again its new metadata.uid: spec.nodeName cannot change", err.Error())
	assert.ErrorIs(t, err, informer.ErrMove)
	assert.Contains(t, informer.MoveError("ns", "p", "", "n1", "n2").Error(), "pod ns/p: spec.nodeName:", "no uid: none shown")
}
