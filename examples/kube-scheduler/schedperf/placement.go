package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// placement describes where pods went in terms that do not depend on
// random tie-breaking between equally good nodes: two schedulers with the
// same policy give the same placement even when they pick different nodes.
type placement struct {
	// PodsPerNode is the shape: how many nodes hold k bound pods, for
	// every k (nodes without pods count under 0).
	PodsPerNode map[int]int `json:"podsPerNode"`
	// MaxSkew is, per topology key named by a bound pod's
	// topologySpreadConstraints, the largest (max - min) count of pods
	// matching one constraint's selector over the domains of that key.
	MaxSkew map[string]int `json:"maxSkew,omitempty"`
	// AntiAffinityViolations counts bound pods sharing a topology domain
	// with a pod their required podAntiAffinity excludes.
	AntiAffinityViolations int `json:"antiAffinityViolations"`
	// OnTaintedOrUnmatched counts bound pods on a node with an untolerated
	// NoSchedule/NoExecute taint or whose required node affinity or
	// nodeSelector the node does not match.
	OnTaintedOrUnmatched int `json:"onTaintedOrUnmatched"`
}

// shape formats PodsPerNode as "pods×nodes" pairs, most pods first, at
// most max pairs.
func (p placement) shape(max int) string {
	ks := slices.Sorted(maps.Keys(p.PodsPerNode))
	slices.Reverse(ks)
	var parts []string
	for i, k := range ks {
		if i == max {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%d×%d", k, p.PodsPerNode[k]))
	}
	return strings.Join(parts, " ")
}

func (p placement) skew() string {
	if len(p.MaxSkew) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p.MaxSkew)) {
		short := k[strings.LastIndex(k, "/")+1:]
		parts = append(parts, fmt.Sprintf("%s=%d", short, p.MaxSkew[k]))
	}
	return strings.Join(parts, ",")
}

// measurePlacement computes the placement of the bound pods among nodes;
// nsLabels gives namespace labels for namespaceSelectors.
func measurePlacement(nodes []*v1.Node, pods []*v1.Pod, nsLabels map[string]map[string]string) placement {
	p := placement{PodsPerNode: map[int]int{}, MaxSkew: map[string]int{}}
	byName := make(map[string]*v1.Node, len(nodes))
	perNode := make(map[string]int, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
		perNode[n.Name] = 0
	}
	var bound []*v1.Pod
	for _, pod := range pods {
		if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
			continue
		}
		bound = append(bound, pod)
		perNode[pod.Spec.NodeName]++
	}
	for _, c := range perNode {
		p.PodsPerNode[c]++
	}
	logger := klog.Background()
	for _, pod := range bound {
		node := byName[pod.Spec.NodeName]
		if node == nil {
			p.OnTaintedOrUnmatched++
			continue
		}
		_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
			return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
		}, true)
		if match, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); untolerated || !match {
			p.OnTaintedOrUnmatched++
		}
	}
	p.AntiAffinityViolations = antiAffinityViolations(bound, byName, nsLabels)
	// Skew per spread constraint (key, selector, namespace), over the
	// domains of every node that has the key.
	type constraint struct {
		key, ns, sel string
	}
	seen := map[constraint]bool{}
	for _, pod := range bound {
		for _, c := range pod.Spec.TopologySpreadConstraints {
			sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
			if err != nil {
				continue
			}
			id := constraint{c.TopologyKey, pod.Namespace, sel.String()}
			if seen[id] {
				continue
			}
			seen[id] = true
			counts := map[string]int{}
			for _, n := range nodes {
				if v, ok := n.Labels[c.TopologyKey]; ok {
					counts[v] += 0
				}
			}
			for _, q := range bound {
				if q.Namespace != pod.Namespace || !sel.Matches(labels.Set(q.Labels)) {
					continue
				}
				if n := byName[q.Spec.NodeName]; n != nil {
					if v, ok := n.Labels[c.TopologyKey]; ok {
						counts[v]++
					}
				}
			}
			if len(counts) == 0 {
				continue
			}
			lo, hi := -1, 0
			for _, v := range counts {
				if lo < 0 || v < lo {
					lo = v
				}
				hi = max(hi, v)
			}
			p.MaxSkew[c.TopologyKey] = max(p.MaxSkew[c.TopologyKey], hi-lo)
		}
	}
	return p
}

// antiAffinityViolations counts bound pods that share a domain of a
// required anti-affinity term's topology key with another pod the term
// selects (in the term's namespaces, or the pod's own).
func antiAffinityViolations(bound []*v1.Pod, nodes map[string]*v1.Node, nsLabels map[string]map[string]string) int {
	// domain → pods, per topology key, built on demand.
	index := map[string]map[string][]*v1.Pod{}
	domains := func(key string) map[string][]*v1.Pod {
		if d, ok := index[key]; ok {
			return d
		}
		d := map[string][]*v1.Pod{}
		for _, q := range bound {
			if n := nodes[q.Spec.NodeName]; n != nil {
				if v, ok := n.Labels[key]; ok {
					d[v] = append(d[v], q)
				}
			}
		}
		index[key] = d
		return d
	}
	violations := 0
	for _, pod := range bound {
		aa := pod.Spec.Affinity
		if aa == nil || aa.PodAntiAffinity == nil {
			continue
		}
		node := nodes[pod.Spec.NodeName]
		if node == nil {
			continue
		}
		violated := false
		for _, term := range aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			v, ok := node.Labels[term.TopologyKey]
			if !ok {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
			if err != nil {
				continue
			}
			var nsSel labels.Selector
			if term.NamespaceSelector != nil {
				if nsSel, err = metav1.LabelSelectorAsSelector(term.NamespaceSelector); err != nil {
					continue
				}
			}
			inNS := func(ns string) bool {
				if len(term.Namespaces) == 0 && nsSel == nil {
					return ns == pod.Namespace
				}
				return slices.Contains(term.Namespaces, ns) || nsSel != nil && nsSel.Matches(labels.Set(nsLabels[ns]))
			}
			for _, q := range domains(term.TopologyKey)[v] {
				if q != pod && inNS(q.Namespace) && sel.Matches(labels.Set(q.Labels)) {
					violated = true
					break
				}
			}
			if violated {
				break
			}
		}
		if violated {
			violations++
		}
	}
	return violations
}
