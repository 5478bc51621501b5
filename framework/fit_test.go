package framework

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The node of upstream's fit_test (makeResources(10, 20, 32, 5, 20, 5)):
// 10m cpu, 20 bytes of memory, 32 pods, 5 example.com/aaa, 20 bytes of
// ephemeral storage, 5 hugepages-2Mi.
func fitNode() *v1.Node {
	return mkNode("n1").Capacity("cpu", "10m", "memory", "20", "pods", "32",
		"example.com/aaa", "5", "ephemeral-storage", "20", "hugepages-2Mi", "5").Obj()
}

// used is a pod bound to n1 requesting the pairs.
func used(kv ...string) *v1.Pod { return mkPod("used").Req(kv...).Node("n1").Obj() }

func TestNodeResourcesFit(t *testing.T) {
	cpu := func(req, usedAmt, capacity int64) got {
		return got{Code: CodeInsufficientResource, Resource: v1.ResourceCPU, Requested: req, Used: usedAmt, Capacity: capacity, Unresolvable: req > capacity}
	}
	res := func(name v1.ResourceName, req, usedAmt, capacity int64) got {
		return got{Code: CodeInsufficientResource, Resource: name, Requested: req, Used: usedAmt, Capacity: capacity, Unresolvable: req > capacity}
	}
	tests := []struct {
		name  string
		fit   nodeResourcesFitPlugin
		pod   *v1.Pod
		node  *v1.Node
		bound []*v1.Pod
		want  []got
	}{
		{
			name:  "no resources requested always fits",
			pod:   mkPod("p").Req().Obj(),
			bound: []*v1.Pod{used("cpu", "10m", "memory", "20")},
			want:  []got{},
		},
		{
			// cpu: 1 > 10-10 = 0; memory: 1 > 20-20 = 0; both resolvable (1 <= capacity).
			name:  "too many resources fails",
			pod:   mkPod("p").Req("cpu", "1m", "memory", "1").Obj(),
			bound: []*v1.Pod{used("cpu", "10m", "memory", "20")},
			want:  []got{cpu(1, 10, 10), res(v1.ResourceMemory, 1, 20, 20)},
		},
		{
			// effective cpu = max(1, init 3) = 3 > 10-8 = 2.
			name:  "too many resources fails due to init container cpu",
			pod:   mkPod("p").Req("cpu", "1m", "memory", "1").Init("cpu", "3m", "memory", "1").Obj(),
			bound: []*v1.Pod{used("cpu", "8m", "memory", "19")},
			want:  []got{cpu(3, 8, 10)},
		},
		{
			// effective = max(3, 2) of the init containers = 3 > 2.
			name:  "too many resources fails due to highest init container cpu",
			pod:   mkPod("p").Req("cpu", "1m", "memory", "1").Init("cpu", "3m", "memory", "1").Init("cpu", "2m", "memory", "1").Obj(),
			bound: []*v1.Pod{used("cpu", "8m", "memory", "19")},
			want:  []got{cpu(3, 8, 10)},
		},
		{
			// init 1m <= 2 free: the max, not the sum, of init and regular containers.
			name:  "init container fits because it's the max, not sum",
			pod:   mkPod("p").Req("cpu", "1m", "memory", "1").Init("cpu", "1m", "memory", "1").Obj(),
			bound: []*v1.Pod{used("cpu", "9m", "memory", "19")},
			want:  []got{},
		},
		{
			// cpu 2 <= 10-8 = 2 and memory 1 <= 20-19 = 1: equality fits.
			name:  "equal edge case",
			pod:   mkPod("p").Req("cpu", "2m", "memory", "1").Obj(),
			bound: []*v1.Pod{used("cpu", "8m", "memory", "19")},
			want:  []got{},
		},
		{
			// sidecar runs beside the containers: 1 + 2 = 3 > 10-8 = 2.
			name:  "restartable init container adds to the sum",
			pod:   mkPod("p").Sidecar("cpu", "2m").Req("cpu", "1m").Obj(),
			bound: []*v1.Pod{used("cpu", "8m")},
			want:  []got{cpu(3, 8, 10)},
		},
		{
			// example.com/aaa: 10 > 5 - 0; unresolvable since 10 > capacity 5.
			name: "extended resource capacity enforced",
			pod:  mkPod("p").Req("cpu", "1m", "example.com/aaa", "10").Obj(),
			want: []got{res("example.com/aaa", 10, 0, 5)},
		},
		{
			// 3 > 5-3 = 2, resolvable (3 <= 5).
			name:  "extended resource allocatable enforced",
			pod:   mkPod("p").Req("example.com/aaa", "3").Obj(),
			bound: []*v1.Pod{used("example.com/aaa", "3")},
			want:  []got{res("example.com/aaa", 3, 3, 5)},
		},
		{
			// the node has no example.com/bbb: 1 > 0, unresolvable.
			name: "extended resource allocatable enforced for unknown resource",
			pod:  mkPod("p").Req("example.com/bbb", "1").Obj(),
			want: []got{res("example.com/bbb", 1, 0, 0)},
		},
		{
			// kubernetes.io/ resources are not extended: never ignored.
			name: "kubernetes.io resource capacity enforced even with its group ignored",
			fit:  nodeResourcesFitPlugin{IgnoredResourceGroups: []string{"example.com", "kubernetes.io"}},
			pod:  mkPod("p").Req("example.com/bbb", "1", "kubernetes.io/something", "1").Obj(),
			want: []got{res("kubernetes.io/something", 1, 0, 0)},
		},
		{
			// hugepages-2Mi: 10 > 5, unresolvable.
			name: "hugepages resource capacity enforced",
			pod:  mkPod("p").Req("hugepages-2Mi", "10").Obj(),
			want: []got{res("hugepages-2Mi", 10, 0, 5)},
		},
		{
			// 3 + 3 = 6 > 5 - 0.
			name: "hugepages resource allocatable enforced for multiple containers",
			pod:  mkPod("p").Req("hugepages-2Mi", "3").Req("hugepages-2Mi", "3").Obj(),
			want: []got{res("hugepages-2Mi", 6, 0, 5)},
		},
		{
			name: "skip checking ignored extended resource",
			fit:  nodeResourcesFitPlugin{IgnoredResources: []string{"example.com/bbb"}},
			pod:  mkPod("p").Req("cpu", "1m", "example.com/bbb", "1").Obj(),
			want: []got{},
		},
		{
			name: "skip checking ignored extended resource via resource groups",
			fit:  nodeResourcesFitPlugin{IgnoredResourceGroups: []string{"example.com"}},
			pod:  mkPod("p").Req("example.com/bbb", "1", "example.com/aaa", "100").Obj(),
			want: []got{},
		},
		{
			// hugepages are not extended resources: IgnoredResources does not apply.
			name: "hugepages cannot be ignored",
			fit:  nodeResourcesFitPlugin{IgnoredResources: []string{"hugepages-2Mi"}},
			pod:  mkPod("p").Req("hugepages-2Mi", "6").Obj(),
			want: []got{res("hugepages-2Mi", 6, 0, 5)},
		},
		{
			name: "extended resource request with quantity zero is not checked",
			pod:  mkPod("p").Req("example.com/bbb", "0").Obj(),
			want: []got{},
		},
		{
			// 1 + overhead 3 = 4 <= 10-5; 1 + 13 = 14 <= 20-5.
			name:  "resources + pod overhead fits",
			pod:   mkPod("p").Req("cpu", "1m", "memory", "1").Overhead("cpu", "3m", "memory", "13").Obj(),
			bound: []*v1.Pod{used("cpu", "5m", "memory", "5")},
			want:  []got{},
		},
		{
			// memory 1 + 15 = 16 > 20-5 = 15.
			name:  "requests + overhead does not fit for memory",
			pod:   mkPod("p").Req("cpu", "1m", "memory", "1").Overhead("cpu", "1m", "memory", "15").Obj(),
			bound: []*v1.Pod{used("cpu", "5m", "memory", "5")},
			want:  []got{res(v1.ResourceMemory, 16, 5, 20)},
		},
		{
			// pod-level cpu 5m overrides the containers' 1m: 5 > 10-8 = 2.
			name:  "pod-level cpu resource does not fit",
			pod:   mkPod("p").Req("cpu", "1m").PodRequests("cpu", "5m").Obj(),
			bound: []*v1.Pod{used("cpu", "8m")},
			want:  []got{cpu(5, 8, 10)},
		},
		{
			// 25 > 20, unresolvable.
			name: "ephemeral local storage request exceeds allocatable",
			pod:  mkPod("p").Req("ephemeral-storage", "25").Obj(),
			want: []got{res(v1.ResourceEphemeralStorage, 25, 0, 20)},
		},
		{
			name: "ephemeral local storage is sufficient",
			pod:  mkPod("p").Req("ephemeral-storage", "10").Obj(),
			want: []got{},
		},
		{
			// pods: 1 + 1 > 1, even with no requests.
			name:  "even without specified resources, fails when there's no space for additional pod",
			pod:   mkPod("p").Req().Obj(),
			node:  mkNode("n1").Capacity("cpu", "10m", "memory", "20", "pods", "1").Obj(),
			bound: []*v1.Pod{used("cpu", "10m", "memory", "20")},
			want:  []got{{Code: CodeTooManyPods, Resource: v1.ResourcePods, Requested: 1, Used: 1, Capacity: 1}},
		},
		{
			// every failed check is reported, pods first: 1+1 > 1; cpu 5 > 10-10; memory 30 > 20-20 (unresolvable, 30 > 20).
			name:  "all failures in upstream order",
			pod:   mkPod("p").Req("memory", "30", "cpu", "5m").Obj(),
			node:  mkNode("n1").Capacity("cpu", "10m", "memory", "20", "pods", "1").Obj(),
			bound: []*v1.Pod{used("cpu", "10m", "memory", "20")},
			want: []got{
				{Code: CodeTooManyPods, Resource: v1.ResourcePods, Requested: 1, Used: 1, Capacity: 1},
				cpu(5, 10, 10), res(v1.ResourceMemory, 30, 20, 20),
			},
		},
		{
			// a node without allocatable pods admits nothing: 0 + 1 > 0.
			name: "node without pods allocatable",
			pod:  mkPod("p").Req().Obj(),
			node: mkNode("n1").Capacity("cpu", "1").Obj(),
			want: []got{{Code: CodeTooManyPods, Resource: v1.ResourcePods, Requested: 1, Used: 0, Capacity: 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := tc.node
			if node == nil {
				node = fitNode()
			}
			fit := tc.fit
			require.NoError(t, fit.Validate())
			g := filterOne(t, &fit, tc.pod, node, tc.bound...)
			assert.Equal(t, tc.want, g, "NodeResourcesFit(%s)", node.Name)
		})
	}
}

func TestNodeResourcesFitMessages(t *testing.T) {
	g := filterOne(t, &nodeResourcesFitPlugin{}, mkPod("p").Req("example.com/bbb", "1", "cpu", "1").Obj(), fitNode())
	require.Len(t, g, 2)
	r := Reason{Code: g[0].Code}
	r.Resource, _ = lookup(t, g[0].Resource)
	assert.Equal(t, "Insufficient cpu", r.Message())
	r.Resource, _ = lookup(t, g[1].Resource)
	assert.Equal(t, "Insufficient example.com/bbb", r.Message())
	assert.Equal(t, "Too many pods", (&Reason{Code: CodeTooManyPods}).Message())
}

func TestNodeResourcesFitValidate(t *testing.T) {
	tests := []struct {
		name string
		fit  nodeResourcesFitPlugin
		ok   bool
	}{
		{name: "zero value", ok: true},
		{name: "valid", fit: nodeResourcesFitPlugin{IgnoredResources: []string{"example.com/foo"}, IgnoredResourceGroups: []string{"example.com"}}, ok: true},
		{name: "invalid resource name", fit: nodeResourcesFitPlugin{IgnoredResources: []string{"bad name!"}}},
		{name: "group with slash", fit: nodeResourcesFitPlugin{IgnoredResourceGroups: []string{"example.com/aaa"}}},
		{name: "invalid group", fit: nodeResourcesFitPlugin{IgnoredResourceGroups: []string{"-bad-"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.fit.Validate()
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.Contains(t, err.Error(), "NodeResourcesFit: ignoredResource")
		})
	}
}

// TestNodeResourcesFitPendingPodStatus: the pod being scheduled is judged
// on its spec, as upstream v1.37.2's PreFilter computes it
// (computePodResourceRequest: "pod hasn't scheduled yet", no status
// resources), while the node's bound pods count with their status-aware
// request (issue 17, item 6).
func TestNodeResourcesFitPendingPodStatus(t *testing.T) {
	resized := func(spec, status string, cond bool) *v1.Pod {
		p := mkPod("p").Req("cpu", spec).Obj()
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
			AllocatedResources: v1.ResourceList{v1.ResourceCPU: resource.MustParse(status)},
			Resources:          &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(status)}}}}
		if cond {
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible}}
		}
		return p
	}
	node := func() *v1.Node { return mkNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "10").Obj() }
	cpu := func(req, usedAmt int64) []got {
		return []got{{Code: CodeInsufficientResource, Resource: v1.ResourceCPU, Requested: req, Used: usedAmt, Capacity: 4000, Unresolvable: req > 4000}}
	}
	for _, tc := range []struct {
		name  string
		pod   *v1.Pod
		bound []*v1.Pod
		want  []got
	}{
		// spec 1 cpu; the status says 100: 1000 <= 4000 fits.
		{"status above spec", resized("1", "100", false), nil, []got{}},
		// spec 8 cpu, resize infeasible, status 1: the spec, 8000 > 4000.
		{"infeasible resize", resized("8", "1", true), nil, cpu(8000, 0)},
		// a bound pod resized to 3 cpu (status) counts 3000: 2000 > 1000.
		{"bound pod status counts", mkPod("p").Req("cpu", "2").Obj(), []*v1.Pod{func() *v1.Pod {
			b := resized("1", "3", false)
			b.Name, b.Spec.NodeName = "bound", "n1"
			return b
		}()}, cpu(2000, 3000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, filterOne(t, &nodeResourcesFitPlugin{}, tc.pod, node(), tc.bound...))
		})
	}
}
