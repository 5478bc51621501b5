package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/score"
)

// starvationPlan unrolls StarvationIndependent/10Nodes_100Cloggers: a
// churn of pods labelled service=target, 100 high-priority cloggers
// whose required affinity and anti-affinity to those pods on the same
// host can never both hold, then 50 victims in a
// start/stopCollectingMetrics window.
func starvationPlan(t *testing.T) *plan {
	t.Helper()
	return workloadPlan(t, "StarvationIndependent", "10Nodes_100Cloggers")
}

// TestMeasuredCountsWindow: the victims of StarvationIndependent are
// measured by a start/stopCollectingMetrics window, not collectMetrics;
// the MEAS column counted only the latter and showed 0.
func TestMeasuredCountsWindow(t *testing.T) {
	p := starvationPlan(t)
	assert.Equal(t, 150, p.Pods)
	assert.Equal(t, 50, p.Measured)
}

// TestStarvationRequeueByHint runs StarvationIndependent/10Nodes_100Cloggers
// through schedkit: every victim is bound and measured, the 100 cloggers
// stay pending, and the victims' binds do not move the cloggers (they
// match none of the cloggers' affinity terms; upstream's InterPodAffinity
// hint says QueueSkip), so the cycles number about 100 + 50 plus the
// cloggers' retries after churn pods (which match) bind. Before, SK moved
// every pod InterPodAffinity had rejected after every bind: each victim
// cost 100 clogger retries ahead of it (priority 1000 over 0), over 5,000
// cycles.
func TestStarvationRequeueByHint(t *testing.T) {
	p := starvationPlan(t)
	res := runSchedkit(context.Background(), p, nil)
	require.Empty(t, res.Err)
	assert.Equal(t, 50, res.Scheduled)
	assert.Equal(t, 100, res.Pending)
	assert.Equal(t, 50, res.MeasuredPods)
	assert.Less(t, res.Attempts, 1000, "scheduling cycles")
}

// TestLimitStopsASide: -limit stops a side's run and says so; what it
// did until then is kept.
func TestLimitStopsASide(t *testing.T) {
	p := starvationPlan(t)
	res := limited(context.Background(), time.Millisecond, func(ctx context.Context) sideResult {
		time.Sleep(5 * time.Millisecond) // the deadline passes before the first step
		return runSchedkit(ctx, p, nil)
	})
	assert.Contains(t, res.Err, "stopped by -limit 1ms")
	assert.True(t, res.Ran)
	assert.Equal(t, 0, res.Scheduled)
	res = limited(context.Background(), time.Minute, func(ctx context.Context) sideResult { return sideResult{Ran: true, Scheduled: 3} })
	assert.Empty(t, res.Err)
	assert.Equal(t, 3, res.Scheduled)
}

func TestBackoffDuration(t *testing.T) {
	for attempts, want := range map[int]time.Duration{0: 0, 1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second,
		4: 8 * time.Second, 5: 10 * time.Second, 9: 10 * time.Second, 100: 10 * time.Second} {
		assert.Equal(t, want, backoffDuration(attempts), "attempts %d", attempts)
	}
}

// TestRequeueOnBind checks the hints against upstream's rules on the
// suite's own pods and on spread constraints.
func TestRequeueOnBind(t *testing.T) {
	p := starvationPlan(t)
	var clogger, churn, victim *v1.Pod
	for _, s := range p.Steps {
		for _, pod := range s.Pods {
			switch {
			case clogger == nil && pod.Spec.Affinity != nil:
				clogger = pod
			case clogger != nil && victim == nil && pod.Spec.Affinity == nil:
				victim = pod
			}
		}
		if s.Churn != nil {
			obj, err := s.Churn.next(0)
			require.NoError(t, err)
			churn = obj.(*v1.Pod)
		}
	}
	require.NotNil(t, clogger)
	require.NotNil(t, churn)
	require.NotNil(t, victim)
	ipa := []string{score.InterPodAffinityName}
	assert.True(t, requeueOnBind(clogger, ipa, churn, nil), "a service=target pod matches both affinity terms")
	assert.False(t, requeueOnBind(clogger, ipa, victim, nil), "a victim matches none")
	assert.False(t, requeueOnBind(clogger, []string{"NodeResourcesFit"}, churn, nil), "only the rejecting plugins' hints count")
	other := churn.DeepCopy()
	other.Namespace = "elsewhere"
	assert.False(t, requeueOnBind(clogger, ipa, other, nil), "outside the terms' namespaces")

	antiOnly := victim.DeepCopy()
	antiOnly.Spec.Affinity = &v1.Affinity{PodAntiAffinity: clogger.Spec.Affinity.PodAntiAffinity}
	assert.False(t, requeueOnBind(antiOnly, ipa, churn, nil), "an add never helps anti-affinity")

	bySelector := victim.DeepCopy()
	bySelector.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"service": "target"}},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
		TopologyKey:       v1.LabelHostname,
	}}}}
	assert.True(t, requeueOnBind(bySelector, ipa, other, map[string]map[string]string{"elsewhere": {"team": "a"}}))
	assert.False(t, requeueOnBind(bySelector, ipa, other, map[string]map[string]string{"elsewhere": {"team": "b"}}))

	pts := []string{score.PodTopologySpreadName}
	spread := victim.DeepCopy()
	spread.Labels = map[string]string{"app": "web", "rev": "1"}
	spread.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, MatchLabelKeys: []string{"rev"},
	}}
	same := spread.DeepCopy()
	same.Spec.TopologySpreadConstraints = nil
	assert.True(t, requeueOnBind(spread, pts, same, nil))
	same.Labels["rev"] = "2"
	assert.False(t, requeueOnBind(spread, pts, same, nil), "matchLabelKeys: another revision")
	same.Labels["rev"] = "1"
	same.Namespace = "elsewhere"
	assert.False(t, requeueOnBind(spread, pts, same, nil), "another namespace")
	assert.True(t, requeueOnBind(victim, pts, churn, nil), "system default spreading: moved on every add in the namespace")
}
