package load_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot/load"
)

// TestReadAppliesAPIServerResourceRules: what the API server refuses in a
// pod's or node's resources (k8s.io/kubernetes v1.37.2
// pkg/apis/core/validation validateResourceRequirements and
// ValidateResourceQuantityValue) is an ErrInvalidObject naming the object
// and the field; what it accepts loads. examples/kube-scheduler/parity
// TestLoaderResourceRulesMatchUpstream runs upstream's validation on
// random requirements against the same rules.
func TestReadAppliesAPIServerResourceRules(t *testing.T) {
	pod := func(resources string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: c, resources: " + resources + "}]}\n"
	}
	for _, c := range []struct {
		name, in string
		msg      string // "" when the input loads
	}{
		{"half a GPU", pod(`{limits: {nvidia.com/gpu: "0.5"}}`),
			`in.yaml:4: document 1: Pod "ns/p": spec.containers[0].resources.limits[nvidia.com/gpu]: load: invalid object: 500m: must be an integer (nvidia.com/gpu is counted in whole units)`},
		{"half a GPU requested", pod(`{requests: {nvidia.com/gpu: 500m}, limits: {nvidia.com/gpu: 500m}}`),
			`in.yaml:4: document 1: Pod "ns/p": spec.containers[0].resources.limits[nvidia.com/gpu]: load: invalid object: 500m: must be an integer (nvidia.com/gpu is counted in whole units)` + "\n" +
				`in.yaml:4: document 1: Pod "ns/p": spec.containers[0].resources.requests[nvidia.com/gpu]: load: invalid object: 500m: must be an integer (nvidia.com/gpu is counted in whole units)`},
		{"GPU request above limit", pod(`{requests: {nvidia.com/gpu: 2}, limits: {nvidia.com/gpu: 1}}`),
			`in.yaml:4: document 1: Pod "ns/p": spec.containers[0].resources.requests[nvidia.com/gpu]: load: invalid object: 2: must be equal to nvidia.com/gpu limit of 1`},
		{"GPU request below limit", pod(`{requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 2}}`),
			`in.yaml:4: document 1: Pod "ns/p": spec.containers[0].resources.requests[nvidia.com/gpu]: load: invalid object: 1: must be equal to nvidia.com/gpu limit of 2`},
		{"GPU request without limit", pod(`{requests: {nvidia.com/gpu: 1}}`),
			`in.yaml:4: document 1: Pod "ns/p": spec.containers[0].resources.limits[nvidia.com/gpu]: load: invalid object: required: nvidia.com/gpu cannot be overcommitted: the API server wants a limit equal to the request 1`},
		{"cpu request above limit", pod(`{requests: {cpu: 1500m}, limits: {cpu: "1"}}`),
			`in.yaml:4: document 1: Pod "ns/p": spec.containers[0].resources.requests[cpu]: load: invalid object: 1500m: must be less than or equal to cpu limit of 1`},
		{"memory request above limit by one byte", pod(`{requests: {memory: "1073741825"}, limits: {memory: 1Gi}}`),
			`in.yaml:4: document 1: Pod "ns/p": spec.containers[0].resources.requests[memory]: load: invalid object: 1073741825: must be less than or equal to memory limit of 1Gi`},
		{"hugepages request below limit", pod(`{requests: {hugepages-2Mi: 2Mi, memory: 1Gi}, limits: {hugepages-2Mi: 4Mi}}`),
			`in.yaml:4: document 1: Pod "ns/p": spec.containers[0].resources.requests[hugepages-2Mi]: load: invalid object: 2Mi: must be equal to hugepages-2Mi limit of 4Mi`},
		{"fractional extended resource on a node",
			"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {example.com/foo: 1500m}}\n",
			`in.yaml:4: document 1: Node "n1": status.capacity[example.com/foo]: load: invalid object: 1500m: must be an integer (example.com/foo is counted in whole units)`},
		{"fractional pods on a node",
			"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {pods: \"110.5\"}}\n",
			`in.yaml:4: document 1: Node "n1": status.allocatable[pods]: load: invalid object: 110500m: must be an integer (pods is counted in whole units)`},
		{"fractional overhead of an extended resource",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {overhead: {example.com/foo: 100m}}\n",
			`in.yaml:4: document 1: Pod "default/p": spec.overhead[example.com/foo]: load: invalid object: 100m: must be an integer (example.com/foo is counted in whole units)`},
		{"pod-level request above limit",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {resources: {requests: {cpu: \"2\"}, limits: {cpu: \"1\"}}}\n",
			`in.yaml:4: document 1: Pod "default/p": spec.resources.requests[cpu]: load: invalid object: 2: must be less than or equal to cpu limit of 1`},
		{"init container", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {initContainers: [{name: i, resources: {limits: {example.com/foo: \"0.1\"}}}]}\n",
			`in.yaml:4: document 1: Pod "default/p": spec.initContainers[0].resources.limits[example.com/foo]: load: invalid object: 100m: must be an integer (example.com/foo is counted in whole units)`},

		// Accepted, as the API server accepts them.
		{"whole GPUs", pod(`{requests: {nvidia.com/gpu: 2}, limits: {nvidia.com/gpu: "2"}}`), ""},
		{"GPU limit only (the request defaults to it)", pod(`{limits: {nvidia.com/gpu: 1}}`), ""},
		{"GPU written as 1000m", pod(`{limits: {nvidia.com/gpu: 1000m}}`), ""},
		{"1.9999 GPUs, 2000m rounded up: the API server's test passes it", pod(`{limits: {nvidia.com/gpu: "1.9999"}}`), ""},
		{"equal values written differently", pod(`{requests: {cpu: 1000m, memory: 1024Mi}, limits: {cpu: "1", memory: 1Gi}}`), ""},
		{"cpu request below limit, memory request without limit", pod(`{requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: "1"}}`), ""},
		{"fractional cpu and kubernetes.io resources", pod(`{requests: {cpu: 0.5, ephemeral-storage: 0.5, example.kubernetes.io/x: 0.5}}`), ""},
		{"an extended resource beyond int64 that is an integer (deliberately accepted)", pod(`{limits: {nvidia.com/gpu: 1e30}}`), ""},
		{"an integer node capacity", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {nvidia.com/gpu: 8, pods: 110}}\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, strict := range []bool{false, true} {
				objs, err := load.Options{Strict: strict}.Read(strings.NewReader(c.in), "in.yaml")
				if c.msg == "" {
					require.NoError(t, err)
					assert.Equal(t, 1, len(objs.Pods)+len(objs.Nodes))
					continue
				}
				require.Error(t, err)
				assert.True(t, errors.Is(err, load.ErrInvalidObject), "%v", err)
				assert.Equal(t, c.msg, err.Error())
				assert.Empty(t, objs.Pods, "nothing half-loaded")
				assert.Empty(t, objs.Nodes, "nothing half-loaded")
				_, _, cacheErr := load.Options{Strict: strict}.ReadCache(strings.NewReader(c.in), "in.yaml")
				require.Error(t, cacheErr)
				assert.Equal(t, err.Error(), cacheErr.Error(), "ReadCache reports as Read")
			}
		})
	}
}
