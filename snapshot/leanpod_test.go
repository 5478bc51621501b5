package snapshot_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// leanTestPod is a bound pod with every per-pod field a lean record keeps
// and a template with labels, annotations, an owner, ports, tolerations,
// affinity and spread constraints.
func leanTestPod(name string) *v1.Pod {
	p := st.MakePod(name).Namespace("shop").Label("app", "web").Annotation("cluster-autoscaler.kubernetes.io/safe-to-evict", "true").
		Req("cpu", "250m", "memory", "1Gi", "nvidia.com/gpu", "1").HostPort("", 8080).Priority(7).
		Toleration("dedicated", v1.TolerationOpEqual, "web", v1.TaintEffectNoSchedule).
		NodeSelector("topology.kubernetes.io/zone", "a").Node("n1").Obj()
	p.UID = types.UID("uid-" + name)
	p.ResourceVersion = "42"
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs", Controller: ptr(true)}}
	p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: "kubernetes.io/hostname"}}}}
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
		WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	start := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	p.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: &start, PodIP: "10.0.0.1",
		Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}}
	return p
}

func ptr[T any](v T) *T { return &v }

// requireSameRecord checks that every accessor but Pod and Retained gives
// the same answer on a full record and its lean copy.
func requireSameRecord(t *testing.T, full, lean *snapshot.PodInfo) {
	t.Helper()
	require.Equal(t, full.Key(), lean.Key())
	require.Equal(t, full.NodeName(), lean.NodeName())
	fs, fok := full.StartTime()
	ls, lok := lean.StartTime()
	require.Equal(t, fok, lok)
	require.True(t, fs.Equal(ls), "StartTime %v, want %v", ls, fs)
	require.Equal(t, full.Terminating(), lean.Terminating())
	require.Equal(t, full.Requests(), lean.Requests())
	require.Equal(t, full.HostPorts(), lean.HostPorts())
	require.Equal(t, full.GPU(), lean.GPU())
	fd, fa := full.Devices()
	ld, la := lean.Devices()
	require.Equal(t, fd, ld)
	require.Equal(t, fa, la)
	ft, lt := full.Template(), lean.Template()
	require.Equal(t, ft.Namespace, lt.Namespace)
	require.Equal(t, ft.Labels, lt.Labels)
	require.Equal(t, ft.Annotations, lt.Annotations)
	require.Equal(t, ft.OwnerReferences, lt.OwnerReferences)
	want := ft.Spec.DeepCopy()
	want.NodeName = ""
	require.Equal(t, *want, lt.Spec)
}

func TestLeanRecordAnswersAsFull(t *testing.T) {
	pod := leanTestPod("web-0")
	full := snapshot.MustPodInfo(pod)
	lean := full.Lean()
	require.True(t, full.Retained())
	require.False(t, lean.Retained())
	require.Same(t, pod, full.Pod())
	require.Same(t, lean, lean.Lean(), "a lean record is its own lean copy")
	requireSameRecord(t, full, lean)

	// Pod rebuilds the object from the record: the template plus the
	// per-pod fields; uid, resourceVersion and the rest of status are gone.
	got := lean.Pod()
	want := pod.DeepCopy()
	want.UID, want.ResourceVersion = "", ""
	want.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: pod.Status.StartTime}
	require.True(t, got.Status.StartTime.Equal(want.Status.StartTime))
	got.Status.StartTime = want.Status.StartTime
	require.Equal(t, want, got)
	require.NotSame(t, got, lean.Pod(), "each call rebuilds")
}

func TestLeanRecordRareFields(t *testing.T) {
	pod := leanTestPod("web-0")
	del := metav1.NewTime(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	pod.DeletionTimestamp = &del
	pod.Status.Phase = "Weird"
	pod.Status.NominatedNodeName = "n2"
	dt := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}
	pod.Status.Conditions = append(pod.Status.Conditions, dt)
	pod.Status.StartTime = nil
	full := snapshot.MustPodInfo(pod)
	lean := full.Lean()
	requireSameRecord(t, full, lean)
	require.True(t, lean.Terminating())
	_, ok := lean.StartTime()
	require.False(t, ok)
	got := lean.Pod()
	require.True(t, got.DeletionTimestamp.Equal(&del))
	require.Equal(t, v1.PodPhase("Weird"), got.Status.Phase)
	require.Equal(t, "n2", got.Status.NominatedNodeName)
	require.Equal(t, []v1.PodCondition{dt}, got.Status.Conditions)
	require.Nil(t, got.Status.StartTime)
}

// Replicas share one template; pods that differ in what the template
// holds, or in derived requests, do not.
func TestLeanRecordsShareTemplates(t *testing.T) {
	a := snapshot.MustPodInfo(leanTestPod("web-0")).Lean()
	b := snapshot.MustPodInfo(leanTestPod("web-1")).Lean()
	require.Same(t, a.Template(), b.Template())
	require.Same(t, a.Requests(), b.Requests())
	require.NotEqual(t, a.Key(), b.Key())

	other := leanTestPod("web-2")
	other.Labels["app"] = "api"
	c := snapshot.MustPodInfo(other).Lean()
	require.NotSame(t, a.Template(), c.Template())
	require.Equal(t, "api", c.Template().Labels["app"])

	// Same spec, but status reports a larger in-place resize: the
	// requests differ, so the shape does.
	resized := leanTestPod("web-3")
	resized.Status.ContainerStatuses = []v1.ContainerStatus{{Name: resized.Spec.Containers[0].Name,
		AllocatedResources: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}}}
	d := snapshot.MustPodInfo(resized).Lean()
	require.NotSame(t, a.Requests(), d.Requests())
	require.Equal(t, snapshot.MustPodInfo(resized).Requests(), d.Requests())
}

// A lean cache holds the same state as a full one: node totals, pods,
// ports and the answers of the inter-pod indexes; its pods are lean.
func TestCacheLeanPodsSameState(t *testing.T) {
	full, lean := snapshot.NewCache(), snapshot.NewCache(snapshot.LeanPods())
	require.False(t, full.LeanPods())
	require.True(t, lean.LeanPods())
	for _, c := range []*snapshot.Cache{full, lean} {
		for i := range 3 {
			require.NoError(t, c.AddNode(st.MakeNode(fmt.Sprintf("n%d", i)).Capacity("cpu", "8", "memory", "32Gi", "pods", "110", "nvidia.com/gpu", "2").Obj()))
		}
	}
	for i := range 9 {
		p := leanTestPod(fmt.Sprintf("web-%d", i))
		p.Spec.NodeName = fmt.Sprintf("n%d", i%3)
		for _, c := range []*snapshot.Cache{full, lean} {
			if i%2 == 0 {
				require.NoError(t, c.AddPod(p))
			} else {
				require.NoError(t, c.AddPodInfo(snapshot.MustPodInfo(p)))
			}
		}
	}
	// Updates, moves and removals go through the same paths.
	moved := leanTestPod("web-4")
	moved.Spec.NodeName = "n0"
	moved.UID += "-2" // created again: a move
	for _, c := range []*snapshot.Cache{full, lean} {
		require.NoError(t, c.UpdatePod(moved))
		require.True(t, c.RemovePod(snapshot.PodKey{Namespace: "shop", Name: "web-5"}))
	}
	fs, ls := full.Snapshot(), lean.Snapshot()
	require.Equal(t, fs.NumNodes(), ls.NumNodes())
	for i := range fs.NumNodes() {
		fn, ln := fs.Node(i), ls.Node(i)
		require.Equal(t, fn.Name(), ln.Name())
		require.Equal(t, fn.Requested().String(), ln.Requested().String())
		require.Equal(t, fn.NonZeroRequested().String(), ln.NonZeroRequested().String())
		require.Equal(t, fn.UsedPorts(), ln.UsedPorts())
		require.Equal(t, len(fn.PodsWithAffinity()), len(ln.PodsWithAffinity()))
		require.Equal(t, fn.NumPods(), ln.NumPods())
		for j, fp := range fn.Pods() {
			lp := ln.Pods()[j]
			require.True(t, fp.Retained())
			require.False(t, lp.Retained(), "pod %s", lp.Key())
			requireSameRecord(t, fp, lp)
		}
	}
}

// An unbound or terminal report of a lean record is classified by the
// record's own fields, as AddPod classifies the object.
func TestCacheAddLeanRecordClassified(t *testing.T) {
	c := snapshot.NewCache()
	require.NoError(t, c.AddNode(st.MakeNode("n1").Capacity("cpu", "8", "pods", "110").Obj()))
	p := st.MakePod("a").Req("cpu", "1").Node("n1").Obj()
	require.NoError(t, c.AddPodInfo(snapshot.MustPodInfo(p).Lean()))
	require.Equal(t, 1, c.NumPods())

	unbound := p.DeepCopy()
	unbound.Spec.NodeName = ""
	err := c.AddPodInfo(snapshot.MustPodInfo(unbound).Lean())
	require.ErrorIs(t, err, snapshot.ErrInvalidObject, "a bound pod cannot be reported unbound")
	require.ErrorContains(t, err, "default/a")
	require.Equal(t, 1, c.NumPods())

	done := p.DeepCopy()
	done.Status.Phase = v1.PodSucceeded
	require.NoError(t, c.AddPodInfo(snapshot.MustPodInfo(done).Lean()))
	require.Zero(t, c.NumPods(), "a terminal pod is removed")
}

// Bad input gives the same errors with and without LeanPods, and changes
// nothing.
func TestCacheLeanPodsBadInput(t *testing.T) {
	neg := st.MakePod("neg").Req("cpu", "-1").Node("n1").Obj()
	for _, bad := range []*v1.Pod{nil, st.MakePod("").Node("n1").Obj(), neg} {
		full, lean := snapshot.NewCache(), snapshot.NewCache(snapshot.LeanPods())
		ef, el := full.AddPod(bad), lean.AddPod(bad)
		require.Error(t, ef)
		require.Equal(t, ef.Error(), el.Error())
		assert.Zero(t, lean.NumPods())
	}
	require.ErrorIs(t, snapshot.NewCache(snapshot.LeanPods()).AddPodInfo(nil), snapshot.ErrInvalidObject)
}

// Lean is safe for concurrent use: records made at once from goroutines
// share one template.
func TestLeanConcurrent(t *testing.T) {
	const workers, each = 4, 50
	out := make([][]*snapshot.PodInfo, workers)
	done := make(chan int)
	for w := range workers {
		go func() {
			for i := range each {
				out[w] = append(out[w], snapshot.MustPodInfo(leanTestPod(fmt.Sprintf("web-%d-%d", w, i))).Lean())
			}
			done <- w
		}()
	}
	for range workers {
		<-done
	}
	first := out[0][0].Template()
	for _, rs := range out {
		for _, r := range rs {
			require.Same(t, first, r.Template())
		}
	}
}

// TestLeanPodIsACopy: the pod a lean record rebuilds is the caller's to
// change: changing its labels or spec changes neither the record nor the
// replicas sharing its template (a trial changed one rebuilt pod's label,
// and every replica, and the decisions over them, changed with it).
func TestLeanPodIsACopy(t *testing.T) {
	mk := func(name string) *snapshot.PodInfo {
		pi, err := snapshot.NewPodInfo(st.MakePod(name).Namespace("default").Label("app", "x").Req("cpu", "1").Node("n0").Obj())
		require.NoError(t, err)
		return pi.Lean()
	}
	a, b := mk("a"), mk("b")
	require.Same(t, a.Template(), b.Template(), "replicas share one template")
	p := a.Pod()
	p.Labels["app"] = "HACKED"
	p.Spec.Containers[0].Name = "changed"
	assert.Equal(t, "x", a.Template().Labels["app"])
	assert.Equal(t, "x", b.Pod().Labels["app"])
	assert.Equal(t, "x", a.Pod().Labels["app"])
	assert.NotEqual(t, "changed", b.Pod().Spec.Containers[0].Name)
}
