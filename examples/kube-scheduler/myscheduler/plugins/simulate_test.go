package plugins

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/internal/shareddata"
	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestSimulateOnExportedCluster replays the two plugins through package
// replay on a real cluster's exported objects (the OpenShift Insights
// sample: 3 tainted masters, 3 workers of 3500m), before deploying
// anything: the workers get license budgets of 3 and worker-b is
// preferred; the sample's 19 pods are scheduled anew, then 10 licensed
// pods, all queued at once. Expected: the preferred worker takes licensed
// pods up to its budget, no node goes over its budget, and the 10th
// licensed pod (9 licenses in all) is unschedulable with the budget's
// reason on every worker.
func TestSimulateOnExportedCluster(t *testing.T) {
	dir := shareddata.Dir(t, "openshift-insights-archive-sample")
	objs, err := load.Files(dir)
	require.NoError(t, err)
	require.Len(t, objs.Nodes, 6)

	in := &replay.Input{Batch: true}
	preferred := ""
	for _, n := range objs.Nodes {
		n = n.DeepCopy()
		if strings.Contains(n.Name, "-worker-") {
			n.Labels[BudgetLabel] = "3"
			if strings.Contains(n.Name, "-worker-b-") {
				n.Labels["example.com/preferred"] = "true"
				preferred = n.Name
			}
		}
		in.Nodes = append(in.Nodes, n)
	}
	require.NotEmpty(t, preferred)
	pods := objs.Pods
	const nLicensed = 10
	for i := range nLicensed {
		pods = append(pods, snapshottest.MakePod(fmt.Sprintf("licensed-%02d", i)).Namespace("apps").
			Label(LicensedLabel, "true").Req("cpu", "100m", "memory", "128Mi").Obj())
	}
	for _, p := range pods {
		p = p.DeepCopy()
		p.Spec.NodeName = "" // schedule the cluster's pods anew
		pi, err := snapshot.NewPodInfo(p)
		require.NoError(t, err)
		in.Arrivals = append(in.Arrivals, replay.Arrival{Pod: pi})
	}

	cfg := profile(t)
	rep, err := replay.Run(context.Background(), in, replay.Config{
		Filters: cfg.Filters, Profile: cfg.Profile, Seed: cfg.Seed, Explain: "apps/licensed-09",
	})
	require.NoError(t, err)

	licensedOn := map[string]int{}
	var left []string
	for _, p := range rep.Placements {
		switch {
		case p.Node == "":
			left = append(left, p.Pod)
		case strings.HasPrefix(p.Pod, "apps/licensed-"):
			licensedOn[p.Node]++
		}
	}
	t.Logf("placed %d of %d pods; licensed pods per node: %v; left out: %v, by reason: %v", rep.Placed, rep.Arrived, licensedOn, left, rep.Reasons)
	assert.Equal(t, 3, licensedOn[preferred], "the preferred worker takes licensed pods up to its budget")
	total := 0
	for node, n := range licensedOn {
		assert.LessOrEqual(t, n, 3, "budget of %s", node)
		assert.Contains(t, node, "-worker-", "licensed pods only where a budget is set (masters are tainted)")
		total += n
	}
	assert.Equal(t, 9, total, "9 licenses in the cluster")
	assert.Contains(t, left, "apps/licensed-09")
	for _, p := range left {
		if p != "apps/licensed-09" {
			assert.NotContains(t, p, "apps/licensed-", "one licensed pod left out")
		}
	}

	// The queue keeps arrival order among equal priorities: licensed-09
	// comes last and finds every license taken.
	e := rep.Explain
	require.NotNil(t, e)
	t.Logf("%s: %s", e.Pod, e.Diagnosis)
	assert.Equal(t, "", e.Node, "the 10th licensed pod is unschedulable")
	assert.Contains(t, e.Diagnosis, "3 "+MsgBudget, "the budget's reason on the three workers")
}
