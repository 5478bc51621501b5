package replay_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestRunExplainWithSpread: Explain's filter account prepares a
// PodTopologySpread filter over the cluster (it needs it: PreFilter alone
// is an error) and names its reason.
func TestRunExplainWithSpread(t *testing.T) {
	in := &replay.Input{Nodes: []*v1.Node{
		node("node-a", v1.LabelHostname, "node-a"), node("node-b", v1.LabelHostname, "node-b"),
	}}
	for i := 1; i <= 4; i++ {
		p := snapshottest.MakePod(fmt.Sprintf("job-%d", i)).Label("app", "web").Req("cpu", "100m").Obj()
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		}}
		in.Arrivals = append(in.Arrivals, arrival(t, p))
	}
	spread, err := framework.NewPodTopologySpread(score.PodTopologySpreadArgs{})
	require.NoError(t, err)
	cfg := replay.Config{Filters: append(framework.DefaultFilters(), spread), Explain: "job-4"}
	rep, err := replay.Run(context.Background(), in, cfg)
	require.NoError(t, err)
	per := map[string]int{}
	for _, p := range rep.Placements {
		per[p.Node]++
	}
	assert.Equal(t, map[string]int{"node-a": 2, "node-b": 2}, per)
	// Before job-4: one node has 2 replicas, the other 1 (min 1): the
	// first fails 2 + 1 − 1 = 2 > maxSkew 1.
	assert.Equal(t, "1 of 2 nodes filtered out: 1 node(s) didn't match pod topology spread constraints", rep.Explain.Filtered)
}
