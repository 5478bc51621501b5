package load_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load"
)

// FuzzRead checks Read's contract on arbitrary input: it never panics; it
// returns either an error and the zero Objects, or objects that all have a
// name, pods with a namespace, unique keys and no negative quantity in any
// resource list (checked by a reflection walk independent of the loader's
// own validation); and reading the same bytes again, one byte per Read
// call, gives the same result.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		"",
		"---\n",
		nodeYAML,
		podYAML,
		nodeYAML + "---\n" + podYAML,
		kubectlOutput,
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"j1"}}{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`,
		`{"apiVersion":"v1","kind":"NodeList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"a"}}]}`,
		`{"apiVersion":"v1","kind":"List","items":[null,{"kind":"Pod"}]}`,
		"{apiVersion: v1, kind: Node, metadata: {name: f1}}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: -1}}}]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {overhead: {cpu: 1e1000}, resources: {limits: {memory: 50E}}}\n",
		"apiVersion: v1\nkind: Node\nmetadata: {name: x}\nstatus: {capacity: {cpu: two}}\n",
		"apiVersion: v1\nkind: Node\n  metadata: x\n",
		nodeYAML + "---oops\n" + podYAML,
		"- a\n- b\n",
		"{\"apiVersion\": \"v1\",\n \"kind\": \"Node\",\n \"metadata\": {\"name\": \"x\"]}",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
		"\xef\xbb\xbfapiVersion: v1\r\nkind: Node\r\nmetadata: {name: bom}\r\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: z, operator: In}]}]}}}}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: P_1, namespace: x}\nspec: {nodeSelector: {'a b': c}}\n",
		"apiVersion: v1\nkind: Node\nmetadata: {name: Node_1}\n",
		// The streaming path: JSON documents separated by "---" (YAML after
		// the second value fails), three JSON values then garbage (a JSON
		// error), blank lines beyond the first peek, a bad separator late.
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}}` + "\n---\n" + `{"apiVersion":"v1","kind":"Node","metadata":{"name":"b"}}`,
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}}{"kind":"Pod"}{"apiVersion":"v1","kind":"Node","metadata":{"name":"c"}}` + "\n---\n",
		strings.Repeat("\n", 700) + `{"apiVersion":"v1","kind":"Node","metadata":{"name":"deep"}}`,
		strings.Repeat(nodeYAML+"---\n", 3) + "---bad\n",
		// Quantities apimachinery would parse for minutes: refused at once.
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: \"1e-999999999\"}}}]}\n",
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"capacity":{"memory":1e9919999199999999}}}`,
		"apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {a: \"1e-999999999\"}}\nstatus: {allocatable: {cpu: 1234567890123456789e99999}}\n",
		// The API server's resource rules: fractional extended resources,
		// requests above limits, non-overcommitable requests without limits.
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"0.5\"}}}]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: 2, example.com/a: 1}, limits: {cpu: 1, example.com/a: 1}}}]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"1.9999\"}}}], overhead: {example.com/a: 1e30}}\n",
		"apiVersion: v1\nkind: Node\nmetadata: {name: x}\nstatus: {capacity: {example.com/foo: 1500m, pods: 110.5}}\n",
		// Values of the wrong JSON type (mistypedField names the field).
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: five, paused: 1}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: n}\nspec: {priority: 99999999999, containers: {name: c}}\n",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	for _, tt := range trailingInputs {
		f.Add([]byte(tt.in), false)
		f.Add([]byte(tt.in), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, strict bool) {
		opts := load.Options{Strict: strict}
		objs, err := opts.Read(bytes.NewReader(in), "fuzz")
		// The stream read one byte at a time: same result (buffer and
		// peek boundaries do not matter).
		again, err2 := opts.Read(iotest.OneByteReader(bytes.NewReader(in)), "fuzz")
		if err != nil {
			require.Equal(t, load.Objects{}, objs, "objects returned with an error")
			require.Error(t, err2, "second read succeeded")
			require.Equal(t, err.Error(), err2.Error(), "errors differ between reads")
			return
		}
		require.NoError(t, err2, "second read failed")
		require.Equal(t, objs, again, "results differ between reads")

		nodes := map[string]bool{}
		for i, n := range objs.Nodes {
			require.NotEmpty(t, n.Name, "node %d has no name", i)
			require.False(t, nodes[n.Name], "duplicate node %q", n.Name)
			nodes[n.Name] = true
			checkQuantities(t, "Node "+n.Name, reflect.ValueOf(n.Status))
			checkAPIRules(t, "Node "+n.Name+" capacity", v1.ResourceRequirements{Limits: n.Status.Capacity})
			checkAPIRules(t, "Node "+n.Name+" allocatable", v1.ResourceRequirements{Limits: n.Status.Allocatable})
			require.NoError(t, snapshot.NewCache().AddNode(n), "node %s: the Cache refuses it", n.Name)
		}
		pods := map[string]bool{}
		for i, p := range objs.Pods {
			require.NotEmpty(t, p.Name, "pod %d has no name", i)
			require.NotEmpty(t, p.Namespace, "pod %s has no namespace", p.Name)
			key := p.Namespace + "/" + p.Name
			require.False(t, pods[key], "duplicate pod %q", key)
			pods[key] = true
			spec := p.Spec
			spec.Volumes = nil // volume claim templates are not scheduling inputs
			checkQuantities(t, "Pod "+key, reflect.ValueOf(spec))
			checkQuantities(t, "Pod "+key, reflect.ValueOf(p.Status))
			for _, cs := range [][]v1.Container{p.Spec.Containers, p.Spec.InitContainers} {
				for _, c := range cs {
					checkAPIRules(t, "Pod "+key+" container "+c.Name, c.Resources)
				}
			}
			require.Empty(t, snapshot.ValidatePod(p), "pod %s: the Cache would refuse it", key)
		}
	})
}

var resourceListType = reflect.TypeFor[v1.ResourceList]()

// checkQuantities fails if any v1.ResourceList reachable from v holds a
// negative quantity.
func checkQuantities(t *testing.T, what string, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkQuantities(t, what, v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				checkQuantities(t, what, v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			checkQuantities(t, what, v.Index(i))
		}
	case reflect.Map:
		if v.Type() != resourceListType {
			return
		}
		for name, q := range v.Interface().(v1.ResourceList) {
			require.GreaterOrEqual(t, q.Sign(), 0, "%s: %s = %s is negative", what, name, q.String())
		}
	}
}

// checkAPIRules fails if r breaks the API server's rules on resources, by
// a plain reading of them (k8s.io/kubernetes v1.37.2 pkg/apis/core
// validation): a quantity of an extended resource (a name with a domain
// outside kubernetes.io) is a whole number of milli-units/1000, and a
// request is at most its limit, equal to it for an extended resource.
// Quantities of exponents beyond ±30 are left out (apimachinery's Cmp and
// MilliValue are slow or wrap there).
func checkAPIRules(t *testing.T, what string, r v1.ResourceRequirements) {
	t.Helper()
	moderate := func(q resource.Quantity) bool {
		d := q.AsDec()
		return d.Scale() > -12 && d.Scale() < 30 && d.UnscaledBig().BitLen() < 60
	}
	extended := func(name v1.ResourceName) bool {
		return strings.Contains(string(name), "/") && !strings.Contains(string(name), "kubernetes.io/")
	}
	for _, rl := range []v1.ResourceList{r.Limits, r.Requests} {
		for name, q := range rl {
			if extended(name) && moderate(q.DeepCopy()) && q.MilliValue() < 1e15 {
				require.Zero(t, q.MilliValue()%1000, "%s: %s = %s is not a whole number", what, name, q.String())
			}
		}
	}
	for name, req := range r.Requests {
		lim, ok := r.Limits[name]
		if !ok || !moderate(req.DeepCopy()) || !moderate(lim.DeepCopy()) {
			require.True(t, ok || !extended(name), "%s: %s requested without a limit", what, name)
			continue
		}
		if extended(name) {
			require.Zero(t, req.Cmp(lim), "%s: %s request %s differs from its limit %s", what, name, req.String(), lim.String())
		}
		require.LessOrEqual(t, req.Cmp(lim), 0, "%s: %s request %s above its limit %s", what, name, req.String(), lim.String())
	}
}
