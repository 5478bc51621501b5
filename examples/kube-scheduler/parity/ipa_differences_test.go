package parity

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// Difference (InterPodAffinity): matchLabelKeys and mismatchLabelKeys.
// Upstream's plugin ignores them: the API server merges them into the
// labelSelector when it creates the pod (MatchLabelKeysInPodAffinity,
// GA), so a pod given to upstream's plugin directly, as a simulator
// would, is scheduled as if they were absent. schedkit merges them when
// it parses the pod (idempotently: a pod read back from the API server
// gets the same selector), so a pod as written and as stored schedule
// alike. The parity suite runs schedkit on both forms against upstream
// on the stored form.
func TestDifferenceIPAMatchLabelKeysAtParse(t *testing.T) {
	ctx := context.Background()
	u, err := NewSpreadUpstream(ctx)
	require.NoError(t, err)
	pl, err := u.IPAPlugin(ctx, nil)
	require.NoError(t, err)
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{v1.LabelHostname: "n1"}}}
	bound := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-v1", Namespace: "default", Labels: map[string]string{"app": "web", "version": "v1"}},
		Spec: v1.PodSpec{NodeName: "n1"}}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-v2", Namespace: "default", Labels: map[string]string{"app": "web", "version": "v2"}},
		Spec: v1.PodSpec{Affinity: &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey:    v1.LabelHostname,
			LabelSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MatchLabelKeys: []string{"version"},
		}}}}}}
	u.Load([]*v1.Node{n}, []*v1.Pod{bound})
	require.NoError(t, u.LoadNamespaces(nil))

	// Upstream on the pod as written: the v1 pod matches app=web.
	raw, err := u.Filter(ctx, pl, pod)
	require.NoError(t, err)
	assert.Equal(t, Verdict{Code: fwk.Unschedulable, Reasons: []string{"node(s) didn't match pod anti-affinity rules"}}, raw.Verdicts[0])
	// Upstream on the pod as the API server stores it: app=web AND
	// version In (v2) does not match the v1 pod.
	stored, err := u.Filter(ctx, pl, Admitted(pod))
	require.NoError(t, err)
	assert.Equal(t, Verdict{Code: fwk.Success}, stored.Verdicts[0])

	// schedkit on either form: as stored.
	snap, err := ourSnapshot(Case{Nodes: []*v1.Node{n}, Bound: []*v1.Pod{bound}})
	require.NoError(t, err)
	f, err := framework.NewInterPodAffinity(score.InterPodAffinityArgs{})
	require.NoError(t, err)
	for _, p := range []*v1.Pod{pod, Admitted(pod)} {
		pre, err := framework.RunPreFilter(f, snapshot.MustPodInfo(p), snap)
		require.NoError(t, err)
		assert.Equal(t, Verdict{Code: fwk.Success}, ourVerdicts(pre, []*snapshot.NodeInfo{snap.Get("n1")}).Verdicts[0])
	}
}

// Difference (PodTopologySpread and InterPodAffinity): a pod whose
// spread constraints or pod (anti-)affinity terms the API server's
// validation rejects (here a selector operator "Bogus") cannot exist in a
// cluster, but a simulator can be handed one. Upstream's plugins meet it
// only at PreFilter: PodTopologySpread fails the cycle with an error,
// InterPodAffinity rejects every node UnschedulableAndUnresolvable
// ("parsing pod: ... is not a valid label selector operator"); as an
// existing pod it is accepted into the scheduler's cache. schedkit rejects it when it parses
// it (snapshot.NewPodInfo, the Cache, the Ledger, Forks), naming the pod
// and the field path the API server names, before any state changes
// (TestParseAgreesWithAPIValidation checks the verdicts and paths against
// the API server's own validation on generated pods).
func TestDifferenceInvalidPodRejectedAtParse(t *testing.T) {
	ctx := context.Background()
	u, err := NewSpreadUpstream(ctx)
	require.NoError(t, err)
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{v1.LabelHostname: "n1"}}}
	u.Load([]*v1.Node{n}, nil)
	require.NoError(t, u.LoadNamespaces(nil))
	bogus := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	spread := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "spread", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{TopologySpreadConstraints: []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: bogus}}}}
	anti := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "anti", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{Affinity: &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{TopologyKey: v1.LabelHostname, LabelSelector: bogus}}}}}}

	// Upstream: an error at PreFilter.
	spl, err := u.SpreadPlugin(ctx, nil)
	require.NoError(t, err)
	_, err = u.Filter(ctx, spl, spread)
	require.ErrorContains(t, err, `"Bogus" is not a valid label selector operator`)
	ipl, err := u.IPAPlugin(ctx, nil)
	require.NoError(t, err)
	res, err := u.Filter(ctx, ipl, anti)
	require.NoError(t, err)
	assert.Equal(t, fwk.UnschedulableAndUnresolvable, res.Verdicts[0].Code)
	require.Len(t, res.Verdicts[0].Reasons, 1)
	assert.Contains(t, res.Verdicts[0].Reasons[0], `parsing pod: `)
	assert.Contains(t, res.Verdicts[0].Reasons[0], `"Bogus" is not a valid label selector operator`)

	// schedkit: an error when the pod is parsed, naming it and the field
	// path the API server's validation names.
	for _, c := range []struct {
		pod   *v1.Pod
		field string
	}{
		{spread, "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator"},
		{anti, "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator"},
	} {
		upErrs, err := APISchedulingErrors(c.pod)
		require.NoError(t, err)
		require.Len(t, upErrs, 1)
		assert.Equal(t, c.field, upErrs[0].Field)
		_, err = snapshot.NewPodInfo(c.pod)
		require.ErrorIs(t, err, snapshot.ErrInvalidObject)
		assert.ErrorContains(t, err, "pod default/"+c.pod.Name+": "+c.field)
		bound := c.pod.DeepCopy()
		bound.Spec.NodeName = "n1"
		cache := snapshot.NewCache()
		require.NoError(t, cache.AddNode(n))
		require.ErrorIs(t, cache.AddPod(bound), snapshot.ErrInvalidObject)
		assert.Equal(t, 0, cache.NumPods(), "nothing changed")
	}
}
