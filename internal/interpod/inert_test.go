package interpod

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/selector"
)

type fakePod struct{ p *v1.Pod }

func (f fakePod) Template() *v1.Pod { return f.p }

type fakeNode struct{ withTerms []fakePod }

func (fakeNode) Node() *v1.Node                { return &v1.Node{} }
func (fakeNode) Labels() []selector.Label      { return nil }
func (n fakeNode) Pods() []fakePod             { return n.withTerms }
func (n fakeNode) PodsWithAffinity() []fakePod { return n.withTerms }

// TestInertScan: for a cluster that keeps no index (this package's test
// binary has no snapshot to set IndexOf), Inert reads the nodes until the
// first one holding a pod with terms. snapshot's TestInertIsO1 covers
// the indexed path.
func TestInertScan(t *testing.T) {
	calls := 0
	none := func(int) fakeNode { calls++; return fakeNode{} }
	anti := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default", Labels: map[string]string{"app": "x"}},
		Spec: v1.PodSpec{Affinity: &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
				TopologyKey:   "kubernetes.io/hostname"}}}}}}
	terms := Parse(anti)
	require.NotNil(t, terms)
	assert.False(t, Inert(terms, nil, 3, none), "a pod with terms is never inert")
	assert.Zero(t, calls)

	// Node 2 of 3 holds the pod with terms: read until it is found.
	holder := func(i int) fakeNode {
		calls++
		if i == 1 {
			return fakeNode{withTerms: []fakePod{{anti}}}
		}
		return fakeNode{}
	}
	assert.False(t, Inert(nil, nil, 3, holder))
	assert.Equal(t, 2, calls)
	calls = 0
	assert.True(t, Inert(nil, nil, 3, none))
	assert.Equal(t, 3, calls)
}
