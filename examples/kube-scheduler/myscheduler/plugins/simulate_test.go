package plugins

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/internal/shareddata"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot/load"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestSimulateOnExportedCluster runs the two plugins through the library
// on a real cluster's exported objects (the OpenShift Insights sample: 3
// tainted masters, 3 workers of 3500m), before deploying anything: the
// workers get license budgets of 3 and worker-b is preferred; the
// sample's 19 pods are scheduled anew, then 10 licensed pods. Expected:
// the preferred worker takes licensed pods up to its budget, no node goes
// over its budget, and the 10th licensed pod (9 licenses in all) is
// unschedulable with the budget's reason on every worker.
func TestSimulateOnExportedCluster(t *testing.T) {
	dir := shareddata.Dir(t, "openshift-insights-archive-sample")
	objs, err := load.Files(dir)
	require.NoError(t, err)
	require.Len(t, objs.Nodes, 6)

	ledger := reserve.New()
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
		require.NoError(t, ledger.AddNode(n))
	}
	require.NotEmpty(t, preferred)

	sched, err := framework.New(profile(t))
	require.NoError(t, err)
	loop := framework.NewLoop(sched, ledger, nil)
	for _, p := range objs.Pods {
		p = p.DeepCopy()
		p.Spec.NodeName = "" // schedule the cluster's pods anew
		require.NoError(t, loop.Add(p))
	}
	const nLicensed = 10
	for i := range nLicensed {
		require.NoError(t, loop.Add(snapshottest.MakePod(fmt.Sprintf("licensed-%02d", i)).Namespace("apps").
			Label(LicensedLabel, "true").Req("cpu", "100m", "memory", "128Mi").Obj()))
	}
	attempts, err := loop.ScheduleAll(context.Background())
	require.NoError(t, err)

	licensedOn := map[string]int{}
	var unschedulable []framework.Attempt
	placed := 0
	for _, a := range attempts {
		if !a.Bound() {
			unschedulable = append(unschedulable, a)
			continue
		}
		placed++
		if licensed(a.Pod.Pod()) {
			licensedOn[a.Node]++
		}
	}
	t.Logf("placed %d of %d pods; licensed pods per node: %v", placed, len(attempts), licensedOn)
	assert.Equal(t, 3, licensedOn[preferred], "the preferred worker takes licensed pods up to its budget")
	total := 0
	for node, n := range licensedOn {
		assert.LessOrEqual(t, n, 3, "budget of %s", node)
		assert.Contains(t, node, "-worker-", "licensed pods only where a budget is set (masters are tainted)")
		total += n
	}
	assert.Equal(t, 9, total, "9 licenses in the cluster")

	var last *framework.Attempt
	for i := range unschedulable {
		if licensed(unschedulable[i].Pod.Pod()) {
			require.Nil(t, last, "one licensed pod left out")
			last = &unschedulable[i]
		}
	}
	require.NotNil(t, last, "the 10th licensed pod is unschedulable")
	msg := last.Diagnosis.Message()
	t.Logf("%s: %s", last.Pod.Key(), msg)
	assert.Contains(t, msg, "3 "+MsgBudget, "the budget's reason on the three workers: %s", msg)
	for _, a := range unschedulable {
		if !licensed(a.Pod.Pod()) {
			t.Logf("sample pod left out: %s: %s", a.Pod.Key(), a.Diagnosis.Message())
		}
	}
}
