package framework

import (
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// genCluster makes a seeded cluster: nodes of a few shapes, a third of them
// in each zone, some tainted, a few unschedulable; identical shapes make
// ties common.
func genCluster(seed uint64, numNodes int) []*v1.Node {
	r := rand.New(rand.NewPCG(seed, 1))
	shapes := [][2]string{{"4", "16Gi"}, {"8", "32Gi"}, {"16", "64Gi"}, {"32", "128Gi"}}
	nodes := make([]*v1.Node, numNodes)
	for i := range nodes {
		s := shapes[r.IntN(len(shapes))]
		w := mkNode(fmt.Sprintf("node-%05d", i)).
			Capacity("cpu", s[0], "memory", s[1], "pods", "110", "ephemeral-storage", "100Gi").
			Label("topology.kubernetes.io/zone", []string{"a", "b", "c"}[i%3])
		if r.IntN(10) == 0 {
			w.Taint("dedicated", "gpu", v1.TaintEffectNoSchedule)
		}
		if r.IntN(50) == 0 {
			w.Unschedulable()
		}
		if r.IntN(4) == 0 {
			w.Image(500<<20, "registry.example/app:v1")
		}
		nodes[i] = w.Obj()
	}
	return nodes
}

// genPods makes n seeded pending pods: mostly small requests, some large,
// some tolerating the taint, some with a zone selector, a few with a host
// port, priorities 0 or 100.
func genPods(seed uint64, n int) []*v1.Pod {
	r := rand.New(rand.NewPCG(seed, 2))
	cpus := []string{"100m", "250m", "500m", "1", "2", "4"}
	mems := []string{"128Mi", "512Mi", "1Gi", "2Gi", "8Gi"}
	pods := make([]*v1.Pod, n)
	for i := range pods {
		w := mkPod(fmt.Sprintf("pod-%05d", i)).Req("cpu", cpus[r.IntN(len(cpus))], "memory", mems[r.IntN(len(mems))]).
			Image("registry.example/app:v1")
		if r.IntN(8) == 0 {
			w.Toleration("dedicated", v1.TolerationOpEqual, "gpu", v1.TaintEffectNoSchedule)
		}
		if r.IntN(6) == 0 {
			w.NodeSelector("topology.kubernetes.io/zone", []string{"a", "b", "c"}[r.IntN(3)])
		}
		if r.IntN(20) == 0 {
			w.HostPort("", 8080)
		}
		if r.IntN(5) == 0 {
			w.Priority(100)
		}
		pods[i] = w.Obj()
	}
	return pods
}

func podInfos(pods []*v1.Pod) []*snapshot.PodInfo {
	out := make([]*snapshot.PodInfo, len(pods))
	for i, p := range pods {
		out[i] = snapshot.MustPodInfo(p)
	}
	return out
}
