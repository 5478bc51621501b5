package interpod

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type fakePod struct{ p *v1.Pod }

func (f fakePod) Pod() *v1.Pod { return f.p }

type fakeNode struct{ withTerms []fakePod }

func (fakeNode) Node() *v1.Node                { return &v1.Node{} }
func (n fakeNode) Pods() []fakePod             { return n.withTerms }
func (n fakeNode) PodsWithAffinity() []fakePod { return n.withTerms }

// TestInert: before any pod with terms has been parsed in the process,
// Inert answers without reading a node (the node func would fail the
// test); once one has, it reads the nodes and finds the node holding it.
// This package's test binary parses no such pod before this test.
func TestInert(t *testing.T) {
	require.False(t, everParsed.Load(), "no pod with terms parsed yet in this test binary")
	calls := 0
	none := func(int) fakeNode { calls++; return fakeNode{} }
	assert.True(t, Inert(nil, 5000, none))
	assert.Zero(t, calls, "no node read before any pod with terms exists")

	anti := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default", Labels: map[string]string{"app": "x"}},
		Spec: v1.PodSpec{Affinity: &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
				TopologyKey:   "kubernetes.io/hostname"}}}}}}
	terms := Parse(anti)
	require.NotNil(t, terms)
	require.True(t, everParsed.Load())
	assert.False(t, Inert(terms, 3, none), "a pod with terms is never inert")

	// Node 2 of 3 holds the pod with terms: read until it is found.
	calls = 0
	holder := func(i int) fakeNode {
		calls++
		if i == 1 {
			return fakeNode{withTerms: []fakePod{{anti}}}
		}
		return fakeNode{}
	}
	assert.False(t, Inert(nil, 3, holder))
	assert.Equal(t, 2, calls)
	calls = 0
	assert.True(t, Inert(nil, 3, none))
	assert.Equal(t, 3, calls)
}
