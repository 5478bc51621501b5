package load_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/internal/quantity"
	"github.com/schedkit/schedkit/snapshot/load"
)

// withDeadline runs f and fails the test when it does not return within
// 20 s: the inputs below kept apimachinery's quantity parser busy for
// minutes before they were screened. A deadline, not a timing.
func withDeadline(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return within 20s", what)
	}
}

// A quantity whose exponent apimachinery parses in time growing with it
// (or truncates) is an error naming the object and field, returned at
// once, and nothing is loaded; ReadCache says the same.
func TestReadRejectsSlowQuantities(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     load.Error
		msg      string
	}{
		{
			// Quoted: YAML reads a plain 1e-999999999 as a float, which
			// underflows to 0 before any quantity is parsed.
			name: "YAML pod request, tiny",
			in:   nodeYAML + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers:\n  - name: a\n    resources:\n      requests: {cpu: \"1e-999999999\"}\n",
			want: load.Error{File: "in.yaml", Line: 20, Document: 2, Kind: "Pod", Namespace: "ns", Name: "p", Field: "spec.containers[0].resources.requests[cpu]"},
			msg:  `in.yaml:20: document 2: Pod "ns/p": spec.containers[0].resources.requests[cpu]: load: cannot decode object: quantity exponent out of range: "1e-999999999": exponent -999999999 is below -10000`,
		},
		{
			name: "YAML pod overhead, quoted, exponent beyond int32",
			in:   "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {overhead: {memory: \"1e9919999199999999\"}, containers: [{name: a}]}\n",
			want: load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "spec.overhead[memory]"},
		},
		{
			name: "JSON node capacity, a number",
			in:   `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"capacity":{"cpu":1E-2147483648}}}`,
			want: load.Error{File: "in.yaml", Line: 1, Document: 1, Kind: "Node", Name: "n", Field: "status.capacity[cpu]"},
		},
		{
			name: "many digits and a large exponent",
			in:   "apiVersion: v1\nkind: Node\nmetadata: {name: big}\nstatus: {allocatable: {memory: 1234567890123456789e999999}}\n",
			want: load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Node", Name: "big", Field: "status.allocatable[memory]"},
		},
		{
			name: "NodeList item",
			in:   `{"apiVersion":"v1","kind":"NodeList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"},"status":{"allocatable":{"pods":"5e-99999"}}}]}`,
			want: load.Error{File: "in.yaml", Line: 1, Document: 1, Kind: "NodeList", Field: "items[1].status.allocatable[pods]"},
		},
		{
			name: "kubectl List item, read item by item",
			in:   "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: q}\n  spec:\n    containers:\n    - name: c\n      resources: {limits: {cpu: \"1e-999999999\"}}\n",
			want: load.Error{File: "in.yaml", Line: 13, Document: 1, Item: "items[1]", Kind: "Pod", Namespace: "default", Name: "q", Field: "spec.containers[0].resources.limits[cpu]"},
		},
		{
			// Skipped after decoding, but decoded all the same.
			name: "a Deployment's pod template",
			in:   "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: c, resources: {requests: {memory: \"2e-99999999\"}}}]}}}\n",
			want: load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Deployment", Namespace: "default", Name: "d", Field: "spec.template.spec.containers[0].resources.requests[memory]"},
		},
		{
			name: "an emptyDir size limit (a *Quantity)",
			in:   "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a}], volumes: [{name: v, emptyDir: {sizeLimit: 1e4294967297}}]}\n",
			want: load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "spec.volumes[0].emptyDir.sizeLimit"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, strict := range []bool{false, true} {
				var objs load.Objects
				var err error
				withDeadline(t, "Read", func() { objs, err = load.Options{Strict: strict}.Read(strings.NewReader(c.in), "in.yaml") })
				require.Error(t, err)
				assert.Equal(t, load.Objects{}, objs, "nothing is loaded")
				assert.ErrorIs(t, err, load.ErrDecode)
				assert.ErrorIs(t, err, quantity.ErrExponent)
				var e *load.Error
				require.True(t, errors.As(err, &e), "%v is not a *load.Error", err)
				got := *e
				got.Err = nil
				assert.Equal(t, c.want, got, "strict=%v: %v", strict, err)
				if c.msg != "" {
					assert.Equal(t, c.msg, err.Error())
				}

				var cacheErr error
				withDeadline(t, "ReadCache", func() {
					_, _, cacheErr = load.Options{Strict: strict}.ReadCache(strings.NewReader(c.in), "in.yaml")
				})
				require.Error(t, cacheErr)
				assert.Equal(t, err.Error(), cacheErr.Error(), "ReadCache reports as Read")
			}
		})
	}
}

// Screening looks at quantity fields only: a label or annotation that
// reads like a slow quantity is text, and an ordinary large or zero
// quantity loads as before.
func TestReadScreensQuantityFieldsOnly(t *testing.T) {
	in := "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {size: \"1e-999999999\"}\n  annotations: {a: \"1e9919999199999999\", b: \"12e-99999\"}\n" +
		"status: {capacity: {cpu: 1e999999999, memory: 0e-999999999, ephemeral-storage: \"1e-10000\"}}\n" +
		"---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {resources: {requests: {cpu: \"1e-999999999\"}}}\n"
	var objs load.Objects
	var err error
	withDeadline(t, "Read", func() { objs, err = load.Read(strings.NewReader(in), "in.yaml") })
	require.NoError(t, err)
	require.Len(t, objs.Nodes, 1)
	n := objs.Nodes[0]
	assert.Equal(t, "1e-999999999", n.Labels["size"])
	assert.Equal(t, "1e9919999199999999", n.Annotations["a"])
	assert.Equal(t, "1e999999999", n.Status.Capacity.Cpu().String())
	assert.True(t, n.Status.Capacity.Memory().IsZero())
	assert.Equal(t, int64(1), n.Status.Capacity.StorageEphemeral().ScaledValue(-9), "1e-10000 rounds up to a nano-unit, as apimachinery does (pods, an integer resource, would be refused)")
	assert.Len(t, objs.Skipped, 1, "the Widget, of an unknown kind, is skipped undecoded")
}
