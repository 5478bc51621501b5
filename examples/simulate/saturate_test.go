package main

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHugeRequestsSaturate: two nodes and two pods of 5e15 cores each
// (each a valid quantity) overflow int64 milli-CPU sums. The run ends
// with the totals capped at the int64 maximum (capacity, allocatable and
// requested alike), not with a panic sizing the allocation curve from a
// wrapped negative demand (a new-user trial's finding).
func TestHugeRequestsSaturate(t *testing.T) {
	const cpu = `"5000000000000000"`
	var b strings.Builder
	for _, n := range []string{"n1", "n2"} {
		b.WriteString("apiVersion: v1\nkind: Node\nmetadata: {name: " + n + "}\nstatus:\n  allocatable: {cpu: " + cpu + ", memory: 8Gi, pods: \"10\"}\n---\n")
	}
	for _, p := range []string{"p1", "p2"} {
		b.WriteString("apiVersion: v1\nkind: Pod\nmetadata: {name: " + p + "}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: " + cpu + "}}\n---\n")
	}
	objs := writeFile(t, t.TempDir(), "big.yaml", b.String())
	rep, _ := jsonReport(t, "-objects", objs, "-policy", "default", "-timing=false")
	require.Equal(t, int64(math.MaxInt64), rep.Capacity)
	require.Len(t, rep.Summaries, 1)
	s := rep.Summaries[0]
	require.Equal(t, 2.0, s.Placed)
	require.Equal(t, 1.0, s.CPURatio, "requested and allocatable capped alike")
}
