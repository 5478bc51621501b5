package sidebyside

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/examples/kube-scheduler/parity"
)

// scoreInputs: n realistic nodes (the parity generator's: extended
// resources, taints, images, some over-committed) with about 4 bound pods
// each, and one pending pod requesting cpu and memory.
func scoreInputs(n int) (nodes []*v1.Node, bound []*v1.Pod, pending *v1.Pod) {
	cfg := parity.DefaultConfig()
	cfg.PStatus = 0 // the inputs as before resize status joined the generator
	g := parity.NewGen(42, cfg)
	for i := 0; i < n; i++ {
		nodes = append(nodes, g.Node(fmt.Sprintf("node-%05d", i)))
	}
	few := nodes[:min(8, len(nodes))]
	for i, nd := range nodes {
		for j := 0; j < 1+i%7; j++ {
			p := g.Pod(fmt.Sprintf("b-%d-%d", i, j), few)
			p.Spec.NodeName = nd.Name
			bound = append(bound, p)
		}
	}
	pending = simplePod(0, v1.DefaultSchedulerName)
	return nodes, bound, pending
}

// throughputInputs: n plain schedulable nodes (8-32 cores) and m pods of
// 100m-1 cpu / 128Mi-1Gi, all of which fit.
func throughputInputs(n, m int, schedulerName string) ([]*v1.Node, []*v1.Pod) {
	var nodes []*v1.Node
	for i := 0; i < n; i++ {
		rl := v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(fmt.Sprint(8 * (1 + i%4))),
			v1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", 32*(1+i%4))),
			v1.ResourcePods:   resource.MustParse("110"),
		}
		name := fmt.Sprintf("node-%05d", i)
		nodes = append(nodes, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{v1.LabelHostname: name, v1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%3)}},
			Status:     v1.NodeStatus{Allocatable: rl, Capacity: rl},
		})
	}
	var pods []*v1.Pod
	for i := 0; i < m; i++ {
		pods = append(pods, simplePod(i, schedulerName))
	}
	return nodes, pods
}

func simplePod(i int, schedulerName string) *v1.Pod {
	name := fmt.Sprintf("pod-%05d", i)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{SchedulerName: schedulerName, Containers: []v1.Container{{
			Name: "c", Image: "registry.k8s.io/pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse(fmt.Sprintf("%dm", 100+225*(i%5))),
				v1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", 128*(1+i%8))),
			}},
		}}},
	}
}
