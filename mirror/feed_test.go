package mirror

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// TestFeed: informer events reach the ledger; what it rejects is an error
// (not dropped) and leaves it as it was; deleting an unknown node is not.
func TestFeed(t *testing.T) {
	l := reserve.New()
	n := newNode("n", "4", 1).node
	require.NoError(t, Feed(l, n, false))
	require.NoError(t, Feed(l, n, false), "an update")
	p := pod("p", "1")
	p.Spec.NodeName = "n"
	require.NoError(t, Feed(l, p, false))
	ph, on, ok := l.PodPhase(snapshot.KeyOf(p))
	require.True(t, ok)
	assert.Equal(t, "n", on)
	assert.Equal(t, reserve.Bound, ph)

	bad := newNode("bad", "4", 1).node
	bad.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("-1")
	err := Feed(l, bad, false)
	require.ErrorIs(t, err, snapshot.ErrNegativeQuantity)
	assert.Contains(t, err.Error(), "bad")
	assert.Equal(t, []string{"n"}, l.Nodes())
	neg := pod("neg", "-1")
	neg.Spec.NodeName = "n"
	require.Error(t, Feed(l, neg, false))
	_, _, ok = l.PodPhase(snapshot.KeyOf(neg))
	assert.False(t, ok, "the ledger keeps its state")
	require.ErrorIs(t, Feed(l, "a string", false), snapshot.ErrInvalidObject)

	require.NoError(t, Feed(l, p, true))
	_, _, ok = l.PodPhase(snapshot.KeyOf(p))
	assert.False(t, ok, "a deleted pod is freed")
	require.NoError(t, Feed(l, bad, true), "the node the ledger never took")
	require.NoError(t, Feed(l, n, true))
	assert.Empty(t, l.Nodes())
}
