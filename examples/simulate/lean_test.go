package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSyntheticLean: the built-in workload is held as lean records (no
// pod object per pod) from loading to the end of a replay, so that
// -scale 100's 800,000 pods fit in memory: the arrivals, and the pods of
// a run's final snapshot.
func TestSyntheticLean(t *testing.T) {
	c, err := loadSynthetic(1, 0.05)
	require.NoError(t, err)
	require.Len(t, c.pods, 400)
	for _, pi := range c.pods {
		require.False(t, pi.Retained(), "pod %s is kept as an object", pi.Key())
	}
	pols, err := lookupPolicies("default")
	require.NoError(t, err)
	o := &options{seed: 1, percentage: -1}
	res, err := c.replay(context.Background(), buildSpecs(o, pols)[0], startProgress(nil, 0))
	require.NoError(t, err)
	placed := 0
	for _, ni := range res.Final.Nodes() {
		for _, pi := range ni.Pods() {
			assert.False(t, pi.Retained(), "bound pod %s is kept as an object", pi.Key())
			placed++
		}
	}
	assert.Equal(t, res.Placed, placed)
	assert.Positive(t, placed)
}
