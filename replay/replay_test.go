package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

var (
	_ framework.Filter = maintenance{}
	_ score.Scorer     = preference{}
)

// node is a 4-CPU, 8 GiB node with labels given as key, value pairs.
func node(name string, labels ...string) *v1.Node {
	w := snapshottest.MakeNode(name).Capacity("cpu", "4", "memory", "8Gi", "pods", "110")
	for i := 0; i+1 < len(labels); i += 2 {
		w = w.Label(labels[i], labels[i+1])
	}
	return w.Obj()
}

func arrival(t *testing.T, p *v1.Pod) replay.Arrival {
	t.Helper()
	pi, err := snapshot.DecodePodInfo(p, openb.Devices)
	require.NoError(t, err)
	return replay.Arrival{Pod: pi}
}

// cluster is node-a (preference 90), node-b (preference 10) and node-c
// (under maintenance), and five pods of 2 CPU and 1 GiB.
func cluster(t *testing.T) *replay.Input {
	in := &replay.Input{Nodes: []*v1.Node{
		node("node-a", "preference", "90"), node("node-b", "preference", "10"), node("node-c", "maintenance", "true"),
	}}
	for i := 1; i <= 5; i++ {
		in.Arrivals = append(in.Arrivals, arrival(t, snapshottest.MakePod(fmt.Sprintf("job-%d", i)).Req("cpu", "2", "memory", "1Gi").Obj()))
	}
	return in
}

func userConfig(t *testing.T) replay.Config {
	profile, err := score.NewProfile(score.Weighted{Scorer: preference{}, Weight: 1})
	require.NoError(t, err)
	return replay.Config{Filters: append(framework.DefaultFilters(), maintenance{}), Profile: profile}
}

func TestRunUserFilterAndScorer(t *testing.T) {
	in := cluster(t)
	rep, err := replay.Run(context.Background(), in, userConfig(t))
	require.NoError(t, err)

	// Preference scores node-a 90, node-b 10; node-c is filtered out by
	// Maintenance on every cycle. job-1, job-2 fill node-a (2+2 = 4 CPU),
	// job-3, job-4 fill node-b; job-5 finds 2 nodes with Insufficient
	// cpu and 1 under maintenance: the main reason is "Insufficient cpu"
	// (2 nodes of 3).
	assert.Equal(t, 5, rep.Arrived)
	assert.Equal(t, 4, rep.Placed)
	assert.Equal(t, 1, rep.Unschedulable)
	assert.Equal(t, map[string]int{"Insufficient cpu": 1}, rep.Reasons)
	assert.Equal(t, "default/job-5: 0/3 nodes are available: 1 node(s) under maintenance, 2 Insufficient cpu.", rep.FirstFailure)
	var nodes []string
	for _, p := range rep.Placements {
		nodes = append(nodes, p.Node)
	}
	assert.Equal(t, []string{"node-a", "node-a", "node-b", "node-b", ""}, nodes)
	// CPU: 4 pods × 2000 m = 8000 m of 3 × 4000 m = 12000 m.
	assert.Equal(t, replay.Usage{Requested: 8000, Allocatable: 12000, Unit: "milliCPU", Ratio: 8000.0 / 12000}, rep.CPU)
	// Memory: 4 × 1 GiB of 3 × 8 GiB = 1/6.
	assert.Equal(t, replay.Usage{Requested: 4 << 30, Allocatable: 24 << 30, Unit: "bytes", Ratio: 4.0 / 24}, rep.Memory)
	assert.Equal(t, replay.Usage{Unit: "milliGPU"}, rep.GPU)
	assert.Equal(t, 2, rep.NodesUsed)
	assert.Equal(t, 3, rep.Nodes)
	// No GPUs: the demand axis is CPU, capacity 12000 m; each arrival
	// adds 2000 m arrived, and 2000 m allocated while it is placed.
	assert.Equal(t, "CPU", rep.DemandAxis)
	assert.Equal(t, int64(12000), rep.Capacity)
	assert.Equal(t, []replay.Sample{{2000, 2000}, {4000, 4000}, {6000, 6000}, {8000, 8000}, {10000, 8000}}, rep.Samples)
	assert.Equal(t, 2, rep.Final.Get("node-b").NumPods())
	assert.Zero(t, rep.Final.Get("node-c").NumPods())
	assert.Positive(t, rep.Wall)
	assert.InDelta(t, float64(rep.Arrived)/rep.Wall.Seconds(), rep.PodsPerSecond(), 1e-9)

	// The user's filter matters: without it node-c takes job-5.
	cfg := userConfig(t)
	cfg.Filters = framework.DefaultFilters()
	rep, err = replay.Run(context.Background(), cluster(t), cfg)
	require.NoError(t, err)
	assert.Equal(t, 5, rep.Placed)
	assert.Equal(t, "node-c", rep.Placements[4].Node)
}

func TestRunExplain(t *testing.T) {
	cfg := userConfig(t)
	cfg.Explain = "job-3"
	rep, err := replay.Run(context.Background(), cluster(t), cfg)
	require.NoError(t, err)
	require.NotNil(t, rep.Explain)
	e := rep.Explain
	// job-3 arrives third: node-a is full (4 CPU requested), node-c under
	// maintenance, node-b alone is feasible and wins with its preference
	// 10 × weight 1.
	assert.Equal(t, "default/job-3", e.Pod)
	assert.Equal(t, "node-b", e.Node)
	assert.Equal(t, 3, e.Arrival)
	assert.Equal(t, 1, e.Feasible)
	assert.Equal(t, int64(10), e.Total)
	assert.Equal(t, "2 of 3 nodes filtered out: 1 Insufficient cpu, 1 node(s) under maintenance", e.Filtered)
	assert.Contains(t, e.Breakdown, "Preference")

	cfg.Explain = "default/job-5"
	rep, err = replay.Run(context.Background(), cluster(t), cfg)
	require.NoError(t, err)
	assert.Equal(t, "", rep.Explain.Node)
	assert.Equal(t, "0/3 nodes are available: 1 node(s) under maintenance, 2 Insufficient cpu.", rep.Explain.Diagnosis)
}

func TestRunBoundAndBatch(t *testing.T) {
	in := cluster(t)
	// job-0 runs on node-b already (3 CPU): node-b has 1 CPU left.
	in.Bound = []*v1.Pod{snapshottest.MakePod("job-0").Req("cpu", "3").Node("node-b").Obj()}
	// In a batch the queue orders by priority: job-5 (priority 10) goes
	// first and takes node-a; job-1 then fills node-a; job-2 to job-4
	// find node-a full, node-b with 1 CPU and node-c refused.
	in.Arrivals[4] = arrival(t, snapshottest.MakePod("job-5").Req("cpu", "2", "memory", "1Gi").Priority(10).Obj())
	in.Batch = true
	rep, err := replay.Run(context.Background(), in, userConfig(t))
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Placed)
	assert.Equal(t, 3, rep.Unschedulable)
	require.Len(t, rep.Placements, 6)
	assert.Equal(t, replay.Placement{Pod: "default/job-0", Node: "node-b", Bound: true}, rep.Placements[0])
	assert.Equal(t, replay.Placement{Pod: "default/job-5", Node: "node-a"}, rep.Placements[1])
	assert.Equal(t, replay.Placement{Pod: "default/job-1", Node: "node-a"}, rep.Placements[2])
	// CPU: 3000 m bound + 2 × 2000 m placed = 7000 m; nodes used: a, b.
	assert.Equal(t, int64(7000), rep.CPU.Requested)
	assert.Equal(t, 2, rep.NodesUsed)
	// The input is unchanged.
	assert.Empty(t, in.Bound[0].Annotations)
	assert.Equal(t, "", in.Arrivals[0].Pod.Pod().Spec.NodeName)
}

func TestRunDepartures(t *testing.T) {
	in := cluster(t)
	// Trace times in seconds: job-i arrives at i; job-1 leaves at 2.5,
	// job-2 leaves at 3 (the instant job-3 arrives: departures first).
	for i := range in.Arrivals {
		in.Arrivals[i].At = time.Duration(i+1) * time.Second
	}
	in.Arrivals[0].Leave, in.Arrivals[0].Leaves = 2500*time.Millisecond, true
	in.Arrivals[1].Leave, in.Arrivals[1].Leaves = 3*time.Second, true
	cfg := userConfig(t)
	cfg.Departures = true
	var calls, total int
	cfg.Progress = func(done, n int) { calls, total = done, n }
	rep, err := replay.Run(context.Background(), in, cfg)
	require.NoError(t, err)
	// t=1 job-1 -> a; t=2 job-2 -> a (a full); t=2.5 job-1 leaves;
	// t=3 job-2 leaves, job-3 -> a; t=4 job-4 -> a; t=5 job-5 -> b.
	assert.Equal(t, 5, rep.Placed)
	assert.Equal(t, 2, rep.Departed)
	assert.Equal(t, []string{"node-a", "node-a", "node-a", "node-a", "node-b"},
		[]string{rep.Placements[0].Node, rep.Placements[1].Node, rep.Placements[2].Node, rep.Placements[3].Node, rep.Placements[4].Node})
	assert.Equal(t, 7, total, "5 arrivals + 2 departures")
	assert.Equal(t, 7, calls)
	// Time-weighted over [1 s, 5 s] (4 s): CPU requested is 2000 m on
	// [1, 2), 4000 on [2, 2.5), 2000 on [2.5, 3), 2000 on [3, 4) after
	// job-2 left and job-3 came, 4000 on [4, 5): area 2000 + 2000 + 1000
	// + 2000 + 4000 = 11000 m·s, mean 2750 m.
	assert.True(t, rep.TimeWeighted)
	assert.Equal(t, int64(2750), rep.CPU.Requested)
	// Nodes used: 1 on [1, 5): mean 1 (node-b only at 5, the end).
	assert.Equal(t, 1, rep.NodesUsed)
}

// Concurrent Runs over one Input give the same report as one alone, and
// leave the Input as it was (run with -race).
func TestRunConcurrent(t *testing.T) {
	in := cluster(t)
	in.Bound = []*v1.Pod{snapshottest.MakePod("job-0").Req("cpu", "1").Node("node-b").Obj()}
	want, err := replay.Run(context.Background(), in, userConfig(t))
	require.NoError(t, err)
	strip := func(r *replay.Report) replay.Report {
		c := *r
		c.Wall, c.Final = 0, nil
		return c
	}
	got := make([]*replay.Report, 4)
	errs := make([]error, len(got))
	done := make(chan struct{})
	for i := range got {
		go func() {
			defer func() { done <- struct{}{} }()
			got[i], errs[i] = replay.Run(context.Background(), in, userConfig(t))
		}()
	}
	for range got {
		<-done
	}
	for i := range got {
		require.NoError(t, errs[i])
		assert.Equal(t, strip(want), strip(got[i]), "run %d", i)
	}
	assert.Equal(t, "node-b", in.Bound[0].Spec.NodeName)
	assert.Empty(t, in.Bound[0].Annotations)
}

func TestRunErrors(t *testing.T) {
	t.Run("bad node", func(t *testing.T) {
		in := cluster(t)
		in.Nodes = append(in.Nodes, in.Nodes[0])
		_, err := replay.Run(context.Background(), in, userConfig(t))
		require.ErrorIs(t, err, replay.ErrInput)
		assert.Contains(t, err.Error(), "node-a")
	})
	t.Run("bound pod on a missing node", func(t *testing.T) {
		in := cluster(t)
		in.Bound = []*v1.Pod{snapshottest.MakePod("lost").Req("cpu", "1").Node("node-z").Obj()}
		_, err := replay.Run(context.Background(), in, userConfig(t))
		require.ErrorIs(t, err, replay.ErrInput)
		assert.Contains(t, err.Error(), "node-z")
	})
	t.Run("nil arrival", func(t *testing.T) {
		in := cluster(t)
		in.Arrivals[2].Pod = nil
		_, err := replay.Run(context.Background(), in, userConfig(t))
		require.ErrorIs(t, err, replay.ErrInput)
		assert.Contains(t, err.Error(), "Arrivals[2]")
	})
	t.Run("bad config", func(t *testing.T) {
		cfg := userConfig(t)
		cfg.PercentageOfNodesToScore = 101
		_, err := replay.Run(context.Background(), cluster(t), cfg)
		require.ErrorIs(t, err, framework.ErrInvalidConfig)
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := replay.Run(ctx, cluster(t), userConfig(t))
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("scorer error", func(t *testing.T) {
		cfg := userConfig(t)
		var err error
		cfg.Profile, err = score.NewProfile(score.Weighted{Scorer: failing{}, Weight: 1})
		require.NoError(t, err)
		_, err = replay.Run(context.Background(), cluster(t), cfg)
		require.True(t, errors.Is(err, errFailing), "err = %v", err)
	})
}

var errFailing = errors.New("failing scorer")

type failing struct{}

func (failing) Name() string { return "Failing" }

func (failing) Prepare(*snapshot.PodInfo, score.Cluster) (score.PodScorer, error) {
	return nil, errFailing
}

// The report's JSON carries the counts and usage, not the per-pod lists.
func TestReportJSON(t *testing.T) {
	rep, err := replay.Run(context.Background(), cluster(t), userConfig(t))
	require.NoError(t, err)
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, 4.0, m["placed"])
	assert.Equal(t, map[string]any{"Insufficient cpu": 1.0}, m["reasons"])
	assert.NotContains(t, m, "Placements")
	assert.NotContains(t, m, "Final")
}

// worstFit is a device chooser for the test: the device with the most
// free milli-GPU that has the share (the lowest index on ties).
type worstFit struct{}

func (worstFit) ChooseDevices(pod *snapshot.PodInfo, node *snapshot.NodeInfo) (snapshot.DeviceSet, bool) {
	best := -1
	for i, d := range node.Devices() {
		if d.FreeMilliGPU >= pod.GPU().MilliGPU && (best < 0 || d.FreeMilliGPU > node.Devices()[best].FreeMilliGPU) {
			best = i
		}
	}
	return snapshot.DeviceSet(0).With(best), best >= 0
}

// TestRunBoundDevices: bound pods without a gpu-index annotation get
// Config.DeviceChooser's devices (best fit by default), in input order; a
// bound pod no device has room for (the input over-commits the node) is
// charged to the lowest-index devices; a gpu-index annotation is kept.
func TestRunBoundDevices(t *testing.T) {
	gpu := snapshottest.MakeNode("g").Capacity("cpu", "32", "memory", "64Gi", "pods", "110",
		"alibabacloud.com/gpu-count", "3", "alibabacloud.com/gpu-milli", "3000").Obj()
	share := func(name, milli string) *snapshottest.PodWrapper {
		return snapshottest.MakePod(name).Req("cpu", "1").Node("g").
			Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, milli)
	}
	in := &replay.Input{Devices: openb.Devices, Nodes: []*v1.Node{gpu}, Bound: []*v1.Pod{
		share("a", "600").Annotation(openb.AnnotationGPUIndex, "2").Obj(),
		share("b", "500").Obj(),
		share("c", "300").Obj(),
		share("d", "900").Obj(),
		share("e", "800").Obj(),
	}}
	for _, tc := range []struct {
		name string
		dc   snapshot.DeviceChooser
		want [][]int
	}{
		// best fit (a took 600 of device 2): b 500 on device 0 (device 2
		// has 400; 0 and 1 are idle, the lower index wins); c 300 on
		// device 2 (400 free, the least that fits); d 900 on device 1; e
		// 800 finds no room (500, 100, 100 free): the lowest-index device.
		{"default best fit", nil, [][]int{{2}, {0}, {2}, {1}, {0}}},
		// worst fit: b 500 on device 0 (1000 free, tied with device 1), c
		// 300 on device 1 (1000 free); d 900 and e 800 find no room (500,
		// 700, 400 free): the lowest-index device.
		{"chooser", worstFit{}, [][]int{{2}, {0}, {1}, {0}, {0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := replay.Run(context.Background(), in, replay.Config{DeviceChooser: tc.dc})
			require.NoError(t, err)
			require.Len(t, rep.Placements, 5)
			for i, want := range tc.want {
				assert.Equal(t, want, rep.Placements[i].Devices, "pod %s", rep.Placements[i].Pod)
			}
		})
	}
}

// TestRunDefaultFiltersShareGPUs: with Config{} (default filters, the
// default device chooser) share pods that the node's devices cannot take
// are unschedulable with the device filter's reason; before, the default
// filters lacked GPUDevices and the run failed ("add the GPUDevices
// filter") at the first pod whose total fits but whose devices do not.
func TestRunDefaultFiltersShareGPUs(t *testing.T) {
	gpu := snapshottest.MakeNode("g").Capacity("cpu", "32", "memory", "64Gi", "pods", "110",
		"alibabacloud.com/gpu-count", "2", "alibabacloud.com/gpu-milli", "2000").Obj()
	in := &replay.Input{Devices: openb.Devices, Nodes: []*v1.Node{gpu}}
	for i := range 3 {
		p := snapshottest.MakePod(fmt.Sprintf("s%d", i)).Req("cpu", "1", "alibabacloud.com/gpu-milli", "600").
			Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, "600").Obj()
		in.Arrivals = append(in.Arrivals, replay.Arrival{Pod: openb.MustPodInfo(p)})
	}
	rep, err := replay.Run(context.Background(), in, replay.Config{})
	require.NoError(t, err)
	// 600 + 600 on two devices; the third needs 600 on one device (400
	// free on each) though 800 milli-GPU are free in total.
	assert.Equal(t, 2, rep.Placed)
	assert.Equal(t, 1, rep.Unschedulable)
	assert.Equal(t, map[string]int{"Insufficient GPU devices": 1}, rep.Reasons)
}
