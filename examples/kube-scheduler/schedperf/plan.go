package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"   // API defaulting for core objects
	_ "k8s.io/kubernetes/pkg/apis/policy/install" // ... PodDisruptionBudgets
	"k8s.io/kubernetes/pkg/apis/scheduling"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install" // ... PriorityClasses
	"sigs.k8s.io/yaml"
)

// A plan is a workload unrolled into steps holding the concrete objects, in
// the order the workload's ops create them; both schedulers are fed the
// same plan. Objects carry what a real API server would add (defaults,
// names for generateName, UIDs) since the fake clientset and schedkit's
// Loop add none. Priority admission, which scheduler_perf disables, is
// applied to one case only (see admitPriority): a pod naming a
// PriorityClass without spec.priority, which upstream's scheduler would
// otherwise run at priority 0 (it never reads PriorityClasses) and
// schedkit's Loop at the class's value; no template of the suite names a
// class.
type plan struct {
	TC       *testCase
	W        *workload
	Steps    []step
	Nodes    int // nodes created by createNodes
	Pods     int // pods created by createPods
	Measured int // pods of createPods ops with collectMetrics or inside a start/stopCollectingMetrics window
	// Unrunnable is why this runner runs neither scheduler on the workload
	// (an op or object it cannot reproduce on a fake clientset); "" if it
	// runs.
	Unrunnable string
}

type stepKind int

const (
	stepNodes stepKind = iota
	stepObjects
	stepPods
	stepChurn
	stepBarrier
	stepSleep
	stepDelete
	stepStartMetrics
	stepStopMetrics
)

type step struct {
	Kind  stepKind
	Op    op
	Nodes []*v1.Node
	// Objects (stepObjects, and the namespace a stepPods needs) in
	// creation order.
	Objects []runtime.Object
	Pods    []*v1.Pod
	// Namespace of a stepPods or the namespace a churn creates in.
	Namespace string
	Measure   bool // createPods with collectMetrics
	Wait      bool // createPods that waits for its pods to be scheduled
	Churn     *churnPlan
	Barrier   *barrierOp
	Sleep     time.Duration
	Delete    *deletePodsOp
	Window    *startMetricsOp
}

// churnPlan makes the objects a churn op creates, n-th call → n-th object.
type churnPlan struct {
	Mode      string
	Number    int
	Interval  time.Duration
	Namespace string
	templates []runtime.Object
	counter   map[string]int
}

// next returns a fresh copy of template i with a generated name.
func (c *churnPlan) next(i int) (runtime.Object, error) {
	obj := c.templates[i].DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if m.GetName() == "" {
		p := m.GetGenerateName()
		c.counter[p]++
		m.SetName(fmt.Sprintf("%s%05d", p, c.counter[p]))
	}
	if _, ok := obj.(*v1.Node); !ok && isNamespaced(obj) {
		m.SetNamespace(c.Namespace)
	}
	m.SetUID(types.UID(m.GetNamespace() + "/" + m.GetName()))
	return obj, nil
}

// isNamespaced reports whether obj's kind is namespaced (for the kinds the
// suite creates).
func isNamespaced(obj runtime.Object) bool {
	switch obj.(type) {
	case *v1.Node, *v1.Namespace, *v1.PersistentVolume:
		return false
	}
	gvk, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvk) == 0 {
		return true
	}
	switch gvk[0].Kind {
	case "PriorityClass", "StorageClass", "CSINode", "DeviceClass", "ResourceSlice", "RuntimeClass":
		return false
	}
	return true
}

// planner holds the state that unrolling a workload carries between ops.
type planner struct {
	tc         *testCase
	w          *workload
	dir        string
	nextNode   int
	names      map[string]int
	namespaces map[string]bool
	// classes are the PriorityClasses createAny ops made so far.
	classes map[string]*schedulingv1.PriorityClass
}

func (pl *planner) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(pl.dir, p)
}

// name gives an object made from generateName prefix a stable name.
func (pl *planner) name(prefix string) string {
	pl.names[prefix]++
	return fmt.Sprintf("%s%05d", prefix, pl.names[prefix]-1)
}

// buildPlan unrolls workload w of tc.
func buildPlan(tc *testCase, w *workload) (*plan, error) {
	pl := &planner{tc: tc, w: w, dir: filepath.Dir(tc.File), names: map[string]int{}, namespaces: map[string]bool{}, classes: map[string]*schedulingv1.PriorityClass{}}
	p := &plan{TC: tc, W: w}
	var open *startMetricsOp // the start/stopCollectingMetrics window
	for _, o := range tc.Ops {
		s, err := pl.step(o, p)
		if err != nil {
			return nil, fmt.Errorf("%s: test case %s, workload %s, workloadTemplate[%d] (opcode %s): %w", tc.File, tc.Name, w.Name, o.Index, o.Code, err)
		}
		if p.Unrunnable != "" {
			return p, nil
		}
		if s == nil {
			continue
		}
		switch s.Kind {
		case stepStartMetrics:
			open = s.Window
		case stepStopMetrics:
			open = nil
		case stepPods:
			if open != nil && !s.Measure {
				for _, pod := range s.Pods {
					if (len(open.Namespaces) == 0 || slices.Contains(open.Namespaces, pod.Namespace)) && matches(pod.Labels, open.LabelSelector) {
						p.Measured++
					}
				}
			}
		}
		p.Steps = append(p.Steps, *s)
	}
	return p, nil
}

func (pl *planner) step(o op, p *plan) (*step, error) {
	w := pl.w
	switch {
	case o.Nodes != nil:
		n, err := w.count(o.Nodes.Count, o.Nodes.CountParam)
		if err != nil {
			return nil, err
		}
		nodes, err := pl.nodes(o, n)
		if err != nil {
			return nil, err
		}
		p.Nodes += n
		return &step{Kind: stepNodes, Op: o, Nodes: nodes}, nil
	case o.Namespaces != nil:
		n, err := w.count(o.Namespaces.Count, o.Namespaces.CountParam)
		if err != nil {
			return nil, err
		}
		var objs []runtime.Object
		for i := range n {
			ns := &v1.Namespace{}
			if o.Namespaces.NamespaceTemplatePath != nil {
				if err := renderInto(pl.path(*o.Namespaces.NamespaceTemplatePath), nil, ns); err != nil {
					return nil, err
				}
			}
			ns.Name = fmt.Sprintf("%s-%d", o.Namespaces.Prefix, i)
			if pl.namespaces[ns.Name] {
				continue
			}
			pl.namespaces[ns.Name] = true
			ns.UID = types.UID("ns/" + ns.Name)
			legacyscheme.Scheme.Default(ns)
			objs = append(objs, ns)
		}
		return &step{Kind: stepObjects, Op: o, Objects: objs}, nil
	case o.Pods != nil:
		return pl.pods(o, p)
	case o.Any != nil:
		return pl.any(o, p)
	case o.Churn != nil:
		c := &churnPlan{Mode: o.Churn.Mode, Number: o.Churn.Number, Interval: 500 * time.Millisecond, counter: map[string]int{}}
		if o.Churn.IntervalMilliseconds != 0 {
			c.Interval = time.Duration(o.Churn.IntervalMilliseconds) * time.Millisecond
		}
		c.Namespace = fmt.Sprintf("namespace-%d", o.Index)
		if o.Churn.Namespace != nil {
			c.Namespace = *o.Churn.Namespace
		}
		for _, tp := range o.Churn.TemplatePaths {
			obj, err := decodeObject(pl.path(tp), nil)
			if err != nil {
				return nil, err
			}
			if pod, ok := obj.(*v1.Pod); ok {
				if pod.Spec.SchedulerName == "" {
					pod.Spec.SchedulerName = v1.DefaultSchedulerName
				}
				if err := pl.admitPriority(pod); err != nil {
					return nil, fmt.Errorf("churn template %s: %w", tp, err)
				}
			}
			c.templates = append(c.templates, obj)
		}
		s := &step{Kind: stepChurn, Op: o, Churn: c, Namespace: c.Namespace}
		s.Objects = pl.ensureNamespace(c.Namespace)
		return s, nil
	case o.Barrier != nil:
		return &step{Kind: stepBarrier, Op: o, Barrier: o.Barrier}, nil
	case o.Sleep != nil:
		d, err := parseDuration(o.Sleep.Duration, o.Sleep.DurationParam, w)
		if err != nil {
			return nil, err
		}
		return &step{Kind: stepSleep, Op: o, Sleep: d}, nil
	case o.Delete != nil:
		return &step{Kind: stepDelete, Op: o, Delete: o.Delete}, nil
	case o.StartM != nil:
		return &step{Kind: stepStartMetrics, Op: o, Window: o.StartM}, nil
	case o.Code == "stopCollectingMetrics":
		return &step{Kind: stepStopMetrics, Op: o}, nil
	case o.Code == "startCollectingProfile" || o.Code == "stopCollectingProfile":
		return nil, nil // pprof of the test binary: nothing a scheduler sees
	default:
		p.Unrunnable = fmt.Sprintf("op %s (workloadTemplate[%d]) is not reproduced on a fake clientset", o.Code, o.Index)
		if strings.Contains(strings.ToLower(o.Code), "resourceclaim") {
			p.Unrunnable = fmt.Sprintf("DRA: op %s needs the resource claim controller and an API server", o.Code)
		}
		return nil, nil
	}
}

func (pl *planner) ensureNamespace(name string) []runtime.Object {
	if pl.namespaces[name] {
		return nil
	}
	pl.namespaces[name] = true
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("ns/" + name)}}
	legacyscheme.Scheme.Default(ns)
	return []runtime.Object{ns}
}

// nodes makes the n nodes of a createNodes op, as upstream's
// IntegrationTestNodePreparer and the op's prepare strategy do.
func (pl *planner) nodes(o op, n int) ([]*v1.Node, error) {
	cn := o.Nodes
	params, err := pl.w.resolveParams(cn.TemplateParams)
	if err != nil {
		return nil, err
	}
	nodes := make([]*v1.Node, 0, n)
	for i := range n {
		node := baseNode(fmt.Sprintf("node-%d-", o.Index))
		if cn.NodeTemplatePath != nil {
			node = &v1.Node{}
			env := maps.Clone(params)
			if env == nil {
				env = map[string]any{}
			}
			env["Index"], env["Count"] = i, n
			if err := renderInto(pl.path(*cn.NodeTemplatePath), env, node); err != nil {
				return nil, fmt.Errorf("node %d: %w", i, err)
			}
		}
		if node.Name == "" {
			node.Name = pl.name(node.GenerateName)
		}
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[v1.LabelHostname] = node.Name
		node.UID = types.UID("node/" + node.Name)
		legacyscheme.Scheme.Default(node)
		switch {
		case cn.NodeAllocatableStrategy != nil:
			if node.Status.Allocatable == nil {
				node.Status.Allocatable = v1.ResourceList{}
			}
			for k, v := range cn.NodeAllocatableStrategy.NodeAllocatable {
				q, err := resource.ParseQuantity(v)
				if err != nil {
					return nil, fmt.Errorf("nodeAllocatableStrategy.nodeAllocatable[%s]: %w", k, err)
				}
				node.Status.Allocatable[v1.ResourceName(k)] = q
			}
		case cn.LabelNodePrepareStrategy != nil:
			s := cn.LabelNodePrepareStrategy
			if len(s.LabelValues) == 0 {
				return nil, fmt.Errorf("labelNodePrepareStrategy.labelValues is empty")
			}
			node.Labels[s.LabelKey] = s.LabelValues[i%len(s.LabelValues)]
		case cn.UniqueNodeLabelStrategy != nil:
			node.Labels[cn.UniqueNodeLabelStrategy.LabelKey] = fmt.Sprintf("unique-%d-%d", o.Index, pl.nextNode+i)
		}
		nodes = append(nodes, node)
	}
	pl.nextNode += n
	return nodes, nil
}

// baseNode is upstream's makeBaseNode: 4 CPUs, 32Gi, 110 pods.
func baseNode(prefix string) *v1.Node {
	rl := v1.ResourceList{
		v1.ResourcePods:   resource.MustParse("110"),
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("32Gi"),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix},
		Status: v1.NodeStatus{
			Capacity: rl, Allocatable: rl.DeepCopy(), Phase: v1.NodeRunning,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
}

// basePod is upstream's makeBasePod: one pause container with 100m and
// 500Mi requested and as limits, port 80.
func basePod() *v1.Pod {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("500Mi")}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "pod-"},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "pause", Image: "registry.k8s.io/pause:3.10.2",
			Ports:     []v1.ContainerPort{{ContainerPort: 80}},
			Resources: v1.ResourceRequirements{Limits: rl, Requests: rl.DeepCopy()},
		}}},
	}
}

func (pl *planner) pods(o op, p *plan) (*step, error) {
	cp := o.Pods
	w := pl.w
	n, err := w.count(cp.Count, cp.CountParam)
	if err != nil {
		return nil, err
	}
	if cp.CountMultiplierParam != "" {
		m, err := w.intParam(cp.CountMultiplierParam)
		if err != nil {
			return nil, err
		}
		n *= m
	}
	steady := cp.SteadyState
	if cp.SteadyStateParam != "" {
		v, err := w.param(cp.SteadyStateParam)
		if err != nil {
			return nil, err
		}
		steady, _ = v.(bool)
	}
	if steady {
		p.Unrunnable = fmt.Sprintf("createPods with steadyState (workloadTemplate[%d]): a timed delete-and-recreate loop this runner does not reproduce", o.Index)
		return nil, nil
	}
	if cp.PersistentVolumeClaimTemplatePath != nil || cp.PersistentVolumeTemplatePath != nil {
		p.Unrunnable = fmt.Sprintf("volumes: createPods (workloadTemplate[%d]) binds PersistentVolumeClaims, which needs upstream's PV controller", o.Index)
		return nil, nil
	}
	batch := cp.SignatureBatchSize
	if cp.SignatureBatchSizeParam != "" {
		if batch, err = w.intParam(cp.SignatureBatchSizeParam); err != nil {
			return nil, err
		}
	}
	if batch <= 0 {
		batch = 1
	}
	params, err := w.resolveParams(cp.TemplateParams)
	if err != nil {
		return nil, err
	}
	ns := fmt.Sprintf("namespace-%d", o.Index)
	if cp.Namespace != nil {
		ns = *cp.Namespace
	}
	tmpl := cp.PodTemplatePath
	if tmpl == nil {
		tmpl = pl.tc.DefaultPodTemplatePath
	}
	s := &step{Kind: stepPods, Op: o, Namespace: ns, Measure: cp.CollectMetrics, Wait: !cp.SkipWaitToCompletion}
	s.Objects = pl.ensureNamespace(ns)
	for i := range n {
		pod := basePod()
		if tmpl != nil {
			pod = &v1.Pod{}
			env := maps.Clone(params)
			if env == nil {
				env = map[string]any{}
			}
			env["Index"], env["Count"] = i, n
			if err := renderInto(pl.path(*tmpl), env, pod); err != nil {
				return nil, fmt.Errorf("pod %d: %w", i, err)
			}
			if pod.Labels == nil {
				pod.Labels = map[string]string{}
			}
			pod.Labels["signature"] = fmt.Sprintf("signature-label-%d", i/batch)
		}
		pod.Namespace = ns
		if pod.Name == "" {
			pod.Name = pl.name(ns + "/" + pod.GenerateName)
			pod.Name = pod.Name[len(ns)+1:]
		}
		pod.UID = types.UID(ns + "/" + pod.Name)
		legacyscheme.Scheme.Default(pod)
		if len(pod.Spec.SchedulingGates) > 0 {
			// What the API server's pod strategy adds on create.
			pod.Status.Conditions = append(pod.Status.Conditions, v1.PodCondition{
				Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonSchedulingGated,
				Message: "Scheduling is blocked due to non-empty scheduling gates",
			})
		}
		if err := pl.admitPriority(pod); err != nil {
			return nil, fmt.Errorf("pod %d: %w", i, err)
		}
		if len(pod.Spec.ResourceClaims) > 0 {
			p.Unrunnable = fmt.Sprintf("DRA: pods of createPods (workloadTemplate[%d]) have resourceClaims, which need the resource claim controller", o.Index)
			return nil, nil
		}
		s.Pods = append(s.Pods, pod)
	}
	p.Pods += n
	if cp.CollectMetrics {
		p.Measured += n
	}
	return s, nil
}

// any renders a createAny op's objects.
func (pl *planner) any(o op, p *plan) (*step, error) {
	ca := o.Any
	n := 1
	if ca.Count != nil {
		n = *ca.Count
	}
	if ca.CountParam != "" {
		var err error
		if n, err = pl.w.intParam(ca.CountParam); err != nil {
			return nil, err
		}
	}
	params, err := pl.w.resolveParams(ca.TemplateParams)
	if err != nil {
		return nil, err
	}
	s := &step{Kind: stepObjects, Op: o}
	if ca.Namespace != "" {
		s.Objects = pl.ensureNamespace(ca.Namespace)
	}
	for i := range n {
		env := maps.Clone(params)
		if env == nil {
			env = map[string]any{}
		}
		env["Index"], env["Count"] = i, n
		obj, err := decodeObject(pl.path(ca.TemplatePath), env)
		if runtime.IsNotRegisteredError(err) {
			p.Unrunnable = fmt.Sprintf("createAny (workloadTemplate[%d]) %s: %v", o.Index, ca.TemplatePath, err)
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && gvks[0].Group == "resource.k8s.io" {
			p.Unrunnable = fmt.Sprintf("DRA: createAny (workloadTemplate[%d]) creates a %s, whose claims need the resource claim controller and DRA allocation", o.Index, gvks[0].Kind)
			return nil, nil
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if isNamespaced(obj) != (ca.Namespace != "") {
			return nil, fmt.Errorf("%s: namespace %q does not suit %T", ca.TemplatePath, ca.Namespace, obj)
		}
		m.SetNamespace(ca.Namespace)
		if m.GetName() == "" {
			m.SetName(pl.name(ca.Namespace + "/" + m.GetGenerateName())[len(ca.Namespace)+1:])
		}
		m.SetUID(types.UID(ca.Namespace + "/" + m.GetName()))
		if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
			pl.classes[pc.Name] = pc
		}
		if ns, ok := obj.(*v1.Namespace); ok {
			if pl.namespaces[ns.Name] {
				return nil, fmt.Errorf("%s: namespace %s already exists", ca.TemplatePath, ns.Name)
			}
			pl.namespaces[ns.Name] = true
		}
		s.Objects = append(s.Objects, obj)
	}
	return s, nil
}

// systemClasses are the PriorityClasses every cluster has (the API
// server creates them; k8s.io/kubernetes/pkg/apis/scheduling).
var systemClasses = map[string]int32{
	scheduling.SystemNodeCritical:    scheduling.SystemCriticalPriority + 1000,
	scheduling.SystemClusterCritical: scheduling.SystemCriticalPriority,
}

// admitPriority does what the Priority admission plugin does to a pod
// that names a PriorityClass and has no spec.priority: it sets
// spec.priority to the class's value and, if unset, spec.preemptionPolicy
// to the class's (PreemptLowerPriority by default). The class must be a
// system class or one a createAny op made earlier; an unknown class is an
// error naming the pod and the field. Pods without a class, or with a
// priority, are left alone (globalDefault classes are not applied).
func (pl *planner) admitPriority(pod *v1.Pod) error {
	name := pod.Spec.PriorityClassName
	if name == "" || pod.Spec.Priority != nil {
		return nil
	}
	value, ok := systemClasses[name]
	policy := v1.PreemptLowerPriority
	if pc := pl.classes[name]; pc != nil {
		value, ok = pc.Value, true
		if pc.PreemptionPolicy != nil {
			policy = *pc.PreemptionPolicy
		}
	}
	if !ok {
		return fmt.Errorf("pod %s%s: spec.priorityClassName %q: no PriorityClass of that name is created before this op", pod.Name, pod.GenerateName, name)
	}
	pod.Spec.Priority = &value
	if pod.Spec.PreemptionPolicy == nil {
		pod.Spec.PreemptionPolicy = &policy
	}
	return nil
}

// decodeObject renders a template (env nil: plain YAML, as churn reads
// it) and decodes it strictly into the typed object its apiVersion and
// kind name, then applies the API server's defaults.
func decodeObject(path string, env map[string]any) (runtime.Object, error) {
	b, err := render(path, env)
	if err != nil {
		return nil, err
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(b, &tm); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	gvk := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, err // a not-registered error, which callers test for
	}
	if err := yaml.UnmarshalStrict(b, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	legacyscheme.Scheme.Default(obj)
	return obj, nil
}

// renderInto renders a template and decodes it strictly into obj.
func renderInto(path string, env map[string]any, obj any) error {
	b, err := render(path, env)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(b, obj); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

var templateCache = map[string]*template.Template{}

// render executes a scheduler_perf template with the functions upstream
// offers to them (getTemplateFuncs); env nil reads the file as it is.
func render(path string, env map[string]any) ([]byte, error) {
	t, ok := templateCache[path]
	if !ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if env == nil {
			return b, nil
		}
		t, err = template.New(filepath.Base(path)).Funcs(templateFuncs).Parse(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		templateCache[path] = t
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, env); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return buf.Bytes(), nil
}

// templateFuncs are the functions scheduler_perf templates may call, with
// upstream's semantics (numbers of any type, computed in float64).
var templateFuncs = template.FuncMap{
	"AddFloat": func(xs ...any) (float64, error) { return fold(xs, 0, func(a, b float64) float64 { return a + b }) },
	"AddInt": func(xs ...any) (int, error) {
		f, err := fold(xs, 0, func(a, b float64) float64 { return a + b })
		return int(f), err
	},
	"MultiplyFloat": func(xs ...any) (float64, error) { return fold(xs, 1, func(a, b float64) float64 { return a * b }) },
	"MultiplyInt": func(xs ...any) (int, error) {
		f, err := fold(xs, 1, func(a, b float64) float64 { return a * b })
		return int(f), err
	},
	"SubtractFloat": func(a, b any) (float64, error) { return binary(a, b, func(x, y float64) float64 { return x - y }) },
	"SubtractInt": func(a, b any) (int, error) {
		f, err := binary(a, b, func(x, y float64) float64 { return x - y })
		return int(f), err
	},
	"DivideFloat": divide,
	"DivideInt":   func(a, b any) (int, error) { f, err := divide(a, b); return int(f), err },
	"Mod": func(a, b any) (int, error) {
		x, err1 := toFloat(a)
		y, err2 := toFloat(b)
		if err1 != nil || err2 != nil || int(y) == 0 {
			return 0, fmt.Errorf("Mod(%v, %v): want two numbers, the second not zero", a, b)
		}
		return int(x) % int(y), nil
	},
	"Int": func(a any) (int, error) { f, err := toFloat(a); return int(f), err },
	"JSON": func(a any) (string, error) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		err := enc.Encode(a)
		return strings.TrimSpace(buf.String()), err
	},
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case string:
		return strconv.ParseFloat(x, 64)
	}
	return 0, fmt.Errorf("cannot use %v (%T) as a number", v, v)
}

func fold(xs []any, start float64, f func(a, b float64) float64) (float64, error) {
	acc := start
	for _, x := range xs {
		v, err := toFloat(x)
		if err != nil {
			return 0, err
		}
		acc = f(acc, v)
	}
	return acc, nil
}

func binary(a, b any, f func(x, y float64) float64) (float64, error) {
	x, err := toFloat(a)
	if err != nil {
		return 0, err
	}
	y, err := toFloat(b)
	if err != nil {
		return 0, err
	}
	return f(x, y), nil
}

func divide(a, b any) (float64, error) {
	if y, err := toFloat(b); err == nil && y == 0 {
		return 0, fmt.Errorf("division of %v by zero", a)
	}
	return binary(a, b, func(x, y float64) float64 { return x / y })
}
