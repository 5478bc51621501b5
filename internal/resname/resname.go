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
	return IsExtendedResourceName(name) || strings.HasPrefix(s, v1.ResourceHugePagesPrefix) ||
		strings.Contains(s, v1.ResourceDefaultNamespacePrefix) || strings.HasPrefix(s, v1.ResourceAttachableVolumesPrefix)
}

// IsExtendedResourceName reports whether name is an extended resource:
// domain-qualified outside kubernetes.io, not "requests."-prefixed, and a
// qualified name once prefixed with "requests.". Source:
// k8s.io/kubernetes v1.37 pkg/apis/core/v1/helper.IsExtendedResourceName.
func IsExtendedResourceName(name v1.ResourceName) bool {
	s := string(name)
	if IsNativeResource(name) || strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}

// IsNativeResource reports whether name is in the kubernetes.io/
// namespace: unprefixed, or containing "kubernetes.io/". Source: v1.37
// pkg/apis/core/v1/helper.IsNativeResource.
func IsNativeResource(name v1.ResourceName) bool {
	s := string(name)
	return !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix)
}

// IsOvercommitAllowed reports whether a container's request of name may
// differ from its limit, or be given without one: native resources other
// than hugepages-*. Source: v1.37 pkg/apis/core/v1/helper.IsOvercommitAllowed.
func IsOvercommitAllowed(name v1.ResourceName) bool {
	return IsNativeResource(name) && !strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// IsIntegerResourceName reports whether the API server requires quantities
// of name to be whole numbers: the object-count names (pods, services,
// secrets, ...) and every extended resource. Source: v1.37
// pkg/apis/core/helper.IsIntegerResourceName, as
// pkg/apis/core/validation.ValidateResourceQuantityValue applies it.
func IsIntegerResourceName(name v1.ResourceName) bool {
	switch name {
	case v1.ResourcePods, v1.ResourceQuotas, v1.ResourceServices, v1.ResourceReplicationControllers,
		v1.ResourceSecrets, v1.ResourceConfigMaps, v1.ResourcePersistentVolumeClaims,
		v1.ResourceServicesNodePorts, v1.ResourceServicesLoadBalancers:
		return true
	}
	return IsExtendedResourceName(name)
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
