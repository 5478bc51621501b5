package main

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	preemptCluster = "testdata/preempt/cluster.yaml"
	preemptNodes   = "testdata/preempt/nodes.csv"
	preemptPods    = "testdata/preempt/pods.csv"
)

// placedNodes maps each scheduled pod of a -placements file to its node
// ("" when unschedulable).
func placedNodes(t *testing.T, args ...string) map[string]string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "placements.csv")
	r := runMain(t, append(args, "-placements", path, "-timing=false")...)
	require.Equal(t, exitOK, r.code, r.stderr)
	out := map[string]string{}
	for _, row := range readPlacements(t, path) {
		if !row.prebound {
			out[row.pod] = row.node
		}
	}
	return out
}

// TestPreemptionObjects: cluster.yaml (its comment has the arithmetic).
// Without -preemption high-1 stays pending and low-1 takes b's free CPU;
// with it, db-1 (priority 0) is evicted from b for high-1 (PriorityClass
// high, 1000), not the PDB-protected web pods of a, and low-1 is left
// pending: one preemption of priority 1000, one eviction of priority 0.
func TestPreemptionObjects(t *testing.T) {
	off := placedNodes(t, "-objects", preemptCluster, "-policy", "default")
	assert.Equal(t, map[string]string{"default/high-1": "", "default/low-1": "b"}, off)
	on := placedNodes(t, "-objects", preemptCluster, "-policy", "default", "-preemption")
	assert.Equal(t, map[string]string{"default/high-1": "b", "default/low-1": ""}, on)

	rep, _ := jsonReport(t, "-objects", preemptCluster, "-policy", "default", "-preemption")
	require.True(t, rep.Preemption)
	s := rep.Summaries[0]
	assert.Equal(t, 1.0, s.Placed)
	assert.Equal(t, 1.0, s.Unschedulable)
	assert.Equal(t, 1.0, s.Preemptions)
	assert.Equal(t, []priorityCount{{1000, 1}}, s.PreemptionsByPriority)
	assert.Equal(t, 1.0, s.Evicted)
	assert.Equal(t, []priorityCount{{0, 1}}, s.EvictedByPriority)
	// The run's own counts.
	assert.Equal(t, map[int32]int{0: 1}, s.Results[0].EvictedByPriority)
	// db-1 was bound in the input, not placed by the run: high-1 still
	// runs (placed minus evicted would say 0).
	assert.Zero(t, s.Results[0].EvictedPlaced)
	require.NotNil(t, s.Running)
	assert.Equal(t, 1.0, *s.Running)
	require.NotNil(t, s.Results[0].Running)
	assert.Equal(t, 1, *s.Results[0].Running)

	rep, r := jsonReport(t, "-objects", preemptCluster, "-policy", "default")
	require.False(t, rep.Preemption)
	assert.Zero(t, rep.Summaries[0].Preemptions)
	assert.Empty(t, rep.Summaries[0].EvictedByPriority)
	// Without -preemption the output has no running count.
	assert.Nil(t, rep.Summaries[0].Running)
	assert.NotContains(t, r.stdout, `"running"`)
	assert.NotContains(t, r.stdout, `"evictedPlaced"`)
	r = runMain(t, "-objects", preemptCluster, "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "RUNNING")
	assert.Contains(t, r.stdout, "   POLICY  RUNS  ARRIVED  PLACED  UNSCHED   CPU%  MEM%  GPU%  GPU-FRAG%  NODES\n")
}

// TestPreemptionTracePriorityMap: pods.csv on two 8-CPU nodes. The four
// BE pods (4 CPU each) fill both nodes. ls-0 (6 CPU, LS = 1000) evicts
// both BE pods of a node (one back: 4 + 6 > 8); burst-0 (2 CPU) fits
// beside it (6 + 2 = 8); ls-1 (2 CPU) evicts one BE pod of the other node
// (the other is reprieved: 4 + 2 <= 8). Two preemptions of priority 1000,
// three evictions of priority 0, every pod placed. Without -priority-map
// every pod has priority 0: nothing is evicted and ls-0, burst-0 and
// ls-1 stay pending (the BE pods fill both nodes).
func TestPreemptionTracePriorityMap(t *testing.T) {
	trace := []string{"-nodes", preemptNodes, "-pods", preemptPods, "-policy", "default,most"}
	rep, _ := jsonReport(t, append(trace, "-preemption", "-priority-map", "LS=1000,Burstable=500", "-priority-map", "BE=0")...)
	require.Len(t, rep.Summaries, 2)
	for _, s := range rep.Summaries {
		assert.Equal(t, 7.0, s.Placed, s.Policy)
		assert.Equal(t, 2.0, s.Preemptions, s.Policy)
		assert.Equal(t, []priorityCount{{1000, 2}}, s.PreemptionsByPriority, s.Policy)
		assert.Equal(t, 3.0, s.Evicted, s.Policy)
		assert.Equal(t, []priorityCount{{0, 3}}, s.EvictedByPriority, s.Policy)
		// The three evicted BE pods were placed by the run: 7 - 3 run at
		// the end.
		require.NotNil(t, s.Running, s.Policy)
		assert.Equal(t, 4.0, *s.Running, s.Policy)
		assert.Equal(t, 3, s.Results[0].EvictedPlaced, s.Policy)
		require.NotNil(t, s.Results[0].Running, s.Policy)
		assert.Equal(t, 4, *s.Results[0].Running, s.Policy)
		// 6 (ls-0) + 2 (burst-0) + 4 (a BE pod) + 2 (ls-1) of 16 CPU.
		assert.InDelta(t, 14.0/16, s.CPURatio, 1e-9, s.Policy)
		// The allocation curve's last point counts the evicted pods out
		// too (6 + 4 × 4 + 2 + 2 = 26 of 16 CPU if it did not).
		c := s.Results[0].Curve
		require.NotNil(t, c[len(c)-1], s.Policy)
		assert.InDelta(t, 14.0/16, *c[len(c)-1], 1e-9, s.Policy)
	}

	rep, _ = jsonReport(t, append(trace, "-preemption")...)
	for _, s := range rep.Summaries {
		assert.Zero(t, s.Preemptions, s.Policy)
		assert.Zero(t, s.Evicted, s.Policy)
		assert.Equal(t, 3.0, s.Unschedulable, s.Policy)
	}

	r := runMain(t, append(trace, "-preemption", "-priority-map", "LS=1000", "-timing=false")...)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "\nwith preemption: PLACED counts the pods later evicted too; RUNNING is the placed pods still running after the last arrival (PLACED minus the placed pods evicted or departed)\n")
	assert.Contains(t, r.stdout, "\n   POLICY  RUNS  ARRIVED  PLACED  RUNNING  UNSCHED   CPU%  MEM%  GPU%  GPU-FRAG%  NODES\n"+
		"  default     1        7       7        4        0  100.0")
	assert.Contains(t, r.stdout, "\npreemptions by the preemptor's priority, evicted pods by their own (mean per run):\n"+
		"  default       2 preemptions (priority 1000: 2); 3 evicted (priority 0: 3)\n"+
		"  most          2 preemptions (priority 1000: 2); 3 evicted (priority 0: 3)\n")
}

// TestPreemptionFlags: bad -priority-map values and combinations are
// usage errors naming the pair or the flags.
func TestPreemptionFlags(t *testing.T) {
	trace := []string{"-nodes", preemptNodes, "-pods", preemptPods, "-preemption"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(trace, "-priority-map", "LS=high"), `invalid value "LS=high" for flag -priority-map: "LS=high": priority "high" is not an integer in [-2147483648, 2147483647]`},
		{append(trace, "-priority-map", "LS=3000000000"), `priority "3000000000" is not an integer`},
		{append(trace, "-priority-map", "Ls=1"), `"Ls=1": class "Ls" is not a trace qos class (LS, BE, Burstable, Guaranteed)`},
		{append(trace, "-priority-map", "LS"), `"LS": want CLASS=PRIORITY`},
		{append(trace, "-priority-map", "LS=1,BE=0,LS=2"), `"LS=2": class LS given twice`},
		{append(trace, "-priority-map", "LS=1000,,BE=0"), `invalid value "LS=1000,,BE=0" for flag -priority-map: "LS=1000,,BE=0": pair 2 is empty, want CLASS=PRIORITY,...`},
		{append(trace, "-priority-map", "LS=1000,"), `for flag -priority-map: "LS=1000,": pair 2 is empty`},
		{append(trace, "-priority-map", "LS=1", "-priority-map", "BE=0,LS=2"), `"LS=2": class LS given twice`},
		{[]string{"-objects", preemptCluster, "-preemption", "-priority-map", "LS=1"}, "-priority-map applies to trace input"},
		{[]string{"-nodes", preemptNodes, "-pods", preemptPods, "-priority-map", "LS=1"}, "-priority-map needs -preemption"},
	} {
		r := runMain(t, tc.args...)
		assert.Equal(t, exitUsage, r.code, "%v", tc.args)
		assert.Contains(t, r.stderr, tc.want, "%v", tc.args)
	}
}

// TestPriorityMapSet: an explicit empty -priority-map is as if not given
// (no -preemption needed, no map); a bad value leaves the map as it was.
func TestPriorityMapSet(t *testing.T) {
	o, _, err := parse([]string{"-nodes", preemptNodes, "-pods", preemptPods, "-priority-map", ""}, io.Discard)
	require.NoError(t, err)
	assert.Nil(t, o.priorityMap)

	var m priorityMap
	require.NoError(t, m.Set("LS=1000"))
	require.Error(t, m.Set("BE=0,,Burstable=5"))
	require.Error(t, m.Set("BE=0,LS=1"))
	assert.Equal(t, priorityMap{"LS": 1000}, m)
	require.NoError(t, m.Set(" "))
	require.NoError(t, m.Set("BE=0"))
	assert.Equal(t, "BE=0,LS=1000", m.String())
}

// TestPreemptionFailureMessage: with -preemption, low-1's first-failure
// line and its -explain show upstream's FitError as kube-scheduler logs
// it, the filter diagnosis followed by the preemption (PostFilter)
// message; without -preemption the diagnosis alone.
func TestPreemptionFailureMessage(t *testing.T) {
	const diag = "0/2 nodes are available: 2 Insufficient cpu."
	const post = " preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
	rep, r := jsonReport(t, "-objects", preemptCluster, "-policy", "default", "-preemption", "-explain", "low-1")
	res := rep.Summaries[0].Results[0]
	assert.Equal(t, "default/low-1: "+diag+post, res.FirstFailure)
	require.NotNil(t, res.Explain)
	assert.Equal(t, diag+post, res.Explain.Diagnosis)
	r = runMain(t, "-objects", preemptCluster, "-policy", "default", "-preemption", "-explain", "low-1", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "\n  "+diag+post+"\n")

	rep, _ = jsonReport(t, "-objects", preemptCluster, "-policy", "default", "-explain", "high-1")
	assert.Equal(t, "default/high-1: "+diag, rep.Summaries[0].Results[0].FirstFailure)
}
