package parity

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install" // API server defaulting for ReplicaSets
	_ "k8s.io/kubernetes/pkg/apis/core/install" // ... for nodes, pods, Services, Namespaces
	"sigs.k8s.io/yaml"
)

// A PlacementWorkload is a scheduler_perf test case unrolled into the
// objects an API server would hold, in creation order: nodes (with the
// kubernetes.io/hostname label upstream's node preparer adds and the
// labelNodePrepareStrategy's label), the other objects (Namespaces,
// Services, ReplicaSets), then the pods of its createPods ops, which are
// scheduled one after another. Objects carry what the API server adds
// (defaults, names for generateName, UIDs).
type PlacementWorkload struct {
	Name    string
	Nodes   []*v1.Node
	Objects []runtime.Object
	Pods    []*v1.Pod
	// Deletes maps i to j < i: once pod i was scheduled, pod j is
	// deleted if it was placed (a deletePods op, or churn).
	Deletes map[int]int
	// RemoveNodes and AddNodes, after pod i was scheduled (and Deletes
	// applied), delete the named nodes (their pods stay until deleted, as
	// in an API server) and then add these nodes (churn). Nodes holds
	// only the nodes present before the first pod.
	RemoveNodes map[int][]string
	AddNodes    map[int][]*v1.Node
}

// The scheduler_perf templates the workloads read (under
// test/integration/scheduler_perf/templates of k8s.io/kubernetes
// v1.37.2 in the module cache, never copied).
const (
	tmplNodeDefault          = "node-default.yaml"
	tmplPodDefault           = "pod-default.yaml"
	tmplPodWithLabel         = "pod-with-label.yaml"
	tmplService              = "service.yaml"
	tmplTopologySpreading    = "pod-with-topology-spreading.yaml"
	tmplPreferredSpreading   = "pod-with-preferred-topology-spreading.yaml"
	tmplPodAffinity          = "pod-with-pod-affinity.yaml"
	tmplPodAntiAffinity      = "pod-with-pod-anti-affinity.yaml"
	tmplPreferredAffinity    = "pod-with-preferred-pod-affinity.yaml"
	tmplPreferredAntiAffinty = "pod-with-preferred-pod-anti-affinity.yaml"
	// Only in the mixed workload.
	tmplNamespaceWithLabels             = "namespace-with-labels.yaml"
	tmplNodeAffinity                    = "pod-with-node-affinity.yaml"
	tmplNodeInclusionPolicy             = "pod-with-node-inclusion-policy.yaml"
	tmplAffinityNSSelector              = "pod-affinity-ns-selector.yaml"
	tmplAntiAffinityNSSelector          = "pod-anti-affinity-ns-selector.yaml"
	tmplPreferredAffinityNSSelector     = "pod-preferred-affinity-ns-selector.yaml"
	tmplPreferredAntiAffinityNSSelector = "pod-preferred-anti-affinity-ns-selector.yaml"
)

var templateDir struct {
	once sync.Once
	dir  string
	err  error
}

// schedulerPerfTemplates returns the directory of scheduler_perf's
// templates in the k8s.io/kubernetes module this package is built with
// (`go list -m`).
func schedulerPerfTemplates() (string, error) {
	templateDir.once.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
		if err != nil {
			templateDir.err = fmt.Errorf("parity: locating k8s.io/kubernetes with go list -m: %w", err)
			return
		}
		dir := filepath.Join(strings.TrimSpace(string(out)), "test", "integration", "scheduler_perf", "templates")
		if _, err := os.Stat(filepath.Join(dir, tmplPodDefault)); err != nil {
			templateDir.err = fmt.Errorf("parity: scheduler_perf templates: %w", err)
			return
		}
		templateDir.dir = dir
	})
	return templateDir.dir, templateDir.err
}

// decodeTemplate reads a scheduler_perf template (plain YAML; the ones
// used here have no template actions) strictly into obj and applies the
// API server's defaults.
func decodeTemplate(name string, obj runtime.Object) error {
	dir, err := schedulerPerfTemplates()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if bytes.Contains(b, []byte("{{")) {
		return fmt.Errorf("parity: template %s has template actions", name)
	}
	if err := yaml.UnmarshalStrict(b, obj); err != nil {
		return fmt.Errorf("parity: template %s: %w", name, err)
	}
	return nil
}

// workloadBuilder names objects as the API server does for generateName
// (five random characters from the seeded source) and keeps the
// workload's objects.
type workloadBuilder struct {
	w          PlacementWorkload
	rng        *rand.Rand
	namespaces map[string]bool
	names      map[string]bool // generated names, kept unique
	err        error
}

func newWorkloadBuilder(name string, seed uint64) *workloadBuilder {
	return &workloadBuilder{w: PlacementWorkload{Name: name}, rng: rand.New(rand.NewPCG(seed, 0x706c616365)), namespaces: map[string]bool{}, names: map[string]bool{}}
}

const nameChars = "bcdfghjklmnpqrstvwxz2456789" // apimachinery's util/rand alphabet

// suffix returns five random characters, never the same twice (the API
// server retries a generated name that is taken).
func (b *workloadBuilder) suffix() string {
	for {
		var s [5]byte
		for i := range s {
			s[i] = nameChars[b.rng.IntN(len(nameChars))]
		}
		if !b.names[string(s[:])] {
			b.names[string(s[:])] = true
			return string(s[:])
		}
	}
}

// nodes adds n nodes: template "" is scheduler_perf's makeBaseNode (4 CPUs,
// 32Gi, 110 pods), else the named template; labelKey/values is the
// labelNodePrepareStrategy (node i gets values[i % len]).
func (b *workloadBuilder) nodes(n int, template, labelKey string, values ...string) {
	for i := range n {
		node := &v1.Node{}
		if template == "" {
			rl := v1.ResourceList{
				v1.ResourcePods:   resource.MustParse("110"),
				v1.ResourceCPU:    resource.MustParse("4"),
				v1.ResourceMemory: resource.MustParse("32Gi"),
			}
			node = &v1.Node{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "node-0-"},
				Status: v1.NodeStatus{Capacity: rl, Allocatable: rl.DeepCopy(), Phase: v1.NodeRunning,
					Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
			}
		} else if err := decodeTemplate(template, node); err != nil {
			b.err = err
			return
		}
		node.Name = node.GenerateName + b.suffix()
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[v1.LabelHostname] = node.Name
		if labelKey != "" {
			node.Labels[labelKey] = values[i%len(values)]
		}
		node.UID = types.UID("node/" + node.Name)
		legacyscheme.Scheme.Default(node)
		b.w.Nodes = append(b.w.Nodes, node)
	}
}

// namespace adds the Namespace ns unless it exists (createNamespaces, and
// createPods' createNamespaceIfNotPresent).
func (b *workloadBuilder) namespace(ns string) {
	if b.namespaces[ns] {
		return
	}
	b.namespaces[ns] = true
	obj := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, UID: types.UID("ns/" + ns)}}
	legacyscheme.Scheme.Default(obj)
	b.w.Objects = append(b.w.Objects, obj)
}

// object adds obj (a Service or ReplicaSet) in ns, named for its
// generateName unless named.
func (b *workloadBuilder) object(ns string, obj runtime.Object) {
	b.namespace(ns)
	m := obj.(metav1.Object)
	m.SetNamespace(ns)
	if m.GetName() == "" {
		m.SetName(m.GetGenerateName() + b.suffix())
	}
	m.SetUID(types.UID(ns + "/" + m.GetName()))
	legacyscheme.Scheme.Default(obj)
	b.w.Objects = append(b.w.Objects, obj)
}

// pods adds n pods of template in ns as createPods does (the "signature"
// label of a batch size of 1); edit, if not nil, changes pod i before
// defaulting.
func (b *workloadBuilder) pods(n int, ns, template string, edit func(i int, pod *v1.Pod)) {
	b.namespace(ns)
	for i := range n {
		pod := &v1.Pod{}
		if err := decodeTemplate(template, pod); err != nil {
			b.err = err
			return
		}
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Labels["signature"] = fmt.Sprintf("signature-label-%d", i)
		pod.Namespace = ns
		pod.Name = pod.GenerateName + b.suffix()
		pod.UID = types.UID(ns + "/" + pod.Name)
		if edit != nil {
			edit(i, pod)
		}
		legacyscheme.Scheme.Default(pod)
		b.w.Pods = append(b.w.Pods, pod)
	}
}

func (b *workloadBuilder) done() (PlacementWorkload, error) { return b.w, b.err }

var moons = []string{"moon-1", "moon-2", "moon-3"}

// PlacementWorkloads are the scheduler_perf test cases of the placement
// parity test at n nodes, with the pod counts of their 500Nodes workloads
// scaled to n (TopologySpreading 500 nodes: 1,000 init and 1,000 measured
// pods, so 2n and 2n), and a Deployment variant of
// DefaultTopologySpreading. seed names the objects. Each workload lists
// what it is in upstream's performance-config.yaml.
func PlacementWorkloads(n int, seed uint64) ([]PlacementWorkload, error) {
	var out []PlacementWorkload
	add := func(b *workloadBuilder) error {
		w, err := b.done()
		if err != nil {
			return fmt.Errorf("%s: %w", w.Name, err)
		}
		out = append(out, w)
		return nil
	}
	// topology_spreading/performance-config.yaml: createNodes with
	// node-default.yaml and the zone label moon-1..3, createPods
	// $initPods of pod-default.yaml (namespace-1), createPods
	// $measurePods of the spreading template (namespace-2).
	for _, tc := range []struct{ name, tmpl string }{
		{"TopologySpreading", tmplTopologySpreading},
		{"PreferredTopologySpreading", tmplPreferredSpreading},
	} {
		b := newWorkloadBuilder(tc.name, seed)
		b.nodes(n, tmplNodeDefault, v1.LabelTopologyZone, moons...)
		b.pods(2*n, "namespace-1", tmplPodDefault, nil)
		b.pods(2*n, "namespace-2", tc.tmpl, nil)
		if err := add(b); err != nil {
			return nil, err
		}
	}
	// DefaultTopologySpreading: a Service (service.yaml, selector app:
	// scheduler-perf) in service-ns, $initPods of pod-default.yaml, then
	// $measurePods of pod-with-label.yaml (app: scheduler-perf) in
	// service-ns, which the system default constraints spread.
	b := newWorkloadBuilder("DefaultTopologySpreading", seed)
	b.nodes(n, tmplNodeDefault, v1.LabelTopologyZone, moons...)
	b.object("service-ns", mustTemplate[*v1.Service](b, tmplService))
	b.pods(2*n, "namespace-2", tmplPodDefault, nil)
	b.pods(2*n, "service-ns", tmplPodWithLabel, nil)
	if err := add(b); err != nil {
		return nil, err
	}
	// The same with Deployment-owned pods: a Deployment mid-rollout owns
	// two ReplicaSets (selector app + pod-template-hash, as the
	// Deployment controller makes them); its pods, alternately of each,
	// are controlled by their ReplicaSet, and the Service selects both.
	// Upstream's default selector is then the Service's and the owning
	// ReplicaSet's selectors together.
	b = newWorkloadBuilder("DefaultTopologySpreadingDeployment", seed)
	b.nodes(n, tmplNodeDefault, v1.LabelTopologyZone, moons...)
	b.object("service-ns", mustTemplate[*v1.Service](b, tmplService))
	var rss []*appsv1.ReplicaSet
	for _, hash := range []string{"5d8c7f9b6d", "7b4f6c8d9f"} {
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "web-" + hash, Labels: map[string]string{"app": "scheduler-perf", "pod-template-hash": hash}},
			Spec: appsv1.ReplicaSetSpec{
				Replicas: ptrTo(int32(n)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "scheduler-perf", "pod-template-hash": hash}},
				Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "scheduler-perf", "pod-template-hash": hash}}},
			},
		}
		b.object("service-ns", rs)
		rss = append(rss, rs)
	}
	b.pods(2*n, "namespace-2", tmplPodDefault, nil)
	b.pods(2*n, "service-ns", tmplPodWithLabel, func(i int, pod *v1.Pod) {
		rs := rss[i%len(rss)]
		pod.Labels["pod-template-hash"] = rs.Spec.Selector.MatchLabels["pod-template-hash"]
		pod.GenerateName = rs.Name + "-"
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID,
			Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}}
	})
	if err := add(b); err != nil {
		return nil, err
	}
	// affinity/performance-config.yaml: createNodes (makeBaseNode, or
	// node-default.yaml with zone1 for SchedulingPodAffinity),
	// createNamespaces sched-0 and sched-1, $initPods in sched-0 and
	// $measurePods in sched-1 of the test case's template. 500Nodes:
	// anti-affinity 100 + 400 pods (one per node at most: the last 5 we
	// add find no node), the others 500 + 1,000.
	for _, tc := range []struct {
		name, tmpl, nodeTmpl string
		zone                 bool
		init, measure        int
	}{
		{"SchedulingPodAntiAffinity", tmplPodAntiAffinity, "", false, n / 5, n - n/5 + 5},
		{"SchedulingPodAffinity", tmplPodAffinity, tmplNodeDefault, true, n, 2 * n},
		{"SchedulingPreferredPodAffinity", tmplPreferredAffinity, "", false, n, 2 * n},
		{"SchedulingPreferredPodAntiAffinity", tmplPreferredAntiAffinty, "", false, n, 2 * n},
	} {
		b := newWorkloadBuilder(tc.name, seed)
		if tc.zone {
			b.nodes(n, tc.nodeTmpl, v1.LabelTopologyZone, "zone1")
		} else {
			b.nodes(n, tc.nodeTmpl, "")
		}
		b.namespace("sched-0")
		b.namespace("sched-1")
		b.pods(tc.init, "sched-0", tc.tmpl, nil)
		b.pods(tc.measure, "sched-1", tc.tmpl, nil)
		if err := add(b); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mustTemplate decodes template into a new T, recording an error in b.
func mustTemplate[T interface {
	*E
	runtime.Object
}, E any](b *workloadBuilder, template string) T {
	obj := T(new(E))
	if err := decodeTemplate(template, obj); err != nil && b.err == nil {
		b.err = err
	}
	return obj
}

// MixedPlacementWorkload interleaves the pods of every workload above,
// of the *WithNSSelector variants and of SchedulingNodeAffinity and
// SchedulingWithNodeInclusionPolicy in random order on n heterogeneous
// nodes, to reach states the uniform scheduler_perf shapes do not (there,
// most pods tie between identical nodes). Nodes: 2-16 CPUs and 8-64Gi, in
// zones zone1-zone3 or (one in ten) without a zone label, one in eight
// with a NoSchedule and one in eight with a PreferNoSchedule taint. Pods:
// the templates' pods with 100m-1 CPU requests, one in four tolerating
// the taints; spreading with maxSkew 1, 2 or 5 over zone or hostname,
// minDomains, nodeAffinityPolicy and nodeTaintsPolicy; (anti-)affinity
// terms over zone or hostname, some with a namespaceSelector matching the
// labelled namespaces; Service- and ReplicaSet-owned pods. After one pod
// in five an earlier pod is deleted; a fifth of the nodes join while pods
// are being scheduled, and a tenth of them leave (half of those come back
// later, with the pods still bound to them). seed decides everything.
func MixedPlacementWorkload(n, pods int, seed uint64) (PlacementWorkload, error) {
	b := newWorkloadBuilder("Mixed", seed)
	r := b.rng
	zones := []string{"zone1", "zone2", "zone3"}
	cpus := []string{"2", "4", "8", "16"}
	mems := []string{"8Gi", "16Gi", "32Gi", "64Gi"}
	b.nodes(n, tmplNodeDefault, "")
	for _, node := range b.w.Nodes {
		node.Status.Allocatable[v1.ResourceCPU] = resource.MustParse(cpus[r.IntN(len(cpus))])
		node.Status.Allocatable[v1.ResourceMemory] = resource.MustParse(mems[r.IntN(len(mems))])
		if r.IntN(10) != 0 {
			node.Labels[v1.LabelTopologyZone] = zones[r.IntN(len(zones))]
		}
		switch r.IntN(8) {
		case 0:
			node.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectPreferNoSchedule}}
		case 1:
			node.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectNoSchedule}}
		}
	}
	// Hold back a fifth of the nodes to add later, and pick when a tenth
	// leave (any node present then).
	all := b.w.Nodes
	b.w.Nodes = all[:n-n/5]
	present := slices.Clone(b.w.Nodes)
	b.w.AddNodes, b.w.RemoveNodes = map[int][]*v1.Node{}, map[int][]string{}
	for _, node := range all[n-n/5:] {
		i := r.IntN(max(pods, 1))
		b.w.AddNodes[i] = append(b.w.AddNodes[i], node)
	}
	for i := range pods {
		if r.IntN(max(pods/max(n/10, 1), 1)) == 0 && len(present) > 1 {
			j := r.IntN(len(present))
			b.w.RemoveNodes[i] = append(b.w.RemoveNodes[i], present[j].Name)
			if back := i + 1 + r.IntN(pods); r.IntN(2) == 0 && back < pods {
				// The node returns, with the pods still bound to it.
				b.w.AddNodes[back] = append(b.w.AddNodes[back], present[j])
			}
			present = slices.Delete(present, j, j+1)
		}
		present = append(present, b.w.AddNodes[i]...)
	}
	b.namespace("sched-0")
	b.namespace("sched-1")
	// createNamespaces with namespace-with-labels.yaml (team: devops).
	for _, name := range []string{"init-ns-0", "init-ns-1", "measure-ns-0"} {
		ns := mustTemplate[*v1.Namespace](b, tmplNamespaceWithLabels)
		ns.Name, ns.UID = name, types.UID("ns/"+name)
		legacyscheme.Scheme.Default(ns)
		b.namespaces[name] = true
		b.w.Objects = append(b.w.Objects, ns)
	}
	b.object("service-ns", mustTemplate[*v1.Service](b, tmplService))
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-5d8c7f9b6d"},
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "scheduler-perf", "pod-template-hash": "5d8c7f9b6d"}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "scheduler-perf", "pod-template-hash": "5d8c7f9b6d"}}},
		},
	}
	b.object("service-ns", rs)
	nsSel := []string{"init-ns-0", "init-ns-1", "measure-ns-0", "sched-0"}
	kinds := []struct {
		tmpl string
		ns   []string
	}{
		{tmplPodDefault, []string{"namespace-1"}},
		{tmplTopologySpreading, []string{"namespace-2"}},
		{tmplPreferredSpreading, []string{"namespace-2"}},
		{tmplNodeInclusionPolicy, []string{"namespace-2"}},
		{tmplPodWithLabel, []string{"service-ns"}},
		{tmplNodeAffinity, []string{"namespace-1"}},
		{tmplPodAntiAffinity, []string{"sched-0"}},
		{tmplPodAffinity, []string{"sched-1"}},
		{tmplPreferredAffinity, []string{"sched-0"}},
		{tmplPreferredAntiAffinty, []string{"sched-1"}},
		{tmplAffinityNSSelector, nsSel},
		{tmplAntiAffinityNSSelector, nsSel},
		{tmplPreferredAffinityNSSelector, nsSel},
		{tmplPreferredAntiAffinityNSSelector, nsSel},
	}
	policies := []*v1.NodeInclusionPolicy{nil, ptrTo(v1.NodeInclusionPolicyHonor), ptrTo(v1.NodeInclusionPolicyIgnore)}
	keys := []string{v1.LabelTopologyZone, v1.LabelHostname}
	cpuReqs := []string{"100m", "250m", "500m", "1"}
	b.w.Deletes = map[int]int{}
	for i := range pods {
		if i > 0 && r.IntN(5) == 0 {
			b.w.Deletes[i] = r.IntN(i)
		}
		k := kinds[r.IntN(len(kinds))]
		b.pods(1, k.ns[r.IntN(len(k.ns))], k.tmpl, func(_ int, pod *v1.Pod) {
			if r.IntN(4) == 0 {
				pod.Spec.Tolerations = append(pod.Spec.Tolerations, v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists})
			}
			if c := &pod.Spec.Containers[0]; c.Resources.Requests != nil {
				q := resource.MustParse(cpuReqs[r.IntN(len(cpuReqs))])
				c.Resources.Requests[v1.ResourceCPU] = q
				c.Resources.Limits[v1.ResourceCPU] = q
			}
			for i := range pod.Spec.TopologySpreadConstraints {
				c := &pod.Spec.TopologySpreadConstraints[i]
				c.MaxSkew = []int32{1, 2, 5}[r.IntN(3)]
				c.TopologyKey = keys[r.IntN(len(keys))]
				if c.WhenUnsatisfiable == v1.DoNotSchedule && r.IntN(3) == 0 {
					c.MinDomains = ptrTo(int32(2 + r.IntN(3)))
				}
				c.NodeAffinityPolicy = policies[r.IntN(len(policies))]
				c.NodeTaintsPolicy = policies[r.IntN(len(policies))]
			}
			if a := pod.Spec.Affinity; a != nil {
				var terms []*v1.PodAffinityTerm
				if a.PodAffinity != nil {
					for i := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
						terms = append(terms, &a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i])
					}
					for i := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
						terms = append(terms, &a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
					}
				}
				if a.PodAntiAffinity != nil {
					for i := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
						terms = append(terms, &a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i])
					}
					for i := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
						terms = append(terms, &a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
					}
				}
				for _, t := range terms {
					t.TopologyKey = keys[r.IntN(len(keys))]
				}
			}
			if k.tmpl == tmplPodWithLabel && r.IntN(2) == 0 {
				pod.Labels["pod-template-hash"] = "5d8c7f9b6d"
				pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptrTo(true)}}
			}
		})
	}
	return b.done()
}
