package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
)

// skewKeys are the topology keys of upstream's system default spreading.
var skewKeys = []string{v1.LabelHostname, v1.LabelTopologyZone}

// keySkew is how evenly a run left its workloads spread over one
// topology key. A workload is the pods of one controller (the
// ownerReference with controller: true, such as a Deployment's
// ReplicaSet) or, for a pod without one, of the first Service (by name)
// selecting it — the pods upstream's system default spreading spreads
// together. A DaemonSet's pods are not a workload here: each is pinned
// to its node, so they have nothing to spread.
//
// A workload's skew is upstream PodTopologySpread's (common.go,
// filtering.go): the most of its pods in one domain (value of the key)
// minus the fewest, over the domains of its eligible nodes — the nodes
// that have the key and pass the inclusion policies of the workload's
// first pod (in node order) — where a domain without its pods counts 0
// and pods on other nodes are not counted. The policies are those of the
// pod's own topologySpreadConstraint for the key, if it has one, else
// upstream's defaults: nodeAffinityPolicy Honor (the node passes the
// pod's spec.nodeSelector and required node affinity, framework's
// NodeAffinity filter) and nodeTaintsPolicy Ignore (Honor: the pod
// tolerates the node's NoSchedule and NoExecute taints, framework's
// TaintToleration filter). With the constraint's minDomains above the
// number of eligible domains the fewest is 0, as upstream's global
// minimum.
type keySkew struct {
	Key string `json:"topologyKey"`
	// Domains is the number of values of the key among the nodes
	// eligible to at least one counted workload.
	Domains int `json:"domains"`
	// Workloads counts the workloads with pods on eligible nodes that
	// have the key; workloads of a single pod are left out (their skew
	// is 1 by construction whenever there are two domains).
	Workloads int `json:"workloads"`
	// MaxSkew is the largest workload skew, MeanSkew the mean.
	MaxSkew  float64 `json:"maxSkew"`
	MeanSkew float64 `json:"meanSkew"`
}

// workloadSkew measures s (a run's final cluster) per key of skewKeys;
// nil when no workload has two pods. O(pods + Services per namespace ×
// pods without a controller + workloads × nodes × (node-affinity
// requirements + taints)).
func workloadSkew(s *snapshot.Snapshot) []keySkew {
	type group struct {
		first *snapshot.PodInfo
		nodes []int // node index per pod
	}
	groups := map[string]*group{}
	var order []string // workloads in first-seen order, for determinism
	nodes := make([]*snapshot.NodeInfo, 0, s.NumNodes())
	for i, ni := range s.Nodes() {
		nodes = append(nodes, ni)
		for _, pi := range ni.Pods() {
			w := workloadOf(pi.Template(), s) // namespace, owner, labels
			if w == "" {
				continue
			}
			g := groups[w]
			if g == nil {
				g = &group{first: pi}
				groups[w] = g
				order = append(order, w)
			}
			g.nodes = append(g.nodes, i)
		}
	}
	type acc struct {
		domains   map[string]bool
		workloads int
		sum, max  int
	}
	accs := make([]acc, len(skewKeys))
	for k := range accs {
		accs[k].domains = map[string]bool{}
	}
	var affinity, taints []bool // per node, for the group at hand
	for _, w := range order {
		g := groups[w]
		if len(g.nodes) < 2 {
			continue
		}
		affinity, taints = eligibility(g.first, nodes, affinity, taints)
		pod := g.first.Template()
		for k, key := range skewKeys {
			honorAffinity, honorTaints, minDomains := true, false, int32(1)
			for _, c := range pod.Spec.TopologySpreadConstraints {
				if c.TopologyKey != key {
					continue
				}
				if c.NodeAffinityPolicy != nil {
					honorAffinity = *c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor
				}
				if c.NodeTaintsPolicy != nil {
					honorTaints = *c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor
				}
				if c.MinDomains != nil {
					minDomains = *c.MinDomains
				}
				break
			}
			eligible := func(i int) (string, bool) {
				v, ok := nodes[i].Node().Labels[key]
				return v, ok && (!honorAffinity || affinity[i]) && (!honorTaints || taints[i])
			}
			counts := map[string]int{}
			for i := range nodes {
				if v, ok := eligible(i); ok {
					counts[v] += 0 // a domain without the workload's pods counts 0
				}
			}
			placed := 0
			for _, i := range g.nodes {
				if v, ok := eligible(i); ok {
					counts[v]++
					placed++
				}
			}
			if placed == 0 {
				continue
			}
			hi, lo := 0, -1
			for v, n := range counts {
				accs[k].domains[v] = true
				hi = max(hi, n)
				if lo < 0 || n < lo {
					lo = n
				}
			}
			if int32(len(counts)) < minDomains {
				lo = 0
			}
			accs[k].workloads++
			accs[k].sum += hi - lo
			accs[k].max = max(accs[k].max, hi-lo)
		}
	}
	var out []keySkew
	for k, key := range skewKeys {
		a := accs[k]
		if a.workloads == 0 {
			continue
		}
		out = append(out, keySkew{Key: key, Domains: len(a.domains), Workloads: a.workloads,
			MaxSkew: float64(a.max), MeanSkew: float64(a.sum) / float64(a.workloads)})
	}
	return out
}

// eligibility fills affinity[i] (node i passes pi's spec.nodeSelector and
// required node affinity) and taints[i] (pi tolerates node i's
// NoSchedule and NoExecute taints) by framework's NodeAffinity and
// TaintToleration filters, reusing the slices' memory.
// O(nodes × (requirements + taints)).
func eligibility(pi *snapshot.PodInfo, nodes []*snapshot.NodeInfo, affinity, taints []bool) ([]bool, []bool) {
	na, _ := framework.NewNodeAffinity(nil) // nil: nothing to validate, no error
	return passes(na, pi, nodes, affinity[:0]), passes(framework.NewTaintToleration(), pi, nodes, taints[:0])
}

// passes appends, per node, whether pi passes f (a PreFilter rejection
// or error passes no node).
func passes(f framework.Filter, pi *snapshot.PodInfo, nodes []*snapshot.NodeInfo, out []bool) []bool {
	pre, err := f.PreFilter(pi)
	var reasons []framework.Reason
	for _, ni := range nodes {
		ok := err == nil && pre.Reject == ""
		if ok && pre.Filter != nil {
			reasons = pre.Filter.Filter(ni, reasons[:0])
			ok = len(reasons) == 0
		}
		out = append(out, ok)
	}
	return out
}

// workloadOf names pod's workload ("" if none): its controller, or the
// first Service of its namespace (by name) whose selector matches it.
func workloadOf(pod *v1.Pod, s *snapshot.Snapshot) string {
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if ref.Kind == "DaemonSet" {
			return "" // one per node, pinned there: no skew to measure
		}
		return pod.Namespace + "/" + ref.Kind + "/" + ref.Name
	}
	for _, svc := range s.Services(pod.Namespace) {
		if len(svc.Spec.Selector) > 0 && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
			return pod.Namespace + "/Service/" + svc.Name
		}
	}
	return ""
}

// meanSkew averages the runs' skews key by key (over the runs that have
// the key).
func meanSkew(runs [][]keySkew) []keySkew {
	by := map[string]*keySkew{}
	n := map[string]int{}
	for _, r := range runs {
		for _, ks := range r {
			m := by[ks.Key]
			if m == nil {
				m = &keySkew{Key: ks.Key, Domains: ks.Domains}
				by[ks.Key] = m
			}
			m.Workloads += ks.Workloads
			m.MaxSkew += ks.MaxSkew
			m.MeanSkew += ks.MeanSkew
			n[ks.Key]++
		}
	}
	var out []keySkew
	for k, m := range by {
		f := float64(n[k])
		m.Workloads = int(float64(m.Workloads)/f + 0.5)
		m.MaxSkew /= f
		m.MeanSkew /= f
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b keySkew) int {
		return cmp.Compare(slices.Index(skewKeys, a.Key), slices.Index(skewKeys, b.Key))
	})
	return out
}

// skewLine prints a policy's skews for the table.
func skewLine(ks []keySkew) string {
	parts := make([]string, 0, len(ks))
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s: max %s, mean %.2f over %d workloads (%d domains)", k.Key, num(k.MaxSkew), k.MeanSkew, k.Workloads, k.Domains))
	}
	return strings.Join(parts, "; ")
}
