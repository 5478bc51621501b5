package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObjectsUnknownFieldWarning: without -strict, an -objects file with
// a field k8s.io/api does not know ("resource:" for "resources:") placed
// the pod with zero requests and said nothing (trial 5). It still runs,
// and stderr has one warning line naming the file, object and field;
// a clean file gives no warning.
func TestObjectsUnknownFieldWarning(t *testing.T) {
	tmp := t.TempDir()
	const doc = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default}\nspec:\n  containers:\n  - name: c\n    image: x\n    resource: {requests: {cpu: '64'}}\n"
	typo := writeFile(t, tmp, "typo.yaml", doc)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-objects", typo}, &stdout, &stderr), stderr.String())
	var warn []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "warning") {
			warn = append(warn, l)
		}
	}
	require.Len(t, warn, 1, stderr.String())
	require.Contains(t, warn[0], "typo.yaml")
	require.Contains(t, warn[0], `Pod "default/p1"`)
	require.Contains(t, warn[0], `unknown field "spec.containers[0].resource"`)

	clean := writeFile(t, tmp, "clean.yaml", strings.Replace(strings.Replace(doc, "resource:", "resources:", 1), "'64'", "'1'", 1))
	stderr.Reset()
	require.Equal(t, 0, run([]string{"-objects", clean}, &stdout, &stderr), stderr.String())
	require.NotContains(t, stderr.String(), "warning")
}

// TestObjectsWarningsInJSON (trial 8): -o json had no field for the
// warnings, which went to stderr only. The report's "warnings" lists
// them (the unknown field and the skipped ControllerRevision); a clean input has
// none.
func TestObjectsWarningsInJSON(t *testing.T) {
	tmp := t.TempDir()
	typo := writeFile(t, tmp, "typo.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default}\nspec:\n  containers:\n  - name: c\n    image: x\n    resource: {requests: {cpu: '64'}}\n---\napiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: d, namespace: default}\nrevision: 1\n")
	rep, _ := jsonReport(t, "-objects", typo, "-policy", "default")
	require.Len(t, rep.Warnings, 2, rep.Warnings)
	require.Contains(t, rep.Warnings[0], `unknown field "spec.containers[0].resource"`)
	require.Contains(t, rep.Warnings[1], "skipped 1 apps/v1 ControllerRevision")
	require.False(t, strings.HasPrefix(rep.Warnings[0], "warning: "))

	rep, _ = jsonReport(t, "-objects", whatifCluster, "-policy", "default")
	require.Empty(t, rep.Warnings)
}

// TestExplainPartialFilter (trial 8): -explain printed "570 feasible of
// 850 nodes filtered" above "281 of 1500 nodes filtered out", which
// reads as a contradiction: the cycle stops filtering once it has enough
// feasible nodes (300 nodes: 48 %, 144 feasible, found among the first
// 216 since every third node has too little cpu), while the second line counts
// every node. The first line now says the cycle stopped and the second
// that it is over all nodes.
func TestExplainPartialFilter(t *testing.T) {
	var doc strings.Builder
	for i := range 300 {
		cpu := "4"
		if i%3 == 0 {
			cpu = "1"
		}
		fmt.Fprintf(&doc, "apiVersion: v1\nkind: Node\nmetadata: {name: n%03d}\nstatus: {allocatable: {cpu: '%s', memory: 8Gi, pods: '110'}}\n---\n", i, cpu)
	}
	doc.WriteString("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: '2'}}}]}\n")
	path := writeFile(t, t.TempDir(), "big.yaml", doc.String())
	r := runMain(t, "-objects", path, "-policy", "default", "-explain", "p")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "; 144 feasible of the 216 nodes the cycle filtered (it stops once it has enough)\n")
	require.Contains(t, r.stdout, "\n  over all nodes: 100 of 300 nodes filtered out: 100 Insufficient cpu\n")
}

// TestObjectsRepeatedKeyWarningFromPipe: a pipe, which cannot be read
// twice, is loaded once leniently; a key given twice there was resolved
// silently (the last wins). It is now a warning naming the line.
func TestObjectsRepeatedKeyWarningFromPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "in.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	const doc = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default}\nspec:\n  nodeName: n2\n  nodeName: n1\n  containers:\n  - name: c\n    image: x\n"
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		_, _ = f.WriteString(doc)
		_ = f.Close()
	}()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-objects", fifo}, &stdout, &stderr), stderr.String())
	require.Contains(t, stderr.String(), `in.yaml:11: document 2: load: unknown or duplicate field: error converting YAML to JSON: yaml: unmarshal errors:   line 11: key "nodeName" already set in map (ignored; -strict rejects it)`)
}

// TestObjectsSlowQuantityIsAnError: an -objects file with a quantity
// apimachinery's parser takes minutes over ("1e-999999999") hung the
// run inside the decoder; it is an error naming the file, object and
// field at once. A deadline, not a timing.
func TestObjectsSlowQuantityIsAnError(t *testing.T) {
	bad := writeFile(t, t.TempDir(), "slow.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"1e-999999999\", memory: 1Gi, pods: '10'}}\n")
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"-objects", bad}, &stdout, &stderr) }()
	select {
	case code := <-done:
		require.NotEqual(t, 0, code)
		require.Contains(t, stderr.String(), `slow.yaml:4: document 1: Node "n1": status.allocatable[cpu]: load: cannot decode object: quantity exponent out of range`)
	case <-time.After(20 * time.Second):
		t.Fatal("simulate -objects with a 1e-999999999 quantity did not return within 20s")
	}
}

// TestObjectsWarnsOfDeploymentNotScaled: a Deployment scaled in the
// input while a rollout is under way is left as its ReplicaSets have it,
// and simulate says so on standard error, in a file read strictly first
// or from a pipe, and in the JSON report (a new-user trial's finding).
func TestObjectsWarnsOfDeploymentNotScaled(t *testing.T) {
	const doc = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8', memory: 16Gi, pods: '110'}}\n---\n" +
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, uid: d-uid}\nspec:\n  replicas: 5\n  selector: {matchLabels: {app: web}}\n" +
		"  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\n"
	rs := func(name, replicas, tier string) string {
		return "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: " + name + "\n  namespace: shop\n" +
			"  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-uid, controller: true}]\n" +
			"spec:\n  replicas: " + replicas + "\n  selector: {matchLabels: {app: web, pod-template-hash: " + name + "}}\n" +
			"  template:\n    metadata: {labels: {app: web" + tier + ", pod-template-hash: " + name + "}}\n" +
			"    spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\n"
	}
	in := writeFile(t, t.TempDir(), "in.yaml", doc+rs("new", "2", "")+rs("old", "1", ", tier: old"))
	const want = `in.yaml:10: document 2: Deployment "shop/web": spec.replicas: load: workload not expanded: 5 replicas, 3 in its ReplicaSets of the input, left as they are: a rollout is under way`
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-objects", in}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stderr.String(), "simulate: warning: "+in[:len(in)-len("in.yaml")]+want)
	assert.Contains(t, stdout.String(), "1 Deployment into 3 pods")
	stdout.Reset()
	stderr.Reset()
	require.Equal(t, 0, run([]string{"-objects", in, "-o", "json"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "workload not expanded")
}
