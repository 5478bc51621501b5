package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/schedkit/schedkit/snapshot"
)

// skewKeys are the topology keys of upstream's system default spreading.
var skewKeys = []string{v1.LabelHostname, v1.LabelTopologyZone}

// keySkew is how evenly a run left its workloads spread over one
// topology key. A workload is the pods of one controller (the
// ownerReference with controller: true, such as a Deployment's
// ReplicaSet) or, for a pod without one, of the first Service (by name)
// selecting it — the pods upstream's system default spreading spreads
// together. A workload's skew is upstream's: the most of its pods in one
// domain (value of the key) minus the fewest, over the domains of the
// nodes that have the key (a domain without its pods counts 0).
type keySkew struct {
	Key string `json:"topologyKey"`
	// Domains is the number of values of the key among the nodes.
	Domains int `json:"domains"`
	// Workloads counts the workloads with pods on nodes that have the
	// key; workloads of a single pod are left out (their skew is 1 by
	// construction whenever there are two domains).
	Workloads int `json:"workloads"`
	// MaxSkew is the largest workload skew, MeanSkew the mean.
	MaxSkew  float64 `json:"maxSkew"`
	MeanSkew float64 `json:"meanSkew"`
}

// workloadSkew measures s (a run's final cluster) per key of skewKeys;
// nil when no workload has two pods. O(pods + nodes + Services per
// namespace × pods without a controller).
func workloadSkew(s *snapshot.Snapshot) []keySkew {
	type group struct{ counts map[string]map[string]int } // key -> domain -> pods
	groups := map[string]*group{}
	domains := map[string]map[string]bool{}
	for _, k := range skewKeys {
		domains[k] = map[string]bool{}
	}
	sizes := map[string]int{}
	for _, ni := range s.Nodes() {
		nodeLabels := ni.Node().Labels
		for _, k := range skewKeys {
			if v, ok := nodeLabels[k]; ok {
				domains[k][v] = true
			}
		}
		for _, pi := range ni.Pods() {
			w := workloadOf(pi.Template(), s) // namespace, owner, labels
			if w == "" {
				continue
			}
			sizes[w]++
			g := groups[w]
			if g == nil {
				g = &group{counts: map[string]map[string]int{}}
				groups[w] = g
			}
			for _, k := range skewKeys {
				if v, ok := nodeLabels[k]; ok {
					if g.counts[k] == nil {
						g.counts[k] = map[string]int{}
					}
					g.counts[k][v]++
				}
			}
		}
	}
	var out []keySkew
	for _, k := range skewKeys {
		ks := keySkew{Key: k, Domains: len(domains[k])}
		var sum int
		for w, g := range groups {
			c := g.counts[k]
			if sizes[w] < 2 || len(c) == 0 {
				continue
			}
			hi, lo := 0, -1
			for _, n := range c {
				hi = max(hi, n)
				if lo < 0 || n < lo {
					lo = n
				}
			}
			if len(c) < ks.Domains {
				lo = 0
			}
			ks.Workloads++
			sum += hi - lo
			ks.MaxSkew = max(ks.MaxSkew, float64(hi-lo))
		}
		if ks.Workloads > 0 {
			ks.MeanSkew = float64(sum) / float64(ks.Workloads)
			out = append(out, ks)
		}
	}
	return out
}

// workloadOf names pod's workload ("" if none): its controller, or the
// first Service of its namespace (by name) whose selector matches it.
func workloadOf(pod *v1.Pod, s *snapshot.Snapshot) string {
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
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
