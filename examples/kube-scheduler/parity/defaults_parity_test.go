package parity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	corev1 "k8s.io/kubernetes/pkg/apis/core/v1"

	"github.com/schedkit/schedkit/snapshot/load"
)

// defaultsGen draws the resource fields the API server defaults, written
// by hand: requests and limits absent (nil), empty or holding random
// subsets of a few resources, on containers, init containers, ephemeral
// containers and the pod (spec.resources), and node capacity and
// allocatable absent, empty or set. Quantities are non-negative (the
// loader rejects negative ones before defaulting) and include sub-milli
// values, which upstream's defaulting rounds up to milli-units.
type defaultsGen struct{ r *rand.Rand }

var defaultsResources = []v1.ResourceName{"cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu", "hugepages-2Mi", "example.com/foo"}

func (g defaultsGen) list() v1.ResourceList {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return v1.ResourceList{}
	}
	l := v1.ResourceList{}
	for _, name := range defaultsResources {
		if g.r.IntN(3) == 0 {
			l[name] = g.qty(name)
		}
	}
	return l
}

// qty draws a quantity for name: whole numbers for the resources the API
// server counts in whole units (pods, extended resources), which the
// loader refuses otherwise.
func (g defaultsGen) qty(name v1.ResourceName) resource.Quantity {
	pool := []string{"0", "1", "2", "100m", "1500m", "0.0001", "1Gi", "512Mi", "3", "1e3", "7k"}
	if name == "pods" || strings.Contains(string(name), ".") {
		pool = []string{"0", "1", "2", "3", "1e3", "7k", "2000m"}
	}
	return resource.MustParse(pool[g.r.IntN(len(pool))])
}

// requirements draws requests and limits; a request of a resource that
// cannot be overcommitted (extended, hugepages) is mostly made equal to
// its limit, which the API server and the loader require.
func (g defaultsGen) requirements() v1.ResourceRequirements {
	r := v1.ResourceRequirements{Requests: g.list(), Limits: g.list()}
	for name := range r.Requests {
		if name == "nvidia.com/gpu" || name == "example.com/foo" || name == "hugepages-2Mi" {
			if lim, ok := r.Limits[name]; ok && g.r.IntN(8) != 0 {
				r.Requests[name] = lim.DeepCopy()
			} else if !ok && g.r.IntN(8) != 0 {
				delete(r.Requests, name)
			}
		}
	}
	return r
}

// podLevel draws a pod-level list of the resources pods may set there.
func (g defaultsGen) podLevel() v1.ResourceList {
	if g.r.IntN(3) == 0 {
		return nil
	}
	l := v1.ResourceList{}
	for _, name := range []v1.ResourceName{"cpu", "memory", "hugepages-2Mi"} {
		if g.r.IntN(2) == 0 {
			l[name] = g.qty(name)
		}
	}
	return l
}

func (g defaultsGen) pod(i int) *v1.Pod {
	p := &v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "p" + strconv.Itoa(i)}}
	p.Namespace = "default"
	for j := range g.r.IntN(3) {
		c := v1.Container{Name: "i" + strconv.Itoa(j), Resources: g.requirements()}
		if g.r.IntN(3) == 0 { // a restartable init container (sidecar)
			always := v1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	for j := range 1 + g.r.IntN(3) {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "c" + strconv.Itoa(j), Resources: g.requirements()})
	}
	if g.r.IntN(4) == 0 {
		e := v1.EphemeralContainer{}
		e.Name, e.Resources = "e", g.requirements()
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, e)
	}
	if g.r.IntN(4) == 0 {
		r := g.requirements()
		p.Spec.Resources = &r
		if g.r.IntN(2) == 0 { // pod-level resources, mostly as the API server accepts them
			r.Requests, r.Limits = g.podLevel(), g.podLevel()
		}
	}
	return p
}

func (g defaultsGen) node(i int) *v1.Node {
	n := &v1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "n" + strconv.Itoa(i)}}
	n.Status.Capacity, n.Status.Allocatable = g.list(), g.list()
	return n
}

// TestLoaderDefaultsMatchUpstream: for random hand-written pods and nodes,
// the requests of every container (init, regular, ephemeral) and of the
// pod, and the node's capacity and allocatable, as snapshot/load reads
// them, equal those of upstream's own defaulting
// (k8s.io/kubernetes@v1.37.2 pkg/apis/core/v1 SetObjectDefaults_Pod and
// SetObjectDefaults_Node under the default feature gates) applied to the
// same objects: the same keys, each with the same value in milli-units
// (upstream rounds every quantity up to milli-units; schedkit's model
// reads quantities that way).
func TestLoaderDefaultsMatchUpstream(t *testing.T) {
	const cases = 3000
	g := defaultsGen{rand.New(rand.NewPCG(13, 2026))}
	var pods []*v1.Pod
	var nodes []*v1.Node
	var in bytes.Buffer
	// The objects the loader refuses (the API server's resource rules:
	// fractional extended resources, requests above limits; see
	// TestLoaderResourceRulesMatchUpstream) are drawn again.
	refused := 0
	for i := 0; len(pods) < cases || len(nodes) < cases; i++ {
		// Upstream defaults the objects as the API server receives
		// them: decoded from the JSON the loader reads (which drops
		// empty maps, omitempty).
		p, n := &v1.Pod{}, &v1.Node{}
		for _, o := range []struct{ from, to any }{{g.pod(i), p}, {g.node(i), n}} {
			js, err := json.Marshal(o.from)
			require.NoError(t, err)
			if _, err := load.Read(bytes.NewReader(js), "one.json"); err != nil {
				require.ErrorIs(t, err, load.ErrInvalidObject)
				refused++
				continue
			}
			if o.to == p && len(pods) == cases || o.to == n && len(nodes) == cases {
				continue
			}
			require.NoError(t, json.Unmarshal(js, o.to))
			in.Write(js)
			in.WriteByte('\n')
			if o.to == p {
				pods = append(pods, p)
			} else {
				nodes = append(nodes, n)
			}
		}
	}
	t.Logf("%d objects drawn again: the loader refuses them", refused)
	objs, err := load.Read(&in, "random.json")
	require.NoError(t, err)
	require.Len(t, objs.Pods, cases)
	require.Len(t, objs.Nodes, cases)

	var defaulted, allocDefaulted, podLevelDefaulted int
	for i := range cases {
		up := pods[i].DeepCopy()
		corev1.SetObjectDefaults_Pod(up)
		// Pod-level resources are defaulted when the pod is created
		// (pkg/registry/core/pod PrepareForCreate), on the internal type.
		var internal core.Pod
		require.NoError(t, corev1.Convert_v1_Pod_To_core_Pod(up, &internal, nil))
		podutil.DefaultPodLevelResources(&internal)
		require.NoError(t, corev1.Convert_core_Pod_To_v1_Pod(&internal, up, nil))
		if up.Spec.Resources != nil && len(up.Spec.Resources.Requests) > 0 && (pods[i].Spec.Resources == nil || len(up.Spec.Resources.Requests) > len(pods[i].Spec.Resources.Requests)) {
			podLevelDefaulted++
		}
		got := objs.Pods[i]
		where := "pod " + up.Name
		for j := range up.Spec.InitContainers {
			sameList(t, where+" initContainers["+strconv.Itoa(j)+"].requests", up.Spec.InitContainers[j].Resources.Requests, got.Spec.InitContainers[j].Resources.Requests)
		}
		for j := range up.Spec.Containers {
			sameList(t, where+" containers["+strconv.Itoa(j)+"].requests", up.Spec.Containers[j].Resources.Requests, got.Spec.Containers[j].Resources.Requests)
			if len(up.Spec.Containers[j].Resources.Requests) > len(pods[i].Spec.Containers[j].Resources.Requests) {
				defaulted++
			}
		}
		for j := range up.Spec.EphemeralContainers {
			sameList(t, where+" ephemeralContainers["+strconv.Itoa(j)+"].requests", up.Spec.EphemeralContainers[j].Resources.Requests, got.Spec.EphemeralContainers[j].Resources.Requests)
		}
		if up.Spec.Resources != nil {
			require.NotNil(t, got.Spec.Resources, where)
			sameList(t, where+" spec.resources.requests", up.Spec.Resources.Requests, got.Spec.Resources.Requests)
		}

		upn := nodes[i].DeepCopy()
		corev1.SetObjectDefaults_Node(upn)
		where = "node " + upn.Name
		sameList(t, where+" capacity", upn.Status.Capacity, objs.Nodes[i].Status.Capacity)
		sameList(t, where+" allocatable", upn.Status.Allocatable, objs.Nodes[i].Status.Allocatable)
		require.Equal(t, upn.Status.Allocatable == nil, objs.Nodes[i].Status.Allocatable == nil, where)
		if nodes[i].Status.Allocatable == nil && upn.Status.Allocatable != nil {
			allocDefaulted++
		}
	}
	// The cases exercise the defaults, not only their absence.
	require.Greater(t, defaulted, cases/4)
	require.Greater(t, podLevelDefaulted, cases/50, "pod-level requests defaulted")
	t.Logf("%d pods got pod-level requests by default", podLevelDefaulted)
	require.Greater(t, allocDefaulted, cases/8)
}

// sameList requires want and got to hold the same keys with the same
// values in milli-units (nil and empty are the same: no request).
func sameList(t *testing.T, where string, want, got v1.ResourceList) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: upstream %v, schedkit %v", where, fmtList(want), fmtList(got))
	for k, w := range want {
		q, ok := got[k]
		require.True(t, ok, "%s: %s missing: upstream %v, schedkit %v", where, k, fmtList(want), fmtList(got))
		require.Equal(t, w.MilliValue(), q.MilliValue(), "%s[%s]", where, k)
	}
}

func fmtList(l v1.ResourceList) string {
	var b bytes.Buffer
	for k, q := range l {
		fmt.Fprintf(&b, "%s=%s ", k, q.String())
	}
	return b.String()
}
