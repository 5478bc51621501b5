package parity

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelRack is a topology key the spread generator puts on some nodes
// besides hostname and zone.
const LabelRack = "example.com/rack"

// SpreadCase is a [Case] for PodTopologySpread: pods with labels in a few
// namespaces (some terminating, some owned by a controller), nodes with
// and without each topology key, the objects that select pods (for the
// default selector), and the candidate nodes that scoring sees (upstream's
// filtered nodes), as indexes into Nodes in order.
type SpreadCase struct {
	Case
	Services               []*v1.Service
	ReplicationControllers []*v1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
	Candidates             []int
}

var (
	spreadApps       = []string{"web", "db", "cache"}
	spreadNamespaces = []string{"default", "default", "default", "team-a"}
	spreadKeys       = []string{v1.LabelHostname, v1.LabelTopologyZone, v1.LabelTopologyZone, LabelRack, "topology.kubernetes.io/region"}
	spreadOwners     = []string{"web-rs", "db-ss", "cache-rc", "gone"}
)

// SpreadCase draws a SpreadCase: a [Gen.Case] (resources, taints,
// tolerations, node affinity as the other suites draw them) with
// spreading drawn over it.
func (g *Gen) SpreadCase() SpreadCase {
	sc := SpreadCase{Case: g.Case()}
	for _, n := range sc.Nodes {
		g.spreadNodeLabels(n)
	}
	for _, p := range sc.Bound {
		g.spreadPodLabels(p)
		if g.chance(0.05) {
			p.DeletionTimestamp = &metav1.Time{}
		}
	}
	g.spreadPodLabels(sc.Pod)
	if g.chance(0.65) {
		k := 1 + g.r.IntN(3)
		for i := 0; i < k; i++ {
			sc.Pod.Spec.TopologySpreadConstraints = append(sc.Pod.Spec.TopologySpreadConstraints, g.constraint())
		}
	}
	g.workloads(&sc)
	for i := range sc.Nodes {
		if g.chance(0.75) {
			sc.Candidates = append(sc.Candidates, i)
		}
	}
	if len(sc.Candidates) == 0 {
		sc.Candidates = []int{g.r.IntN(len(sc.Nodes))}
	}
	return sc
}

// spreadNodeLabels removes or adds topology labels: zone missing on some
// nodes, a rack on most, hostname rarely missing, an empty zone value
// rarely.
func (g *Gen) spreadNodeLabels(n *v1.Node) {
	switch {
	case g.chance(0.15):
		delete(n.Labels, v1.LabelTopologyZone)
	case g.chance(0.02):
		n.Labels[v1.LabelTopologyZone] = ""
	}
	if g.chance(0.04) {
		delete(n.Labels, v1.LabelHostname)
	}
	if g.chance(0.7) {
		n.Labels[LabelRack] = g.pick("r1", "r2", "r3", "r4")
	}
}

// spreadPodLabels gives a pod a namespace, labels and sometimes a
// controller.
func (g *Gen) spreadPodLabels(p *v1.Pod) {
	p.Namespace = g.pick(spreadNamespaces...)
	p.Labels = map[string]string{}
	if g.chance(0.9) {
		p.Labels["app"] = g.pick(spreadApps...)
	}
	if g.chance(0.5) {
		p.Labels["tier"] = g.pick("front", "back")
	}
	if g.chance(0.5) {
		p.Labels["pod-template-hash"] = g.pick("h1", "h2")
	}
	if g.chance(0.3) {
		p.Labels["version"] = g.pick("v1", "v2")
	}
	if g.chance(0.6) {
		ref := metav1.OwnerReference{Name: g.pick(spreadOwners...), Controller: ptrTo(!g.chance(0.1))}
		switch g.r.IntN(5) {
		case 0:
			ref.APIVersion, ref.Kind = "v1", "ReplicationController"
		case 1:
			ref.APIVersion, ref.Kind = "apps/v1", "StatefulSet"
		case 2:
			ref.APIVersion, ref.Kind = "extensions/v1beta1", "ReplicaSet" // not a kind upstream looks up
		default:
			ref.APIVersion, ref.Kind = "apps/v1", "ReplicaSet"
		}
		p.OwnerReferences = []metav1.OwnerReference{ref}
	}
}

// labelSelector draws a constraint's selector: mostly on app, sometimes
// expressions, rarely nil, empty or invalid.
func (g *Gen) labelSelector() *metav1.LabelSelector {
	switch g.r.IntN(20) {
	case 0:
		return nil
	case 1:
		return &metav1.LabelSelector{}
	case 2:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	case 3, 4, 5:
		ops := []metav1.LabelSelectorOperator{metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist}
		r := metav1.LabelSelectorRequirement{Key: g.pick("app", "tier", "version"), Operator: ops[g.r.IntN(len(ops))]}
		if r.Operator == metav1.LabelSelectorOpIn || r.Operator == metav1.LabelSelectorOpNotIn {
			r.Values = []string{g.pick(spreadApps...), g.pick("front", "v1")}
		}
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{r}}
	}
	s := &metav1.LabelSelector{MatchLabels: map[string]string{"app": g.pick(spreadApps...)}}
	if g.chance(0.2) {
		s.MatchLabels["tier"] = g.pick("front", "back")
	}
	return s
}

func (g *Gen) policy() *v1.NodeInclusionPolicy {
	switch g.r.IntN(3) {
	case 0:
		return nil
	case 1:
		return ptrTo(v1.NodeInclusionPolicyHonor)
	}
	return ptrTo(v1.NodeInclusionPolicyIgnore)
}

// constraint draws one topology spread constraint.
func (g *Gen) constraint() v1.TopologySpreadConstraint {
	c := v1.TopologySpreadConstraint{
		MaxSkew:            int32(1 + g.r.IntN(4)),
		TopologyKey:        g.pick(spreadKeys...),
		WhenUnsatisfiable:  v1.UnsatisfiableConstraintAction(g.pick(string(v1.DoNotSchedule), string(v1.ScheduleAnyway))),
		LabelSelector:      g.labelSelector(),
		NodeAffinityPolicy: g.policy(),
		NodeTaintsPolicy:   g.policy(),
	}
	if c.WhenUnsatisfiable == v1.DoNotSchedule && g.chance(0.4) {
		c.MinDomains = ptrTo(int32(1 + g.r.IntN(6)))
	}
	if g.chance(0.3) {
		c.MatchLabelKeys = []string{g.pick("pod-template-hash", "version", "absent-key")}
	}
	return c
}

// workloads draws Services, ReplicationControllers, ReplicaSets and
// StatefulSets in the case's namespaces, named as the pods' owners.
func (g *Gen) workloads(sc *SpreadCase) {
	for _, ns := range []string{"default", "team-a"} {
		for i := 0; i < g.r.IntN(3); i++ {
			svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("svc-%d", i)}}
			switch g.r.IntN(6) {
			case 0: // nil selector: selects nothing
			case 1:
				svc.Spec.Selector = map[string]string{}
			case 2:
				svc.Spec.Selector = map[string]string{"app": g.pick(spreadApps...), "tier": g.pick("front", "back")}
			default:
				svc.Spec.Selector = map[string]string{"app": g.pick(spreadApps...)}
			}
			sc.Services = append(sc.Services, svc)
		}
		meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
		if g.chance(0.7) {
			rs := &appsv1.ReplicaSet{ObjectMeta: meta("web-rs")}
			switch g.r.IntN(5) {
			case 0:
				rs.Spec.Selector = nil
			case 1:
				rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
			default:
				rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": g.pick("h1", "h2")}}
			}
			sc.ReplicaSets = append(sc.ReplicaSets, rs)
		}
		if g.chance(0.5) {
			ss := &appsv1.StatefulSet{ObjectMeta: meta("db-ss")}
			ss.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"db", "cache"}}}}
			sc.StatefulSets = append(sc.StatefulSets, ss)
		}
		if g.chance(0.5) {
			rc := &v1.ReplicationController{ObjectMeta: meta("cache-rc")}
			if g.chance(0.8) {
				rc.Spec.Selector = map[string]string{"app": g.pick(spreadApps...)}
			}
			sc.ReplicationControllers = append(sc.ReplicationControllers, rc)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
