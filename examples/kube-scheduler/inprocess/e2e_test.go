package inprocess

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/framework/kubescheduler"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// countingScore counts Score calls of the schedkit score plugin.
type countingScore struct {
	*kubescheduler.ScorePlugin
	scores atomic.Int64
}

func (c *countingScore) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	c.scores.Add(1)
	return c.ScorePlugin.Score(ctx, cs, pod, ni)
}

// countingReserve records Unreserve calls of the schedkit reserve plugin.
type countingReserve struct {
	*kubescheduler.ReservePlugin
	mu         sync.Mutex
	unreserved []string
	reserves   atomic.Int64
}

func (c *countingReserve) Reserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	c.reserves.Add(1)
	return c.ReservePlugin.Reserve(ctx, cs, pod, node)
}

func (c *countingReserve) Unreserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, node string) {
	c.mu.Lock()
	c.unreserved = append(c.unreserved, pod.Name)
	c.mu.Unlock()
	c.ReservePlugin.Unreserve(ctx, cs, pod, node)
}

func e2eNode(i int) *v1.Node {
	rl := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(fmt.Sprint(4 + 4*(i%3))), // 4, 8 or 12 cores
		v1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", 16+8*(i%4))),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	name := fmt.Sprintf("node-%03d", i)
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{v1.LabelHostname: name}},
		Status:     v1.NodeStatus{Allocatable: rl, Capacity: rl},
	}
}

func e2ePod(i int, schedulerName string) *v1.Pod {
	name := fmt.Sprintf("pod-%04d", i)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName,
			Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse(fmt.Sprintf("%dm", 100+100*(i%5))), // 100m..500m
					v1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", 256*(1+i%4))),  // 256Mi..1Gi
				},
			}}},
		},
	}
}

// TestInProcessScheduler runs the real kube-scheduler, configured by the
// shipped deploy/scheduler-config.yaml, on 100 nodes and 1,000 pods of the
// schedkit profile (its only profile): every pod is bound,
// schedkit's score and reserve plugins run, no node is over-committed, and
// a bind that fails once makes the scheduler call Unreserve, after which the
// pod is retried and bound.
func TestInProcessScheduler(t *testing.T) {
	const nNodes, nPods = 100, 1000
	var nodes []*v1.Node
	for i := 0; i < nNodes; i++ {
		nodes = append(nodes, e2eNode(i))
	}
	var pods []*v1.Pod
	for i := 0; i < nPods; i++ {
		pods = append(pods, e2ePod(i, "schedkit"))
	}
	cl, err := NewCluster(nodes, pods)
	require.NoError(t, err)
	var failed atomic.Bool
	cl.FailBind(func(b *v1.Binding) error {
		if b.Name == "pod-0007" && failed.CompareAndSwap(false, true) {
			return errors.New("injected: binding refused once")
		}
		return nil
	})

	cfg, err := LoadConfig("../deploy/scheduler-config.yaml")
	require.NoError(t, err)
	require.Len(t, cfg.Profiles, 1)

	var score *countingScore
	var res *countingReserve
	registry := Registry()
	registry[kubescheduler.ScoreName] = func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		p, err := kubescheduler.NewSchedkitScore(ctx, obj, h)
		if err != nil {
			return nil, err
		}
		score = &countingScore{ScorePlugin: p.(*kubescheduler.ScorePlugin)}
		return score, nil
	}
	registry[kubescheduler.ReserveName] = func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		p, err := kubescheduler.NewSchedkitReserve(ctx, obj, h)
		if err != nil {
			return nil, err
		}
		res = &countingReserve{ReservePlugin: p.(*kubescheduler.ReservePlugin)}
		return res, nil
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	_, err = cl.Start(ctx, cfg, registry)
	require.NoError(t, err)
	got, err := cl.WaitBound(ctx, nPods, 2*time.Minute)
	require.NoError(t, err)
	t.Logf("%d pods bound on %d nodes in %v", len(got), nNodes, time.Since(start).Round(time.Millisecond))

	require.NotNil(t, score, "SchedkitScore was built")
	require.NotNil(t, res, "SchedkitReserve was built")
	assert.Positive(t, score.scores.Load(), "SchedkitScore.Score called")
	assert.GreaterOrEqual(t, res.reserves.Load(), int64(nPods), "SchedkitReserve.Reserve called for every schedkit pod")
	res.mu.Lock()
	assert.Contains(t, res.unreserved, "pod-0007", "the failed bind ran Unreserve")
	res.mu.Unlock()
	assert.True(t, failed.Load())

	// Bindings respect capacity.
	byNode := map[string]*v1.Node{}
	for _, n := range nodes {
		byNode[n.Name] = n
	}
	type use struct{ cpu, mem, pods int64 }
	used := map[string]*use{}
	for _, p := range got {
		require.NotEmpty(t, p.Spec.NodeName, "pod %s bound", p.Name)
		u := used[p.Spec.NodeName]
		if u == nil {
			u = &use{}
			used[p.Spec.NodeName] = u
		}
		r, err := snapshot.ComputePodRequests(p)
		require.NoError(t, err)
		u.cpu += r.Requested.MilliCPU()
		u.mem += r.Requested.Memory()
		u.pods++
	}
	for name, u := range used {
		n := byNode[name]
		assert.LessOrEqual(t, u.cpu, n.Status.Allocatable.Cpu().MilliValue(), "cpu on %s", name)
		assert.LessOrEqual(t, u.mem, n.Status.Allocatable.Memory().Value(), "memory on %s", name)
		assert.LessOrEqual(t, u.pods, n.Status.Allocatable.Pods().Value(), "pods on %s", name)
	}

	// The ledger saw every schedkit pod through (PostBind confirmed it, or
	// the informer reported it bound) on the node it was bound to.
	require.Eventually(t, func() bool {
		for _, p := range got {
			if p.Spec.SchedulerName != "schedkit" {
				continue
			}
			ph, node, ok := res.Ledger().PodPhase(snapshot.KeyOf(p))
			if !ok || node != p.Spec.NodeName || (ph != reserve.Confirmed && ph != reserve.Bound) {
				t.Logf("ledger: %s phase %v on %q, bound to %s", p.Name, ph, node, p.Spec.NodeName)
				return false
			}
		}
		return true
	}, 10*time.Second, 100*time.Millisecond)
}
