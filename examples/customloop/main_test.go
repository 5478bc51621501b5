package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	lines := strings.Split(out.String(), "\n")
	require.Greater(t, len(lines), 9, "output:\n%s", out.String())
	// Priority first (train-0 1000, batch-0 100), then arrival order.
	assert.Equal(t, []string{
		"train-0   -> gpu-1  total 450  (1 feasible of 5 filtered)",
		"batch-0   -> cpu-1  total 412  (2 feasible of 5 filtered)",
		"web-0     -> cpu-2  total 452  (3 feasible of 5 filtered)",
		"web-1     -> cpu-2  total 434  (3 feasible of 5 filtered)",
		"web-2     -> cpu-2  total 415  (3 feasible of 5 filtered)",
		"pinned-0  unschedulable: 0/5 nodes are available: 5 node(s) didn't satisfy plugin(s) [NodeAffinity].",
		"huge-0    unschedulable: 0/5 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 3 Insufficient cpu.",
		"",
		"why train-0 went to gpu-1:",
		"node gpu-1: total 450",
	}, lines[:10])

	// The same program, run again, prints the same thing.
	var again bytes.Buffer
	require.NoError(t, run(context.Background(), &again))
	assert.Equal(t, out.String(), again.String())

	// A cancelled context stops the loop before any pod.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, run(ctx, &bytes.Buffer{}), context.Canceled)
}
