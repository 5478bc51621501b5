package load_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load"
)

// deployYAML is a Deployment web in shop with replicas (omitted when
// ""), selecting app=web, whose one container has a cpu limit only.
func deployYAML(replicas string) string {
	r := ""
	if replicas != "" {
		r = "  replicas: " + replicas + "\n"
	}
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, uid: d-uid}\nspec:\n" + r +
		"  selector: {matchLabels: {app: web}}\n" +
		"  template:\n    metadata: {labels: {app: web, tier: front}, annotations: {note: x}}\n" +
		"    spec: {containers: [{name: c, resources: {limits: {cpu: 500m, memory: 1Gi}}}]}\n"
}

// webRS is a ReplicaSet of deployYAML's Deployment (uid d-uid) whose
// template is the Deployment's with tier and the pod-template-hash label
// hash (tier front: the Deployment's template, the current ReplicaSet).
func webRS(name, hash, replicas, tier string) string {
	return "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: " + name + "\n  namespace: shop\n" +
		"  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-uid, controller: true}]\n" +
		"spec:\n  replicas: " + replicas + "\n  selector: {matchLabels: {app: web, pod-template-hash: " + hash + "}}\n" +
		"  template:\n    metadata: {labels: {app: web, tier: " + tier + ", pod-template-hash: " + hash + "}, annotations: {note: x}}\n" +
		"    spec: {containers: [{name: c, resources: {limits: {cpu: 500m, memory: 1Gi}}}]}\n"
}

// expandRead reads in with ExpandWorkloads.
func expandRead(t *testing.T, in string) (load.Objects, error) {
	t.Helper()
	return load.Options{ExpandWorkloads: true}.Read(strings.NewReader(in), "in.yaml")
}

// requireController checks p's one ownerReference: a controller of that
// kind, name and uid, blocking owner deletion.
func requireController(t *testing.T, refs []metav1.OwnerReference, apiVersion, kind, name string, uid string) {
	t.Helper()
	require.Len(t, refs, 1)
	r := refs[0]
	assert.Equal(t, apiVersion, r.APIVersion)
	assert.Equal(t, kind, r.Kind)
	assert.Equal(t, name, r.Name)
	if uid != "" {
		assert.Equal(t, uid, string(r.UID))
	}
	assert.NotEmpty(t, r.UID)
	require.NotNil(t, r.Controller)
	assert.True(t, *r.Controller)
	require.NotNil(t, r.BlockOwnerDeletion)
	assert.True(t, *r.BlockOwnerDeletion)
}

// TestExpandDeployment: a Deployment of 3 replicas becomes one
// ReplicaSet <name>-<hash> carrying pod-template-hash in its labels,
// selector and template, owned by the Deployment, and 3 pending pods
// owned by it, with the template's labels and annotations, requests
// defaulted from limits as for an input pod, names unique and the same
// on a second load.
func TestExpandDeployment(t *testing.T) {
	objs, err := expandRead(t, deployYAML("3"))
	require.NoError(t, err)
	assert.Nil(t, objs.Skipped)
	assert.Equal(t, map[string]load.Expansion{"Deployment": {Workloads: 1, Pods: 3}}, objs.Expanded)
	require.Len(t, objs.Others, 1)
	rs, ok := objs.Others[0].(*appsv1.ReplicaSet)
	require.True(t, ok, "%T", objs.Others[0])
	hash := rs.Labels["pod-template-hash"]
	require.NotEmpty(t, hash)
	assert.Equal(t, "web-"+hash, rs.Name)
	assert.Equal(t, "shop", rs.Namespace)
	assert.Equal(t, map[string]string{"app": "web", "tier": "front", "pod-template-hash": hash}, rs.Labels)
	assert.Equal(t, map[string]string{"app": "web", "pod-template-hash": hash}, rs.Spec.Selector.MatchLabels)
	assert.Equal(t, rs.Labels, rs.Spec.Template.Labels)
	require.NotNil(t, rs.Spec.Replicas)
	assert.Equal(t, int32(3), *rs.Spec.Replicas)
	assert.NotEmpty(t, rs.UID)
	requireController(t, rs.OwnerReferences, "apps/v1", "Deployment", "web", "d-uid")

	require.Len(t, objs.Pods, 3)
	names := map[string]bool{}
	for _, p := range objs.Pods {
		assert.True(t, strings.HasPrefix(p.Name, rs.Name+"-"), p.Name)
		assert.Len(t, p.Name, len(rs.Name)+6, p.Name)
		names[p.Name] = true
		assert.Equal(t, "shop", p.Namespace)
		assert.Empty(t, p.Spec.NodeName)
		assert.NotEmpty(t, p.UID)
		assert.Equal(t, rs.Spec.Template.Labels, p.Labels)
		assert.Equal(t, map[string]string{"note": "x"}, p.Annotations)
		requireController(t, p.OwnerReferences, "apps/v1", "ReplicaSet", rs.Name, string(rs.UID))
		req := p.Spec.Containers[0].Resources.Requests
		assert.True(t, req.Cpu().Equal(resource.MustParse("500m")), "requests defaulted from limits: %v", req)
		assert.True(t, req.Memory().Equal(resource.MustParse("1Gi")), "requests defaulted from limits: %v", req)
	}
	assert.Len(t, names, 3, "names unique")

	again, err := expandRead(t, deployYAML("3"))
	require.NoError(t, err)
	assert.Equal(t, objs, again, "two loads give the same objects")

	// The pods schedule: a cache takes the ReplicaSet and the pods parse.
	c, err := fedCache(t, objs)
	require.NoError(t, err)
	assert.NotNil(t, c.ReplicaSet("shop", rs.Name))
}

// TestExpandReplicas: spec.replicas nil makes 1 pod, 0 none (the
// ReplicaSet is still made; Objects.Expanded counts only workloads that
// made pods).
func TestExpandReplicas(t *testing.T) {
	for _, tt := range []struct {
		replicas string
		pods     int
	}{{"", 1}, {"0", 0}, {"2", 2}} {
		t.Run("replicas="+tt.replicas, func(t *testing.T) {
			objs, err := expandRead(t, deployYAML(tt.replicas))
			require.NoError(t, err)
			assert.Len(t, objs.Pods, tt.pods)
			require.Len(t, objs.Others, 1)
			want := map[string]load.Expansion{"Deployment": {Workloads: 1, Pods: tt.pods}}
			if tt.pods == 0 {
				want = nil // nothing made: not counted
			}
			assert.Equal(t, want, objs.Expanded)
		})
	}
}

// TestExpandOnlyBareWorkloads: a workload whose ReplicaSet (for a
// Deployment) or pods (for the others) are in the input is not
// expanded, only topped up to its replicas; a reference with another
// uid is another object's, so the workload is expanded. Without
// references, what its controller would adopt or own counts too:
// orphans its selector matches, and for a Deployment the pods of a
// ReplicaSet missing from the input.
func TestExpandOnlyBareWorkloads(t *testing.T) {
	rsOf := func(uid string) string {
		return "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web-abc\n  namespace: shop\n" +
			"  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: " + uid + ", controller: true}]\n" +
			"spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c}]}}}\n"
	}
	podOf := func(kind, owner string) string {
		return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + strings.ToLower(kind) + "-pod\n  namespace: shop\n  labels: {app: x}\n" +
			"  ownerReferences: [{apiVersion: v1, kind: " + kind + ", name: " + owner + ", controller: true}]\nspec: {containers: [{name: c}]}\n"
	}
	webPod := func(name, kind, owner string) string {
		return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: shop\n  labels: {app: web, tier: front}\n" +
			"  ownerReferences: [{apiVersion: apps/v1, kind: " + kind + ", name: " + owner + ", controller: true}]\nspec: {containers: [{name: c}]}\n"
	}
	const orphanRS = "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web-old, namespace: shop, labels: {app: web}}\n" +
		"spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c}]}}}\n"
	const rs = "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs, namespace: shop}\nspec: {replicas: 2, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c}]}}}\n"
	const rc = "---\napiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc, namespace: shop}\nspec: {replicas: 2, selector: {app: x}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c}]}}}\n"
	const sts = "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec: {replicas: 2, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c}]}}}\n"
	for _, tt := range []struct {
		name, in string
		want     map[string]load.Expansion
		pods     int
	}{
		// The input ReplicaSet has pods neither: it is expanded itself,
		// counted for its Deployment.
		{"deployment with its ReplicaSet", deployYAML("3") + rsOf("d-uid"), map[string]load.Expansion{"Deployment": {1, 2}}, 2},
		{"deployment with a ReplicaSet of no uid", deployYAML("3") + rsOf(`""`), map[string]load.Expansion{"Deployment": {1, 2}}, 2},
		{"deployment with another uid's ReplicaSet", deployYAML("3") + rsOf("other"), map[string]load.Expansion{"Deployment": {1, 3}, "ReplicaSet": {1, 2}}, 5},
		// 2 replicas, 1 pod: 1 more.
		{"replicaset with a pod", rs + podOf("ReplicaSet", "rs"), map[string]load.Expansion{"ReplicaSet": {1, 1}}, 2},
		{"replicaset without", rs + podOf("ReplicaSet", "other"), map[string]load.Expansion{"ReplicaSet": {1, 2}}, 3},
		{"replicationcontroller with a pod", rc + podOf("ReplicationController", "rc"), map[string]load.Expansion{"ReplicationController": {1, 1}}, 2},
		{"replicationcontroller without", rc, map[string]load.Expansion{"ReplicationController": {1, 2}}, 2},
		// Its pod is not named as an ordinal (db-0, db-1), which the
		// controller creates by name.
		{"statefulset with a pod", sts + podOf("StatefulSet", "db"), map[string]load.Expansion{"StatefulSet": {1, 2}}, 3},
		{"pod of another kind", sts + podOf("ReplicaSet", "db"), map[string]load.Expansion{"StatefulSet": {1, 2}}, 3},
		// kubectl get deploy,pods: the pods' ReplicaSet is not in the
		// input, but they are the Deployment's (its selector matches).
		{"deployment with its pods, not its ReplicaSet", deployYAML("3") + webPod("web-abc-1", "ReplicaSet", "web-abc") + webPod("web-abc-2", "ReplicaSet", "web-abc"),
			map[string]load.Expansion{"Deployment": {1, 1}}, 3},
		// A pod of a ReplicaSet in the input is that ReplicaSet's.
		{"deployment beside another ReplicaSet's pod", deployYAML("3") + rsOf("other") + webPod("web-abc-1", "ReplicaSet", "web-abc"),
			map[string]load.Expansion{"Deployment": {1, 3}, "ReplicaSet": {1, 1}}, 5},
		// An orphan ReplicaSet its selector matches is adopted.
		{"deployment with an orphan ReplicaSet", deployYAML("3") + orphanRS, map[string]load.Expansion{"ReplicaSet": {1, 2}}, 2},
		// An orphan pod its selector matches is adopted; a controlled one
		// (above) is not.
		{"replicaset with an orphan pod", rs + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: orphan, namespace: shop, labels: {app: x}}\nspec: {containers: [{name: c}]}\n",
			map[string]load.Expansion{"ReplicaSet": {1, 1}}, 2},
		{"replicaset with an unmatched orphan", rs + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: orphan, namespace: shop, labels: {app: z}}\nspec: {containers: [{name: c}]}\n",
			map[string]load.Expansion{"ReplicaSet": {1, 2}}, 3},
		{"replicaset with an orphan in another namespace", rs + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: orphan, labels: {app: x}}\nspec: {containers: [{name: c}]}\n",
			map[string]load.Expansion{"ReplicaSet": {1, 2}}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := expandRead(t, tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, objs.Expanded)
			assert.Len(t, objs.Pods, tt.pods)
		})
	}
}

// TestExpandStatefulSet: a StatefulSet's pods are <name>-0.. with the
// pod-name and pod-index labels, hostname and subdomain.
func TestExpandStatefulSet(t *testing.T) {
	in := "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\n" +
		"spec: {replicas: 3, serviceName: nginx, selector: {matchLabels: {app: nginx}}, template: {metadata: {labels: {app: nginx}}, spec: {containers: [{name: c}]}}}\n"
	objs, err := expandRead(t, in)
	require.NoError(t, err)
	assert.Equal(t, map[string]load.Expansion{"StatefulSet": {1, 3}}, objs.Expanded)
	require.Len(t, objs.Pods, 3)
	for i, p := range objs.Pods {
		name := fmt.Sprintf("web-%d", i)
		assert.Equal(t, name, p.Name)
		assert.Equal(t, "default", p.Namespace)
		assert.Equal(t, map[string]string{"app": "nginx", appsv1.StatefulSetPodNameLabel: name, appsv1.PodIndexLabel: fmt.Sprint(i)}, p.Labels)
		assert.Equal(t, name, p.Spec.Hostname)
		assert.Equal(t, "nginx", p.Spec.Subdomain)
		requireController(t, p.OwnerReferences, "apps/v1", "StatefulSet", "web", "")
	}

	// spec.ordinals.start numbers the pods from start (upstream
	// getStartOrdinal).
	objs, err = expandRead(t, strings.Replace(in, "replicas: 3,", "replicas: 2, ordinals: {start: 5},", 1))
	require.NoError(t, err)
	require.Len(t, objs.Pods, 2)
	for i, p := range objs.Pods {
		name := fmt.Sprintf("web-%d", 5+i)
		assert.Equal(t, name, p.Name)
		assert.Equal(t, map[string]string{"app": "nginx", appsv1.StatefulSetPodNameLabel: name, appsv1.PodIndexLabel: fmt.Sprint(5 + i)}, p.Labels)
		assert.Equal(t, name, p.Spec.Hostname)
	}
	assert.Equal(t, "statefulset.kubernetes.io/pod-name", appsv1.StatefulSetPodNameLabel)
	assert.Equal(t, "apps.kubernetes.io/pod-index", appsv1.PodIndexLabel)
}

// TestExpandErrors: what the API server refuses in a workload, and a
// made pod it would refuse, are errors naming the workload and the
// template field at the workload's document; nothing is returned.
func TestExpandErrors(t *testing.T) {
	const node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
	negativeCPU := strings.Replace(deployYAML("2"), "limits: {cpu: 500m, memory: 1Gi}", "requests: {cpu: -1}", 1)
	for _, tt := range []struct {
		name, in string
		is       error
		want     string
	}{
		{"negative replicas", node + deployYAML("-1"), load.ErrInvalidObject,
			`in.yaml:9: document 2: Deployment "shop/web": spec.replicas: load: invalid object: -1: must be greater than or equal to 0`},
		{"selector not matching", node + strings.Replace(deployYAML("1"), "{app: web}}\n", "{app: api}}\n", 1), load.ErrInvalidObject,
			`in.yaml:12: document 2: Deployment "shop/web": spec.template.metadata.labels: load: invalid object: selector does not match template labels`},
		{"no selector", strings.Replace(deployYAML("1"), "  selector: {matchLabels: {app: web}}\n", "", 1), load.ErrInvalidObject,
			`in.yaml:4: document 1: Deployment "shop/web": spec.selector: load: invalid object: Required value`},
		{"negative cpu request", node + negativeCPU, load.ErrNegativeQuantity,
			`in.yaml:13: document 2: Deployment "shop/web": spec.template.spec.containers[0].resources.requests[cpu]: load: negative quantity -1`},
		{"statefulset negative replicas", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {replicas: -2, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n", load.ErrInvalidObject,
			`in.yaml:4: document 1: StatefulSet "default/db": spec.replicas: load: invalid object: -2: must be greater than or equal to 0`},
		{"replicaset bad node selector", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}], nodeSelector: {'x y': z}}}}\n", load.ErrInvalidObject,
			`in.yaml:4: document 1: ReplicaSet "default/rs": spec.template.spec.nodeSelector: load: invalid object: Invalid value: "x y": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{"no containers", strings.Replace(deployYAML("1"), "containers: [{name: c, resources: {limits: {cpu: 500m, memory: 1Gi}}}]", "nodeName: n1", 1), load.ErrInvalidObject,
			`in.yaml:9: document 1: Deployment "shop/web": spec.template.spec.containers: load: invalid object: Required value`},
		// web-…-9 has 64 characters: too long for the hostname it is.
		{"statefulset pod name too long", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: " + strings.Repeat("w", 62) + "}\nspec: {replicas: 10, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n", load.ErrInvalidObject,
			`in.yaml:3: document 1: StatefulSet "default/` + strings.Repeat("w", 62) + `": metadata.name: load: invalid object: pod name "` + strings.Repeat("w", 62) + `-9" is longer than 63 characters (a StatefulSet pod's name is its hostname)`},
		{"too many pods", deployYAML("1000001"), load.ErrInvalidObject,
			`in.yaml:5: document 1: Deployment "shop/web": spec.replicas: load: invalid object: 1000001 replicas would make 1000001 pods in this load, more than the 1000000 one load makes`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := expandRead(t, tt.in)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.is), "%v", err)
			assert.Equal(t, tt.want, err.Error())
			assert.True(t, reflect.ValueOf(objs).IsZero(), "zero Objects: %+v", objs)
		})
	}
}

// TestExpandDuplicate: a generated pod name an input pod has is passed
// over for another suffix, as the controller retries generateName's
// conflicts; a StatefulSet's pod, whose name is fixed, beside an input
// pod of that name is an ErrDuplicate error naming the workload.
func TestExpandDuplicate(t *testing.T) {
	objs, err := expandRead(t, deployYAML("1"))
	require.NoError(t, err)
	require.Len(t, objs.Pods, 1)
	name := objs.Pods[0].Name
	in := deployYAML("1") + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: shop}\nspec: {containers: [{name: c}]}\n"
	objs, err = expandRead(t, in)
	require.NoError(t, err)
	require.Len(t, objs.Pods, 2)
	assert.Equal(t, name, objs.Pods[0].Name, "the input pod")
	assert.Empty(t, objs.Pods[0].OwnerReferences)
	assert.NotEqual(t, name, objs.Pods[1].Name, "the made pod")
	assert.True(t, strings.HasPrefix(objs.Pods[1].Name, "web-"), objs.Pods[1].Name)
	requireController(t, objs.Pods[1].OwnerReferences, "apps/v1", "ReplicaSet", objs.Others[0].(*appsv1.ReplicaSet).Name, "")

	// A StatefulSet's pod web-0 beside an input pod web-0.
	sts := "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web-0}\n"
	_, err = expandRead(t, sts)
	require.ErrorIs(t, err, load.ErrDuplicate)
	assert.Equal(t, `in.yaml:3: document 1: StatefulSet "default/web": metadata.name: load: duplicate object: its pod "default/web-0" is also at in.yaml:6: document 2`, err.Error())
}

// TestExpandReadCache: with ReadCache the made pods come back in
// Objects.Pods (pending pods are not the cache's) and the made
// ReplicaSet is in the cache, as Read gives them.
func TestExpandReadCache(t *testing.T) {
	in := deployYAML("3")
	objs, err := expandRead(t, in)
	require.NoError(t, err)
	cache, rest, err := load.Options{ExpandWorkloads: true}.ReadCache(strings.NewReader(in), "in.yaml")
	require.NoError(t, err)
	assert.Equal(t, objs.Pods, rest.Pods)
	assert.Equal(t, objs.Expanded, rest.Expanded)
	assert.Nil(t, rest.Others)
	rs := objs.Others[0].(*appsv1.ReplicaSet)
	assert.Equal(t, rs, cache.ReplicaSet("shop", rs.Name))

	// A bound input pod (fed to the cache, not kept) still counts
	// towards its ReplicaSet's replicas.
	bound := "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec: {replicas: 1, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n" +
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: b}, ownerReferences: [{kind: ReplicaSet, name: rs, controller: true}]}\nspec: {nodeName: n1, containers: [{name: c}]}\n"
	cache, rest, err = load.Options{ExpandWorkloads: true}.ReadCache(strings.NewReader(bound), "in.yaml", snapshot.LeanPods())
	require.NoError(t, err)
	assert.Nil(t, rest.Expanded)
	assert.Empty(t, rest.Pods)
	require.NotNil(t, cache)
}

// TestExpandOff: without the option a Deployment is skipped and counted
// as before, and a bare ReplicaSet makes no pod; with RejectOtherKinds
// the option makes a Deployment accepted.
func TestExpandOff(t *testing.T) {
	objs, err := load.Read(strings.NewReader(deployYAML("3")), "in.yaml")
	require.NoError(t, err)
	assert.Empty(t, objs.Pods)
	assert.Empty(t, objs.Others)
	assert.Nil(t, objs.Expanded)
	assert.Equal(t, map[schema.GroupVersionKind]int{{Group: "apps", Version: "v1", Kind: "Deployment"}: 1}, objs.Skipped)

	_, err = load.Options{RejectOtherKinds: true}.Read(strings.NewReader(deployYAML("3")), "in.yaml")
	require.ErrorIs(t, err, load.ErrKind)
	objs, err = load.Options{RejectOtherKinds: true, ExpandWorkloads: true}.Read(strings.NewReader(deployYAML("3")), "in.yaml")
	require.NoError(t, err)
	assert.Len(t, objs.Pods, 3)
	_, err = load.Options{RejectOtherKinds: true, ExpandWorkloads: true}.Read(strings.NewReader("apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: d}\n"), "in.yaml")
	require.ErrorIs(t, err, load.ErrKind)
	assert.Contains(t, err.Error(), "StatefulSet, Deployment, DaemonSet, PriorityClass")
}

// FuzzExpandWorkloads checks the expansion's invariants on arbitrary
// input: no panic; on error the zero Objects; otherwise every expanded
// workload's pods are counted in Objects.Expanded and the counts sum
// to the made pods (those with a controller reference that no input
// document names), every pod is valid (snapshot.ValidatePod) and its
// namespace/name unique, and a second load gives the same objects.
func FuzzExpandWorkloads(f *testing.F) {
	for _, seed := range []string{
		deployYAML("3"),
		deployYAML(""),
		deployYAML("0"),
		deployYAML("-1"),
		deployYAML("2") + "---\n" + strings.Replace(deployYAML("2"), "name: web,", "name: api,", 1),
		// Partial workloads, topped up.
		"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec: {replicas: 3, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: rs-1, labels: {a: b}, ownerReferences: [{kind: ReplicaSet, name: rs, controller: true}]}\nspec: {containers: [{name: c}]}\nstatus: {phase: Failed}\n",
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {replicas: 3, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: db-1, labels: {a: b}}\nspec: {containers: [{name: c}]}\n",
		dsNodes + dsYAML("agent", "", "") + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: stray, namespace: kube-system, labels: {app: agent}}\nspec: {nodeName: n1, containers: [{name: c}]}\n",
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec: {replicas: 3, serviceName: s, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}}}\n",
		"apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\nspec: {replicas: 2, template: {metadata: {labels: {a: b}}}}\n",
		"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec: {replicas: 4, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, resources: {limits: {cpu: 1}}}]}}}\n",
		"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: " + strings.Repeat("r", 70) + "}\nspec: {replicas: 4, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}}}\n",
		dsNodes + dsYAML("agent", "", ""),
		dsNodes + dsYAML("gpu", "", ", tolerations: [{key: dedicated, operator: Exists}], nodeSelector: {role: infra}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: role, operator: In, values: [infra]}]}]}}}"),
	} {
		f.Add([]byte(seed))
	}
	// Each worker process runs this function before f.Fuzz: a replicas
	// count above 1,000 is then the cap's error, not a million pods.
	defer load.SetMaxExpandedPods(1000)()
	f.Fuzz(func(t *testing.T, in []byte) {
		opts := load.Options{ExpandWorkloads: true}
		objs, err := opts.Read(bytes.NewReader(in), "fuzz")
		again, err2 := opts.Read(bytes.NewReader(in), "fuzz")
		if err != nil {
			require.True(t, reflect.ValueOf(objs).IsZero(), "error %v with objects", err)
			require.Error(t, err2)
			require.Equal(t, err.Error(), err2.Error())
			return
		}
		require.NoError(t, err2)
		require.Equal(t, objs, again, "two loads differ")
		made := 0
		for _, x := range objs.Expanded {
			require.Positive(t, x.Workloads)
			made += x.Pods
		}
		keys := map[string]bool{}
		generated := 0
		for _, p := range objs.Pods {
			key := p.Namespace + "/" + p.Name
			require.False(t, keys[key], "duplicate pod %s", key)
			keys[key] = true
			require.Empty(t, snapshot.ValidatePod(p), "pod %s", key)
			if p.UID != "" && len(p.OwnerReferences) == 1 && p.OwnerReferences[0].BlockOwnerDeletion != nil && !bytes.Contains(in, []byte(p.Name)) {
				generated++
			}
		}
		require.LessOrEqual(t, generated, made)
		require.LessOrEqual(t, made, len(objs.Pods))
		for _, o := range objs.Others {
			if rs, ok := o.(*appsv1.ReplicaSet); ok && rs.Labels["pod-template-hash"] != "" && len(rs.OwnerReferences) == 1 && rs.OwnerReferences[0].Kind == "Deployment" &&
				rs.Spec.Replicas != nil && *rs.Spec.Replicas > 0 {
				require.Contains(t, objs.Expanded, "Deployment")
			}
		}
	})
}

// TestExpandMissingReplicaSet: a Deployment whose pods are in the input
// without their ReplicaSet (kubectl get deploy,pods) makes no pods but
// files that ReplicaSet, named as the pods' controller, with their
// pod-template-hash, owned by the Deployment: the ReplicaSet that
// selects them for system default spreading.
func TestExpandMissingReplicaSet(t *testing.T) {
	pod := func(name string) string {
		return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: shop\n  labels: {app: web, tier: front, pod-template-hash: abc}\n" +
			"  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: rs-uid, controller: true}]\nspec: {nodeName: n1, containers: [{name: c}]}\n"
	}
	in := "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n" + deployYAML("3") + pod("web-abc-1") + pod("web-abc-2")
	objs, err := expandRead(t, in)
	require.NoError(t, err)
	// 3 replicas, 2 pods: its only ReplicaSet makes the third.
	assert.Equal(t, map[string]load.Expansion{"Deployment": {Workloads: 1, Pods: 1}}, objs.Expanded)
	require.Len(t, objs.Pods, 3)
	made := objs.Pods[2]
	assert.True(t, strings.HasPrefix(made.Name, "web-abc-"), made.Name)
	assert.Equal(t, "abc", made.Labels["pod-template-hash"])
	assert.Empty(t, made.Spec.NodeName)
	requireController(t, made.OwnerReferences, "apps/v1", "ReplicaSet", "web-abc", "")
	require.Len(t, objs.Others, 1)
	rs, ok := objs.Others[0].(*appsv1.ReplicaSet)
	require.True(t, ok, "%T", objs.Others[0])
	assert.Equal(t, "web-abc", rs.Name)
	assert.Equal(t, "shop", rs.Namespace)
	assert.Equal(t, map[string]string{"app": "web", "tier": "front", "pod-template-hash": "abc"}, rs.Labels)
	assert.Equal(t, map[string]string{"app": "web", "pod-template-hash": "abc"}, rs.Spec.Selector.MatchLabels)
	require.NotNil(t, rs.Spec.Replicas)
	assert.Equal(t, int32(3), *rs.Spec.Replicas)
	requireController(t, rs.OwnerReferences, "apps/v1", "Deployment", "web", "d-uid")

	// Fed to a cache, it selects the pods.
	c, err := fedCache(t, objs)
	require.NoError(t, err)
	assert.NotNil(t, c.ReplicaSet("shop", "web-abc"))

	// Pods without the hash label: the ReplicaSet's selector is the
	// Deployment's.
	objs, err = expandRead(t, "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"+deployYAML("3")+strings.ReplaceAll(pod("web-abc-1"), ", pod-template-hash: abc", ""))
	require.NoError(t, err)
	require.Len(t, objs.Others, 1)
	assert.Equal(t, map[string]string{"app": "web"}, objs.Others[0].(*appsv1.ReplicaSet).Spec.Selector.MatchLabels)
}

// TestExpandNamesTheWorkload: a workload's decode errors (an unknown
// field under Strict, a negative ordinal start) name it.
func TestExpandNamesTheWorkload(t *testing.T) {
	typo := strings.Replace(deployYAML("1"), "resources:", "resource:", 1)
	_, err := load.Options{ExpandWorkloads: true, Strict: true}.Read(strings.NewReader(typo), "in.yaml")
	require.ErrorIs(t, err, load.ErrUnknownField)
	assert.Contains(t, err.Error(), `Deployment "shop/web"`)

	sts := "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {ordinals: {start: -3}, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n"
	_, err = expandRead(t, sts)
	require.ErrorIs(t, err, load.ErrInvalidObject)
	assert.Equal(t, `in.yaml:4: document 1: StatefulSet "default/db": spec.ordinals.start: load: invalid object: -3: must be greater than or equal to 0`, err.Error())
}

// TestExpandListsWorkloadErrorsWithOthers: the error of a ReplicaSet,
// StatefulSet or ReplicationController that would be expanded is listed
// beside the input's other errors (before, expansion ran only on a clean
// input, so it showed once the others were fixed). A workload whose pods
// are in the input is not expanded, and not checked beyond what the
// Cache checks (a skeletal ReplicaSet giving only a selector stays
// valid).
func TestExpandListsWorkloadErrorsWithOthers(t *testing.T) {
	sts := "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: mismatch}\n" +
		"spec: {selector: {matchLabels: {app: mismatch}}, template: {metadata: {labels: {app: other}}, spec: {containers: [{name: c}]}}}\n"
	rc := "---\napiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\nspec: {replicas: -1, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n"
	_, err := expandRead(t, deployYAML("-2")+"---\n"+sts+rc)
	require.ErrorIs(t, err, load.ErrInvalidObject)
	assert.Equal(t, `in.yaml:5: document 1: Deployment "shop/web": spec.replicas: load: invalid object: -2: must be greater than or equal to 0`+"\n"+
		`in.yaml:14: document 2: StatefulSet "default/mismatch": spec.template.metadata.labels: load: invalid object: selector does not match template labels`+"\n"+
		`in.yaml:19: document 3: ReplicationController "default/rc": spec.replicas: load: invalid object: -1: must be greater than or equal to 0`, err.Error())

	pod := "---\napiVersion: v1\nkind: Pod\nmetadata: {name: mismatch-0, labels: {app: mismatch}, ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: mismatch, controller: true}]}\nspec: {containers: [{name: c}]}\n"
	objs, err := expandRead(t, sts+pod)
	require.NoError(t, err)
	assert.Nil(t, objs.Expanded)
	skeletal := "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web}\nspec: {selector: {matchLabels: {app: web}}}\n---\n" +
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, labels: {app: web}}\nspec: {containers: [{name: c}]}\n"
	_, err = expandRead(t, skeletal)
	require.NoError(t, err)
}

// TestExpandTopsUp: a workload with fewer active pods in the input than
// its replicas gets the missing ones, as its controller creates them:
// terminal and deleting pods do not count, more pods than replicas are
// kept (the controller's deletions are not simulated), a StatefulSet
// gets exactly its missing ordinals (a terminal one replaced), and a Deployment scaled in the
// input scales its current ReplicaSet first (also when it is paused, as
// upstream's sync scales it), unless a rollout is under way or no
// ReplicaSet has its template.
func TestExpandTopsUp(t *testing.T) {
	const rs = "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs, namespace: shop}\nspec: {replicas: REPLICAS, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c}]}}}\n"
	pod := func(name, owner, extra string) string {
		return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: shop\n  labels: {app: x}\n" + extra +
			"  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: " + owner + ", controller: true}]\nspec: {containers: [{name: c}]}\nSTATUS"
	}
	status := func(s, phase string) string { return strings.Replace(s, "STATUS", "status: {phase: "+phase+"}\n", 1) }
	plain := func(s string) string { return strings.Replace(s, "STATUS", "", 1) }
	replicas := func(n string) string { return strings.Replace(rs, "REPLICAS", n, 1) }

	// 3 replicas: one running pod, one failed, one being deleted: 2 more.
	in := replicas("3") + status(pod("a", "rs", ""), "Running") + status(pod("b", "rs", ""), "Failed") +
		plain(pod("c", "rs", "  deletionTimestamp: \"2026-01-01T00:00:00Z\"\n"))
	objs, err := expandRead(t, in)
	require.NoError(t, err)
	assert.Equal(t, map[string]load.Expansion{"ReplicaSet": {Workloads: 1, Pods: 2}}, objs.Expanded)
	require.Len(t, objs.Pods, 5)
	for _, p := range objs.Pods[3:] {
		assert.True(t, strings.HasPrefix(p.Name, "rs-"), p.Name)
		requireController(t, p.OwnerReferences, "apps/v1", "ReplicaSet", "rs", "")
	}
	again, err := expandRead(t, in)
	require.NoError(t, err)
	assert.Equal(t, objs.Pods[3].Name, again.Pods[3].Name, "the same names on every load")

	// More pods than replicas: all kept, none made.
	objs, err = expandRead(t, replicas("1")+plain(pod("a", "rs", ""))+plain(pod("b", "rs", "")))
	require.NoError(t, err)
	assert.Nil(t, objs.Expanded)
	assert.Len(t, objs.Pods, 2)

	// A StatefulSet of 4 from ordinal 2 with db-3 in the input: db-2,
	// db-4 and db-5.
	const sts = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec: {replicas: 4, ordinals: {start: 2}, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c}]}}}\n" +
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: db-3, namespace: shop, labels: {app: x}, ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: db, controller: true}]}\nspec: {containers: [{name: c}]}\n"
	objs, err = expandRead(t, sts)
	require.NoError(t, err)
	var names []string
	for _, p := range objs.Pods {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"db-3", "db-2", "db-4", "db-5"}, names)
	assert.Equal(t, "4", objs.Pods[2].Labels[appsv1.PodIndexLabel])

	// Its own db-1 Failed: replaced by a new db-1 (the controller
	// deletes and recreates it); being deleted as well, kept.
	failedSts := strings.Replace(strings.Replace(sts, "replicas: 4, ordinals: {start: 2}", "replicas: 3", 1), "name: db-3", "name: db-1", 1) + "status: {phase: Failed}\n"
	objs, err = expandRead(t, failedSts)
	require.NoError(t, err)
	names = nil
	for _, p := range objs.Pods {
		names = append(names, p.Name)
		assert.NotEqual(t, v1.PodFailed, p.Status.Phase, p.Name)
	}
	assert.Equal(t, []string{"db-0", "db-1", "db-2"}, names)
	assert.Equal(t, map[string]load.Expansion{"StatefulSet": {Workloads: 1, Pods: 3}}, objs.Expanded)
	objs, err = expandRead(t, strings.Replace(failedSts, "name: db-1,", "name: db-1, deletionTimestamp: '2026-01-01T00:00:00Z',", 1))
	require.NoError(t, err)
	names = nil
	for _, p := range objs.Pods {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"db-1", "db-0", "db-2"}, names)

	// A Deployment of 5 whose current ReplicaSet (its template plus the
	// hash label) has 2 replicas and 2 pods: the ReplicaSet is scaled
	// to 5 and 3 pods are made.
	current := webRS
	webPod := func(name, owner, hash, tier string) string {
		return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: shop\n  labels: {app: web, tier: " + tier + ", pod-template-hash: " + hash + "}\n" +
			"  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: " + owner + ", controller: true}]\nspec: {containers: [{name: c}]}\n"
	}
	twoPods := webPod("web-abc-1", "web-abc", "abc", "front") + webPod("web-abc-2", "web-abc", "abc", "front")
	objs, err = expandRead(t, deployYAML("5")+current("web-abc", "abc", "2", "front")+twoPods)
	require.NoError(t, err)
	assert.Equal(t, map[string]load.Expansion{"Deployment": {Workloads: 1, Pods: 3}}, objs.Expanded, "counted for the Deployment")
	// The same what-if without the ReplicaSet in the input (kubectl get
	// deploy,pods) counts the same.
	same, err := expandRead(t, deployYAML("5")+strings.ReplaceAll(twoPods, "name: web-abc, controller", "name: web-abc, uid: rs-uid, controller"))
	require.NoError(t, err)
	assert.Equal(t, objs.Expanded, same.Expanded)
	assert.Len(t, same.Pods, 5)
	assert.Len(t, objs.Pods, 5)
	require.Len(t, objs.Others, 1)
	assert.Equal(t, int32(5), *objs.Others[0].(*appsv1.ReplicaSet).Spec.Replicas)

	paused, err := expandRead(t, strings.Replace(deployYAML("5"), "spec:\n", "spec:\n  paused: true\n", 1)+current("web-abc", "abc", "2", "front")+twoPods)
	require.NoError(t, err)
	assert.Equal(t, objs.Expanded, paused.Expanded, "paused: scaled all the same")
	assert.Len(t, paused.Pods, 5)

	for _, tt := range []struct{ name, in string }{
		// An old ReplicaSet (another template) still has a replica.
		{"rollout", deployYAML("5") + current("web-abc", "abc", "2", "front") + current("web-old", "old", "1", "back") + twoPods + webPod("web-old-1", "web-old", "old", "back")},
		// The Deployment's template was edited: no ReplicaSet has it.
		{"no current", strings.Replace(deployYAML("5"), "tier: front", "tier: edited", 1) + current("web-abc", "abc", "2", "front") + twoPods},
	} {
		objs, err = expandRead(t, tt.in)
		require.NoError(t, err, tt.name)
		assert.Nil(t, objs.Expanded, tt.name)
		for _, o := range objs.Others {
			if rs := o.(*appsv1.ReplicaSet); rs.Name == "web-abc" {
				assert.Equal(t, int32(2), *rs.Spec.Replicas, tt.name)
			}
		}
	}
}

// TestExpandNegativeReplicasWithPods: a negative spec.replicas is an
// error naming the workload and field also when the workload's pods are
// in the input (it makes none), and a Deployment does not scale it away.
func TestExpandNegativeReplicasWithPods(t *testing.T) {
	pod := func(kind, owner string) string {
		return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p0, namespace: shop, labels: {app: x}, ownerReferences: [{apiVersion: v1, kind: " + kind + ", name: " + owner + ", controller: true}]}\nspec: {containers: [{name: c}]}\n"
	}
	tmpl := "selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c}]}}"
	for _, tt := range []struct{ name, in, want string }{
		{"replicaset", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs, namespace: shop}\nspec: {replicas: -4, " + tmpl + "}\n" + pod("ReplicaSet", "rs"),
			`in.yaml:4: document 1: ReplicaSet "shop/rs": spec.replicas: load: invalid object: -4: must be greater than or equal to 0`},
		{"replicationcontroller", "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc, namespace: shop}\nspec: {replicas: -4, selector: {app: x}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c}]}}}\n" + pod("ReplicationController", "rc"),
			`in.yaml:4: document 1: ReplicationController "shop/rc": spec.replicas: load: invalid object: -4: must be greater than or equal to 0`},
		{"statefulset", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec: {replicas: -4, " + tmpl + "}\n" + pod("StatefulSet", "db"),
			`in.yaml:4: document 1: StatefulSet "shop/db": spec.replicas: load: invalid object: -4: must be greater than or equal to 0`},
		{"deployment's replicaset", deployYAML("3") + "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web-abc\n  namespace: shop\n" +
			"  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-uid, controller: true}]\n" +
			"spec: {replicas: -4, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web, tier: front}, annotations: {note: x}}, spec: {containers: [{name: c, resources: {limits: {cpu: 500m, memory: 1Gi}}}]}}}\n",
			`in.yaml:17: document 2: ReplicaSet "shop/web-abc": spec.replicas: load: invalid object: -4: must be greater than or equal to 0`},
	} {
		_, err := expandRead(t, tt.in)
		require.ErrorIs(t, err, load.ErrInvalidObject, tt.name)
		assert.Equal(t, tt.want, err.Error(), tt.name)
	}
}

// TestExpandWarnsOfDeploymentsNotScaled: a Deployment whose replicas its
// ReplicaSets in the input do not have is left as it is when a rollout
// is under way or no ReplicaSet has its template, with a warning naming
// spec.replicas at its line; none when the ReplicaSets already have the
// replicas (a new-user trial's finding: the what-if was skipped
// silently).
func TestExpandWarnsOfDeploymentsNotScaled(t *testing.T) {
	rs := webRS
	for _, tc := range []struct {
		name, in, why string
		pods          int // made: the ReplicaSets' replicas (they have no pods in the input)
	}{
		{"rollout", deployYAML("5") + rs("web-new", "new", "2", "front") + rs("web-old", "old", "1", "back"), "5 replicas, 3 in its ReplicaSets of the input, left as they are: a rollout is under way", 3},
		{"edited template", deployYAML("5") + rs("web-old", "old", "2", "back"), "5 replicas, 2 in its ReplicaSets of the input, left as they are: no ReplicaSet of the input has its template", 2},
		{"already there", deployYAML("3") + rs("web-new", "new", "2", "front") + rs("web-old", "old", "1", "back"), "", 3},
	} {
		objs, err := expandRead(t, tc.in)
		require.NoError(t, err, tc.name)
		assert.Len(t, objs.Pods, tc.pods, "%s: the ReplicaSets' replicas, not the Deployment's", tc.name)
		assert.Equal(t, map[string]load.Expansion{"Deployment": {Workloads: 1, Pods: tc.pods}}, objs.Expanded, "%s: one Deployment", tc.name)
		if tc.why == "" {
			assert.Empty(t, objs.Warnings, tc.name)
			continue
		}
		require.Len(t, objs.Warnings, 1, tc.name)
		w := objs.Warnings[0]
		assert.ErrorIs(t, w, load.ErrNotExpanded, tc.name)
		assert.Contains(t, w.Error(), `in.yaml:5: document 1: Deployment "shop/web": spec.replicas: load: workload not expanded: `+tc.why, tc.name)
	}
}
