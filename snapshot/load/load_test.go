package load_test

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load"
)

const nodeYAML = `apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  capacity:
    cpu: "4"
    memory: 8Gi
  allocatable:
    cpu: 3500m
    memory: 7Gi
`

const podYAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
spec:
  containers:
  - name: main
    resources:
      requests:
        cpu: 250m
        memory: 64Mi
`

// kubectlOutput is what `kubectl get nodes,pods,svc -A -o yaml` prints.
const kubectlOutput = `apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    labels:
      kubernetes.io/hostname: kind-control-plane
    name: kind-control-plane
  spec:
    taints:
    - effect: NoSchedule
      key: node-role.kubernetes.io/control-plane
  status:
    allocatable:
      cpu: "8"
      ephemeral-storage: 101430960Ki
      memory: 16283212Ki
      pods: "110"
    capacity:
      cpu: "8"
      ephemeral-storage: 101430960Ki
      memory: 16283212Ki
      pods: "110"
- apiVersion: v1
  kind: Pod
  metadata:
    name: coredns-7db6d8ff4d-2xk8q
    namespace: kube-system
  spec:
    containers:
    - name: coredns
      resources:
        limits:
          memory: 170Mi
        requests:
          cpu: 100m
          memory: 70Mi
    nodeName: kind-control-plane
    priorityClassName: system-cluster-critical
  status:
    phase: Running
- apiVersion: v1
  kind: Service
  metadata:
    name: kubernetes
    namespace: default
  spec:
    clusterIP: 10.96.0.1
kind: List
metadata:
  resourceVersion: ""
`

func TestReadFormats(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		nodes     []string // names, in order
		pods      []string // namespace/name, in order
		skipped   map[schema.GroupVersionKind]int
		checkFunc func(t *testing.T, objs load.Objects)
	}{
		{name: "empty input", in: ""},
		{name: "only comments and separators", in: "# nothing\n---\n---\n# here\n"},
		{name: "single node", in: nodeYAML, nodes: []string{"n1"}},
		{name: "single pod", in: podYAML, pods: []string{"shop/web"}},
		{
			name:  "multi-document YAML with leading and trailing separators",
			in:    "---\n" + nodeYAML + "---\n" + podYAML + "---\n",
			nodes: []string{"n1"}, pods: []string{"shop/web"},
		},
		{
			name:  "CRLF line endings",
			in:    strings.ReplaceAll(nodeYAML+"---\n"+podYAML, "\n", "\r\n"),
			nodes: []string{"n1"}, pods: []string{"shop/web"},
		},
		{
			name:  "single JSON object",
			in:    `{"apiVersion":"v1","kind":"Node","metadata":{"name":"j1"}}`,
			nodes: []string{"j1"},
		},
		{
			name:  "concatenated JSON objects",
			in:    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"j1\"}}\n{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"j2\"}}",
			nodes: []string{"j1", "j2"},
		},
		{
			// The second JSON value fails: the stream is YAML (as
			// yaml.NewYAMLOrJSONDecoder decides).
			name:  "JSON documents separated by ---",
			in:    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"j1\"}}\n---\n{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"j2\"}}\n",
			nodes: []string{"j1", "j2"},
		},
		{
			name:  "YAML flow mapping that is not JSON",
			in:    "{apiVersion: v1, kind: Node, metadata: {name: f1}}\n",
			nodes: []string{"f1"},
		},
		{
			name:  "kubectl get -o yaml List with a Service",
			in:    kubectlOutput,
			nodes: []string{"kind-control-plane"},
			pods:  []string{"kube-system/coredns-7db6d8ff4d-2xk8q"},
			checkFunc: func(t *testing.T, objs load.Objects) {
				require.Len(t, objs.Others, 1, "the Service is read, for the Cache")
				assert.Equal(t, "default", objs.Others[0].(*v1.Service).Namespace)
				n := objs.Nodes[0]
				assert.Equal(t, int64(8000), n.Status.Allocatable.Cpu().MilliValue())
				assert.Equal(t, int64(16283212*1024), n.Status.Allocatable.Memory().Value())
				require.Len(t, n.Spec.Taints, 1)
				p := objs.Pods[0]
				assert.Equal(t, "kind-control-plane", p.Spec.NodeName)
				assert.Equal(t, v1.PodRunning, p.Status.Phase)
				assert.Equal(t, int64(100), p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue())
			},
		},
		{
			name:  "NodeList",
			in:    `{"apiVersion":"v1","kind":"NodeList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`,
			nodes: []string{"a", "b"},
		},
		{
			name: "PodList with a pod without namespace",
			in:   "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: p1, namespace: x}\n- metadata: {name: p2}\n",
			pods: []string{"x/p1", "default/p2"},
		},
		{
			name:  "nested List",
			in:    `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"deep"}}]}]}`,
			nodes: []string{"deep"},
		},
		{
			name: "other groups and core kinds are skipped and counted",
			in: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n---\n" +
				"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: e}\n---\n" +
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" + nodeYAML,
			nodes: []string{"n1"},
			skipped: map[schema.GroupVersionKind]int{
				{Group: "apps", Version: "v1", Kind: "Deployment"}: 2,
				{Version: "v1", Kind: "ConfigMap"}:                 1,
			},
		},
		{
			name: "quantities beyond int64 are accepted unchanged",
			in:   "apiVersion: v1\nkind: Pod\nmetadata: {name: huge}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests: {cpu: 1e1000, memory: 50E}\n",
			pods: []string{"default/huge"},
			checkFunc: func(t *testing.T, objs load.Objects) {
				req := objs.Pods[0].Spec.Containers[0].Resources.Requests
				assert.Equal(t, "50E", req.Memory().String())
				assert.Equal(t, 1, req.Cpu().Sign())
				assert.Equal(t, 1, req.Cpu().Cmp(resource.MustParse("9223372036854775807")), "1e1000 kept above MaxInt64")
			},
		},
		{
			name:  "zero and negative-zero quantities are valid",
			in:    "apiVersion: v1\nkind: Node\nmetadata: {name: z}\nstatus:\n  capacity: {cpu: \"0\", memory: \"-0\"}\n",
			nodes: []string{"z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := load.Read(strings.NewReader(tt.in), "in.yaml")
			require.NoError(t, err)
			assert.Equal(t, tt.nodes, nodeNames(objs), "nodes")
			assert.Equal(t, tt.pods, podKeys(objs), "pods")
			assert.Equal(t, tt.skipped, objs.Skipped, "skipped")
			if tt.checkFunc != nil {
				tt.checkFunc(t, objs)
			}
		})
	}
}

// TestReadErrors covers every error class: each case names the sentinel and
// where the error must point.
func TestReadErrors(t *testing.T) {
	tests := []struct {
		name     string
		opts     load.Options
		in       string
		sentinel error
		want     load.Error // Err is not compared
		msg      string     // substring of the whole message
	}{
		{
			name: "malformed YAML reports the absolute line",
			// line 1 "apiVersion: v1", line 2 "---", line 3 "kind: Node",
			// line 4 is the bad indentation; go-yaml says "line 2" of document 2.
			in:       "apiVersion: v1\n---\nkind: Node\n  metadata: x\n",
			sentinel: load.ErrSyntax,
			want:     load.Error{File: "in.yaml", Line: 4, Document: 2},
			msg:      "in.yaml:4: document 2: load: malformed YAML or JSON: yaml: mapping values are not allowed",
		},
		{
			name:     "tab indentation",
			in:       nodeYAML + "---\n\tkind: Pod\n",
			sentinel: load.ErrSyntax,
			want:     load.Error{File: "in.yaml", Line: 13, Document: 2},
		},
		{
			name:     "bad document separator",
			in:       nodeYAML + "---oops\n" + podYAML,
			sentinel: load.ErrSyntax,
			want:     load.Error{File: "in.yaml", Line: 12, Document: 1},
			msg:      "invalid Yaml document separator: oops",
		},
		{
			// Not YAML either (a trailing comma would be valid YAML and
			// accepted, as yaml.NewYAMLOrJSONDecoder does).
			name:     "malformed JSON reports the line of the error",
			in:       "{\"apiVersion\": \"v1\",\n \"kind\": \"Node\",\n \"metadata\": {\"name\": \"x\"]}",
			sentinel: load.ErrSyntax,
			want:     load.Error{File: "in.yaml", Line: 3, Document: 1},
			msg:      "in.yaml:3: document 1: load: malformed YAML or JSON: invalid character ']' after object key:value pair",
		},
		{
			// After two JSON values the stream is JSON: a "---" is its
			// syntax error, where it stands.
			name:     "separator after two JSON values",
			in:       "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"j1\"}}\n{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"j2\"}}\n---\n{}\n",
			sentinel: load.ErrSyntax,
			want:     load.Error{File: "in.yaml", Line: 3, Document: 3},
			msg:      "invalid character '-' in numeric literal",
		},
		{
			name:     "document that is a list",
			in:       "- a\n- b\n",
			sentinel: load.ErrDecode,
			want:     load.Error{File: "in.yaml", Line: 1, Document: 1},
			msg:      "an array is not a mapping",
		},
		{
			name:     "missing kind",
			in:       "apiVersion: v1\nmetadata: {name: x}\n",
			sentinel: load.ErrMissingKind,
			want:     load.Error{File: "in.yaml", Line: 1, Document: 1, Field: "kind"},
		},
		{
			name:     "missing apiVersion",
			in:       "kind: Node\nmetadata: {name: x}\n",
			sentinel: load.ErrMissingKind,
			want:     load.Error{File: "in.yaml", Line: 1, Document: 1, Kind: "Node", Field: "apiVersion"},
		},
		{
			name:     "field of the wrong type",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: oops}\n",
			sentinel: load.ErrDecode,
			want:     load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "spec.containers"},
			msg:      `"oops" is not a list`,
		},
		{
			name:     "a string for an integer names the field",
			in:       "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ns\nspec:\n  replicas: five\n",
			sentinel: load.ErrDecode,
			want:     load.Error{File: "in.yaml", Line: 7, Document: 1, Kind: "Deployment", Namespace: "ns", Name: "d", Field: "spec.replicas"},
			msg:      `"five" is not an integer (int32)`,
		},
		{
			name:     "a number beyond the field's range names the field",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priority: 99999999999\n",
			sentinel: load.ErrDecode,
			want:     load.Error{File: "in.yaml", Line: 5, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "spec.priority"},
			msg:      "99999999999 is out of range for int32",
		},
		{
			name:     "a string for a boolean in a list item names the field",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n  - name: b\n    stdin: \"yes\"\n",
			sentinel: load.ErrDecode,
			want:     load.Error{File: "in.yaml", Line: 8, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "spec.containers[1].stdin"},
			msg:      `"yes" is not a boolean`,
		},
		{
			name:     "an unquoted yes for a string: the hint to quote it",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    env:\n    - name: DEBUG\n      value: yes\n",
			sentinel: load.ErrDecode,
			want:     load.Error{File: "in.yaml", Line: 9, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "spec.containers[0].env[0].value"},
			msg:      "true is not a string (quote it: YAML reads unquoted y, n, yes, no, on, off, true and false as booleans)",
		},
		{
			name:     "an unquoted number for a string: the hint to quote it",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: x\n    workingDir: 1.10\n",
			sentinel: load.ErrDecode,
			want:     load.Error{File: "in.yaml", Line: 8, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "spec.containers[0].workingDir"},
			msg:      "1.1 is not a string (quote it: YAML reads an unquoted number as a number)",
		},
		{
			// The object is still named as written (it said Pod "").
			name:     "a number for the name names the object by it",
			in:       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: 123\n",
			sentinel: load.ErrDecode,
			want:     load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Pod", Namespace: "default", Name: "123", Field: "metadata.name"},
			msg:      "123 is not a string (quote it: YAML reads an unquoted number as a number)",
		},
		{
			// Not labelled "default", as it was.
			name:     "a number for the namespace names it",
			in:       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: 7\n",
			sentinel: load.ErrDecode,
			want:     load.Error{File: "in.yaml", Line: 5, Document: 1, Kind: "Pod", Namespace: "7", Name: "p", Field: "metadata.namespace"},
			msg:      "7 is not a string (quote it: YAML reads an unquoted number as a number)",
		},
		{
			name:     "a cluster-scoped object gets no namespace",
			in:       "apiVersion: v1\nkind: Node\nmetadata: {name: node1}\nspec:\n  unschedulable: 1\n",
			sentinel: load.ErrDecode,
			want:     load.Error{File: "in.yaml", Line: 5, Document: 1, Kind: "Node", Name: "node1", Field: "spec.unschedulable"},
			msg:      "1 is not a boolean",
		},
		{
			name:     "malformed quantity names the field",
			in:       "---\n" + nodeYAML + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers:\n  - name: a\n  - name: b\n    resources:\n      limits: {memory: 1Gi, cpu: two}\n",
			sentinel: load.ErrDecode,
			// Document 1 is lines 1-12 (its leading "---" included), line 13
			// separates, document 2 starts at line 14.
			want: load.Error{File: "in.yaml", Line: 22, Document: 2, Kind: "Pod", Namespace: "ns", Name: "p",
				Field: "spec.containers[1].resources.limits[cpu]"},
			msg: `in.yaml:22: document 2: Pod "ns/p": spec.containers[1].resources.limits[cpu]: load: cannot decode object: invalid quantity: "two"`,
		},
		{
			name:     "missing node name",
			in:       "apiVersion: v1\nkind: Node\nmetadata: {labels: {a: b}}\n",
			sentinel: load.ErrMissingName,
			want:     load.Error{File: "in.yaml", Line: 3, Document: 1, Kind: "Node", Field: "metadata.name"},
		},
		{
			name:     "missing pod name (generateName is not resolved)",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-}\n",
			sentinel: load.ErrMissingName,
			want:     load.Error{File: "in.yaml", Line: 3, Document: 1, Kind: "Pod", Namespace: "default", Field: "metadata.name"},
		},
		{
			name:     "negative node capacity",
			in:       "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus: {capacity: {cpu: -1}}\n",
			sentinel: load.ErrNegativeQuantity,
			want:     load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Node", Name: "n0", Field: "status.capacity[cpu]"},
			msg:      `in.yaml:4: document 1: Node "n0": status.capacity[cpu]: load: negative quantity -1`,
		},
		{
			name:     "negative node allocatable extended resource",
			in:       "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus: {allocatable: {nvidia.com/gpu: -2}}\n",
			sentinel: load.ErrNegativeQuantity,
			want:     load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Node", Name: "n0", Field: "status.allocatable[nvidia.com/gpu]"},
		},
		{
			name:     "negative container request",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {memory: -1Mi}}}]}\n",
			sentinel: load.ErrNegativeQuantity,
			want:     load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "spec.containers[0].resources.requests[memory]"},
		},
		{
			name:     "negative init container limit",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {initContainers: [{name: i, resources: {limits: {cpu: -100m}}}]}\n",
			sentinel: load.ErrNegativeQuantity,
			want:     load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "spec.initContainers[0].resources.limits[cpu]"},
		},
		{
			name:     "negative overhead",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {overhead: {cpu: -5m}}\n",
			sentinel: load.ErrNegativeQuantity,
			want:     load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "spec.overhead[cpu]"},
		},
		{
			name:     "negative pod-level resources",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {resources: {requests: {memory: -1}}}\n",
			sentinel: load.ErrNegativeQuantity,
			want:     load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "spec.resources.requests[memory]"},
		},
		{
			name:     "negative allocated resources in a container status",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {containerStatuses: [{name: c, allocatedResources: {cpu: -1}}]}\n",
			sentinel: load.ErrNegativeQuantity,
			want:     load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Pod", Namespace: "default", Name: "p", Field: "status.containerStatuses[0].allocatedResources[cpu]"},
		},
		{
			name:     "negative quantity in a List item",
			in:       `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"ok"}},{"apiVersion":"v1","kind":"Node","metadata":{"name":"bad"},"status":{"capacity":{"pods":"-3"}}}]}`,
			sentinel: load.ErrNegativeQuantity,
			want:     load.Error{File: "in.yaml", Line: 1, Document: 1, Item: "items[1]", Kind: "Node", Name: "bad", Field: "status.capacity[pods]"},
			msg:      `in.yaml:1: document 1, items[1]: Node "bad": status.capacity[pods]`,
		},
		{
			name:     "null List item",
			in:       `{"apiVersion":"v1","kind":"List","items":[null]}`,
			sentinel: load.ErrDecode,
			want:     load.Error{File: "in.yaml", Line: 1, Document: 1, Item: "items[0]"},
		},
		{
			name:     "duplicate node name",
			in:       nodeYAML + "---\n" + nodeYAML,
			sentinel: load.ErrDuplicate,
			want:     load.Error{File: "in.yaml", Line: 16, Document: 2, Kind: "Node", Name: "n1", Field: "metadata.name"},
			msg:      "also at in.yaml:1: document 1",
		},
		{
			name:     "duplicate pod namespace/name, one namespace defaulted",
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
			sentinel: load.ErrDuplicate,
			want:     load.Error{File: "in.yaml", Line: 7, Document: 2, Kind: "Pod", Namespace: "default", Name: "p", Field: "metadata.name"},
		},
		{
			name:     "strict: unknown field",
			opts:     load.Options{Strict: true},
			in:       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {request: {cpu: 1}}}]}\n",
			sentinel: load.ErrUnknownField,
			// The line of the longest part of the path the YAML spells
			// in block style (spec), as for a field's own errors.
			want: load.Error{File: "in.yaml", Line: 4, Document: 1, Kind: "Pod", Namespace: "default", Name: "p"},
			msg:  `unknown field "spec.containers[0].resources.request"`,
		},
		{
			// Two unknown fields: the line of the first in the document
			// (the error lists them sorted: imagePulPolicy first).
			name:     "strict: unknown fields in block style",
			opts:     load.Options{Strict: true},
			in:       "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resource:\n      requests: {cpu: 1}\n    imagePulPolicy: Always\n",
			sentinel: load.ErrUnknownField,
			want:     load.Error{File: "in.yaml", Line: 8, Document: 1, Kind: "Pod", Namespace: "default", Name: "p"},
			msg:      `unknown field "spec.containers[0].imagePulPolicy", unknown field "spec.containers[0].resource"`,
		},
		{
			name:     "strict: duplicate YAML key",
			opts:     load.Options{Strict: true},
			in:       "apiVersion: v1\nkind: Node\nmetadata: {name: a, name: b}\n",
			sentinel: load.ErrUnknownField,
			// The line of the duplicate key, which go-yaml names.
			want: load.Error{File: "in.yaml", Line: 3, Document: 1},
		},
		{
			name:     "reject other kinds",
			opts:     load.Options{RejectOtherKinds: true},
			in:       nodeYAML + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
			sentinel: load.ErrKind,
			want:     load.Error{File: "in.yaml", Line: 13, Document: 2, Kind: "Deployment", Namespace: "default", Name: "d"},
			msg:      "apps/v1 Deployment",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := tt.opts.Read(strings.NewReader(tt.in), "in.yaml")
			require.Error(t, err)
			assert.Equal(t, load.Objects{}, objs, "nothing half-loaded")
			assert.ErrorIs(t, err, tt.sentinel)
			var e *load.Error
			require.ErrorAs(t, err, &e)
			got := *e
			got.Err = nil
			assert.Equal(t, tt.want, got, "error: %v", err)
			if tt.msg != "" {
				assert.Contains(t, err.Error(), tt.msg)
			}
			// Streaming into a cache reports the same errors and
			// returns no cache.
			c, cobjs, cerr := tt.opts.ReadCache(strings.NewReader(tt.in), "in.yaml", snapshot.LeanPods())
			require.Error(t, cerr)
			assert.Nil(t, c)
			assert.Equal(t, load.Objects{}, cobjs)
			assert.Equal(t, err.Error(), cerr.Error())
		})
	}
}

func TestReadIsLenientByDefault(t *testing.T) {
	in := "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nspec: {someFutureField: 1}\n"
	objs, err := load.Read(strings.NewReader(in), "in.yaml")
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, nodeNames(objs))
}

func TestReadReportsAllProblemsUpToALimit(t *testing.T) {
	// Two problems in one pod, one in another document: all three reported.
	in := "apiVersion: v1\nkind: Pod\nmetadata: {}\nspec: {overhead: {cpu: -1}}\n---\n" +
		"apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus: {capacity: {memory: -1}}\n"
	_, err := load.Read(strings.NewReader(in), "in.yaml")
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "in.yaml:3: document 1: Pod \"default/\": metadata.name: load: missing metadata.name")
	assert.Contains(t, msg, "in.yaml:4: document 1: Pod \"default/\": spec.overhead[cpu]: load: negative quantity -1")
	assert.Contains(t, msg, "in.yaml:9: document 2: Node \"n0\": status.capacity[memory]: load: negative quantity -1")

	// 25 bad nodes: 10 listed, then a count.
	var b strings.Builder
	for range 25 {
		b.WriteString("---\napiVersion: v1\nkind: Node\nmetadata: {}\n")
	}
	_, err = load.Read(strings.NewReader(b.String()), "many.yaml")
	require.ErrorIs(t, err, load.ErrMissingName)
	assert.Equal(t, 11, strings.Count(err.Error(), "\n")+1, "10 errors and a count line")
	assert.Contains(t, err.Error(), "load: 15 more errors not shown")
}

func TestReadIOError(t *testing.T) {
	objs, err := load.Read(failingReader{}, "broken")
	assert.Equal(t, load.Objects{}, objs)
	require.ErrorIs(t, err, load.ErrIO)
	assert.Contains(t, err.Error(), "broken: load: cannot read input: disk on fire")
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	node := func(name string) string {
		return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\n"
	}
	write("b/2.yaml", node("b2"))
	write("b/1.YML", node("b1"))
	write("a.json", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}}`)
	write("c/d/e.yaml", node("e")+"---\n"+podYAML)
	write("README.md", "not yaml: [")
	write("b/notes.txt", "ignored")
	extra := write("extra.manifest", node("x")) // outside any walked dir's filter, named directly

	t.Run("directory walked in lexical order, files named directly always read", func(t *testing.T) {
		objs, err := load.Files(filepath.Join(dir, "b"), filepath.Join(dir, "a.json"), filepath.Join(dir, "c"), extra)
		require.NoError(t, err)
		assert.Equal(t, []string{"b1", "b2", "a", "e", "x"}, nodeNames(objs))
		assert.Equal(t, []string{"shop/web"}, podKeys(objs))
	})
	t.Run("whole tree", func(t *testing.T) {
		objs, err := load.Files(dir)
		require.NoError(t, err)
		assert.Equal(t, []string{"a", "b1", "b2", "e"}, nodeNames(objs))
	})
	t.Run("no paths", func(t *testing.T) {
		objs, err := load.Files()
		require.NoError(t, err)
		assert.Equal(t, load.Objects{}, objs)
	})
	t.Run("duplicates across files name both places", func(t *testing.T) {
		dup := write("dup/x.yaml", "# a comment\n"+node("a"))
		objs, err := load.Files(filepath.Join(dir, "a.json"), dup)
		assert.Equal(t, load.Objects{}, objs)
		require.ErrorIs(t, err, load.ErrDuplicate)
		assert.Equal(t, dup+`:4: document 1: Node "a": metadata.name: load: duplicate object: also at `+
			filepath.Join(dir, "a.json")+":1: document 1", err.Error())
	})
	t.Run("missing path", func(t *testing.T) {
		objs, err := load.Files(filepath.Join(dir, "nope"))
		assert.Equal(t, load.Objects{}, objs)
		require.ErrorIs(t, err, load.ErrIO)
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("one bad file fails the whole call", func(t *testing.T) {
		bad := write("bad/x.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: [\n")
		objs, err := load.Files(filepath.Join(dir, "a.json"), bad)
		assert.Equal(t, load.Objects{}, objs)
		require.ErrorIs(t, err, load.ErrSyntax)
		// Line 4 holds the unclosed "[".
		assert.Equal(t, bad+":4: document 1: load: malformed YAML or JSON: yaml: did not find expected node content", err.Error())
	})
}

func nodeNames(objs load.Objects) []string {
	var out []string
	for _, n := range objs.Nodes {
		out = append(out, n.Name)
	}
	return out
}

func podKeys(objs load.Objects) []string {
	var out []string
	for _, p := range objs.Pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

// TestReadLineNumbers checks that the lines reported for a document count
// from where it starts, across the things that change line accounting: leading
// separators, comment-only and empty documents, separators with comments,
// CRLF, a line longer than bufio's 4096-byte buffer, and no final newline.
func TestReadLineNumbers(t *testing.T) {
	long := strings.Repeat("x", 10000)
	badNode := "apiVersion: v1\nkind: Node\nmetadata: {name: bad}\nstatus: {capacity: {cpu: -1}}" // 4 lines, no newline
	tests := []struct {
		name  string
		in    string
		line  int // where the document starts
		doc   int
		field int // where its bad field is: its 4th line, or 5th after a "---" it starts with
	}{
		{"first document", badNode, 1, 1, 4},
		{"after a leading separator", "---\n" + badNode, 1, 1, 5},
		// lines 1-3 document 1, line 4 "--- # c", document 2 from line 5
		{"after a comment-only document", "# a\n# b\n\n--- # c\n" + badNode, 5, 2, 8},
		// YAMLReader keeps a "---" that meets an empty buffer as the start of
		// the document (line 1) and ends it at the next one (line 2), so
		// document 1 is the lone "---" and the bad node is document 2 from line 3.
		{"two separators", "---\n---\n" + badNode, 3, 2, 6},
		// lines 1-5 the long-label node, line 6 "---", document 2 from line 7
		{"after a line longer than the read buffer",
			"apiVersion: v1\nkind: Node\nmetadata:\n  name: long\n  labels: {a: " + long + "}\n---\n" + badNode, 7, 2, 10},
		{"CRLF", strings.ReplaceAll(nodeYAML+"---\n"+badNode, "\n", "\r\n"), 13, 2, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load.Read(strings.NewReader(tt.in), "in.yaml")
			require.ErrorIs(t, err, load.ErrNegativeQuantity)
			var e *load.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.field, e.Line, "line: %v", err)
			assert.Equal(t, tt.doc, e.Document, "document: %v", err)
		})
	}
}

// TestReadValidatesPodsAsTheCache: a pod or node the Cache refuses for
// its names or scheduling fields is an ErrInvalidObject error from Read
// and Files naming the file, document, List item, object and field (Read
// returned such pods before); the Cache (snapshot.NewPodInfo, AddNode)
// refuses each one too, and accepts the valid variants Read accepts.
func TestReadValidatesPodsAsTheCache(t *testing.T) {
	pod := func(extra string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop}\nspec:\n  containers: [{name: c}]\n" + extra
	}
	const na = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
	required := func(term string) string {
		return pod("  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [" + term + "]}}}\n")
	}
	cases := []struct {
		name, in string
		want     load.Error // Err not compared
		msg      string
	}{
		{"pod name", "apiVersion: v1\nkind: Pod\nmetadata: {name: Web_1}\n",
			load.Error{File: "in.yaml", Line: 3, Document: 1, Kind: "Pod", Namespace: "default", Name: "Web_1", Field: "metadata.name"},
			`in.yaml:3: document 1: Pod "default/Web_1": metadata.name: load: invalid object: Invalid value: "Web_1": a lowercase RFC 1123 subdomain`},
		{"pod namespace", "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: Shop.A}\n",
			load.Error{File: "in.yaml", Line: 3, Document: 1, Kind: "Pod", Namespace: "Shop.A", Name: "web", Field: "metadata.namespace"}, "RFC 1123 label"},
		{"pod nodeName", pod("  nodeName: Node_1\n"),
			load.Error{File: "in.yaml", Line: 6, Document: 1, Kind: "Pod", Namespace: "shop", Name: "web", Field: "spec.nodeName"}, `Invalid value: "Node_1"`},
		{"spread maxSkew", pod("  topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]\n"),
			load.Error{File: "in.yaml", Line: 6, Document: 1, Kind: "Pod", Namespace: "shop", Name: "web", Field: "spec.topologySpreadConstraints[0].maxSkew"}, "must be greater than zero"},
		{"node affinity operator", required("{matchExpressions: [{key: zone, operator: Near, values: [a]}]}"),
			load.Error{File: "in.yaml", Line: 6, Document: 1, Kind: "Pod", Namespace: "shop", Name: "web", Field: na + "[0].matchExpressions[0].operator"},
			`in.yaml:6: document 1: Pod "shop/web": ` + na + `[0].matchExpressions[0].operator: load: invalid object: Invalid value: "Near": not a valid selector operator`},
		{"node affinity values", required("{matchExpressions: [{key: cores, operator: Gt, values: ['1', '2']}]}"),
			load.Error{File: "in.yaml", Line: 6, Document: 1, Kind: "Pod", Namespace: "shop", Name: "web", Field: na + "[0].matchExpressions[0].values"}, "single value"},
		{"node affinity key", required("{matchExpressions: [{key: 'a b', operator: Exists}]}"),
			load.Error{File: "in.yaml", Line: 6, Document: 1, Kind: "Pod", Namespace: "shop", Name: "web", Field: na + "[0].matchExpressions[0].key"}, "name part must consist of"},
		{"no node selector term", required(""),
			load.Error{File: "in.yaml", Line: 6, Document: 1, Kind: "Pod", Namespace: "shop", Name: "web", Field: na}, "must have at least one node selector term"},
		{"preferred weight", pod("  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {matchExpressions: [{key: a, operator: Exists}]}}]}}\n"),
			load.Error{File: "in.yaml", Line: 6, Document: 1, Kind: "Pod", Namespace: "shop", Name: "web", Field: "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight"}, "must be in the range 1-100"},
		{"nodeSelector", pod("  nodeSelector: {'bad key!': a}\n"),
			load.Error{File: "in.yaml", Line: 6, Document: 1, Kind: "Pod", Namespace: "shop", Name: "web", Field: "spec.nodeSelector"}, `Invalid value: "bad key!"`},
		{"pod affinity in a List item", "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(pod("  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: ''}]}}\n"), "\n", "\n  "),
			// Line 4, the item's "-" (the List's line 1 before).
			load.Error{File: "in.yaml", Line: 9, Document: 1, Item: "items[0]", Kind: "Pod", Namespace: "shop", Name: "web", Field: "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"}, "can not be empty"},
		{"node name", nodeYAML + "---\napiVersion: v1\nkind: Node\nmetadata: {name: Node_2}\n",
			load.Error{File: "in.yaml", Line: 15, Document: 2, Kind: "Node", Name: "Node_2", Field: "metadata.name"}, "RFC 1123 subdomain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := load.Read(strings.NewReader(tc.in), "in.yaml")
			require.ErrorIs(t, err, load.ErrInvalidObject)
			assert.Equal(t, load.Objects{}, objs)
			var e *load.Error
			require.ErrorAs(t, err, &e)
			got := *e
			got.Err = nil
			assert.Equal(t, tc.want, got, "error: %v", err)
			assert.Contains(t, err.Error(), tc.msg)

			// Files says the same of a file, and the Cache refuses the object.
			path := filepath.Join(t.TempDir(), "in.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.in), 0o644))
			_, ferr := load.Files(path)
			require.ErrorIs(t, ferr, load.ErrInvalidObject)
			assert.Contains(t, ferr.Error(), path+":"+strconv.Itoa(tc.want.Line)+": document "+strconv.Itoa(tc.want.Document))

			switch obj := lastObject(t, tc.in).(type) {
			case *v1.Pod:
				_, perr := snapshot.NewPodInfo(obj)
				require.ErrorIs(t, perr, snapshot.ErrInvalidObject)
				assert.Contains(t, perr.Error(), tc.want.Field)
				bound := obj.DeepCopy() // the Cache parses bound pods only
				if bound.Spec.NodeName == "" {
					bound.Spec.NodeName = "node-1"
				}
				require.ErrorIs(t, snapshot.NewCache().AddPod(bound), snapshot.ErrInvalidObject)
			case *v1.Node:
				require.ErrorIs(t, snapshot.NewCache().AddNode(obj), snapshot.ErrInvalidObject)
			}
		})
	}
	// The Cache and Read accept the valid variants.
	for _, in := range []string{
		pod("  nodeName: node-1\n  nodeSelector: {zone: a}\n"),
		required("{matchExpressions: [{key: cores, operator: Gt, values: ['1']}]}, {matchFields: [{key: metadata.name, operator: In, values: [node-1]}]}"),
		pod("  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, preference: {matchExpressions: [{key: a, operator: In, values: ['not a label value']}]}}]}}\n"),
	} {
		_, err := load.Read(strings.NewReader(in), "in.yaml")
		require.NoError(t, err, in)
		_, err = snapshot.NewPodInfo(lastObject(t, in).(*v1.Pod))
		require.NoError(t, err, in)
	}
}

// lastObject decodes the last document of in (a List's first item) as a
// Pod (namespace defaulted) or Node, without the loader.
func lastObject(t *testing.T, in string) any {
	t.Helper()
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(in), 4096)
	var last map[string]any
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		if m != nil {
			last = m
		}
	}
	if last["kind"] == "List" {
		last = last["items"].([]any)[0].(map[string]any)
	}
	js, err := json.Marshal(last)
	require.NoError(t, err)
	if last["kind"] == "Node" {
		var n v1.Node
		require.NoError(t, json.Unmarshal(js, &n))
		return &n
	}
	var p v1.Pod
	require.NoError(t, json.Unmarshal(js, &p))
	if p.Namespace == "" {
		p.Namespace = "default"
	}
	return &p
}
