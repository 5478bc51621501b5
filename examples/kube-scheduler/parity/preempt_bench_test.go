package parity

import (
	"context"
	"fmt"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
)

// preemptionBasic is scheduler_perf's PreemptionBasic shape: n nodes of
// 4 cpu / 32Gi / 110 pods, each with four 900m / 500Mi pods of priority
// 0, and the high-priority pod (3000m / 500Mi, priority 10).
func preemptionBasicObjects(n int) (nodes []*v1.Node, pods []*v1.Pod, high *v1.Pod) {
	req := func(cpu string) v1.ResourceList {
		return v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("500Mi")}
	}
	for i := range n {
		nd := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i)}}
		nd.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("32Gi"), v1.ResourcePods: resource.MustParse("110")}
		nd.Status.Capacity = nd.Status.Allocatable
		nodes = append(nodes, nd)
		for j := range 4 {
			name := fmt.Sprintf("low-%d-%d", i, j)
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)}}
			p.Spec.NodeName = nd.Name
			p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: req("900m")}}}
			pods = append(pods, p)
		}
	}
	prio := int32(10)
	high = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "high", Namespace: "default", UID: "high"}}
	high.Spec.Priority = &prio
	high.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: req("3000m")}}}
	return nodes, pods, high
}

func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkPreemptionBasicSideBySide evaluates one high-priority pod of
// PreemptionBasic per op, upstream (its filters over every node, then
// DefaultPreemption's eligibility, dry run and choice, without the API
// calls that actuate) and schedkit (SchedulePod, then Preempt), both with
// upstream's default candidate sampling (10 %, at least 100 nodes) and
// schedkit also over every node. Neither side applies the result, so
// every op sees the full cluster. cpu-ns/op is the process's CPU time
// (the machine is shared; wall time overstates the work).
func BenchmarkPreemptionBasicSideBySide(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{500, 5000} {
		nodes, pods, high := preemptionBasicObjects(n)
		b.Run(fmt.Sprintf("nodes=%d/upstream", n), func(b *testing.B) {
			u, err := NewPreemptUpstream(ctx)
			if err != nil {
				b.Fatal(err)
			}
			u.Sample = true
			if err := u.Load(nodes, pods, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu0 := cpuNanos()
			for b.Loop() {
				if res := u.Preempt(ctx, high, nil); res.Node == "" || len(res.Victims) != 3 {
					b.Fatalf("upstream: %+v", res)
				}
			}
			b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
		})
		c := snapshot.NewCache()
		for _, nd := range nodes {
			if err := c.AddNode(nd); err != nil {
				b.Fatal(err)
			}
		}
		for _, p := range pods {
			if err := c.AddPod(p); err != nil {
				b.Fatal(err)
			}
		}
		sn, pi := c.Snapshot(), snapshot.MustPodInfo(high)
		for _, mode := range []struct {
			name string
			opts framework.PreemptOptions
		}{{"schedkit-sampled", framework.PreemptOptions{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}}, {"schedkit-every", framework.PreemptOptions{}}} {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, mode.name), func(b *testing.B) {
				s, err := framework.New(framework.Config{})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				cpu0 := cpuNanos()
				for b.Loop() {
					if d, err := s.SchedulePod(sn, pi); err != nil || d.Scheduled() {
						b.Fatal("cycle", err)
					}
					if res, err := s.Preempt(sn, pi, mode.opts); err != nil || len(res.Victims) != 3 {
						b.Fatalf("schedkit: %+v %v", res, err)
					}
				}
				b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
