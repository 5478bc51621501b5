package load

import (
	"cmp"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/schedkit/schedkit/internal/objects"
	"github.com/schedkit/schedkit/internal/selector"
)

// Expansion counts what [Options.ExpandWorkloads] made for the workloads
// of one kind.
type Expansion struct {
	// Workloads is how many workloads of the kind were expanded or topped
	// up.
	Workloads int
	// Pods is how many pods were made for them (for a Deployment, the
	// pods of the ReplicaSet made for it, of its ReplicaSet filed from its
	// pods, or of its ReplicaSets in the input: a ReplicaSet whose
	// Deployment is in the input counts as that Deployment), those added
	// to a workload with some of its pods in the input included.
	Pods int
}

// maxExpandedPods bounds the pods one load makes, so that a replicas
// count typed wrong (or fuzzed) is an error rather than the end of the
// process's memory; see Options.ExpandWorkloads. A variable only so that
// the fuzz target can lower it (export_test.go).
var maxExpandedPods = 1_000_000

// ownerKey names a controller: its kind, namespace and name.
type ownerKey struct{ kind, namespace, name string }

// owners records the controllers named by controller ownerReferences, with
// the uids the references give ("" for none) and, per uid, how many of
// the referring objects are active (see note).
type owners map[ownerKey]map[types.UID]int

// note records ref, an object's controller reference (nil for none);
// namespace is the object's; active says whether the object counts
// towards its controller's replicas (a pod neither terminal nor being
// deleted, as upstream's controller.FilterActivePods).
func (o owners) note(namespace string, ref *metav1.OwnerReference, active bool) {
	if ref == nil {
		return
	}
	k := ownerKey{ref.Kind, namespace, ref.Name}
	if o[k] == nil {
		o[k] = map[types.UID]int{}
	}
	n := o[k][ref.UID]
	if active {
		n++
	}
	o[k][ref.UID] = n
}

// has reports whether a recorded reference names the controller m:
// kind, namespace and name equal, and uids equal when both are set (uid
// is the one the input gave m, "" for none).
func (o owners) has(kind string, m metav1.Object, uid types.UID) bool {
	uids := o[ownerKey{kind, m.GetNamespace(), m.GetName()}]
	_, anyUID := uids[""]
	_, same := uids[uid]
	return uids != nil && (uid == "" || anyUID || same)
}

// active counts the active objects whose reference names the controller
// m, as has matches them.
func (o owners) active(kind string, m metav1.Object, uid types.UID) int {
	uids := o[ownerKey{kind, m.GetNamespace(), m.GetName()}]
	if uid == "" {
		n := 0
		for _, c := range uids {
			n += c
		}
		return n
	}
	return uids[""] + uids[uid]
}

// labelSets holds the labels of the input's pods (or ReplicaSets), by
// namespace, indexed by label pair, with their controllers, for the
// selector half of the bare check (loader.bare).
type labelSets map[string]*nsLabels

type nsLabels struct {
	all    []labeled
	byPair map[[2]string][]int // a label pair → the indexes in all holding it
}

// labeled is an object's labels, its controller (kind and name, "" for
// an orphan) and whether it is active (owners.note).
type labeled struct {
	labels           map[string]string
	ctrlKind, ctrlNm string
	active           bool
}

// add records an object of namespace ns: its labels, controller
// reference (ref, nil for none) and whether it is active. O(labels).
func (s labelSets) add(ns string, labels map[string]string, ref *metav1.OwnerReference, active bool) {
	n := s[ns]
	if n == nil {
		n = &nsLabels{byPair: map[[2]string][]int{}}
		s[ns] = n
	}
	for k, v := range labels {
		n.byPair[[2]string{k, v}] = append(n.byPair[[2]string{k, v}], len(n.all))
	}
	o := labeled{labels: labels, active: active}
	if ref != nil {
		o.ctrlKind, o.ctrlNm = ref.Kind, ref.Name
	}
	n.all = append(n.all, o)
}

// matches reports whether some object in namespace ns that counts (see
// loader.bare) has labels sel matches; pairs are sel's matchLabels (or
// set): objects holding one of them are the only candidates (every
// object when pairs is empty). O(candidates × selector size).
func (s labelSets) matches(ns string, sel *selector.Selector, pairs map[string]string, counts func(*labeled) bool) bool {
	found := false
	s.visit(ns, sel, pairs, counts, func(*labeled) bool { found = true; return false })
	return found
}

// visit calls f for each object of matches, in input order among the
// candidates, until f returns false.
func (s labelSets) visit(ns string, sel *selector.Selector, pairs map[string]string, counts func(*labeled) bool, f func(*labeled) bool) {
	n := s[ns]
	if n == nil {
		return
	}
	try := func(o *labeled) bool { return !counts(o) || !selector.MatchMap(sel, o.labels) || f(o) }
	for k, v := range pairs {
		for _, i := range n.byPair[[2]string{k, v}] {
			if !try(&n.all[i]) {
				return
			}
		}
		return // every match holds this pair
	}
	for i := range n.all {
		if !try(&n.all[i]) {
			return
		}
	}
}

// bare reports whether the input holds none of the workload's pods (or,
// for a Deployment with rs set, ReplicaSets): none with a controller
// reference to it (kind and name in its namespace, uids equal when both
// are set), and none in its namespace, matched by its selector (ls, or
// the set of a ReplicationController), that its controller would count:
//   - a ReplicaSet, StatefulSet or ReplicationController adopts the
//     orphan pods its selector matches;
//   - a Deployment adopts the orphan ReplicaSets its selector matches,
//     and owns, through its ReplicaSet, the pods its selector matches
//     whose controller is a ReplicaSet missing from the input (what
//     `kubectl get deploy,pods -o yaml` gives).
func (l *loader) bare(kind string, m metav1.Object, uid types.UID, ls *metav1.LabelSelector, set map[string]string, rs bool) bool {
	refs, objs := l.podOwners, l.podLabels
	if rs {
		refs, objs = l.rsOwners, l.rsLabels
	}
	if refs.has(kind, m, uid) {
		return false
	}
	sel, pairs, ok := workloadSelector(ls, set)
	if !ok {
		return false // reported by workloadProblems
	}
	counts := func(o *labeled) bool { return o.ctrlKind == "" }
	if kind == "Deployment" && !rs {
		counts = l.ofMissingReplicaSet(m.GetNamespace())
	}
	return !objs.matches(m.GetNamespace(), &sel, pairs, counts)
}

// activePods counts the input's active pods (owners.note) that the
// workload's controller counts towards its replicas: those it controls
// (kind, namespace and name, uids as bare compares them), and the orphans
// its selector (ls, or the set of a ReplicationController) matches,
// which it would adopt. An orphan two selectors match is counted for
// each. O(candidates × selector size).
func (l *loader) activePods(kind string, m metav1.Object, uid types.UID, ls *metav1.LabelSelector, set map[string]string) int {
	n := l.podOwners.active(kind, m, uid)
	sel, pairs, ok := workloadSelector(ls, set)
	if !ok {
		return n
	}
	orphan := func(o *labeled) bool { return o.ctrlKind == "" && o.active }
	l.podLabels.visit(m.GetNamespace(), &sel, pairs, orphan, func(*labeled) bool { n++; return true })
	return n
}

// podFacts is what expansion reads of an input pod once it is filed
// (the pod itself may go to a cache as a lean record): its namespace,
// labels, controller reference (kind, name, uid; empty kind for none),
// whether it is active (podActive) and its target node (targetNode).
type podFacts struct {
	namespace  string
	labels     map[string]string
	ctrlKind   string
	ctrlName   string
	ctrlUID    types.UID
	active     bool
	targetNode string
	// replaceable: terminal (Succeeded, Failed) and not being deleted,
	// so kept in Objects.Pods, never in a cache; a StatefulSet's
	// controller deletes and recreates such a pod of its own.
	replaceable bool
}

func factsOf(p *v1.Pod, ctrl *metav1.OwnerReference, active bool) *podFacts {
	f := &podFacts{namespace: p.Namespace, labels: p.Labels, active: active, targetNode: targetNode(p),
		replaceable: p.DeletionTimestamp == nil && (p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed)}
	if ctrl != nil {
		f.ctrlKind, f.ctrlName, f.ctrlUID = ctrl.Kind, ctrl.Name, ctrl.UID
	}
	return f
}

// dropPod removes the input pod of key (namespace/name), a replaceable
// one (podFacts), from what the load returns and forgets its name, so
// that a pod made in its place may take it. O(pods read).
func (l *loader) dropPod(key string) {
	delete(l.pods, key)
	delete(l.inputPods, key)
	for i, p := range l.out.Pods {
		if p.Namespace+"/"+p.Name == key {
			l.out.Pods = append(l.out.Pods[:i], l.out.Pods[i+1:]...)
			return
		}
	}
}

// podActive reports whether p counts towards its controller's replicas:
// neither terminal (Succeeded, Failed) nor being deleted, as upstream's
// controller.FilterActivePods.
func podActive(p *v1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed
}

// memberOf returns whether an input pod counts for the workload m of
// kind (uid as bare compares it, selector ls, parsed once here):
// controlled by it, or an orphan its selector matches (which it would
// adopt).
func memberOf(kind string, m metav1.Object, uid types.UID, ls *metav1.LabelSelector) func(*podFacts) bool {
	sel, _, ok := workloadSelector(ls, nil)
	name := m.GetName()
	return func(p *podFacts) bool {
		if p.ctrlKind == "" {
			return ok && selector.MatchMap(&sel, p.labels)
		}
		return p.ctrlKind == kind && p.ctrlName == name && (uid == "" || p.ctrlUID == "" || p.ctrlUID == uid)
	}
}

// workloadSelector is a workload's selector (ls, or the set of a
// ReplicationController) and its pairs for labelSets; false when ls is
// invalid.
func workloadSelector(ls *metav1.LabelSelector, set map[string]string) (selector.Selector, map[string]string, bool) {
	if ls == nil {
		return selector.FromSet(set), set, true
	}
	sel, err := selector.FromLabelSelector(ls)
	return sel, ls.MatchLabels, err == nil
}

// ofMissingReplicaSet reports whether a pod of namespace ns is
// controlled by a ReplicaSet missing from the input.
func (l *loader) ofMissingReplicaSet(ns string) func(*labeled) bool {
	return func(o *labeled) bool {
		_, present := l.others[objects.Key{Kind: objects.ReplicaSet, Namespace: ns, Name: o.ctrlNm}]
		return o.ctrlKind == "ReplicaSet" && !present
	}
}

// missingReplicaSets files, for a Deployment whose pods are in the input
// without their ReplicaSets (kubectl get deploy,pods), each such
// ReplicaSet as the deployment controller made it: the pods' controller
// name, their pod-template-hash label (if they carry one), the
// Deployment's replicas, owned by it; no pods are made. Without it the
// pods would have no ReplicaSet selecting them, which system default
// spreading reads. Pods naming one ReplicaSet are read once. It returns
// the ReplicaSets filed.
func (l *loader) missingReplicaSets(at where, d *appsv1.Deployment) []*appsv1.ReplicaSet {
	sel, pairs, ok := workloadSelector(d.Spec.Selector, nil)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var made []*appsv1.ReplicaSet
	l.podLabels.visit(d.Namespace, &sel, pairs, l.ofMissingReplicaSet(d.Namespace), func(o *labeled) bool {
		if !seen[o.ctrlNm] {
			seen[o.ctrlNm] = true
			hash, has := o.labels[appsv1.DefaultDeploymentUniqueLabelKey]
			if rs := replicaSetFor(d, o.ctrlNm, hash, has); l.cluster(at, rs) {
				made = append(made, rs)
			}
		}
		return true
	})
	return made
}

// workload is a Deployment, ReplicaSet, StatefulSet or
// ReplicationController of the input, with where it was read and the
// uid the input gave it ("" for none).
type workload struct {
	at  where
	obj runtime.Object
	uid types.UID
}

// origin is the workload a made pod is reported under: its errors name
// the workload and the template field.
type origin struct{ kind, namespace, name string }

// templateField maps a pod's field path to the workload template's:
// spec.x is spec.template.spec.x, metadata.labels is
// spec.template.metadata.labels; metadata.name and metadata.namespace,
// which the pod takes from the workload, stay the workload's.
func templateField(f string) string {
	switch {
	case f == "" || f == "metadata.name" || f == "metadata.namespace":
		return f
	default:
		return "spec.template." + f
	}
}

// deployment checks and records a Deployment (with ExpandWorkloads) as
// the API server validates what expansion reads: names, spec.replicas
// not negative, spec.selector present, valid, not empty and matching
// the template's labels.
func (l *loader) deployment(at where, d *appsv1.Deployment) {
	l.topWorkload(at, "Deployment", d, &d.ObjectMeta, func() []problem {
		return workloadProblems(&d.ObjectMeta, d.Spec.Replicas, d.Spec.Selector, nil, &d.Spec.Template)
	})
}

// daemonSet checks and records a DaemonSet (with ExpandWorkloads) as
// deployment does a Deployment: names, spec.selector present, valid, not
// empty and matching the template's labels, at least one container, and
// the template as an input pod is checked (its node affinity, which the
// controller reads to pick the nodes, its requests...; the API server's
// ValidatePodTemplateSpec), also when no node will take a pod.
func (l *loader) daemonSet(at where, ds *appsv1.DaemonSet) {
	l.topWorkload(at, "DaemonSet", ds, &ds.ObjectMeta, func() []problem {
		return workloadProblems(&ds.ObjectMeta, nil, ds.Spec.Selector, nil, &ds.Spec.Template)
	})
}

// topWorkload checks and records a workload that no other input object
// owns (a Deployment or a DaemonSet) of kind, whose metadata is m:
// namespace defaulted, names valid, problems (called once the names are)
// empty, and not read before; then it is recorded for expand with the
// uid the input gave, and given a derived one if it had none.
func (l *loader) topWorkload(at where, kind string, obj runtime.Object, m *metav1.ObjectMeta, problems func() []problem) {
	if m.Namespace == "" {
		m.Namespace = metav1.NamespaceDefault
	}
	fail := func(field string, err error) {
		e := l.errorAt(at, err)
		e.Kind, e.Namespace, e.Name, e.Field = kind, m.Namespace, m.Name, field
		l.errs.add(e)
	}
	if m.Name == "" {
		fail("metadata.name", ErrMissingName)
		return
	}
	ok := true
	for _, fe := range objects.NamespacedNames(m.Name, m.Namespace, apivalidation.NameIsDNSSubdomain) {
		fail(fe.Field, fmt.Errorf("%w: %s", ErrInvalidObject, fe.ErrorBody()))
		ok = false
	}
	if !ok {
		return
	}
	for _, p := range problems() {
		fail(p.field, p.err)
		ok = false
	}
	if !ok {
		return
	}
	k := ownerKey{kind, m.Namespace, m.Name}
	if first, dup := l.topLevel[k]; dup {
		fail("metadata.name", fmt.Errorf("%w: also at %s", ErrDuplicate, first))
		return
	}
	l.topLevel[k] = at
	l.workloads = append(l.workloads, workload{at, obj, m.UID})
	l.keepWorkloadYAML(at)
	if m.UID == "" {
		m.UID = derivedUID(kind, m.Namespace, m.Name)
	}
}

// replicasProblems is a negative spec.replicas, which the API server
// refuses: checked on every workload of the input, also one that makes
// no pods (whose template is otherwise not checked, see
// TestExpandListsWorkloadErrorsWithOthers).
func replicasProblems(replicas *int32) []problem {
	if replicas != nil && *replicas < 0 {
		return []problem{{"spec.replicas", fmt.Errorf("%w: %d: must be greater than or equal to 0", ErrInvalidObject, *replicas)}}
	}
	return nil
}

// workloadProblems lists what the API server refuses in the fields
// expansion reads: a negative spec.replicas; a label selector (ls, of
// apps/v1 kinds) absent, empty or invalid, or a set selector (set, of a
// ReplicationController, where empty means the template's labels) that
// does not match the template's labels; a nil template; and, when none
// of those, the template checked as an input pod of owner is (its
// problems under spec.template...), whatever the number of pods to be
// made: a workload of 0 replicas, or a DaemonSet no node takes, is
// refused as the API server refuses it. O(labels + selector size +
// template size).
func workloadProblems(owner *metav1.ObjectMeta, replicas *int32, ls *metav1.LabelSelector, set map[string]string, tmpl *v1.PodTemplateSpec) []problem {
	ps := replicasProblems(replicas)
	if tmpl == nil {
		return append(ps, problem{"spec.template", fmt.Errorf("%w: Required value", ErrInvalidObject)})
	}
	if len(tmpl.Spec.Containers) == 0 {
		ps = append(ps, problem{"spec.template.spec.containers", fmt.Errorf("%w: Required value", ErrInvalidObject)})
	}
	var sel selector.Selector
	switch {
	case set != nil:
		sel = selector.FromSet(set)
	case ls == nil:
		return append(ps, problem{"spec.selector", fmt.Errorf("%w: Required value", ErrInvalidObject)})
	case len(ls.MatchLabels)+len(ls.MatchExpressions) == 0:
		return append(ps, problem{"spec.selector", fmt.Errorf("%w: empty selector is invalid for a workload", ErrInvalidObject)})
	default:
		var err error
		if sel, err = selector.FromLabelSelector(ls); err != nil {
			return append(ps, problem{"spec.selector", fmt.Errorf("%w: %w", ErrInvalidObject, err)})
		}
	}
	if !selector.MatchMap(&sel, tmpl.Labels) {
		ps = append(ps, problem{"spec.template.metadata.labels", fmt.Errorf("%w: selector does not match template labels", ErrInvalidObject)})
	}
	if len(ps) > 0 {
		return ps
	}
	p := templatePod(owner, tmpl, metav1.OwnerReference{})
	p.Name = generatedBase(owner.Name) + "xxxxx" // a valid name: the pods' are checked apart
	if p.Namespace == "" {
		p.Namespace = metav1.NamespaceDefault
	}
	for _, pr := range podProblems(p) {
		ps = append(ps, problem{templateField(pr.field), pr.err})
	}
	return ps
}

// workloadUID gives an input ReplicaSet, StatefulSet or
// ReplicationController without metadata.uid one derived from its kind,
// namespace (as cluster will default it) and name, before it is filed;
// it returns the uid the input gave ("" for none), and "" for other
// kinds.
func workloadUID(obj runtime.Object) types.UID {
	var kind string
	switch obj.(type) {
	case *appsv1.ReplicaSet:
		kind = "ReplicaSet"
	case *appsv1.StatefulSet:
		kind = "StatefulSet"
	case *v1.ReplicationController:
		kind = "ReplicationController"
	default:
		return ""
	}
	m := obj.(metav1.Object)
	uid := m.GetUID()
	if uid == "" && m.GetName() != "" {
		m.SetUID(derivedUID(kind, cmp.Or(m.GetNamespace(), metav1.NamespaceDefault), m.GetName()))
	}
	return uid
}

// noteWorkload records an input object filed by cluster, whose input
// uid was uid: a ReplicaSet's controller (a Deployment), and the
// workloads expansion may expand.
func (l *loader) noteWorkload(at where, obj runtime.Object, uid types.UID) {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		ctrl := metav1.GetControllerOfNoCopy(o)
		l.rsOwners.note(o.Namespace, ctrl, true)
		l.rsLabels.add(o.Namespace, o.Labels, ctrl, true)
	case *appsv1.StatefulSet, *v1.ReplicationController:
	default:
		return
	}
	l.workloads = append(l.workloads, workload{at, obj, uid})
	l.keepWorkloadYAML(at)
}

// keepWorkloadYAML keeps a copy of the YAML of the workload read at at,
// when it is the document (or List item) being decoded, for the errors
// expand finds later (loader.workloadYAML): a load with ExpandWorkloads
// holds every workload's text until it returns, O(bytes of the
// workloads' documents).
func (l *loader) keepWorkloadYAML(at where) {
	if l.yaml != nil && at == l.yamlAt {
		if l.workloadYAML == nil {
			l.workloadYAML = map[where][]byte{}
		}
		l.workloadYAML[at] = append([]byte(nil), l.yaml...)
	}
}

// expand makes the ReplicaSets and pods of the workloads, in input order
// (Options.ExpandWorkloads). Done once every input is read. When an
// error was found it still checks the workloads it would expand, so
// that their errors are listed with the input's others, but makes
// nothing (the load fails anyway, and an input pod or ReplicaSet left
// out by an error would make its owner look bare).
func (l *loader) expand() {
	if !l.opts.ExpandWorkloads {
		return
	}
	failed := l.failed()
	// count records pods made for a workload of kind; a Deployment
	// (owner: its namespace/name) counts once, however many of its
	// ReplicaSets get pods.
	counted := map[string]bool{}
	count := func(kind, owner string, pods int) {
		if pods == 0 {
			return // replicas 0: nothing made, nothing to report
		}
		if l.out.Expanded == nil {
			l.out.Expanded = map[string]Expansion{}
		}
		x := l.out.Expanded[kind]
		if owner == "" || !counted[owner] {
			x.Workloads++
			counted[owner] = owner != ""
		}
		x.Pods += pods
		l.out.Expanded[kind] = x
	}
	deployments := map[string]types.UID{} // the input's Deployments by namespace/name: their uids
	for _, w := range l.workloads {
		if d, ok := w.obj.(*appsv1.Deployment); ok {
			deployments[d.Namespace+"/"+d.Name] = w.uid
			// A paused Deployment is scaled too: upstream's sync scales
			// its ReplicaSets, only the rollout waits.
			if !failed && d.DeletionTimestamp == nil && !l.terminating[d.Namespace] {
				l.scaleCurrent(w.at, d, w.uid)
			}
		}
	}
	for _, w := range l.workloads {
		// Being deleted, or in a namespace being deleted: its controller
		// creates nothing for it, or the API server's NamespaceLifecycle
		// admission refuses what it creates. It is checked all the same,
		// as when another error was found.
		m := w.obj.(metav1.Object)
		dying := m.GetDeletionTimestamp() != nil || l.terminating[m.GetNamespace()]
		switch o := w.obj.(type) {
		case *appsv1.Deployment:
			if dying { // checked as read (loader.deployment)
				continue
			}
			// Its ReplicaSets, or their pods, in the input: not bare.
			if !l.bare("Deployment", o, w.uid, o.Spec.Selector, nil, true) {
				continue
			}
			if failed { // checked as read (loader.deployment)
				continue
			}
			if !l.bare("Deployment", o, w.uid, o.Spec.Selector, nil, false) {
				made := l.missingReplicaSets(w.at, o)
				if len(made) == 1 { // paused too: sync scales it
					// Its only ReplicaSet, at the Deployment's replicas:
					// topped up as an input one is.
					rs := made[0]
					need := replicasOf(rs.Spec.Replicas) - l.podOwners.active("ReplicaSet", rs, "")
					count("Deployment", o.Namespace+"/"+o.Name, l.replicaSetPods(w.at, rs, origin{"Deployment", o.Namespace, o.Name}, need))
				}
				continue
			}
			if o.Spec.Paused {
				continue // the controller makes no ReplicaSet for a paused Deployment
			}
			rs := l.newReplicaSet(o)
			if !l.cluster(w.at, rs) {
				continue
			}
			count("Deployment", o.Namespace+"/"+o.Name, l.replicaSetPods(w.at, rs, origin{"Deployment", o.Namespace, o.Name}, replicasOf(rs.Spec.Replicas)))
		case *appsv1.ReplicaSet:
			// Bare: all its replicas; otherwise those its active pods
			// lack (the controller's manageReplicas).
			src := origin{"ReplicaSet", o.Namespace, o.Name}
			need := replicasOf(o.Spec.Replicas)
			if !l.bare("ReplicaSet", o, w.uid, o.Spec.Selector, nil, false) {
				need -= l.activePods("ReplicaSet", o, w.uid, o.Spec.Selector, nil)
				if need <= 0 {
					l.workloadOK(w.at, src, replicasProblems(o.Spec.Replicas))
					continue
				}
			}
			if !l.workloadOK(w.at, src, workloadProblems(&o.ObjectMeta, o.Spec.Replicas, o.Spec.Selector, nil, &o.Spec.Template)) || failed || dying {
				continue
			}
			// Counted for its Deployment when that is in the input (the
			// reference matched as owners.has matches), so that the same
			// what-if counts the same with or without the ReplicaSet in
			// the input.
			kind, owner := src.kind, ""
			if c := metav1.GetControllerOfNoCopy(o); c != nil && c.Kind == "Deployment" {
				if u, ok := deployments[o.Namespace+"/"+c.Name]; ok && sameUID(c.UID, u) {
					kind, owner = "Deployment", o.Namespace+"/"+c.Name
				}
			}
			at := w.at
			if by, ok := l.scaledBy[o]; ok {
				// Its replicas are its Deployment's: so is a refusal of
				// as many pods.
				at, src = by.at, origin{"Deployment", by.d.Namespace, by.d.Name}
			}
			count(kind, owner, l.replicaSetPods(at, o, src, need))
		case *v1.ReplicationController:
			src := origin{"ReplicationController", o.Namespace, o.Name}
			need := replicasOf(o.Spec.Replicas)
			if !l.bare("ReplicationController", o, w.uid, nil, rcSelector(o), false) {
				need -= l.activePods("ReplicationController", o, w.uid, nil, rcSelector(o))
				if need <= 0 {
					l.workloadOK(w.at, src, replicasProblems(o.Spec.Replicas))
					continue
				}
			}
			if !l.workloadOK(w.at, src, workloadProblems(&o.ObjectMeta, o.Spec.Replicas, nil, rcSelector(o), o.Spec.Template)) || failed || dying {
				continue
			}
			ref := controllerRef("v1", "ReplicationController", &o.ObjectMeta)
			count(src.kind, "", l.makePods(w.at, src, &o.ObjectMeta, o.Spec.Template, need, ref, nil))
		case *appsv1.DaemonSet:
			if failed || dying { // checked as read (loader.daemonSet)
				continue
			}
			// Bare: a pod per node it runs on; otherwise on those nodes
			// without an active pod of its own.
			var have map[string]bool
			if !l.bare("DaemonSet", o, w.uid, o.Spec.Selector, nil, false) {
				have = l.daemonNodes(o, w.uid)
			}
			count("DaemonSet", "", l.daemonPods(w.at, o, have))
		case *appsv1.StatefulSet:
			start := 0
			if o.Spec.Ordinals != nil {
				start = int(o.Spec.Ordinals.Start)
			}
			// Bare: every ordinal; otherwise the ordinals in range without
			// a pod of its own in the input (the controller recreates a
			// missing ordinal by its name). A pod of another owner
			// holding the name is left to be reported as a duplicate. Its
			// own pod that is terminal (and not being deleted) is
			// replaced: the controller deletes it and creates the
			// ordinal again. Beyond the bound on made pods, makePods
			// reports it before any is made (ords is not listed).
			n := stsReplicas(o)
			var ords []int
			var replaced []string // keys of the terminal pods replaced
			if n <= maxExpandedPods-l.made {
				member := memberOf("StatefulSet", o, w.uid, o.Spec.Selector)
				for i := range n {
					key := o.Namespace + "/" + o.Name + "-" + strconv.Itoa(start+i)
					switch p := l.inputPods[key]; {
					case p == nil || !member(p):
						ords = append(ords, start+i)
					case p.replaceable:
						ords = append(ords, start+i)
						replaced = append(replaced, key)
					}
				}
				n = len(ords)
			}
			src := origin{"StatefulSet", o.Namespace, o.Name}
			if !l.bare("StatefulSet", o, w.uid, o.Spec.Selector, nil, false) && n <= 0 {
				l.workloadOK(w.at, src, replicasProblems(o.Spec.Replicas))
				continue
			}
			ps := workloadProblems(&o.ObjectMeta, o.Spec.Replicas, o.Spec.Selector, nil, &o.Spec.Template)
			if start < 0 {
				ps = append(ps, problem{"spec.ordinals.start", fmt.Errorf("%w: %d: must be greater than or equal to 0", ErrInvalidObject, start)})
			}
			if n := stsReplicas(o); n > 0 {
				// A pod's name is its hostname label and the value of its
				// pod-name label: at most 63 characters.
				if last := o.Name + "-" + strconv.Itoa(start+n-1); len(last) > 63 {
					ps = append(ps, problem{"metadata.name", fmt.Errorf("%w: pod name %q is longer than 63 characters (a StatefulSet pod's name is its hostname)", ErrInvalidObject, last)})
				}
			}
			if !l.workloadOK(w.at, src, ps) || failed || dying {
				continue
			}
			for _, key := range replaced {
				l.dropPod(key)
			}
			ref := controllerRef("apps/v1", "StatefulSet", &o.ObjectMeta)
			count(src.kind, "", l.makePods(w.at, src, &o.ObjectMeta, &o.Spec.Template, n, ref, func(p *v1.Pod, i int) {
				// spec.ordinals.start numbers the pods from start
				// (upstream getStartOrdinal).
				ord := strconv.Itoa(ords[i])
				p.Name = o.Name + "-" + ord
				p.Labels[appsv1.StatefulSetPodNameLabel] = p.Name
				p.Labels[appsv1.PodIndexLabel] = ord
				p.Spec.Hostname = p.Name
				p.Spec.Subdomain = o.Spec.ServiceName
			}))
		}
	}
}

// scaleCurrent gives a Deployment's current ReplicaSet of the input
// (controlled by it, uids as bare compares them; its template equal to
// the Deployment's but for the pod-template-hash label, upstream's
// EqualIgnoreHash) the Deployment's spec.replicas (nil: 1), as the
// deployment controller scales it, when every other ReplicaSet it
// controls has 0 replicas (no rollout under way, whose steps are the
// controller's). Before expand tops the ReplicaSets up, so that a
// Deployment scaled in the input (a what-if) makes or keeps that many
// pods. O(workloads).
func (l *loader) scaleCurrent(at where, d *appsv1.Deployment, uid types.UID) {
	var cur *appsv1.ReplicaSet
	total, owned, rollout := 0, 0, false
	// scalingEvent: the input asks for other replicas than its
	// ReplicaSets were last scaled for (upstream's isScalingEvent: a
	// ReplicaSet with replicas whose desired-replicas annotation is not
	// the Deployment's; none annotated counts as asked).
	scalingEvent, annotated := false, false
	defer func() {
		// Not scaled, though the input asks for other replicas: say so.
		if want := replicasOf(d.Spec.Replicas); owned > 0 && (cur == nil || rollout) && total != want && (scalingEvent || !annotated) {
			why := "no ReplicaSet of the input has its template (the controller would start a rollout)"
			if cur != nil {
				why = "a rollout is under way: an old ReplicaSet still has replicas (the controller would spread the change over its ReplicaSets)"
			}
			e := l.errorAt(at, fmt.Errorf("%w: %d replicas, %d in its ReplicaSets of the input, left as they are: %s", ErrNotExpanded, want, total, why))
			e.Kind, e.Namespace, e.Name, e.Field = "Deployment", d.Namespace, d.Name, "spec.replicas"
			l.out.Warnings = append(l.out.Warnings, e)
		}
	}()
	for _, w := range l.workloads {
		rs, ok := w.obj.(*appsv1.ReplicaSet)
		if !ok || rs.Namespace != d.Namespace {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(rs)
		if ref == nil || ref.Kind != "Deployment" || ref.Name != d.Name || !sameUID(ref.UID, uid) {
			continue
		}
		owned++
		if replicasOf(rs.Spec.Replicas) > 0 {
			if v, ok := rs.Annotations[desiredReplicasAnnotation]; ok {
				annotated = true
				if v != strconv.Itoa(replicasOf(d.Spec.Replicas)) {
					scalingEvent = true
				}
			}
		}
		switch {
		case rs.Spec.Replicas != nil && *rs.Spec.Replicas < 0:
			owned = 0
			return // left for expand to report
		case cur == nil && equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template):
			cur = rs
		case replicasOf(rs.Spec.Replicas) != 0:
			rollout = true // an old ReplicaSet still running
		}
		total += replicasOf(rs.Spec.Replicas)
	}
	if cur != nil && !rollout {
		n := int32(replicasOf(d.Spec.Replicas))
		if replicasOf(cur.Spec.Replicas) != int(n) {
			if l.scaledBy == nil {
				l.scaledBy = map[*appsv1.ReplicaSet]scaling{}
			}
			l.scaledBy[cur] = scaling{at, d}
		}
		cur.Spec.Replicas = &n
	}
}

// sameUID reports whether a controller reference's uid names an object
// of the input with uid: equal, or either not given ("" matches any, as
// owners.has matches).
func sameUID(ref, uid types.UID) bool { return ref == "" || uid == "" || ref == uid }

// desiredReplicasAnnotation is where the Deployment controller records,
// on each ReplicaSet, the Deployment's replicas it last scaled for
// (k8s.io/kubernetes pkg/controller/deployment/util
// DesiredReplicasAnnotation).
const desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"

// scaling is a Deployment that scaled a ReplicaSet of the input, and
// where it was read.
type scaling struct {
	at where
	d  *appsv1.Deployment
}

// equalIgnoreHash reports whether two pod templates are equal once the
// pod-template-hash label is taken from both (upstream's
// deployment/util EqualIgnoreHash), by apimachinery's semantic
// equality.
func equalIgnoreHash(a, b *v1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return equality.Semantic.DeepEqual(a, b)
}

// stsReplicas is a StatefulSet's spec.replicas (nil: 1).
func stsReplicas(o *appsv1.StatefulSet) int { return replicasOf(o.Spec.Replicas) }

// replicasOf is a workload's spec.replicas: nil is 1, as the API server
// defaults it.
func replicasOf(r *int32) int {
	if r == nil {
		return 1
	}
	return int(*r)
}

// rcSelector is a ReplicationController's selector, never nil (so that
// workloadProblems reads it as a set selector): empty means the
// template's labels, as the API server defaults it.
func rcSelector(rc *v1.ReplicationController) map[string]string {
	if len(rc.Spec.Selector) == 0 && rc.Spec.Template != nil {
		return rc.Spec.Template.Labels
	}
	if rc.Spec.Selector == nil {
		return map[string]string{}
	}
	return rc.Spec.Selector
}

// replicaSetPods makes n pods of a ReplicaSet (none when n <= 0) and
// returns how many it made. The ReplicaSet is checked: an input one by
// expand, one made for a Deployment by being the checked Deployment's
// (its template and selector plus the pod-template-hash label, which
// both carry).
func (l *loader) replicaSetPods(at where, rs *appsv1.ReplicaSet, src origin, n int) int {
	ref := controllerRef("apps/v1", "ReplicaSet", &rs.ObjectMeta)
	return l.makePods(at, src, &rs.ObjectMeta, &rs.Spec.Template, n, ref, nil)
}

// workloadOK records ps as errors naming src and reports whether there
// were none.
func (l *loader) workloadOK(at where, src origin, ps []problem) bool {
	for _, p := range ps {
		e := l.errorAt(at, p.err)
		e.Kind, e.Namespace, e.Name, e.Field = src.kind, src.namespace, src.name, p.field
		l.errs.add(e)
	}
	return len(ps) == 0
}

// newReplicaSet is the ReplicaSet the deployment controller creates for
// d when it has none (pkg/controller/deployment sync.go
// getNewReplicaSet): named <d>-<hash>, the pod-template-hash label on
// its labels, selector and template, d's replicas (nil: 1), owned by d.
func (l *loader) newReplicaSet(d *appsv1.Deployment) *appsv1.ReplicaSet {
	collisions := d.Status.CollisionCount
	for range maxHashCollisions {
		hash := templateHash(&d.Spec.Template, collisions)
		name := d.Name + "-" + hash
		if _, taken := l.others[objects.Key{Kind: objects.ReplicaSet, Namespace: d.Namespace, Name: name}]; !taken {
			return replicaSetFor(d, name, hash, true)
		}
		// Another object has the name: the controller counts a
		// collision and hashes again (status.collisionCount).
		c := int32(1)
		if collisions != nil {
			c = *collisions + 1
		}
		collisions = &c
	}
	hash := templateHash(&d.Spec.Template, collisions)
	return replicaSetFor(d, d.Name+"-"+hash, hash, true) // cluster reports the duplicate
}

// maxHashCollisions bounds the hashes newReplicaSet tries.
const maxHashCollisions = 100

// replicaSetFor is a ReplicaSet of d named name, with the label
// pod-template-hash=hash on its labels, selector and template when
// withHash, d's replicas (nil: 1), owned by d.
func replicaSetFor(d *appsv1.Deployment, name, hash string, withHash bool) *appsv1.ReplicaSet {
	tmpl := d.Spec.Template.DeepCopy()
	sel := d.Spec.Selector.DeepCopy()
	if withHash {
		tmpl.Labels = withLabel(tmpl.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
		sel.MatchLabels = withLabel(sel.MatchLabels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	return &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: d.Namespace, Labels: maps.Clone(tmpl.Labels),
			UID:             derivedUID("ReplicaSet", d.Namespace, name, string(d.UID)),
			OwnerReferences: []metav1.OwnerReference{controllerRef("apps/v1", "Deployment", &d.ObjectMeta)},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, MinReadySeconds: d.Spec.MinReadySeconds, Selector: sel, Template: *tmpl},
	}
}

// withLabel returns a copy of m with k=v.
func withLabel(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	maps.Copy(out, m)
	out[k] = v
	return out
}

// templateHash is a pod-template-hash: fnv32a over the template's JSON
// encoding (upstream hashes a spew dump, DeepHashObject, which is not
// reproducible here) and the collision count, encoded as upstream's
// ComputeHash encodes it.
func templateHash(t *v1.PodTemplateSpec, collisions *int32) string {
	h := fnv.New32a()
	js, err := json.Marshal(t)
	if err != nil {
		js = []byte(err.Error()) // cannot happen: a decoded template encodes
	}
	h.Write(js)
	if collisions != nil {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(*collisions))
		h.Write(b[:])
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// controllerRef is the controller ownerReference a controller puts on
// what it creates.
func controllerRef(apiVersion, kind string, m *metav1.ObjectMeta) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: m.Name, UID: m.UID, Controller: &yes, BlockOwnerDeletion: &yes}
}

// derivedUID is a deterministic uid: a version-5-shaped UUID of the
// SHA-1 of parts (joined by "/").
func derivedUID(parts ...string) types.UID {
	sum := sha1.Sum([]byte("schedkit.load/" + strings.Join(parts, "/")))
	sum[6] = sum[6]&0x0f | 0x50
	sum[8] = sum[8]&0x3f | 0x80
	s := hex.EncodeToString(sum[:16])
	return types.UID(s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:])
}

// makePods makes n pods of the owner from tmpl (none when n <= 0), each
// filed as an input pod (loader.pod) under src; decorate, when
// set, changes each made pod i: gives it its ordinal identity (a
// StatefulSet's name) or its node (a DaemonSet's); a pod it leaves
// unnamed is named <owner>-<5 chars> as generateName makes them, derived
// from the owner and the index. It returns how many pods it made.
func (l *loader) makePods(at where, src origin, owner *metav1.ObjectMeta, tmpl *v1.PodTemplateSpec, n int, ref metav1.OwnerReference, decorate func(*v1.Pod, int)) int {
	if n <= 0 {
		return 0
	}
	if n > maxExpandedPods-l.made {
		l.workloadOK(at, src, []problem{{"spec.replicas", fmt.Errorf("%w: %d replicas would make %d pods in this load, more than the %d one load makes", ErrInvalidObject, n, l.made+n, maxExpandedPods)}})
		return 0
	}
	l.made += n
	seed := string(owner.UID) // never empty: given, or derived
	base := generatedBase(owner.Name)
	used := map[string]bool{}
	taken := func(name string) bool {
		_, input := l.pods[owner.Namespace+"/"+name]
		return used[name] || input
	}
	for i := range n {
		p := templatePod(owner, tmpl, ref)
		if decorate != nil {
			decorate(p, i)
		}
		if p.Name == "" {
			// Another suffix for a name taken, as the controller retries
			// generateName's conflicts.
			for try := 0; p.Name == "" || taken(p.Name); try++ {
				p.Name = base + nameSuffix(seed, i, try)
			}
			used[p.Name] = true
		}
		p.UID = derivedUID("Pod", p.Namespace, p.Name, seed)
		if !l.pod(at, p, &src) {
			return i // the others would fail alike: one error per problem
		}
	}
	return n
}

// maxGeneratedBase is how much of a generateName prefix the API server
// keeps (63 minus the 5 random characters).
const maxGeneratedBase = 58

// generatedBase is the generateName prefix of an owner's pods:
// <owner>-, cut to maxGeneratedBase characters as the API server's
// names.SimpleNameGenerator cuts it.
func generatedBase(owner string) string {
	base := owner + "-"
	if len(base) > maxGeneratedBase {
		base = base[:maxGeneratedBase]
	}
	return base
}

// templatePod is a pod of owner made from tmpl: in owner's namespace,
// with the template's labels (never nil) and annotations, a deep copy of
// its spec and the controller reference ref (none when ref has no
// kind); no name.
func templatePod(owner *metav1.ObjectMeta, tmpl *v1.PodTemplateSpec, ref metav1.OwnerReference) *v1.Pod {
	p := &v1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   owner.Namespace,
			Labels:      maps.Clone(tmpl.Labels),
			Annotations: maps.Clone(tmpl.Annotations),
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	if ref.Kind != "" {
		p.OwnerReferences = []metav1.OwnerReference{ref}
	}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	return p
}

// nameSuffix is 5 characters of rand.String's alphabet derived from
// seed, i and try (fnv64a), in place of generateName's random ones.
func nameSuffix(seed string, i, try int) string {
	h := fnv.New64a()
	h.Write([]byte(seed))
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(i))
	binary.LittleEndian.PutUint64(b[8:], uint64(try))
	h.Write(b[:])
	sum := h.Sum64()
	var s [5]byte
	for k := range s {
		s[k] = byte(sum>>(8*k)) & 0x7f // ASCII: SafeEncodeString reads runes
	}
	return rand.SafeEncodeString(string(s[:]))
}
