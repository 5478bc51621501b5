package snapshot

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// requestNames are the resource names the random pods request: base
// resources, extended ones, a hugepage size, "pods" and a name that is no
// resource at all (Intern refuses it).
var requestNames = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, "nvidia.com/gpu", "example.com/foo", "hugepages-2Mi", v1.ResourcePods, "not a resource"}

// requestValues mixes whole amounts, fractions (exact for cpu in milli,
// inexact elsewhere; "250u" and "1n" inexact even for cpu), amounts that
// saturate int64 alone or summed, and negatives.
var requestValues = []string{"0", "1", "2", "100m", "250m", "1500m", "1.5", "128Mi", "1Gi", "1.5Gi", "7935Mi", "250u", "1n", "9223372036854775807", "50E", "1e19", "-1", "-100m"}

// requestList is a resource list of name, quantity pairs.
func requestList(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func fastTestPod(name string, containers []v1.ResourceList) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	for i, rl := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", i), Resources: v1.ResourceRequirements{Requests: rl}})
	}
	return pod
}

// randomRequestPod is a pod of 0-4 containers with random requests and,
// for about half the pods, one thing containerPodRequests leaves to the
// general path: an init container (plain or sidecar), overhead, pod-level
// requests (or spec.resources naming no pod-level resource), container or
// pod status resources, or a resize condition.
func randomRequestPod(r *rand.Rand, i int) *v1.Pod {
	list := func() v1.ResourceList {
		rl := v1.ResourceList{}
		for range r.IntN(4) {
			// Negatives rarely, so that most pods stay valid.
			v := requestValues[r.IntN(len(requestValues)-2)]
			if r.IntN(40) == 0 {
				v = requestValues[len(requestValues)-1-r.IntN(2)]
			}
			rl[requestNames[r.IntN(len(requestNames))]] = resource.MustParse(v)
		}
		return rl
	}
	var cs []v1.ResourceList
	for range r.IntN(5) {
		cs = append(cs, list())
	}
	pod := fastTestPod(fmt.Sprintf("p%d", i), cs)
	switch r.IntN(16) {
	case 0:
		pod.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Requests: list()}}}
	case 1:
		always := v1.ContainerRestartPolicyAlways
		pod.Spec.InitContainers = []v1.Container{{Name: "sidecar", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: list()}}}
	case 2:
		pod.Spec.Overhead = list()
	case 3:
		pod.Spec.Resources = &v1.ResourceRequirements{Requests: list()}
	case 4:
		pod.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}
	case 5:
		if len(pod.Spec.Containers) > 0 {
			pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", AllocatedResources: list()}}
		}
	case 6:
		pod.Status.AllocatedResources = list()
		pod.Status.Resources = &v1.ResourceRequirements{Requests: list()}
	case 7:
		pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Reason: v1.PodReasonInfeasible}}
	}
	return pod
}

// checkFastRequests compares ComputePodRequests (and containerPodRequests
// where it takes the pod) with the general computePodRequests: equal
// requests, or the same error. It reports whether the fast path took the
// pod.
func checkFastRequests(t *testing.T, pod *v1.Pod) bool {
	t.Helper()
	want, wantErr := computePodRequests(pod)
	got, gotErr := ComputePodRequests(pod)
	if wantErr != nil {
		// Which of two negative quantities of one list is named depends
		// on map order, in the general path too.
		require.Error(t, gotErr, "pod %s: want %v", pod.Name, wantErr)
		for _, sentinel := range []error{ErrNegativeQuantity, ErrInvalidObject} {
			require.Equal(t, errors.Is(wantErr, sentinel), errors.Is(gotErr, sentinel), "pod %s: %v, want %v", pod.Name, gotErr, wantErr)
		}
	} else {
		require.NoError(t, gotErr, "pod %s", pod.Name)
		require.Equal(t, want, got, "pod %s: %+v", pod.Name, pod.Spec)
	}
	fast, ok := containerPodRequests(pod)
	if ok {
		require.NoError(t, wantErr, "pod %s: the fast path took a pod the general path refuses", pod.Name)
		require.Equal(t, want, fast, "pod %s: %+v", pod.Name, pod.Spec)
	}
	return ok
}

// TestContainerPodRequestsMatchesGeneral: on 20,000 random pods the
// one-pass path gives exactly the general formula's requests (all four
// vectors and the non-zero amounts), and ComputePodRequests the general
// result or error, whichever path it takes; the one-pass path takes a
// good share of them.
func TestContainerPodRequestsMatchesGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	fast := 0
	const n = 20_000
	for i := range n {
		if checkFastRequests(t, randomRequestPod(r, i)) {
			fast++
		}
	}
	require.Greater(t, fast, n/5, "the one-pass path took %d of %d pods", fast, n)
}

// TestContainerPodRequestsShapes: the pods the one-pass path is for take
// it; every other shape goes to the general path.
func TestContainerPodRequestsShapes(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	for _, tc := range []struct {
		name string
		pod  func() *v1.Pod
		fast bool
	}{
		{"cpu+memory", func() *v1.Pod {
			return fastTestPod("p", []v1.ResourceList{requestList("cpu", "100m", "memory", "128Mi")})
		}, true},
		{"no requests", func() *v1.Pod { return fastTestPod("p", []v1.ResourceList{nil}) }, true},
		{"no containers", func() *v1.Pod { return fastTestPod("p", nil) }, true},
		{"gpu, two containers", func() *v1.Pod {
			return fastTestPod("p", []v1.ResourceList{requestList("cpu", "2", "nvidia.com/gpu", "1"), requestList("memory", "1Gi")})
		}, true},
		{"status without resources", func() *v1.Pod {
			p := fastTestPod("p", []v1.ResourceList{requestList("cpu", "1")})
			p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", Ready: true}}
			return p
		}, true},
		{"inexact cpu", func() *v1.Pod { return fastTestPod("p", []v1.ResourceList{requestList("cpu", "250u")}) }, false},
		{"inexact memory", func() *v1.Pod { return fastTestPod("p", []v1.ResourceList{requestList("memory", "1.5")}) }, false},
		{"negative", func() *v1.Pod { return fastTestPod("p", []v1.ResourceList{requestList("cpu", "-1")}) }, false},
		{"init container", func() *v1.Pod {
			p := fastTestPod("p", []v1.ResourceList{requestList("cpu", "1")})
			p.Spec.InitContainers = []v1.Container{{Name: "i", Resources: v1.ResourceRequirements{Requests: requestList("cpu", "2")}}}
			return p
		}, false},
		{"sidecar", func() *v1.Pod {
			p := fastTestPod("p", []v1.ResourceList{requestList("cpu", "1")})
			p.Spec.InitContainers = []v1.Container{{Name: "s", RestartPolicy: &always}}
			return p
		}, false},
		{"overhead", func() *v1.Pod {
			p := fastTestPod("p", []v1.ResourceList{requestList("cpu", "1")})
			p.Spec.Overhead = requestList("cpu", "250m")
			return p
		}, false},
		{"pod-level requests", func() *v1.Pod {
			p := fastTestPod("p", []v1.ResourceList{requestList("cpu", "1")})
			p.Spec.Resources = &v1.ResourceRequirements{Requests: requestList("cpu", "2")}
			return p
		}, false},
		{"allocated status", func() *v1.Pod {
			p := fastTestPod("p", []v1.ResourceList{requestList("cpu", "1")})
			p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", AllocatedResources: requestList("cpu", "2")}}
			return p
		}, false},
		{"resize pending", func() *v1.Pod {
			p := fastTestPod("p", []v1.ResourceList{requestList("cpu", "1")})
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending}}
			return p
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod()
			require.Equal(t, tc.fast, checkFastRequests(t, pod), "one-pass path taken")
		})
	}
}

// FuzzContainerPodRequests: for two containers requesting fuzzed
// quantities of fuzzed resource names (and, by flag, an init container,
// overhead or pod-level requests), ComputePodRequests equals the general
// formula.
func FuzzContainerPodRequests(f *testing.F) {
	f.Add("100m", "128Mi", "1", uint8(0x12), uint8(0))
	f.Add("1.5", "1.5Gi", "9223372036854775807", uint8(0x21), uint8(0))
	f.Add("250u", "50E", "50E", uint8(0x11), uint8(1))
	f.Add("0", "-1", "1e19", uint8(0x34), uint8(2))
	f.Add("7910m", "16061896Ki", "2", uint8(0x56), uint8(3))
	f.Fuzz(func(t *testing.T, a, b, c string, names, extra uint8) {
		var qs []resource.Quantity
		for _, s := range []string{a, b, c} {
			if slowToParse(s) {
				return
			}
			q, err := resource.ParseQuantity(s)
			if err != nil {
				return
			}
			qs = append(qs, q)
		}
		n1, n2 := requestNames[int(names&0xf)%len(requestNames)], requestNames[int(names>>4)%len(requestNames)]
		pod := fastTestPod("fuzz", []v1.ResourceList{{n1: qs[0], n2: qs[1]}, {n2: qs[2]}})
		switch extra % 4 {
		case 1:
			pod.Spec.InitContainers = []v1.Container{{Name: "i", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{n1: qs[2]}}}}
		case 2:
			pod.Spec.Overhead = v1.ResourceList{n2: qs[0]}
		case 3:
			pod.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{n1: qs[1]}}
		}
		checkFastRequests(t, pod)
	})
}

// slowToParse reports whether ParseQuantity (or the general path's
// rescaling) takes long on s: an exponent of five or more digits, or
// more than 40 characters.
func slowToParse(s string) bool {
	if len(s) > 40 {
		return true
	}
	i := strings.LastIndexAny(s, "eE")
	if i < 0 {
		return false
	}
	exp := strings.TrimLeft(strings.TrimLeft(s[i+1:], "+-"), "0")
	return len(exp) >= 5
}

// BenchmarkPodRequestsPaths: the one-pass path against the general
// formula on the pods it takes (old and new in one binary; cpu-ns/op is
// the process's CPU time, steadier than ns/op on a shared machine).
func BenchmarkPodRequestsPaths(b *testing.B) {
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
	}{
		{"cpu+memory", fastTestPod("p", []v1.ResourceList{requestList("cpu", "100m", "memory", "128Mi")})},
		{"three-containers+gpu", fastTestPod("p", []v1.ResourceList{requestList("cpu", "500m", "memory", "1Gi"), requestList("cpu", "2", "nvidia.com/gpu", "1"), requestList("memory", "64Mi")})},
	} {
		for _, path := range []struct {
			name string
			fn   func(*v1.Pod) (PodRequests, error)
		}{{"general", computePodRequests}, {"onepass", ComputePodRequests}} {
			b.Run("pod="+tc.name+"/path="+path.name, func(b *testing.B) {
				b.ReportAllocs()
				c0 := processCPUTime()
				for b.Loop() {
					if _, err := path.fn(tc.pod); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((processCPUTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// processCPUTime is the process's user+system CPU time.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
