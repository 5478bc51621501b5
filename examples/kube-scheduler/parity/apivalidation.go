package parity

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	corev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/apis/core/validation"
)

// schedulingFields are the field paths of a pod the scheduling plugins
// read and schedkit validates when it parses a pod
// (snapshot.NewPodInfo): spec.nodeSelector, topology spread constraints,
// node affinity and pod (anti-)affinity terms.
var schedulingFields = []string{
	"spec.nodeSelector",
	"spec.topologySpreadConstraints",
	"spec.affinity.nodeAffinity.",
	"spec.affinity.podAffinity.",
	"spec.affinity.podAntiAffinity.",
}

// APISchedulingErrors runs the API server's own pod validation
// (k8s.io/kubernetes v1.37.2 pkg/apis/core/validation.ValidatePodSpec,
// with the options pkg/api/pod derives for a new pod under the default
// feature gates) on pod exactly as given, and returns the errors on the
// scheduling fields (schedulingFields); errors elsewhere in the spec (the
// generators' pods have no images, for example) are dropped. nil: the API
// server would accept those fields.
func APISchedulingErrors(pod *v1.Pod) (field.ErrorList, error) {
	if a := pod.Spec.Affinity; len(pod.Spec.NodeSelector) == 0 && len(pod.Spec.TopologySpreadConstraints) == 0 &&
		(a == nil || (a.NodeAffinity == nil && a.PodAffinity == nil && a.PodAntiAffinity == nil)) {
		return nil, nil // no scheduling fields to validate
	}
	var spec core.PodSpec
	if err := corev1.Convert_v1_PodSpec_To_core_PodSpec(&pod.Spec, &spec, nil); err != nil {
		return nil, err
	}
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&spec, nil, &pod.ObjectMeta, nil)
	var out field.ErrorList
	for _, e := range validation.ValidatePodSpec(&spec, &pod.ObjectMeta, field.NewPath("spec"), opts) {
		for _, f := range schedulingFields {
			if strings.HasPrefix(e.Field, f) {
				out = append(out, e)
				break
			}
		}
	}
	return out, nil
}

// APIInvalid returns the first of pods whose scheduling fields the API
// server rejects (APISchedulingErrors), with its errors; nil when it
// accepts them all. Such a case cannot occur in a cluster: schedkit
// rejects the pod when it parses it (TestDifferenceInvalidPodRejectedAtParse),
// upstream's plugins meet it only at PreFilter.
func APIInvalid(pods ...*v1.Pod) (*v1.Pod, field.ErrorList, error) {
	for _, p := range pods {
		errs, err := APISchedulingErrors(p)
		if err != nil {
			return nil, nil, err
		}
		if len(errs) > 0 {
			return p, errs, nil
		}
	}
	return nil, nil, nil
}

// NodeAffinityPod draws a pod of the generator's kind (Pod, with nodes
// of its own) whose spec.nodeSelector and node affinity are, about half
// the time, spoilt the ways the API server checks: unknown operators,
// too many or too few values for the operator, keys that are not
// qualified names, values that are not label values (in required and in
// preferred terms, where the API server allows them), field selectors on
// other keys or with other operators or a value that is no node name,
// weights outside 1..100, a required selector with no term. The rest are
// as Pod draws them (valid).
func (g *Gen) NodeAffinityPod() *v1.Pod {
	g.seq++
	nodes := []*v1.Node{g.Node(fmt.Sprintf("na%d-node-0", g.seq)), g.Node(fmt.Sprintf("na%d-node-1", g.seq))}
	p := g.Pod(fmt.Sprintf("na%d-pod", g.seq), nodes)
	if g.chance(0.5) {
		return p
	}
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.NodeAffinity == nil {
		p.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{}
	}
	na := p.Spec.Affinity.NodeAffinity
	for k := 1 + g.r.IntN(2); k > 0; k-- {
		switch g.r.IntN(5) {
		case 0:
			if g.chance(0.3) {
				na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
				continue
			}
			if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
				na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
			}
			req := na.RequiredDuringSchedulingIgnoredDuringExecution
			req.NodeSelectorTerms = append(req.NodeSelectorTerms, g.oddTerm())
		case 1:
			na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.PreferredSchedulingTerm{Weight: int32(g.pickInt(-1, 0, 1, 50, 100, 101)), Preference: g.oddTerm()})
		case 2:
			if p.Spec.NodeSelector == nil {
				p.Spec.NodeSelector = map[string]string{}
			}
			p.Spec.NodeSelector[g.oddKey()] = g.oddValue()
		case 3:
			if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil && len(req.NodeSelectorTerms) > 0 {
				t := &req.NodeSelectorTerms[g.r.IntN(len(req.NodeSelectorTerms))]
				t.MatchExpressions = append(t.MatchExpressions, g.oddRequirement())
			}
		default:
			if ts := na.PreferredDuringSchedulingIgnoredDuringExecution; len(ts) > 0 {
				ts[g.r.IntN(len(ts))].Weight = int32(g.pickInt(-5, 0, 101, 1000))
			}
		}
	}
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil && na.PreferredDuringSchedulingIgnoredDuringExecution == nil && g.chance(0.5) {
		p.Spec.Affinity.NodeAffinity = nil
	}
	return p
}

func (g *Gen) pickInt(xs ...int) int { return xs[g.r.IntN(len(xs))] }

func (g *Gen) oddKey() string {
	return g.pick("zone", v1.LabelTopologyZone, "example.com/disk", "a b", "", "-x", "example.com/", strings.Repeat("k", 64), "Example.COM/x", "x/y/z")
}

func (g *Gen) oddValue() string {
	return g.pick("a", "", "ssd", "not a value!", strings.Repeat("v", 64), "-v", "1", "64", "v_1")
}

// oddRequirement is a label requirement with any operator and 0-3 values.
func (g *Gen) oddRequirement() v1.NodeSelectorRequirement {
	r := v1.NodeSelectorRequirement{Key: g.oddKey(), Operator: v1.NodeSelectorOperator(g.pick("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Near", ""))}
	for k := g.r.IntN(4); k > 0; k-- {
		r.Values = append(r.Values, g.oddValue())
	}
	return r
}

// oddTerm is a term of 0-2 odd requirements and 0-1 field requirements.
func (g *Gen) oddTerm() v1.NodeSelectorTerm {
	var t v1.NodeSelectorTerm
	for k := g.r.IntN(3); k > 0; k-- {
		t.MatchExpressions = append(t.MatchExpressions, g.oddRequirement())
	}
	if g.chance(0.4) {
		f := v1.NodeSelectorRequirement{Key: g.pick("metadata.name", "metadata.name", "metadata.uid", "spec.unschedulable"),
			Operator: v1.NodeSelectorOperator(g.pick("In", "NotIn", "Exists", "Gt"))}
		for k := g.r.IntN(3); k > 0; k-- {
			f.Values = append(f.Values, g.pick("na-node-0", "N_1", "", "node.example.com"))
		}
		t.MatchFields = append(t.MatchFields, f)
	}
	return t
}
