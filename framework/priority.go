package framework

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
)

// PriorityClasses looks PriorityClass objects up by name (nil if
// unknown); snapshot's Cache, Snapshot and Fork implement it. Returned
// objects are read-only.
type PriorityClasses interface {
	PriorityClass(name string) *schedulingv1.PriorityClass
}

// The built-in PriorityClasses the API server creates (kubernetes
// pkg/apis/scheduling SystemPriorityClasses), used when the lookup does
// not know them.
var builtinPriority = map[string]int32{
	"system-cluster-critical": 2000000000,
	"system-node-critical":    2000001000,
}

// PodPriority returns pod's priority as the scheduler uses it (upstream
// corev1helpers.PodPriority: spec.priority, 0 if unset), resolving
// spec.priorityClassName through classes when spec.priority is unset, as
// the API server's Priority admission plugin does before the scheduler
// sees the pod (system-cluster-critical and system-node-critical are known
// without a lookup). A pod with neither is 0 (admission would take the
// globalDefault class, which a lookup by name cannot find). classes may
// be nil.
//
// Error: a priorityClassName naming no PriorityClass, wrapping
// [ErrInvalidPod] and naming the pod and field. O(1) plus the lookup.
func PodPriority(pod *v1.Pod, classes PriorityClasses) (int32, error) {
	if pod == nil {
		return 0, fmt.Errorf("framework: PodPriority: pod is nil: %w", ErrInvalidPod)
	}
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority, nil
	}
	name := pod.Spec.PriorityClassName
	if name == "" {
		return 0, nil
	}
	if classes != nil {
		if pc := classes.PriorityClass(name); pc != nil {
			return pc.Value, nil
		}
	}
	if p, ok := builtinPriority[name]; ok {
		return p, nil
	}
	return 0, fmt.Errorf("framework: PodPriority: pod %s/%s: spec.priorityClassName: no PriorityClass %q: %w", pod.Namespace, pod.Name, name, ErrInvalidPod)
}
