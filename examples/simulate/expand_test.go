package main

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObjectsExpandDeployment: a manifest of a Deployment (4 replicas)
// and a Service selecting it, on 2 nodes in zones a and b, schedules
// the Deployment's pods, as its ReplicaSet would create them, 2 per
// zone (system default spreading, through the Service and the made
// ReplicaSet); the report says how many workloads were expanded into
// how many pods, in the table and in -o json.
func TestObjectsExpandDeployment(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	writeNode(&b, "node-a", "zone-a", "", "8")
	writeNode(&b, "node-b", "zone-b", "", "8")
	b.WriteString(`- apiVersion: v1
  kind: Service
  metadata: {name: web, namespace: shop}
  spec: {selector: {app: web}, ports: [{port: 80}]}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: shop}
  spec:
    replicas: 4
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 256Mi}}}]}
`)
	dir := writeInput(t, b.String())
	csv := filepath.Join(t.TempDir(), "placements.csv")
	rep, _ := jsonReport(t, "-objects", dir, "-policy", "default", "-timing=false", "-placements", csv)
	assert.Equal(t, 4, rep.Pods)
	assert.Equal(t, map[string]expansion{"Deployment": {Workloads: 1, Pods: 4}}, rep.Expanded)
	require.Len(t, rep.Summaries, 1)
	assert.Equal(t, float64(4), rep.Summaries[0].Placed)
	perNode := map[string]int{}
	for _, row := range readPlacements(t, csv) {
		assert.True(t, strings.HasPrefix(row.pod, "shop/web-"), row.pod)
		perNode[row.node]++
	}
	assert.Equal(t, map[string]int{"node-a": 2, "node-b": 2}, perNode)

	r := runMain(t, "-objects", dir, "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "workloads expanded into the pods their controllers would create: 1 Deployment into 4 pods\n")
	assert.Empty(t, r.stderr)
}

// TestObjectsExpandDaemonSet: a DaemonSet in -objects becomes a pod on
// each node it would run on, each placed on its node (the required node
// affinity on metadata.name); the tainted node gets none, the cordoned
// one gets its pod (the controller's unschedulable toleration), and a
// pod that does not fit its node stays unscheduled rather than moving.
func TestObjectsExpandDaemonSet(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	writeNode(&b, "node-a", "zone-a", "", "8")
	writeNode(&b, "node-b", "zone-b", "", "8")
	writeNode(&b, "node-c", "zone-b", "", "1")
	writeNode(&b, "node-gpu", "zone-a", "", "8")
	b.WriteString(`- apiVersion: v1
  kind: Node
  metadata: {name: node-cordoned, labels: {kubernetes.io/hostname: node-cordoned}}
  spec: {unschedulable: true, taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]}
  status: {allocatable: {cpu: "8", memory: 64Gi, pods: "110"}}
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: agent, namespace: kube-system}
  spec:
    selector: {matchLabels: {app: agent}}
    template:
      metadata: {labels: {app: agent}}
      spec: {containers: [{name: c, image: agent, resources: {requests: {cpu: "2", memory: 256Mi}}}]}
`)
	doc := strings.Replace(b.String(), "metadata: {name: node-gpu, labels:", "spec: {taints: [{key: gpu, effect: NoSchedule}]}\n  metadata: {name: node-gpu, labels:", 1)
	dir := writeInput(t, doc)
	csv := filepath.Join(t.TempDir(), "placements.csv")
	rep, _ := jsonReport(t, "-objects", dir, "-policy", "default", "-timing=false", "-placements", csv)
	assert.Equal(t, map[string]expansion{"DaemonSet": {Workloads: 1, Pods: 4}}, rep.Expanded)
	require.Len(t, rep.Summaries, 1)
	assert.Equal(t, float64(3), rep.Summaries[0].Placed, "node-c has 1 cpu for a 2-cpu pod")
	assert.Empty(t, rep.Summaries[0].Skew, "a DaemonSet's pods, pinned one per node, are no workload to spread")
	// The reason node-c gave, not the NodeAffinity of the 4 others.
	require.Len(t, rep.Summaries[0].Reasons, 1)
	assert.Equal(t, "Insufficient cpu", rep.Summaries[0].Reasons[0].Reason)
	got := map[string]string{}
	unplaced := 0
	for _, row := range readPlacements(t, csv) {
		assert.True(t, strings.HasPrefix(row.pod, "kube-system/agent-"), row.pod)
		if row.node == "" {
			unplaced++
			continue
		}
		got[row.node] = row.pod
	}
	assert.ElementsMatch(t, []string{"node-a", "node-b", "node-cordoned"}, slices.Collect(maps.Keys(got)))
	assert.Equal(t, 1, unplaced, "node-c's pod")

	r := runMain(t, "-objects", dir, "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "workloads expanded into the pods their controllers would create: 1 DaemonSet into 4 pods\n")
}
