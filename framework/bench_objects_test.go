package framework

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// BenchmarkScheduleDeployments is BenchmarkSchedule's replicas mix (20
// pod specs; the first 2,000 of its 10,000 pods) with every pod owned by the ReplicaSet of its
// spec, the 20 ReplicaSets fed to the Cache the base snapshot comes
// from: the default profile's PodTopologySpread spreads every pod by the
// system defaults (the equivalence cache serves none), so this is the
// cost of upstream's default spreading for Deployment pods, next to
// BenchmarkSchedule's for pods no workload selects.
func BenchmarkScheduleDeployments(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			c := snapshot.NewCache()
			for _, node := range genCluster(1, n) {
				node.Labels[v1.LabelHostname] = node.Name // as the kubelet sets it
				if err := c.AddNode(node); err != nil {
					b.Fatal(err)
				}
			}
			pods := replicaPods(3, 20, benchPods)[:deploymentPods]
			for _, p := range pods {
				// replicaPods copies one of 20 specs: one ReplicaSet per spec.
				app := fmt.Sprintf("app-%x", hashSpec(p.Spec.String()))
				if p.Labels == nil {
					p.Labels = map[string]string{}
				}
				p.Labels["app"] = app
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app, Controller: new(true)}}
				if c.ReplicaSet(p.Namespace, app) == nil {
					rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: app},
						Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
					if err := c.AddObject(rs); err != nil {
						b.Fatal(err)
					}
				}
			}
			base := c.Snapshot()
			pis := podInfos(pods)
			b.ReportAllocs()
			var m meter
			ops := 0
			m.start()
			for b.Loop() {
				s := mustNew(b, Config{Seed: 1})
				f := base.Fork()
				for _, pi := range pis {
					d, err := s.SchedulePod(f, pi)
					if err != nil {
						b.Fatal(err)
					}
					if d.Scheduled() {
						if err := f.AddPodInfo(pi, d.Node); err != nil {
							b.Fatal(err)
						}
					}
				}
				ops++
			}
			m.stop()
			b.ReportMetric(float64(ops*deploymentPods)/m.cpu.Seconds(), "pods/cpu-s")
			b.ReportMetric(float64(ops*deploymentPods)/b.Elapsed().Seconds(), "pods/s")
		})
	}
}

// deploymentPods is the number of pods BenchmarkScheduleDeployments
// schedules per iteration.
const deploymentPods = 2000

// hashSpec is FNV-1a of a pod spec's text (replicaPods' copies share it).
func hashSpec(s string) uint32 {
	h := uint32(2166136261)
	for j := 0; j < len(s); j++ {
		h = (h ^ uint32(s[j])) * 16777619
	}
	return h
}

// TestSpreadSkipAllocatesNothing: deciding that PodTopologySpread's
// system defaults skip a pod that no Service or controller selects — the
// check every pod of the default profile pays before the equivalence
// cache — allocates nothing, in the filter and in the scorer.
func TestSpreadSkipAllocatesNothing(t *testing.T) {
	c := snapshot.NewCache()
	for _, n := range genCluster(1, 10) {
		if err := c.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	snap := c.Snapshot()
	pi := snapshot.MustPodInfo(mkPod("p").Label("app", "web").Req("cpu", "1").Obj())
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.localFor(pi, snap) {
		t.Fatal("the default profile does not skip an unselected pod")
	}
	if a := testing.AllocsPerRun(100, func() { s.localFor(pi, snap) }); a != 0 {
		t.Fatalf("localFor allocates %v times", a)
	}
}
