package framework

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// TestPreemptReleasesAffinityTables: a preemptor with required
// anti-affinity makes the dry run prepare InterPodAffinity afresh for
// every node it re-checks (the filter depends on the pods the dry run
// removes), and the run hands every such table back to the pool when
// the check is over, and the original cluster's at the end. Reusing a
// table too early would show as another pod's counts: the same
// Scheduler runs the preemption, another preemptor's (different terms),
// and the first again, and must give the first answer each time.
//
// n1 and n2 (1000m each) are full: n1 with x1 (app=db, priority 0,
// 1000m), n2 with x2 (priority 0, 900m) and h2 (app=db, priority 100,
// 100m). The preemptor p (priority 50, 500m) must not share a hostname
// with app=db. n2: evicting x2 frees the cpu, but h2 (db, higher
// priority) stays, so the anti-affinity fails — no candidate. n1:
// evicting x1 frees 1000m and removes the only db pod: victims [x1].
// The second preemptor q (priority 50, 500m) requires affinity to
// app=db per hostname: n1 (evict x1 and db is gone) fails, n2 (evict
// x2, h2 stays) fits: victims [x2].
func TestPreemptReleasesAffinityTables(t *testing.T) {
	n1 := mkNode("n1").Label(v1.LabelHostname, "n1").Allocatable("cpu", "1000m", "pods", "110").Obj()
	n2 := mkNode("n2").Label(v1.LabelHostname, "n2").Allocatable("cpu", "1000m", "pods", "110").Obj()
	x1 := bound("x1", "n1", "1000m", 0, 1)
	x1.Labels = map[string]string{"app": "db"}
	x2 := bound("x2", "n2", "900m", 0, 1)
	h2 := bound("h2", "n2", "100m", 100, 1)
	h2.Labels = map[string]string{"app": "db"}
	base := snap(t, []*v1.Node{n1, n2}, x1, x2, h2)
	term := v1.PodAffinityTerm{TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}
	p := mkPod("p").Req("cpu", "500m").Priority(50).Obj()
	p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}
	q := mkPod("q").Req("cpu", "500m").Priority(50).Obj()
	q.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}

	s := newSched(t)
	preempt := func(pod *v1.Pod) Preemption {
		res, err := s.Preempt(base, snapshot.MustPodInfo(pod), PreemptOptions{})
		require.NoError(t, err)
		return res
	}
	first := preempt(p)
	require.True(t, first.Found(), first.Message)
	assert.Equal(t, "n1", first.Node)
	assert.Equal(t, []string{"x1"}, keys(first.Victims))
	for range 3 {
		other := preempt(q)
		require.True(t, other.Found(), other.Message)
		assert.Equal(t, "n2", other.Node)
		assert.Equal(t, []string{"x2"}, keys(other.Victims))
		again := preempt(p)
		assert.Equal(t, first.Node, again.Node)
		assert.Equal(t, keys(first.Victims), keys(again.Victims))
		assert.Equal(t, first.Message, again.Message)
	}
}
