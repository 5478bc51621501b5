package main

import (
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// Upstream's queue defaults (KubeSchedulerConfiguration
// podInitialBackoffSeconds 1, podMaxBackoffSeconds 10).
const (
	podInitialBackoff = time.Second
	podMaxBackoff     = 10 * time.Second
)

// backoffDuration is how long a pod that failed attempts times in a row
// waits before it is tried again once an event moved it: 1 s doubled per
// failure after the first, at most 10 s (upstream's
// backoffQueue.calculateBackoffDuration for a single pod). attempts < 1
// gives 0.
func backoffDuration(attempts int) time.Duration {
	if attempts < 1 {
		return 0
	}
	shift := attempts - 1
	if shift >= 8 || podInitialBackoff > podMaxBackoff>>shift {
		return podMaxBackoff
	}
	return podInitialBackoff << shift
}

// requeueOnBind reports whether binding bound may make pod schedulable,
// where plugins are the plugins that rejected pod (its
// Diagnosis.UnschedulablePlugins): upstream's queueing hints for an
// assigned pod's add event, which move a pod only when a plugin that
// rejected it says Queue. InterPodAffinity says Queue when bound matches
// every required affinity term of pod (isSchedulableAfterAssignedPodChange:
// a pod with only anti-affinity terms is never helped by an add);
// PodTopologySpread when bound is in pod's namespace and its labels match
// one of pod's spread constraints (a pod without explicit constraints,
// spread by the system defaults, is moved on every add: the runner does
// not rebuild the default selector here, which only costs retries).
// Other plugins are not asked: the runner moves the pods they rejected
// on node adds and pod deletions. nsLabels are namespace labels for
// namespaceSelectors. O(terms + constraints).
func requeueOnBind(pod *v1.Pod, plugins []string, bound *v1.Pod, nsLabels map[string]map[string]string) bool {
	if slices.Contains(plugins, score.InterPodAffinityName) && affinityHint(pod, bound, nsLabels) {
		return true
	}
	return slices.Contains(plugins, score.PodTopologySpreadName) && spreadHint(pod, bound)
}

// affinityHint: bound matches all of pod's required pod affinity terms
// (false when pod has none); an unparsable term says true, as upstream's
// hint returns Queue on an error.
func affinityHint(pod, bound *v1.Pod, nsLabels map[string]map[string]string) bool {
	a := pod.Spec.Affinity
	if a == nil || a.PodAffinity == nil || len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 0 {
		return false
	}
	for _, t := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		inNS := slices.Contains(t.Namespaces, bound.Namespace) ||
			len(t.Namespaces) == 0 && t.NamespaceSelector == nil && bound.Namespace == pod.Namespace
		if !inNS && t.NamespaceSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(t.NamespaceSelector)
			if err != nil {
				return true
			}
			inNS = sel.Matches(labels.Set(nsLabels[bound.Namespace]))
		}
		if !inNS {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
		if err != nil {
			return true
		}
		if !sel.Matches(labels.Set(bound.Labels)) {
			return false
		}
	}
	return true
}

// spreadHint: bound is in pod's namespace and matches one of pod's spread
// constraints' selectors (with matchLabelKeys taken from pod's labels, as
// upstream merges them); true for a pod without explicit constraints.
func spreadHint(pod, bound *v1.Pod) bool {
	if bound.Namespace != pod.Namespace {
		return false
	}
	if len(pod.Spec.TopologySpreadConstraints) == 0 {
		return true
	}
	for _, c := range pod.Spec.TopologySpreadConstraints {
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return true
		}
		match := sel.Matches(labels.Set(bound.Labels))
		for _, k := range c.MatchLabelKeys {
			if v, ok := pod.Labels[k]; ok && bound.Labels[k] != v {
				match = false
			}
		}
		if match {
			return true
		}
	}
	return false
}

// blockedPod is a pod PodTopologySpread or InterPodAffinity rejected,
// set aside until an event its hints accept moves it.
type blockedPod struct {
	pi      *snapshot.PodInfo
	plugins []string
}

// backoffPod is a moved pod waiting out its backoff.
type backoffPod struct {
	pi    *snapshot.PodInfo
	ready time.Time
}

// backoffHeap orders waiting pods by the end of their backoff
// (container/heap).
type backoffHeap []backoffPod

func (h backoffHeap) Len() int           { return len(h) }
func (h backoffHeap) Less(i, j int) bool { return h[i].ready.Before(h[j].ready) }
func (h backoffHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *backoffHeap) Push(x any)        { *h = append(*h, x.(backoffPod)) }
func (h *backoffHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = backoffPod{}
	*h = old[:len(old)-1]
	return x
}
