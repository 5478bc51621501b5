package main

import (
	"path/filepath"
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
