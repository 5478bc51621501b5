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
