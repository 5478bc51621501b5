package kubescheduler

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/schedkit/schedkit/score"
)

func unknown(raw string) runtime.Object { return &runtime.Unknown{Raw: []byte(raw)} }

// Plugin args as kube-scheduler hands them to an out-of-tree plugin
// (runtime.Unknown with the pluginConfig args as JSON): good ones build the
// scorer they name, bad ones fail with ErrInvalidArgs naming the field.
func TestScoreArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    runtime.Object
		want    string // scorer name, when valid
		wantErr string // substring of the error
	}{
		{name: "nil is LeastAllocated", args: nil, want: score.NodeResourcesFitName},
		{name: "empty JSON", args: unknown(`{}`), want: score.NodeResourcesFitName},
		{name: "with kind and apiVersion", args: unknown(`{"kind":"SchedkitScoreArgs","apiVersion":"v1","scorer":"BinPack","resources":[{"name":"nvidia.com/gpu","weight":4}]}`), want: score.BinPackName},
		{name: "YAML from a Go caller", args: unknown("scorer: DominantResource\nresources:\n- name: cpu\n- name: memory\n  weight: 2\n"), want: score.DominantResourceName},
		{name: "RTCR shape", args: unknown(`{"scorer":"RequestedToCapacityRatio","shape":[{"utilization":0,"score":0},{"utilization":100,"score":10}]}`), want: score.NodeResourcesFitName},
		{name: "typed args", args: &ScoreArgs{Scorer: "DotProduct", Spread: true}, want: score.TetrisName},
		{name: "misspelled field", args: unknown(`{"scorer":"BinPack","resource":[{"name":"cpu"}]}`), wantErr: `SchedkitScore args: resource: unknown field`},
		{name: "wrong type", args: unknown(`{"resources":[{"name":"cpu","weight":"heavy"}]}`), wantErr: `resources.weight: cannot use string as int64`},
		{name: "weight out of range", args: unknown(`{"resources":[{"name":"cpu","weight":101}]}`), wantErr: `resources[0].weight: 101 for cpu not in [1, 100]`},
		{name: "unknown scorer", args: unknown(`{"scorer":"Tetris"}`), wantErr: `scorer: unknown scorer "Tetris"`},
		{name: "balanced weights", args: unknown(`{"scorer":"BalancedAllocation","resources":[{"name":"cpu","weight":3}]}`), wantErr: `resources[0].weight: 3, BalancedAllocation takes weight 1 only`},
		{name: "shape without RTCR", args: unknown(`{"scorer":"MostAllocated","shape":[{"utilization":0,"score":0}]}`), wantErr: `shape: only for scorer RequestedToCapacityRatio`},
		{name: "bad shape", args: unknown(`{"scorer":"RequestedToCapacityRatio","shape":[{"utilization":50,"score":1},{"utilization":10,"score":2}]}`), wantErr: "shape"},
		{name: "malformed", args: unknown(`{"scorer":`), wantErr: "SchedkitScore args"},
		{name: "wrong Go type", args: &FitArgs{}, wantErr: "want *kubescheduler.ScoreArgs, got *kubescheduler.FitArgs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := NewSchedkitScore(context.Background(), tc.args, nil)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrInvalidArgs), "%v wraps ErrInvalidArgs", err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, ScoreName, pl.Name())
			assert.Equal(t, tc.want, pl.(*ScorePlugin).Scorer().Name())
		})
	}
}

func TestFitAndReserveArgs(t *testing.T) {
	_, err := NewSchedkitFit(context.Background(), unknown(`{"ignoredResourceGroups":["example.com/x"]}`), nil)
	require.ErrorIs(t, err, ErrInvalidArgs)
	assert.Contains(t, err.Error(), `ignoredResourceGroups[0] "example.com/x"`)
	_, err = NewSchedkitFit(context.Background(), unknown(`{"ignoredResource":["a/b"]}`), nil)
	assert.ErrorContains(t, err, "ignoredResource: unknown field")
	pl, err := NewSchedkitFit(context.Background(), unknown(`{"ignoredResources":["example.com/foo"]}`), nil)
	require.NoError(t, err)
	assert.Equal(t, FitName, pl.Name())

	_, err = NewSchedkitReserve(context.Background(), unknown(`{"ttl":"5m"}`), nil)
	assert.ErrorContains(t, err, "SchedkitReserve args: ttl: unknown field")
}
