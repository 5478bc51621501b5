package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/replay"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load"
)

// errInput marks bad input (flags, files, rows, objects): exit status 2.
var errInput = errors.New("bad input")

func inputErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errInput}, args...)...)
}

// cluster is a loaded input: nodes, pods already bound to them, and the
// pods to schedule with their trace times. It is read-only once built and
// shared by every run.
type cluster struct {
	source string     // what was loaded, for the report header
	nodes  []*v1.Node // in input order
	bound  []*v1.Pod  // pods with spec.nodeName, placed before the replay
	// objects are the other objects of an objects input (Services,
	// ReplicaSets, ...), fed to the ledger before the replay;
	// objectsInput marks such an input (its report measures skew).
	objects      []runtime.Object
	objectsInput bool
	warnings     []string // unknown fields ignored without -strict and Deployments left unscaled (loadObjectFiles), nodes with too many GPUs
	// expanded counts the workloads of an objects input expanded into
	// pods, by kind (load.Objects.Expanded).
	expanded map[string]load.Expansion
	// otherScheduler counts the pending pods left out because their
	// spec.schedulerName is not one the run takes (-scheduler-name).
	otherScheduler int
	// terminal counts the pods of the input in phase Succeeded or Failed,
	// left out: no scheduler takes them, and they hold no capacity
	// (replay.Input.Terminal).
	terminal int
	pods     []*snapshot.PodInfo // pods to schedule, in arrival order (prepared, see replay.NewInput)
	// batch: every pod arrives at once and the scheduling queue orders
	// them (priority, then input order), as for a set of objects.
	batch bool
	// creation and deletion times of pods[i] (trace input); hasTimes
	// reports whether every pod has a creation time.
	creation, deletion []time.Duration
	hasDeletion        []bool
	hasTimes           bool
	skipped            []error // malformed rows left out (lenient mode)

	index    map[*snapshot.PodInfo]int32 // pods[i] -> i
	workload *gpushare.Workload          // FGD's target workload
	gpuMilli int64                       // cluster GPU capacity, milli-GPU
	milliCPU int64                       // cluster CPU allocatable, milli-CPU
}

// hasGPU reports whether the cluster has GPU capacity; the demand axis of
// curves and -inflate is then GPU, otherwise CPU.
func (c *cluster) hasGPU() bool { return c.gpuMilli > 0 }

// demand returns a pod's amount along the demand axis: milli-GPU, or
// milli-CPU for a cluster without GPUs.
func (c *cluster) demand(t gpushare.Task) int64 {
	if c.hasGPU() {
		return t.TotalMilliGPU()
	}
	return t.MilliCPU
}

// capacity is the cluster's capacity along the demand axis.
func (c *cluster) capacity() int64 {
	if c.hasGPU() {
		return c.gpuMilli
	}
	return c.milliCPU
}

// finish checks nodes and pods and prepares them as replay.NewInput
// does (pods with spec.nodeName are bound, with unbind only static and
// mirror pods; annotated GPU demand is also requested as gpu-milli), and
// learns FGD's target workload and the capacities. The pods to schedule
// are kept as lean records (replay.BuildOptions.Lean).
func (c *cluster) finish(nodes []*v1.Node, pods []*v1.Pod, unbind bool) error {
	b, err := c.start(nodes, unbind)
	if err != nil {
		return err
	}
	if err := b.AddAll(pods); err != nil {
		return fromReplay(err)
	}
	return c.end(b)
}

// start begins loading nodes (checked, their capacities summed) and pods
// (finish's AddAll, or one by one with Add, then end).
func (c *cluster) start(nodes []*v1.Node, unbind bool) (*replay.InputBuilder, error) {
	b, err := replay.NewInputBuilder(nodes, openb.Devices, replay.BuildOptions{Unbind: unbind, Lean: true})
	if err != nil {
		return nil, fromReplay(err)
	}
	for _, ni := range b.Nodes().Nodes() {
		// Saturating: nodes of absurd sizes (each capped at MaxInt64
		// milli-CPU by the snapshot) must not wrap the total negative.
		c.milliCPU = arith.Add(c.milliCPU, ni.Allocatable().MilliCPU())
		for _, d := range ni.Devices() {
			c.gpuMilli += d.CapacityMilliGPU
		}
	}
	return b, nil
}

// end finishes what start began: the cluster's nodes, bound pods and
// pods to schedule, and FGD's target workload.
func (c *cluster) end(b *replay.InputBuilder) error {
	in := b.Input()
	c.nodes, c.bound, c.terminal = in.Nodes, in.Bound, in.Terminal
	var shapes []gpushare.Task
	for _, p := range c.bound {
		pi, err := snapshot.DecodePodInfo(p, openb.Devices)
		if err != nil {
			return inputErr("%v", err)
		}
		shapes = append(shapes, gpushare.TaskOf(pi))
	}
	c.index = make(map[*snapshot.PodInfo]int32, len(in.Arrivals))
	c.pods = make([]*snapshot.PodInfo, 0, len(in.Arrivals))
	tasks := make([]gpushare.Task, 0, len(in.Arrivals))
	for _, a := range in.Arrivals {
		c.index[a.Pod] = int32(len(c.pods))
		c.pods = append(c.pods, a.Pod)
		tasks = append(tasks, gpushare.TaskOf(a.Pod))
	}
	// FGD's target workload: the shapes of the pods to schedule (or, with
	// none, of the bound pods; with no pod at all, one empty shape).
	if len(tasks) > 0 {
		shapes = tasks
	}
	var err error
	if len(shapes) > 0 {
		c.workload, err = gpushare.WorkloadFromTasks(shapes, fgdPopularityPercent)
	} else {
		c.workload, err = gpushare.NewWorkload([]gpushare.Task{{}}, []float64{1})
	}
	if err != nil {
		return fmt.Errorf("learning the target workload: %w", err)
	}
	return nil
}

// fromReplay turns an error of package replay into the simulator's: bad
// input (exit status 2) when it wraps replay.ErrInput.
func fromReplay(err error) error {
	if errors.Is(err, replay.ErrInput) {
		return inputErr("%s", strings.TrimPrefix(err.Error(), replay.ErrInput.Error()+": "))
	}
	return err
}

// fgdPopularityPercent is the FGD simulator's podPopularityThreshold: the
// target workload keeps the most common task shapes covering 95 % of the
// pods.
const fgdPopularityPercent = 95

// traceFiles resolves -trace, -nodes and -pods to the two CSV paths. With
// -trace DIR (the dataset folder or its csv/ subfolder) the defaults are
// the full node list and the default pod list; a bare file name given to
// -nodes or -pods is looked up in DIR.
func traceFiles(dir, nodes, pods string) (string, string, error) {
	if dir != "" {
		if st, err := os.Stat(filepath.Join(dir, "csv")); err == nil && st.IsDir() {
			dir = filepath.Join(dir, "csv")
		}
		switch st, err := os.Stat(dir); {
		case errors.Is(err, fs.ErrNotExist):
			return "", "", inputErr("-trace %s: the directory does not exist (%v)", dir, pathErrCause(err))
		case err != nil:
			return "", "", inputErr("-trace %s: %v", dir, pathErrCause(err))
		case !st.IsDir():
			return "", "", inputErr("-trace %s: not a directory", dir)
		}
		resolve := func(name, def string) string {
			if name == "" {
				return filepath.Join(dir, def)
			}
			if !strings.ContainsRune(name, filepath.Separator) {
				return filepath.Join(dir, name)
			}
			return name
		}
		nodes = resolve(nodes, "openb_node_list_all_node.csv")
		pods = resolve(pods, "openb_pod_list_default.csv")
	}
	if nodes == "" || pods == "" {
		return "", "", inputErr("-nodes and -pods go together (or use -trace DIR)")
	}
	return nodes, pods, nil
}

// loadTrace reads an openb node list and pod list. Arrivals are in
// creation_time order (file order among equal times and when the column is
// absent). Malformed rows are skipped and kept in c.skipped, or fail the
// load when strict; a list with rows of which none is well-formed fails
// it too (noRows). prio gives pods their priority by qos class (nil:
// none, see priorityMap).
func loadTrace(nodesPath, podsPath string, strict bool, prio priorityMap) (*cluster, error) {
	mode := openb.Lenient
	if strict {
		mode = openb.Strict
	}
	nodes, badN, err := openb.ReadNodesFile(nodesPath, mode)
	if err != nil {
		return nil, inputErr("%v", err)
	}
	pods, badP, err := openb.ReadPodsFile(podsPath, mode)
	if err != nil {
		return nil, inputErr("%v", err)
	}
	if len(nodes) == 0 {
		return nil, noRows(nodesPath, "nodes", badN)
	}
	// A pod list with a header and no rows is an empty workload, which
	// runs (0 pods to schedule); one whose every row was skipped is not
	// what its author meant.
	if len(pods) == 0 && len(badP) > 0 {
		return nil, noRows(podsPath, "pods", badP)
	}
	c := &cluster{source: fmt.Sprintf("openb trace %s + %s", filepath.Base(nodesPath), filepath.Base(podsPath))}
	for _, e := range badN {
		c.skipped = append(c.skipped, e)
	}
	for _, e := range badP {
		c.skipped = append(c.skipped, e)
	}
	c.hasTimes = len(pods) > 0
	for _, p := range pods {
		c.hasTimes = c.hasTimes && p.HasCreation
	}
	if c.hasTimes {
		slices.SortStableFunc(pods, func(a, b openb.Pod) int { return cmp.Compare(a.Creation, b.Creation) })
	}
	objs := make([]*v1.Pod, len(pods))
	for i, p := range pods {
		objs[i] = p.Object()
		c.creation = append(c.creation, p.Creation)
		c.deletion = append(c.deletion, p.Deletion)
		c.hasDeletion = append(c.hasDeletion, p.HasDeletion)
	}
	prio.apply(objs, pods)
	if err := c.finish(openb.NodeObjects(nodes), objs, false); err != nil {
		return nil, err
	}
	return c, nil
}

// noRows is the error for a trace list (what: "nodes" or "pods") at path
// that gave none: every row malformed and skipped (bad, of which it names
// the first three), or no rows at all.
func noRows(path, what string, bad []*openb.Error) error {
	switch len(bad) {
	case 0:
		return inputErr("%s: no %s", path, what)
	case 1:
		return inputErr("%s: no %s: its one row is malformed (%s)", path, what, bad[0])
	}
	return inputErr("%s: no %s: all %d rows malformed (%s)", path, what, len(bad), firstErrors(bad, 3))
}

// loadObjects reads Kubernetes Nodes and Pods (YAML or JSON files or
// directories). Pods with spec.nodeName are bound before the replay, the
// others are scheduled (all at once, in queue order); with unbind every pod
// is scheduled anew except static and mirror pods, which the kubelet runs
// on its own node and no scheduler moves (replay.NewInput). With strict,
// fields that k8s.io/api does not know and fields given twice are errors
// naming the file, document and field (a typo such as "resource:" for
// "resources:" would otherwise drop the pod's requests silently).
//
// Workloads are expanded (load.Options.ExpandWorkloads): a Deployment
// without its ReplicaSet in the input becomes one, and a ReplicaSet,
// StatefulSet or ReplicationController with fewer active pods in the
// input than its spec.replicas gets the missing ones as pending pods (a
// Deployment scaled in the input scales its current ReplicaSet first), as
// the controllers would create them; the report counts them
// (cluster.expanded).
//
// Pending pods whose spec.schedulerName is not in schedulers (an empty
// one is v1.DefaultSchedulerName) are left out and counted: upstream's
// scheduler takes only pods of its profiles. Bound pods of any scheduler
// stay, holding their nodes' capacity.
func loadObjects(paths []string, unbind, strict bool, schedulers []string) (*cluster, error) {
	objs, warnings, err := loadInputFiles(paths, strict, true)
	if err != nil {
		return nil, inputErr("%v", err)
	}
	if len(objs.Nodes) == 0 {
		return nil, inputErr("%s: no Node objects%s", strings.Join(paths, ", "), skippedKinds(objs.Skipped, true))
	}
	c := &cluster{source: fmt.Sprintf("objects from %s", strings.Join(paths, ", ")), batch: true, objects: objs.Others, objectsInput: true, warnings: warnings,
		expanded: objs.Expanded}
	c.warnings = append(c.warnings, gpuLimitWarnings(objs.Nodes)...)
	if err := checkPriorityClasses(&objs); err != nil {
		return nil, err
	}
	pods := objs.Pods
	pods, c.otherScheduler = ownPods(pods, schedulers)
	if err := c.finish(objs.Nodes, pods, unbind); err != nil {
		return nil, err
	}
	return c, nil
}

// classSet is the PriorityClasses of an input, by name.
type classSet map[string]*schedulingv1.PriorityClass

func (s classSet) PriorityClass(name string) *schedulingv1.PriorityClass { return s[name] }

// checkPriorityClasses checks, before any run, that every pod's
// spec.priorityClassName (when spec.priority is unset) names a
// PriorityClass of the input or a built-in one, as the API server's
// Priority admission plugin would have before the pod existed. The error
// names the first such pod, its controller (the workload a pod made by
// expansion comes from), and how many more there are. O(pods).
func checkPriorityClasses(objs *load.Objects) error {
	classes := classSet{}
	for _, o := range objs.Others {
		if pc, ok := o.(*schedulingv1.PriorityClass); ok {
			classes[pc.Name] = pc
		}
	}
	var first *v1.Pod
	more := 0
	for _, p := range objs.Pods {
		if _, err := framework.PodPriority(p, classes); err != nil {
			if first == nil {
				first = p
			} else {
				more++
			}
		}
	}
	if first == nil {
		return nil
	}
	what := fmt.Sprintf("pod %s/%s", first.Namespace, first.Name)
	if ref := metav1.GetControllerOf(first); ref != nil {
		what += fmt.Sprintf(" (of %s %s/%s", ref.Kind, first.Namespace, ref.Name)
		if up := controllerOf(objs.Others, ref, first.Namespace); up != nil {
			// A ReplicaSet made for a Deployment: the template is the
			// Deployment's.
			what += fmt.Sprintf(" of %s %s/%s: its spec.template", up.Kind, first.Namespace, up.Name)
		}
		what += ")"
	}
	tail := ""
	switch {
	case more == 1:
		tail = "; and 1 more pod"
	case more > 1:
		tail = fmt.Sprintf("; and %d more pods", more)
	}
	return inputErr("%s: spec.priorityClassName: no PriorityClass %q among the input's PriorityClasses or the built-in system-cluster-critical and system-node-critical%s",
		what, first.Spec.PriorityClassName, tail)
}

// controllerOf is the controller reference of the ReplicaSet ref names
// (in namespace ns) among others, nil when there is none.
func controllerOf(others []runtime.Object, ref *metav1.OwnerReference, ns string) *metav1.OwnerReference {
	if ref.Kind != "ReplicaSet" {
		return nil
	}
	for _, o := range others {
		if rs, ok := o.(*appsv1.ReplicaSet); ok && rs.Namespace == ns && rs.Name == ref.Name {
			return metav1.GetControllerOf(rs)
		}
	}
	return nil
}

// firstErrors joins the first n of errs with "; " and says how many more
// there are.
func firstErrors[E error](errs []E, n int) string {
	var parts []string
	for i, e := range errs {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(errs)-n))
			break
		}
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, "; ")
}

// skippedKinds says which objects load skipped and why ("" if none), for
// the "no Node objects" error: a Node of another apiVersion is a likely
// typo. expanded says whether Deployments and DaemonSets were read (and
// workloads expanded).
func skippedKinds(skipped map[schema.GroupVersionKind]int, expanded bool) string {
	if len(skipped) == 0 {
		return ""
	}
	kinds := make([]string, 0, len(skipped))
	for gvk, n := range skipped {
		kinds = append(kinds, fmt.Sprintf("%d %s %s", n, gvk.GroupVersion(), gvk.Kind))
	}
	slices.Sort(kinds)
	apps := "apps/v1 ReplicaSets and StatefulSets"
	if expanded {
		apps = "apps/v1 Deployments, DaemonSets, ReplicaSets and StatefulSets (expanded into their pods when the input has none)"
	}
	return fmt.Sprintf(" (skipped %s: only apiVersion v1 Node and Pod objects are scheduled, with v1 Namespaces, Services and ReplicationControllers, %s, scheduling.k8s.io/v1 PriorityClasses and policy/v1 PodDisruptionBudgets, and v1 Lists of them)", strings.Join(kinds, ", "), apps)
}

// ownPods returns the pods a scheduler named in schedulers takes, with the
// bound pods (spec.nodeName set) of any scheduler, and how many pending
// pods it left out. An empty spec.schedulerName is
// v1.DefaultSchedulerName, as the API server defaults it. pods is not
// changed; O(len(pods) × len(schedulers)).
func ownPods(pods []*v1.Pod, schedulers []string) ([]*v1.Pod, int) {
	out := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		name := cmp.Or(p.Spec.SchedulerName, v1.DefaultSchedulerName)
		if p.Spec.NodeName == "" && !slices.Contains(schedulers, name) {
			continue
		}
		out = append(out, p)
	}
	return out, len(pods) - len(out)
}

// gpuLimitWarnings returns a warning for each node advertising more GPUs
// (openb's gpu-count, else nvidia.com/gpu, in status.allocatable) than the
// device model holds (snapshot.MaxDevices): the decoder gives such a node
// no devices, so its GPUs are counted only as a scalar resource and no
// GPU-sharing pod fits there. O(nodes).
func gpuLimitWarnings(nodes []*v1.Node) []string {
	var out []string
	for _, n := range nodes {
		for _, r := range []v1.ResourceName{openb.ResourceGPUCount, snapshot.ResourceNvidiaGPU} {
			q, ok := n.Status.Allocatable[r]
			if !ok || q.Sign() <= 0 {
				continue
			}
			if q.CmpInt64(snapshot.MaxDevices) > 0 {
				out = append(out, fmt.Sprintf("warning: node %s: status.allocatable[%s] is %s GPUs, more than the %d devices the device model holds: the node gets no devices (its GPUs count only as a scalar resource; GPU-sharing pods do not fit there)", n.Name, r, q.String(), snapshot.MaxDevices))
			}
			break
		}
	}
	return out
}
