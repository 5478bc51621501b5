package load_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/schedkit/schedkit/snapshot/load"
)

// dsNodes are four nodes: plain n1; n2 tainted dedicated=gpu:NoSchedule;
// n3 labelled role=infra; n4 cordoned (spec.unschedulable and the
// node.kubernetes.io/unschedulable:NoSchedule taint the node controller
// adds); n5 tainted PreferNoSchedule, which does not keep a DaemonSet
// off.
const dsNodes = `apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {role: infra}}
---
apiVersion: v1
kind: Node
metadata: {name: n4}
spec: {unschedulable: true, taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]}
---
apiVersion: v1
kind: Node
metadata: {name: n5}
spec: {taints: [{key: spot, effect: PreferNoSchedule}]}
`

// dsYAML is a DaemonSet name in kube-system selecting app=name, with
// spec the template's spec fields after containers (a YAML flow
// mapping's tail, "" for none) and meta extra metadata.
func dsYAML(name, meta, spec string) string {
	return "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: " + name + ", namespace: kube-system" + meta + "}\nspec:\n" +
		"  selector: {matchLabels: {app: " + name + "}}\n" +
		"  template:\n    metadata: {labels: {app: " + name + "}}\n" +
		"    spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]" + spec + "}\n"
}

// podsOf returns the made pods of DaemonSet name by the node their
// affinity selects.
func podsOf(t *testing.T, objs load.Objects, name string) map[string]*v1.Pod {
	t.Helper()
	out := map[string]*v1.Pod{}
	for _, p := range objs.Pods {
		if len(p.OwnerReferences) == 0 || p.OwnerReferences[0].Kind != "DaemonSet" || p.OwnerReferences[0].Name != name {
			continue
		}
		require.True(t, strings.HasPrefix(p.Name, name+"-") && len(p.Name) == len(name)+6, "name %q", p.Name)
		terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		require.Len(t, terms, 1, p.Name)
		require.Empty(t, terms[0].MatchExpressions, p.Name)
		require.Len(t, terms[0].MatchFields, 1, p.Name)
		f := terms[0].MatchFields[0]
		require.Equal(t, metav1.ObjectNameField, f.Key)
		require.Equal(t, v1.NodeSelectorOpIn, f.Operator)
		require.Len(t, f.Values, 1)
		require.NotContains(t, out, f.Values[0], "two pods on one node")
		out[f.Values[0]] = p
	}
	return out
}

func dsNodeNames(m map[string]*v1.Pod) []string {
	var out []string
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
		if m[n] != nil {
			out = append(out, n)
		}
	}
	return out
}

// TestExpandDaemonSet: a DaemonSet becomes one pending pod per node the
// DaemonSet controller would run it on (nodeShouldRunDaemonPod), each
// pinned to its node by a required node affinity on metadata.name, with
// the controller's default tolerations: n2's NoSchedule taint keeps a
// plain one off, the cordoned n4 does not (its unschedulable taint is
// tolerated), a PreferNoSchedule taint does not; nodeSelector, required
// node affinity and tolerations of the template are honoured.
func TestExpandDaemonSet(t *testing.T) {
	in := dsNodes +
		dsYAML("agent", ", uid: ds-uid", "") +
		dsYAML("infra", "", ", nodeSelector: {role: infra}") +
		dsYAML("gpu", "", ", tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}], affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: role, operator: DoesNotExist}]}]}, preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [{key: role, operator: Exists}]}}]}}") +
		dsYAML("net", ", annotations: {deprecated.daemonset.template.generation: '7'}", ", hostNetwork: true, tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]")
	objs, err := expandRead(t, in)
	require.NoError(t, err)
	assert.Equal(t, map[string]load.Expansion{"DaemonSet": {Workloads: 4, Pods: 4 + 1 + 4 + 4}}, objs.Expanded)

	agent := podsOf(t, objs, "agent")
	assert.Equal(t, []string{"n1", "n3", "n4", "n5"}, dsNodeNames(agent))
	p := agent["n1"]
	requireController(t, p.OwnerReferences, "apps/v1", "DaemonSet", "agent", "ds-uid")
	assert.Equal(t, "kube-system", p.Namespace)
	assert.Equal(t, map[string]string{"app": "agent"}, p.Labels)
	assert.Empty(t, p.Spec.NodeName, "pending: the scheduler places it")
	exists := func(key string, effect v1.TaintEffect) v1.Toleration {
		return v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: effect}
	}
	defaults := []v1.Toleration{
		exists(v1.TaintNodeNotReady, v1.TaintEffectNoExecute),
		exists(v1.TaintNodeUnreachable, v1.TaintEffectNoExecute),
		exists(v1.TaintNodeDiskPressure, v1.TaintEffectNoSchedule),
		exists(v1.TaintNodeMemoryPressure, v1.TaintEffectNoSchedule),
		exists(v1.TaintNodePIDPressure, v1.TaintEffectNoSchedule),
		exists(v1.TaintNodeUnschedulable, v1.TaintEffectNoSchedule),
	}
	assert.Equal(t, defaults, p.Spec.Tolerations)

	assert.Equal(t, []string{"n3"}, dsNodeNames(podsOf(t, objs, "infra")))
	assert.Equal(t, map[string]string{"role": "infra"}, podsOf(t, objs, "infra")["n3"].Spec.NodeSelector, "nodeSelector kept")

	gpu := podsOf(t, objs, "gpu")
	assert.Equal(t, []string{"n1", "n2", "n4", "n5"}, dsNodeNames(gpu))
	assert.Len(t, gpu["n2"].Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution, 1, "preferred terms kept")
	assert.Equal(t, v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gpu", Effect: v1.TaintEffectNoSchedule}, gpu["n2"].Spec.Tolerations[0])

	net := podsOf(t, objs, "net")
	assert.Equal(t, []string{"n1", "n3", "n4", "n5"}, dsNodeNames(net))
	assert.Equal(t, map[string]string{"app": "net", "pod-template-generation": "7"}, net["n1"].Labels)
	// The template's not-ready toleration with tolerationSeconds is
	// replaced in place by the controller's; network-unavailable comes
	// last, for hostNetwork.
	assert.Equal(t, append(append([]v1.Toleration{}, defaults...), exists(v1.TaintNodeNetworkUnavailable, v1.TaintEffectNoSchedule)), net["n1"].Spec.Tolerations)
	assert.Nil(t, net["n1"].Spec.Tolerations[0].TolerationSeconds)

	// The same input loads to the same pods.
	again, err := expandRead(t, in)
	require.NoError(t, err)
	require.Equal(t, len(objs.Pods), len(again.Pods))
	for i := range objs.Pods {
		assert.Equal(t, objs.Pods[i].Name, again.Pods[i].Name)
	}
}

// TestExpandDaemonSetTopsUp: a DaemonSet with pods of its own in the
// input (or orphans its selector matches) gets pods only on the nodes
// it runs on (n1, n3, n4 and n5 of dsNodes) without an active one: a pod counts
// for its spec.nodeName, or, unscheduled, for the node its affinity
// names by metadata.name; a Failed pod does not count. Without
// ExpandWorkloads a DaemonSet is skipped (and counted); no node, no pod.
func TestExpandDaemonSetTopsUp(t *testing.T) {
	pod := func(name, meta, spec string) string {
		return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: kube-system, labels: {app: agent}" + meta + "}\nspec: {containers: [{name: c}]" + spec + "}\n"
	}
	const own = ", ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u, controller: true}]"
	onN3 := ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n3]}]}]}}}"
	for _, tt := range []struct {
		name, extra string
		want        []string // nodes of the made pods
	}{
		{"own pod on n1", pod("agent-x", own, ", nodeName: n1"), []string{"n3", "n4", "n5"}},
		{"orphan on n1", pod("stray", "", ", nodeName: n1"), []string{"n3", "n4", "n5"}},
		{"failed pod on n3", pod("agent-x", own, ", nodeName: n1") + strings.TrimSuffix(pod("agent-y", own, ", nodeName: n3"), "\n") + "\nstatus: {phase: Failed}\n", []string{"n3", "n4", "n5"}},
		{"unscheduled pod for n3", pod("agent-x", own, ", nodeName: n1") + pod("agent-y", own, onN3), []string{"n4", "n5"}},
		{"all", pod("agent-x", own, ", nodeName: n1") + pod("agent-y", own, ", nodeName: n3") + pod("agent-z", own, ", nodeName: n4") + pod("stray", "", ", nodeName: n5"), nil},
	} {
		objs, err := expandRead(t, dsNodes+dsYAML("agent", "", "")+tt.extra)
		require.NoError(t, err, tt.name)
		var made load.Objects // the made pods: the input's have no uid
		for _, p := range objs.Pods {
			if p.UID != "" {
				made.Pods = append(made.Pods, p)
			}
		}
		var got []string
		for node := range podsOf(t, made, "agent") {
			got = append(got, node)
		}
		assert.ElementsMatch(t, tt.want, got, tt.name)
		if tt.want == nil {
			assert.Empty(t, objs.Expanded, tt.name)
		} else {
			assert.Equal(t, map[string]load.Expansion{"DaemonSet": {Workloads: 1, Pods: len(tt.want)}}, objs.Expanded, tt.name)
		}
	}
	objs, err := load.Read(strings.NewReader(dsNodes+dsYAML("agent", "", "")), "in.yaml")
	require.NoError(t, err)
	assert.Empty(t, objs.Pods)
	assert.Equal(t, 1, objs.Skipped[schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}])

	objs, err = expandRead(t, dsYAML("agent", "", ""))
	require.NoError(t, err)
	assert.Empty(t, objs.Pods)
	assert.Empty(t, objs.Expanded)
}

// TestExpandDaemonSetErrors: the API server's checks of a DaemonSet,
// named by its field; nothing is loaded.
func TestExpandDaemonSetErrors(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"no selector", strings.Replace(dsYAML("a", "", ""), "  selector: {matchLabels: {app: a}}\n", "", 1),
			`in.yaml:5: document 1: DaemonSet "kube-system/a": spec.selector: load: invalid object: Required value`},
		{"selector not matching", strings.Replace(dsYAML("a", "", ""), "{matchLabels: {app: a}}", "{matchLabels: {app: b}}", 1),
			`in.yaml:8: document 1: DaemonSet "kube-system/a": spec.template.metadata.labels: load: invalid object: selector does not match template labels`},
		{"no node selector term", dsYAML("a", "", ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}"),
			`in.yaml:9: document 1: DaemonSet "kube-system/a": spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: load: invalid object: Required value: must have at least one node selector term`},
		// No node takes a pod (none in the input): the template is
		// checked all the same.
		{"negative request, no node", strings.Replace(dsYAML("a", "", ""), "cpu: 100m", "cpu: -1", 1),
			`in.yaml:9: document 1: DaemonSet "kube-system/a": spec.template.spec.containers[0].resources.requests[cpu]: load: negative quantity -1`},
		{"duplicate", dsYAML("a", "", "") + dsYAML("a", "", ""),
			`in.yaml:13: document 2: DaemonSet "kube-system/a": metadata.name: load: duplicate object: also at in.yaml:1: document 1`},
		{"negative request", strings.Replace(dsNodes+dsYAML("a", "", ""), "cpu: 100m", "cpu: -1", 1),
			`in.yaml:31: document 6: DaemonSet "kube-system/a": spec.template.spec.containers[0].resources.requests[cpu]: load: negative quantity -1`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := expandRead(t, tt.in)
			require.Error(t, err)
			assert.True(t, errors.Is(err, load.ErrInvalidObject) || errors.Is(err, load.ErrDuplicate) || errors.Is(err, load.ErrNegativeQuantity), "%v", err)
			assert.Equal(t, tt.want, err.Error())
			assert.True(t, reflect.ValueOf(objs).IsZero(), "zero Objects: %+v", objs)
		})
	}
}

// TestExpandSkipsDeletedWorkloads: a workload with
// metadata.deletionTimestamp is being deleted, and its controller
// creates nothing for it (a DaemonSet's, a Deployment's, a ReplicaSet's
// sync returns early): none is expanded.
func TestExpandSkipsDeletedWorkloads(t *testing.T) {
	const gone = ", deletionTimestamp: '2026-01-01T00:00:00Z'"
	in := dsNodes + dsYAML("agent", gone, "") + "---\n" +
		strings.Replace(deployYAML("2"), "uid: d-uid", "uid: d-uid"+gone, 1) + "---\n" +
		"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs" + gone + "}\nspec: {replicas: 2, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n"
	objs, err := expandRead(t, in)
	require.NoError(t, err)
	assert.Empty(t, objs.Pods)
	assert.Nil(t, objs.Expanded)
	// Without the timestamp all three are expanded.
	objs, err = expandRead(t, strings.ReplaceAll(in, gone, ""))
	require.NoError(t, err)
	assert.Equal(t, map[string]load.Expansion{"DaemonSet": {Workloads: 1, Pods: 4}, "Deployment": {Workloads: 1, Pods: 2}, "ReplicaSet": {Workloads: 1, Pods: 2}}, objs.Expanded)
}

// TestExpandFollowsControllers (helper-105's trial): the controllers'
// rules for what they create. A paused Deployment gets no ReplicaSet; a
// workload in a namespace being deleted gets nothing (NamespaceLifecycle
// refuses it); a Deployment whose ReplicaSet name another ReplicaSet has
// hashes again (status.collisionCount); a ReplicationController without
// spec.selector gets its template's labels as the API server defaults
// it; a workload of 0 replicas with an invalid template is refused.
func TestExpandFollowsControllers(t *testing.T) {
	objs, err := expandRead(t, strings.Replace(deployYAML("2"), "spec:\n", "spec:\n  paused: true\n", 1))
	require.NoError(t, err)
	assert.Empty(t, objs.Pods, "paused")
	assert.Empty(t, objs.Others)

	ns := "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, deletionTimestamp: '2026-01-01T00:00:00Z'}\nstatus: {phase: Terminating}\n---\n"
	objs, err = expandRead(t, ns+deployYAML("2"))
	require.NoError(t, err)
	assert.Empty(t, objs.Pods, "terminating namespace")
	objs, err = expandRead(t, strings.Replace(ns, ", deletionTimestamp: '2026-01-01T00:00:00Z'", "", 1)+deployYAML("2"))
	require.NoError(t, err)
	assert.Empty(t, objs.Pods, "phase Terminating alone")

	objs, err = expandRead(t, deployYAML("2"))
	require.NoError(t, err)
	rsName := objs.Others[0].(*appsv1.ReplicaSet).Name
	other := "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: " + rsName + ", namespace: shop}\nspec: {replicas: 0, selector: {matchLabels: {app: other}}, template: {metadata: {labels: {app: other}}, spec: {containers: [{name: c}]}}}\n"
	objs, err = expandRead(t, deployYAML("2")+other)
	require.NoError(t, err)
	require.Len(t, objs.Others, 2)
	made := objs.Others[1].(*appsv1.ReplicaSet)
	assert.NotEqual(t, rsName, made.Name)
	assert.True(t, strings.HasPrefix(made.Name, "web-"), made.Name)
	assert.Equal(t, strings.TrimPrefix(made.Name, "web-"), made.Labels[appsv1.DefaultDeploymentUniqueLabelKey])
	assert.Len(t, objs.Pods, 2)

	rc := "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\nspec: {replicas: 2, template: {metadata: {labels: {app: live}}, spec: {containers: [{name: c}]}}}\n"
	for _, opts := range []load.Options{{}, {ExpandWorkloads: true}} {
		objs, err = opts.Read(strings.NewReader(rc), "in.yaml")
		require.NoError(t, err)
		got := objs.Others[0].(*v1.ReplicationController)
		assert.Equal(t, map[string]string{"app": "live"}, got.Spec.Selector)
		assert.Equal(t, map[string]string{"app": "live"}, got.Labels)
	}

	_, err = expandRead(t, strings.Replace(deployYAML("0"), "limits: {cpu: 500m, memory: 1Gi}", "requests: {cpu: -2}", 1))
	require.ErrorIs(t, err, load.ErrNegativeQuantity)
	assert.Contains(t, err.Error(), `Deployment "shop/web": spec.template.spec.containers[0].resources.requests[cpu]`)
}

// TestExpandChecksDyingWorkloads: a workload in a namespace being deleted
// makes nothing, but its template is checked as any workload's is
// (helper-106's trial: an invalid ReplicaSet there loaded silently).
func TestExpandChecksDyingWorkloads(t *testing.T) {
	ns := "apiVersion: v1\nkind: Namespace\nmetadata: {name: gone}\nstatus: {phase: Terminating}\n---\n"
	rs := "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs, namespace: gone}\nspec: {replicas: 2, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, resources: {requests: {cpu: '-1'}}}]}}}\n"
	_, err := expandRead(t, ns+rs)
	require.ErrorIs(t, err, load.ErrNegativeQuantity)
	assert.Contains(t, err.Error(), `ReplicaSet "gone/rs": spec.template.spec.containers[0].resources.requests[cpu]`)
	objs, err := expandRead(t, ns+strings.Replace(rs, "'-1'", "'1'", 1))
	require.NoError(t, err)
	assert.Empty(t, objs.Pods)
}
