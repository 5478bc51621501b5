package kubescheduler

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/util/workqueue"
	fwk "k8s.io/kube-scheduler/framework"
)

// The upstream interfaces are large; these fakes implement the few methods
// the adapters call and embed the interface for the rest (calling any other
// method panics, which a test would notice). The real upstream types are
// exercised by the e2e and parity tests in examples/kube-scheduler.

type fakePodInfo struct {
	fwk.PodInfo
	pod *v1.Pod
}

func (p fakePodInfo) GetPod() *v1.Pod { return p.pod }

type fakeNodeInfo struct {
	fwk.NodeInfo
	node *v1.Node
	pods []fwk.PodInfo
	gen  int64
}

func (n *fakeNodeInfo) Node() *v1.Node         { return n.node }
func (n *fakeNodeInfo) GetPods() []fwk.PodInfo { return n.pods }
func (n *fakeNodeInfo) GetGeneration() int64   { return n.gen }

// addPod binds p to the node (spec.nodeName), as upstream's cache does
// for an assumed pod, and bumps the generation.
func (n *fakeNodeInfo) addPod(p *v1.Pod) {
	p.Spec.NodeName = n.node.Name
	n.pods = append(n.pods, fakePodInfo{pod: p})
	n.gen++
}
func (n *fakeNodeInfo) clone() *fakeNodeInfo {
	c := *n
	c.pods = append([]fwk.PodInfo(nil), n.pods...)
	return &c
}
func (n *fakeNodeInfo) String() string                   { return n.node.Name }
func newNodeInfo(node *v1.Node, gen int64) *fakeNodeInfo { return &fakeNodeInfo{node: node, gen: gen} }

type fakeCycleState struct {
	fwk.CycleState
	m map[fwk.StateKey]fwk.StateData
}

func newCycleState() *fakeCycleState { return &fakeCycleState{m: map[fwk.StateKey]fwk.StateData{}} }

func (c *fakeCycleState) Read(k fwk.StateKey) (fwk.StateData, error) {
	if d, ok := c.m[k]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%s: %w", k, fwk.ErrNotFound)
}
func (c *fakeCycleState) Write(k fwk.StateKey, d fwk.StateData) { c.m[k] = d }

type fakeLister struct {
	fwk.SharedLister
	fwk.NodeInfoLister
	nodes []fwk.NodeInfo
}

func (l *fakeLister) NodeInfos() fwk.NodeInfoLister { return l }
func (l *fakeLister) List() ([]fwk.NodeInfo, error) { return l.nodes, nil }
func (l *fakeLister) Get(name string) (fwk.NodeInfo, error) {
	for _, n := range l.nodes {
		if n.Node().Name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("node %q not found", name)
}

type fakeHandle struct {
	fwk.Handle
	lister    *fakeLister
	informers informers.SharedInformerFactory // nil: none
	// noParallelizer: Parallelizer returns nil; untils counts the calls
	// of the one it returns.
	noParallelizer bool
	untils         atomic.Int64
	leaveOut       int // > 0: the Parallelizer leaves piece leaveOut out, as ParallelizeUntil leaves a recovered panic's
}

// Parallelizer runs each piece on its own goroutine, all at once, and
// stops handing out pieces when the context is done, as upstream's does
// (workqueue.ParallelizeUntil). nil with noParallelizer.
func (h *fakeHandle) Parallelizer() fwk.Parallelizer {
	if h.noParallelizer {
		return nil
	}
	return &fakeParallelizer{h: h}
}

type fakeParallelizer struct{ h *fakeHandle }

func (p *fakeParallelizer) Until(ctx context.Context, pieces int, work workqueue.DoWorkPieceFunc, _ string) {
	p.h.untils.Add(1)
	var wg sync.WaitGroup
	for i := range pieces {
		if ctx.Err() != nil {
			break
		}
		if p.h.leaveOut == 0 || i != p.h.leaveOut {
			wg.Go(func() { work(i) })
		}
	}
	wg.Wait()
}

func (h *fakeHandle) SnapshotSharedLister() fwk.SharedLister                 { return h.lister }
func (h *fakeHandle) SharedInformerFactory() informers.SharedInformerFactory { return h.informers }

func node(name, cpu, mem string) *v1.Node {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem), v1.ResourcePods: resource.MustParse("110")}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: rl, Capacity: rl}}
}

func pod(name, cpu, mem string) *v1.Pod {
	rl := v1.ResourceList{}
	if cpu != "" {
		rl[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		rl[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: rl}}}}}
}
