// Package resname holds upstream kube-scheduler's rules on resource names
// and pod-level requests, shared by snapshot (which counts requests) and
// score (which reads them as upstream's scorers do). Layer: internal, below
// snapshot; imports only k8s.io/api and k8s.io/apimachinery.
package resname

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// IsScalarResourceName reports whether upstream kube-scheduler counts name as
// a scalar resource: an extended resource (domain-qualified, outside
// kubernetes.io), hugepages-*, attachable-volumes-*, or a prefixed native
// resource (*kubernetes.io/*). Source: kube-scheduler v1.37
// pkg/scheduler/util/utils.go IsScalarResourceName.
func IsScalarResourceName(name v1.ResourceName) bool {
	s := string(name)
	return isExtendedResourceName(s) || strings.HasPrefix(s, v1.ResourceHugePagesPrefix) ||
		strings.Contains(s, v1.ResourceDefaultNamespacePrefix) || strings.HasPrefix(s, v1.ResourceAttachableVolumesPrefix)
}

// isExtendedResourceName follows pkg/apis/core/v1/helper.IsExtendedResourceName.
func isExtendedResourceName(s string) bool {
	if !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}

// IsPodLevelResource reports whether name is a resource pods may request
// at pod level (cpu, memory, hugepages-*).
func IsPodLevelResource(name v1.ResourceName) bool {
	return name == v1.ResourceCPU || name == v1.ResourceMemory || strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// IsPodLevelRequestsSet reports whether pod.spec.resources.requests names a
// resource supported at pod level (cpu, memory, hugepages-*).
func IsPodLevelRequestsSet(pod *v1.Pod) bool {
	if pod.Spec.Resources == nil {
		return false
	}
	for name := range pod.Spec.Resources.Requests {
		if IsPodLevelResource(name) {
			return true
		}
	}
	return false
}

// Upstream's non-zero defaults for scoring (kube-scheduler v1.37
// pkg/scheduler/util/pod_resources.go).
const (
	// DefaultMilliCPURequest is the CPU a container without a CPU request
	// counts as when scoring: 100 milli-CPU.
	DefaultMilliCPURequest int64 = 100
	// DefaultMemoryRequest is the memory a container without a memory
	// request counts as when scoring: 200 MiB, in bytes.
	DefaultMemoryRequest int64 = 200 * 1024 * 1024
)

// HasResizeStatus reports whether the pod's status can change its
// requests: container or pod-level allocated or actuated resources, or a
// PodResizePending condition. O(containers + conditions), allocates
// nothing.
func HasResizeStatus(pod *v1.Pod) bool {
	st := &pod.Status
	if st.Resources != nil || st.AllocatedResources != nil {
		return true
	}
	for _, ss := range [][]v1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses} {
		for i := range ss {
			if ss[i].AllocatedResources != nil || ss[i].Resources != nil {
				return true
			}
		}
	}
	for _, c := range st.Conditions {
		if c.Type == v1.PodResizePending {
			return true
		}
	}
	return false
}
