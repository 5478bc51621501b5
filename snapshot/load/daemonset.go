package load

import (
	"strconv"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/internal/selector"
	"github.com/schedkit/schedkit/internal/taints"
)

// templateGenerationLabel is the label the DaemonSet controller gives its
// pods when the DaemonSet carries the template generation annotation
// (extensions/v1beta1 DaemonSetTemplateGenerationKey).
const templateGenerationLabel = "pod-template-generation"

// daemonPods makes the pods of a DaemonSet none of whose pods the input
// holds, as the DaemonSet controller creates them
// (pkg/controller/daemon: syncNodes, CreatePodTemplate): one for each
// input node it should run on (nodeShouldRunDaemonPod), in input order:
// the template's spec.nodeName empty or the node's, the template's
// nodeSelector and required node affinity matching the node, and every
// NoSchedule and NoExecute taint of the node tolerated by the template's
// tolerations plus the ones the controller adds
// (daemonTolerations). Each pod has those tolerations, the template's
// labels (and pod-template-generation when the DaemonSet has the
// deprecated.daemonset.template.generation annotation), and its required
// node affinity replaced by one term selecting its node by
// metadata.name (ReplaceDaemonSetPodNodeNameNodeAffinity), which the
// scheduler then honours; it is named <daemonset>-<5 chars>. It returns
// how many pods it made. Nodes in have (which already run an active pod
// of it) get none. O(nodes × (labels + taints × tolerations)).
func (l *loader) daemonPods(at where, ds *appsv1.DaemonSet, have map[string]bool) int {
	tmpl := ds.Spec.Template.DeepCopy()
	daemonTolerations(&tmpl.Spec)
	if g, err := strconv.ParseInt(ds.Annotations[appsv1.DeprecatedTemplateGeneration], 10, 64); err == nil {
		tmpl.Labels = withLabel(tmpl.Labels, templateGenerationLabel, strconv.FormatInt(g, 10))
	}
	run := daemonNodeCheck(&tmpl.Spec)
	var names []string
	for _, n := range l.nodeObjs {
		if run(n) && !have[n.Name] {
			names = append(names, n.Name)
		}
	}
	if len(names) == 0 {
		return 0
	}
	ref := controllerRef("apps/v1", "DaemonSet", &ds.ObjectMeta)
	return l.makePods(at, origin{"DaemonSet", ds.Namespace, ds.Name}, &ds.ObjectMeta, tmpl, len(names), ref, func(p *v1.Pod, i int) {
		p.Spec.Affinity = nodeNameAffinity(p.Spec.Affinity, names[i])
	})
}

// daemonNodeCheck is the DaemonSet controller's check of whether a pod
// of spec should run on a node (nodeShouldRunDaemonPod's shouldRun):
// spec.nodeName empty or the node's; spec.nodeSelector and the required
// node affinity (invalid terms match nothing, as upstream's lazy
// selector) matching the node's labels and name; and each NoSchedule and
// NoExecute taint tolerated by spec.tolerations (comparison operators
// off, their default).
func daemonNodeCheck(spec *v1.PodSpec) func(*v1.Node) bool {
	nodeSel := selector.FromSet(spec.NodeSelector)
	var req *selector.NodeSelector
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		s, _ := selector.CompileNodeSelector(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, nil)
		req = &s
	}
	tols := spec.Tolerations
	return func(n *v1.Node) bool {
		if spec.NodeName != "" && spec.NodeName != n.Name {
			return false
		}
		if !selector.MatchMap(&nodeSel, n.Labels) {
			return false
		}
		if req != nil {
			ls := make([]selector.Label, 0, len(n.Labels))
			for k, v := range n.Labels {
				ls = append(ls, selector.Label{Key: unique.Make(k), Value: unique.Make(v)})
			}
			if !selector.MatchNode(req, n.Name, ls) {
				return false
			}
		}
		for i := range n.Spec.Taints {
			t := &n.Spec.Taints[i]
			if (t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute) && !taints.Any(tols, t) {
				return false
			}
		}
		return true
	}
}

// daemonTolerations adds the tolerations the DaemonSet controller gives
// every DaemonSet pod (AddOrUpdateDaemonPodTolerations): Exists on
// node.kubernetes.io/not-ready and unreachable (NoExecute), on
// disk-pressure, memory-pressure, pid-pressure and unschedulable
// (NoSchedule), and with hostNetwork on network-unavailable
// (NoSchedule).
func daemonTolerations(spec *v1.PodSpec) {
	add := func(key string, effect v1.TaintEffect) {
		addOrUpdateToleration(spec, v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: effect})
	}
	add(v1.TaintNodeNotReady, v1.TaintEffectNoExecute)
	add(v1.TaintNodeUnreachable, v1.TaintEffectNoExecute)
	add(v1.TaintNodeDiskPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodeMemoryPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodePIDPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodeUnschedulable, v1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(v1.TaintNodeNetworkUnavailable, v1.TaintEffectNoSchedule)
	}
}

// addOrUpdateToleration is upstream's AddOrUpdateTolerationInPodSpec
// (pkg/apis/core/v1/helper): a toleration with t's key, operator, value
// and effect is replaced by t (its tolerationSeconds dropped), unless
// one equals t, which leaves the list as it was; with none, t is
// appended.
func addOrUpdateToleration(spec *v1.PodSpec, t v1.Toleration) {
	var out []v1.Toleration
	updated := false
	for _, have := range spec.Tolerations {
		if have.Key == t.Key && have.Effect == t.Effect && have.Operator == t.Operator && have.Value == t.Value {
			if equality.Semantic.DeepEqual(t, have) {
				return
			}
			out = append(out, t)
			updated = true
			continue
		}
		out = append(out, have)
	}
	if !updated {
		out = append(out, t)
	}
	spec.Tolerations = out
}

// nodeNameAffinity is a (copied) pod affinity a with its required node
// affinity replaced by one term selecting the node called name by
// metadata.name (upstream's ReplaceDaemonSetPodNodeNameNodeAffinity):
// preferred terms and pod (anti-)affinity are kept.
func nodeNameAffinity(a *v1.Affinity, name string) *v1.Affinity {
	term := v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{name}}}}
	if a == nil {
		a = &v1.Affinity{}
	}
	if a.NodeAffinity == nil {
		a.NodeAffinity = &v1.NodeAffinity{}
	}
	if a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = []v1.NodeSelectorTerm{term}
	return a
}

// daemonNodes is the set of nodes on which an active input pod of ds
// (memberOf: controlled by it, or an orphan its selector matches;
// podActive) runs or is to run: its spec.nodeName, or for a pod not yet
// scheduled the node its required node affinity names by metadata.name
// (upstream's GetTargetNodeName). O(input pods).
func (l *loader) daemonNodes(ds *appsv1.DaemonSet, uid types.UID) map[string]bool {
	have := map[string]bool{}
	member := memberOf("DaemonSet", ds, uid, ds.Spec.Selector)
	for _, p := range l.inputPods {
		if p.namespace != ds.Namespace || !p.active || !member(p) {
			continue
		}
		if p.targetNode != "" {
			have[p.targetNode] = true
		}
	}
	return have
}

// targetNode is the node a daemon pod runs on or is for: spec.nodeName,
// else the one value of a metadata.name In requirement of its required
// node affinity's terms (as the DaemonSet controller writes it); "" for
// none.
func targetNode(p *v1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, r := range t.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == v1.NodeSelectorOpIn && len(r.Values) == 1 {
				return r.Values[0]
			}
		}
	}
	return ""
}
