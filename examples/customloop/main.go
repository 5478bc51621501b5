// Command customloop is a complete custom scheduler over schedkit: a
// reserve.Ledger holds the cluster (a snapshot.Cache fed informer events)
// and the scheduler's holds; a framework.Loop pops pending pods by
// priority, runs upstream's filters and default scores, reserves the
// chosen node and binds. It prints one line per decision for a small
// built-in cluster, then the breakdown of one decision.
//
//	go run ./examples/customloop
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "customloop:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	// The cluster, as informer events would deliver it.
	ledger := reserve.New()
	gpu := node("gpu-1", "32", "128Gi", "nvidia.com/gpu", "4")
	gpu.Spec.Taints = []v1.Taint{{Key: "nvidia.com/gpu", Effect: v1.TaintEffectNoSchedule}}
	old := node("old-1", "4", "16Gi")
	old.Spec.Unschedulable = true // cordoned
	for _, n := range []*v1.Node{node("cpu-1", "8", "32Gi"), node("cpu-2", "8", "32Gi"), node("cpu-3", "16", "64Gi"), gpu, old} {
		if err := ledger.AddNode(n); err != nil {
			return err
		}
	}
	db := pod("db-0", 0, "12", "48Gi")
	db.Spec.NodeName = "cpu-3" // already running
	if err := ledger.AddPod(db); err != nil {
		return err
	}

	sched, err := framework.New(framework.Config{Seed: 1, Breakdown: true})
	if err != nil {
		return err
	}
	// Bind: a real scheduler POSTs a Binding and its informer later reports
	// the pod bound; here we report it to the ledger directly.
	bind := func(_ context.Context, d framework.Decision) error {
		p := d.Pod.Pod().DeepCopy()
		p.Spec.NodeName = d.Node
		return ledger.AddPod(p)
	}
	loop := framework.NewLoop(sched, ledger, bind)

	train := pod("train-0", 1000, "8", "32Gi", "nvidia.com/gpu", "2")
	train.Spec.Tolerations = []v1.Toleration{{Key: "nvidia.com/gpu", Operator: v1.TolerationOpExists}}
	pinned := pod("pinned-0", 0, "1", "1Gi")
	pinned.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"cpu-9"}}, // no such node
		}}},
	}}}
	for _, p := range []*v1.Pod{
		pod("web-0", 0, "2", "4Gi"), pod("web-1", 0, "2", "4Gi"), pod("web-2", 0, "2", "4Gi"),
		train, pod("batch-0", 100, "6", "8Gi"), pinned, pod("huge-0", 0, "64", "1Gi"),
	} {
		if err := loop.Add(p); err != nil {
			return err
		}
	}

	attempts, err := loop.ScheduleAll(ctx)
	if err != nil {
		return err
	}
	var explained *framework.Attempt
	for i, a := range attempts {
		name := a.Pod.Key().Name
		switch {
		case a.Bound():
			fmt.Fprintf(w, "%-9s -> %-6s total %3d  (%d feasible of %d filtered)\n", name, a.Node, a.Total, a.Feasible, a.Evaluated)
			if explained == nil {
				explained = &attempts[i]
			}
		case a.BindErr != nil:
			fmt.Fprintf(w, "%-9s bind to %s failed: %v\n", name, a.Node, a.BindErr)
		case a.Skipped != nil: // being deleted, or already placed: no cycle
			fmt.Fprintf(w, "%-9s skipped: %v\n", name, a.Skipped)
		default:
			fmt.Fprintf(w, "%-9s unschedulable: %s\n", name, a.Diagnosis.Message())
		}
	}
	if explained != nil {
		fmt.Fprintf(w, "\nwhy %s went to %s:\n%s", explained.Pod.Key().Name, explained.Node, explained.Breakdown)
	}
	return nil
}

// node returns a Ready node with the given capacity (name/quantity pairs
// after cpu and memory) and room for 110 pods.
func node(name, cpu, mem string, extra ...string) *v1.Node {
	alloc := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem), v1.ResourcePods: resource.MustParse("110")}
	for i := 0; i+1 < len(extra); i += 2 {
		alloc[v1.ResourceName(extra[i])] = resource.MustParse(extra[i+1])
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status:     v1.NodeStatus{Capacity: alloc, Allocatable: alloc},
	}
}

// pod returns a pending pod with one container requesting cpu, memory and
// the extra name/quantity pairs.
func pod(name string, priority int32, cpu, mem string, extra ...string) *v1.Pod {
	req := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
	for i := 0; i+1 < len(extra); i += 2 {
		req[v1.ResourceName(extra[i])] = resource.MustParse(extra[i+1])
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.PodSpec{Priority: &priority, Containers: []v1.Container{
			{Name: "main", Image: "registry.example/" + name, Resources: v1.ResourceRequirements{Requests: req}},
		}},
	}
}
