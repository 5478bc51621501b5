package score_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// TestNewProfileRefusesBrokenPerNode: PerNode("", nil) was accepted by
// NewProfile and panicked (nil function) at the first Score (trial 5).
func TestNewProfileRefusesBrokenPerNode(t *testing.T) {
	f := func(*snapshot.PodInfo, *snapshot.NodeInfo) int64 { return 0 }
	for name, s := range map[string]score.Scorer{
		"empty name":   score.PerNode("", f),
		"nil function": score.PerNode("mine", nil),
		"both":         score.PerNode("", nil),
	} {
		t.Run(name, func(t *testing.T) {
			p, err := score.NewProfile(score.Weighted{Scorer: score.PerNode("other", f)}, score.Weighted{Scorer: s, Weight: 2})
			require.ErrorIs(t, err, score.ErrInvalidConfig)
			require.Nil(t, p)
			require.Contains(t, err.Error(), "profile entry 1")
		})
	}
	_, err := score.NewProfile(score.Weighted{Scorer: score.PerNode("mine", f)})
	require.NoError(t, err)
}
