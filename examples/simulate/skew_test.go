package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deploymentInput writes a Deployment-shaped objects input to a new
// directory: 3 zones of 2 nodes (one 32-cpu node and one 8-cpu node per
// zone), and 12 pending replicas of ReplicaSet web-5d8f (app=web), with
// the ReplicaSet itself only if withRS. It returns the directory.
func deploymentInput(t *testing.T, withRS bool) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for _, zone := range []string{"a", "b", "c"} {
		for i, cpu := range []string{"32", "8"} {
			name := fmt.Sprintf("node-%s%d", zone, i)
			fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Node\n  metadata: {name: %s, labels: {kubernetes.io/hostname: %s, topology.kubernetes.io/zone: zone-%s}}\n", name, name, zone)
			fmt.Fprintf(&b, "  status: {allocatable: {cpu: %q, memory: 64Gi, pods: \"110\"}}\n", cpu)
		}
	}
	if withRS {
		b.WriteString("- apiVersion: apps/v1\n  kind: ReplicaSet\n  metadata: {name: web-5d8f, namespace: shop}\n  spec: {selector: {matchLabels: {app: web}}}\n")
	}
	for i := range 12 {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: web-5d8f-%02d\n    namespace: shop\n    labels: {app: web}\n", i)
		b.WriteString("    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-5d8f, controller: true, uid: u1}]\n")
		b.WriteString("  spec: {containers: [{name: c, resources: {requests: {cpu: 500m, memory: 256Mi}}}]}\n")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cluster.yaml"), []byte(b.String()), 0o644))
	return dir
}

// TestObjectsSkew: on a Deployment-shaped input, simulate reports the
// workload's skew per topology key, in the table and in -o json; with
// the ReplicaSet in the input the default policy spreads the replicas by
// upstream's system defaults (hostname maxSkew 3, zone maxSkew 5,
// ScheduleAnyway) and the skew is smaller than without it, when the
// replicas pile onto the big nodes.
func TestObjectsSkew(t *testing.T) {
	skewOf := func(withRS bool) map[string]keySkew {
		rep, _ := jsonReport(t, "-objects", deploymentInput(t, withRS), "-policy", "default", "-timing=false")
		require.Len(t, rep.Summaries, 1)
		out := map[string]keySkew{}
		for _, ks := range rep.Summaries[0].Skew {
			out[ks.Key] = ks
		}
		require.Len(t, out, 2, "hostname and zone")
		return out
	}
	spread, piled := skewOf(true), skewOf(false)
	t.Logf("with ReplicaSet: %+v; without: %+v", spread, piled)
	host, zone := "kubernetes.io/hostname", "topology.kubernetes.io/zone"
	assert.Equal(t, 6, spread[host].Domains)
	assert.Equal(t, 3, spread[zone].Domains)
	assert.Equal(t, 1, spread[host].Workloads)
	assert.LessOrEqual(t, spread[host].MaxSkew, float64(3), "hostname maxSkew 3")
	assert.Less(t, spread[host].MaxSkew, piled[host].MaxSkew)

	r := runMain(t, "-objects", deploymentInput(t, true), "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "workload skew per topology key")
	assert.Contains(t, r.stdout, "kubernetes.io/hostname: max ")
}
