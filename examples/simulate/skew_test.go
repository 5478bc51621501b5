package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
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
			writeNode(&b, name, "zone-"+zone, "", cpu)
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
	return writeInput(t, b.String())
}

// writeNode writes a Node list item with hostname and zone labels, an
// extra label if any ("disk: ssd"), cpu CPUs, 64Gi and 110 pods.
func writeNode(b *strings.Builder, name, zone, extra, cpu string) {
	if extra != "" {
		extra = ", " + extra
	}
	fmt.Fprintf(b, "- apiVersion: v1\n  kind: Node\n  metadata: {name: %s, labels: {kubernetes.io/hostname: %s, topology.kubernetes.io/zone: %s%s}}\n", name, name, zone, extra)
	fmt.Fprintf(b, "  status: {allocatable: {cpu: %q, memory: 64Gi, pods: \"110\"}}\n", cpu)
}

// writeInput writes doc to cluster.yaml in a new directory and returns
// the directory.
func writeInput(t *testing.T, doc string) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cluster.yaml"), []byte(doc), 0o644))
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

// restrictedCluster is the trial's repro: nodes a1 (zone a, disk=ssd),
// a2 (zone a), b1 (zone b, disk=ssd) and c1 (zone c), and pods web-0..5
// (app=web, nodeSelector disk=ssd, a zone maxSkew 1 DoNotSchedule
// constraint with the given policies) bound per place (node name per
// pod), selected by Service web; extra nodes and taints from mutate.
func restrictedCluster(t *testing.T, place []string, taintsPolicy *v1.NodeInclusionPolicy, mutate func(name string, n *snapshottest.NodeWrapper)) *snapshot.Snapshot {
	c := snapshot.NewCache()
	for _, n := range []struct{ name, zone, disk string }{{"a1", "a", "ssd"}, {"a2", "a", ""}, {"b1", "b", "ssd"}, {"c1", "c", ""}} {
		w := snapshottest.MakeNode(n.name).Allocatable("cpu", "8", "memory", "16Gi", "pods", "110").
			Label(v1.LabelHostname, n.name).Label(v1.LabelTopologyZone, n.zone)
		if n.disk != "" {
			w = w.Label("disk", n.disk)
		}
		if mutate != nil {
			mutate(n.name, w)
		}
		require.NoError(t, c.AddNode(w.Obj()))
	}
	require.NoError(t, c.AddObject(&v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}}))
	for i, node := range place {
		p := snapshottest.MakePod(fmt.Sprintf("web-%d", i)).Label("app", "web").NodeSelector("disk", "ssd").
			Req("cpu", "100m").Node(node).Obj()
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, NodeTaintsPolicy: taintsPolicy,
		}}
		require.NoError(t, c.AddPod(p))
	}
	return c.Snapshot()
}

// skewByKey indexes workloadSkew's result by topology key.
func skewByKey(s *snapshot.Snapshot) map[string]keySkew {
	out := map[string]keySkew{}
	for _, ks := range workloadSkew(s) {
		out[ks.Key] = ks
	}
	return out
}

// TestSkewHonorsInclusionPolicies: a workload restricted by nodeSelector
// to zones a and b, placed 3/3 on a1 and b1, is as kube-scheduler's
// PodTopologySpread sees it: 2 zone domains, skew 0 (zone c and node a2
// are not its domains); nodeTaintsPolicy Honor leaves out a tainted
// node's zone, Ignore (the default) keeps it.
func TestSkewHonorsInclusionPolicies(t *testing.T) {
	zone := v1.LabelTopologyZone
	even := []string{"a1", "a1", "a1", "b1", "b1", "b1"}
	got := skewByKey(restrictedCluster(t, even, nil, nil))[zone]
	assert.Equal(t, keySkew{Key: zone, Domains: 2, Workloads: 1, MaxSkew: 0, MeanSkew: 0}, got)

	// 4/2: skew 2 over zones a and b.
	got = skewByKey(restrictedCluster(t, []string{"a1", "a1", "a1", "a1", "b1", "b1"}, nil, nil))[zone]
	assert.Equal(t, 2, got.Domains)
	assert.Equal(t, float64(2), got.MaxSkew)

	// hostname: a1 and b1 only (a2, c1 lack disk=ssd): 3 - 3 = 0.
	host := skewByKey(restrictedCluster(t, even, nil, nil))[v1.LabelHostname]
	assert.Equal(t, keySkew{Key: v1.LabelHostname, Domains: 2, Workloads: 1}, host)

	// b1 tainted NoSchedule, pods bound there anyway.
	taint := func(name string, w *snapshottest.NodeWrapper) {
		if name == "b1" {
			w.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
		}
	}
	honor := v1.NodeInclusionPolicyHonor
	// Honor: only zone a is eligible; its 3 pods are counted, b1's are not.
	got = skewByKey(restrictedCluster(t, even, &honor, taint))[zone]
	assert.Equal(t, keySkew{Key: zone, Domains: 1, Workloads: 1}, got)
	// Ignore (default): zones a and b, 3/3.
	got = skewByKey(restrictedCluster(t, even, nil, taint))[zone]
	assert.Equal(t, keySkew{Key: zone, Domains: 2, Workloads: 1}, got)
	// The hostname key has no constraint of the pod: the defaults
	// (taints Ignore) keep b1.
	host = skewByKey(restrictedCluster(t, even, &honor, taint))[v1.LabelHostname]
	assert.Equal(t, 2, host.Domains)
}

// TestObjectsSkewRestricted: the repro through simulate -objects — the 6
// pending pods, placed by the default policy, are reported over 2 zone
// domains with skew 0.
func TestObjectsSkewRestricted(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for _, n := range []struct{ name, zone, disk string }{{"a1", "a", "disk: ssd"}, {"a2", "a", ""}, {"b1", "b", "disk: ssd"}, {"c1", "c", ""}} {
		writeNode(&b, n.name, n.zone, n.disk, "8")
	}
	b.WriteString("- apiVersion: v1\n  kind: Service\n  metadata: {name: web, namespace: default}\n  spec: {selector: {app: web}}\n")
	for i := range 6 {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Pod\n  metadata: {name: web-%d, namespace: default, labels: {app: web}}\n", i)
		b.WriteString("  spec:\n    nodeSelector: {disk: ssd}\n    containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n")
		b.WriteString("    topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n")
	}
	rep, _ := jsonReport(t, "-objects", writeInput(t, b.String()), "-policy", "default", "-timing=false")
	require.Len(t, rep.Summaries, 1)
	var zone *keySkew
	for i, ks := range rep.Summaries[0].Skew {
		if ks.Key == v1.LabelTopologyZone {
			zone = &rep.Summaries[0].Skew[i]
		}
	}
	require.NotNil(t, zone, "zone skew in %+v", rep.Summaries[0].Skew)
	assert.Equal(t, keySkew{Key: v1.LabelTopologyZone, Domains: 2, Workloads: 1}, *zone)
}
