package score_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
)

// TestConfigBuild: every built-in name builds its scorer; bad configs are
// ErrInvalidConfig errors naming the field.
func TestConfigBuild(t *testing.T) {
	gpu := []score.ResourceSpec{{Name: v1.ResourceCPU}, {Name: "nvidia.com/gpu", Weight: 4}}
	tests := []struct {
		name    string
		cfg     score.Config
		want    string // the built scorer's Name()
		wantErr string
	}{
		{name: "empty is LeastAllocated", cfg: score.Config{}, want: score.NodeResourcesFitName},
		{name: "LeastAllocated", cfg: score.Config{Scorer: "LeastAllocated", Resources: gpu}, want: score.NodeResourcesFitName},
		{name: "MostAllocated", cfg: score.Config{Scorer: "MostAllocated"}, want: score.NodeResourcesFitName},
		{name: "RequestedToCapacityRatio", cfg: score.Config{Scorer: "RequestedToCapacityRatio",
			Shape: []score.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}}, want: score.NodeResourcesFitName},
		{name: "BalancedAllocation", cfg: score.Config{Scorer: "BalancedAllocation", Resources: []score.ResourceSpec{{Name: v1.ResourceCPU, Weight: 1}, {Name: v1.ResourceMemory}}}, want: score.BalancedAllocationName},
		{name: "ImageLocality", cfg: score.Config{Scorer: "ImageLocality"}, want: score.ImageLocalityName},
		{name: "TaintToleration", cfg: score.Config{Scorer: "TaintToleration"}, want: score.TaintTolerationName},
		{name: "NodeAffinity", cfg: score.Config{Scorer: "NodeAffinity"}, want: score.NodeAffinityName},
		{name: "BinPack", cfg: score.Config{Scorer: "BinPack", Resources: gpu}, want: score.BinPackName},
		{name: "DominantResource", cfg: score.Config{Scorer: "DominantResource", Resources: gpu}, want: score.DominantResourceName},
		{name: "DotProduct", cfg: score.Config{Scorer: "DotProduct", Spread: true}, want: score.TetrisName},
		{name: "unknown", cfg: score.Config{Scorer: "Tetris"}, wantErr: `scorer: unknown scorer "Tetris" (want LeastAllocated, MostAllocated, RequestedToCapacityRatio, BalancedAllocation, ImageLocality, TaintToleration, NodeAffinity, BinPack, DominantResource or DotProduct)`},
		{name: "case matters", cfg: score.Config{Scorer: "leastallocated"}, wantErr: `unknown scorer "leastallocated"`},
		{name: "balanced weight", cfg: score.Config{Scorer: "BalancedAllocation", Resources: []score.ResourceSpec{{Name: v1.ResourceCPU, Weight: 3}}}, wantErr: "resources[0].weight: 3, BalancedAllocation takes weight 1 only"},
		{name: "spread without DotProduct", cfg: score.Config{Scorer: "LeastAllocated", Spread: true}, wantErr: "spread: only for scorer DotProduct"},
		{name: "shape without RTCR", cfg: score.Config{Scorer: "MostAllocated", Shape: []score.UtilizationShapePoint{{}}}, wantErr: "shape: only for scorer RequestedToCapacityRatio"},
		{name: "weight out of range", cfg: score.Config{Resources: []score.ResourceSpec{{Name: v1.ResourceCPU, Weight: 101}}}, wantErr: "resources[0].weight: 101 for cpu not in [1, 100]"},
		{name: "bad shape", cfg: score.Config{Scorer: "RequestedToCapacityRatio", Shape: []score.UtilizationShapePoint{{Utilization: 50, Score: 1}, {Utilization: 10, Score: 2}}}, wantErr: "shape"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.cfg.Build()
			if tc.wantErr != "" {
				require.ErrorIs(t, err, score.ErrInvalidConfig)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.Nil(t, s, "no scorer (not even a typed nil) with an error")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.Name())
		})
	}
	d, err := score.Config{Scorer: "DotProduct", Spread: true}.Build()
	require.NoError(t, err)
	assert.True(t, score.TetrisSpreads(d), "Spread is passed on")
	assert.Len(t, score.ScorerNames(), 10)
}

// A scorer chosen by name, as a configuration file names it.
func ExampleConfig_Build() {
	s, err := score.Config{Scorer: "BinPack", Resources: []score.ResourceSpec{{Name: "nvidia.com/gpu", Weight: 4}}}.Build()
	fmt.Println(s.Name(), err)
	_, err = score.Config{Scorer: "Tetris"}.Build()
	fmt.Println(err != nil)
	// Output:
	// BinPack <nil>
	// true
}
