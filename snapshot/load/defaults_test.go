package load_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load"
)

// handWritten is a pod and nodes as people write them by hand, without
// the fields the API server defaults.
const handWritten = `apiVersion: v1
kind: Node
metadata: {name: cap-only}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110", nvidia.com/gpu: "2"}}
---
apiVersion: v1
kind: Node
metadata: {name: both}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: 3500m, memory: 7Gi, pods: "100"}
---
apiVersion: v1
kind: Node
metadata: {name: empty-alloc}
status: {capacity: {cpu: "4"}, allocatable: {}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
  - {name: i, resources: {limits: {cpu: "3", memory: 1Gi}}}
  containers:
  - {name: a, resources: {limits: {cpu: "2", nvidia.com/gpu: "1"}}}
  - {name: b, resources: {requests: {cpu: 500m, memory: "0"}, limits: {cpu: "1", memory: 2Gi}}}
  - {name: c, resources: {requests: {cpu: 100m}}}
  ephemeralContainers:
  - {name: e, resources: {limits: {cpu: "8"}}}
`

// TestReadAppliesAPIServerDefaults: a container's limit is its request for
// every resource it has no request for (containers and init containers,
// not ephemeral containers; a request given, even 0, is kept), and a node
// without allocatable has its capacity allocatable.
func TestReadAppliesAPIServerDefaults(t *testing.T) {
	objs, err := load.Read(strings.NewReader(handWritten), "hand.yaml")
	require.NoError(t, err)
	require.Len(t, objs.Nodes, 3)
	require.Len(t, objs.Pods, 1)

	q := resource.MustParse
	assert.Equal(t, objs.Nodes[0].Status.Capacity, objs.Nodes[0].Status.Allocatable)
	assert.Equal(t, v1.ResourceList{"cpu": q("3500m"), "memory": q("7Gi"), "pods": q("100")}, objs.Nodes[1].Status.Allocatable)
	assert.Equal(t, v1.ResourceList{}, objs.Nodes[2].Status.Allocatable, "an empty allocatable is kept, as upstream keeps it")

	spec := objs.Pods[0].Spec
	assert.Equal(t, v1.ResourceList{"cpu": q("3"), "memory": q("1Gi")}, spec.InitContainers[0].Resources.Requests)
	assert.Equal(t, v1.ResourceList{"cpu": q("2"), "nvidia.com/gpu": q("1")}, spec.Containers[0].Resources.Requests)
	assert.Equal(t, v1.ResourceList{"cpu": q("500m"), "memory": q("0")}, spec.Containers[1].Resources.Requests)
	assert.Equal(t, v1.ResourceList{"cpu": q("100m")}, spec.Containers[2].Resources.Requests)
	assert.Nil(t, spec.EphemeralContainers[0].Resources.Requests, "upstream does not default ephemeral containers")

	// The pod's request: max(sum of containers, largest init container):
	// cpu max(2000+500+100, 3000) = 3000m; memory max(0, 1Gi) = 1Gi;
	// GPU 1.
	pi, err := snapshot.NewPodInfo(objs.Pods[0])
	require.NoError(t, err)
	gpu, ok := snapshot.LookupResource("nvidia.com/gpu")
	require.True(t, ok)
	assert.Equal(t, int64(3000), pi.Requested().MilliCPU())
	assert.Equal(t, int64(1<<30), pi.Requested().Memory())
	assert.Equal(t, int64(1), pi.Requested().Get(gpu))
}

// TestReadCacheAppliesAPIServerDefaults: the streaming path defaults too:
// the node with capacity only has 2 GPUs allocatable, and a bound pod with
// a GPU limit only takes one of them.
func TestReadCacheAppliesAPIServerDefaults(t *testing.T) {
	in := handWritten + `---
apiVersion: v1
kind: Pod
metadata: {name: bound}
spec:
  nodeName: cap-only
  containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1", cpu: 1500m}}}]
`
	for _, lean := range []bool{false, true} {
		var opts []snapshot.CacheOption
		if lean {
			opts = append(opts, snapshot.LeanPods())
		}
		c, rest, err := load.Options{}.ReadCache(strings.NewReader(in), "hand.yaml", opts...)
		require.NoError(t, err)
		require.Len(t, rest.Pods, 1)
		gpu, ok := snapshot.LookupResource("nvidia.com/gpu")
		require.True(t, ok)
		n := c.Snapshot().Get("cap-only")
		require.NotNil(t, n)
		assert.Equal(t, int64(2), n.Allocatable().Get(gpu), "lean=%v", lean)
		assert.Equal(t, int64(4000), n.Allocatable().MilliCPU(), "lean=%v", lean)
		assert.Equal(t, int64(1), n.Requested().Get(gpu), "lean=%v", lean)
		assert.Equal(t, int64(1500), n.Requested().MilliCPU(), "lean=%v", lean)
		assert.Equal(t, int64(1), n.Free(gpu), "lean=%v", lean)
	}
}

// TestDefaultsFollowValidation: an invalid limit is reported once, where
// it was written, and not again as a defaulted request.
func TestDefaultsFollowValidation(t *testing.T) {
	_, err := load.Read(strings.NewReader(`apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, resources: {limits: {cpu: "-1"}}}]}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "-2"}}
`), "bad.yaml")
	require.ErrorIs(t, err, load.ErrNegativeQuantity)
	msg := err.Error()
	assert.Contains(t, msg, "spec.containers[0].resources.limits[cpu]")
	assert.NotContains(t, msg, "requests")
	assert.Contains(t, msg, "status.capacity[cpu]")
	assert.NotContains(t, msg, "allocatable")
	assert.Equal(t, 2, strings.Count(msg, "negative quantity"), msg)
}

// BenchmarkReadLimitsOnlyPods reads n hand-written pods whose two
// containers have limits and no requests (the defaults' worst case: a
// Requests map built per container).
func BenchmarkReadLimitsOnlyPods(b *testing.B) {
	for _, n := range []int{100, 1000} {
		var in strings.Builder
		for i := range n {
			fmt.Fprintf(&in, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d}\nspec:\n  containers:\n"+
				"  - {name: a, resources: {limits: {cpu: \"2\", memory: 4Gi, nvidia.com/gpu: \"1\"}}}\n"+
				"  - {name: b, resources: {limits: {cpu: 500m, memory: 1Gi}}}\n", i)
		}
		data := in.String()
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				objs, err := load.Read(strings.NewReader(data), "pods.yaml")
				if err != nil || len(objs.Pods) != n {
					b.Fatalf("Read: %d pods, %v", len(objs.Pods), err)
				}
			}
		})
	}
}

// TestReadDefaultsPodLevelRequests: pod-level resources that name a
// request or limit get the pod-level requests the API server defaults
// when it creates the pod (v1.37.2 pkg/api/pod DefaultPodLevelResources;
// examples/kube-scheduler/parity TestLoaderDefaultsMatchUpstream runs it
// on random pods), and scheduling counts them.
func TestReadDefaultsPodLevelRequests(t *testing.T) {
	pod := func(spec string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + spec
	}
	for _, c := range []struct {
		name, spec string
		want       map[v1.ResourceName]string // spec.resources.requests after loading; nil: no pod-level resources
		wantLimits map[v1.ResourceName]string // spec.resources.limits, when checked
		milliCPU   int64                      // the pod's CPU request as scheduling counts it
	}{
		{
			// cpu: the pod-level limit (no container requests cpu);
			// memory: the containers' sum, 1Gi + 512Mi.
			name: "a pod-level limit; container requests",
			spec: "  resources: {limits: {cpu: \"2\"}}\n  containers:\n  - {name: a, resources: {requests: {memory: 1Gi}}}\n  - {name: b, resources: {requests: {memory: 512Mi}}}\n",
			want: map[v1.ResourceName]string{"cpu": "2", "memory": "1536Mi"}, milliCPU: 2000,
		},
		{
			// cpu: max(containers 500m + sidecar 200m, init 1 + sidecar 200m before it) = 1200m.
			name: "init containers and a sidecar",
			spec: "  resources: {requests: {memory: 1Gi}}\n  initContainers:\n  - {name: s, restartPolicy: Always, resources: {requests: {cpu: 200m}}}\n  - {name: i, resources: {requests: {cpu: \"1\"}}}\n  containers:\n  - {name: a, resources: {requests: {cpu: 500m}}}\n",
			want: map[v1.ResourceName]string{"cpu": "1200m", "memory": "1Gi"}, milliCPU: 1200,
		},
		{
			// Each container's 0.0001 rounds up to 1m before the sum, as the
			// API server's decoding rounds it: 2m, not 1m.
			name: "sub-milli container requests",
			spec: "  resources: {limits: {memory: 1Gi}}\n  containers:\n  - {name: a, resources: {requests: {cpu: \"0.0001\"}}}\n  - {name: b, resources: {requests: {cpu: \"0.0001\"}}}\n",
			want: map[v1.ResourceName]string{"cpu": "2m", "memory": "1Gi"}, milliCPU: 2,
		},
		{
			// hugepages: the containers' limit becomes the pod's limit, then
			// its request; the extended resource is not a pod-level one.
			name:       "hugepages and an extended resource",
			spec:       "  resources: {requests: {cpu: \"1\"}}\n  containers:\n  - {name: a, resources: {limits: {hugepages-2Mi: 4Mi, memory: 1Gi, example.com/foo: \"1\"}}}\n",
			want:       map[v1.ResourceName]string{"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "4Mi"},
			wantLimits: map[v1.ResourceName]string{"hugepages-2Mi": "4Mi"},
			milliCPU:   1000,
		},
		{
			name: "a pod-level request given is kept",
			spec: "  resources: {requests: {cpu: 300m}, limits: {cpu: \"1\"}}\n  containers:\n  - {name: a, resources: {requests: {cpu: 100m}}}\n",
			want: map[v1.ResourceName]string{"cpu": "300m"}, milliCPU: 300,
		},
		{
			name: "empty pod-level resources: nothing",
			spec: "  resources: {}\n  containers:\n  - {name: a, resources: {requests: {cpu: 100m}}}\n",
			want: nil, milliCPU: 100,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs, err := load.Read(strings.NewReader(pod(c.spec)), "p.yaml")
			require.NoError(t, err)
			p := objs.Pods[0]
			if c.want == nil {
				if p.Spec.Resources != nil {
					assert.Empty(t, p.Spec.Resources.Requests)
				}
			} else {
				require.NotNil(t, p.Spec.Resources)
				got := map[v1.ResourceName]string{}
				for k, q := range p.Spec.Resources.Requests {
					got[k] = fmt.Sprint(q.MilliValue())
				}
				want := map[v1.ResourceName]string{}
				for k, s := range c.want {
					q := resource.MustParse(s)
					want[k] = fmt.Sprint(q.MilliValue())
				}
				assert.Equal(t, want, got, "spec.resources.requests in milli-units")
				for k, s := range c.wantLimits {
					q, w := p.Spec.Resources.Limits[k], resource.MustParse(s)
					assert.Equal(t, w.MilliValue(), q.MilliValue(), "limits[%s]", k)
				}
			}
			pi, err := snapshot.NewPodInfo(p)
			require.NoError(t, err)
			assert.Equal(t, c.milliCPU, pi.Requests().Requested.MilliCPU(), "the CPU scheduling counts")
		})
	}
}
