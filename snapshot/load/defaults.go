package load

import (
	v1 "k8s.io/api/core/v1"
)

// The API server's defaults for the fields scheduling reads, applied to
// every Pod and Node the loader reads (after validation, so an invalid
// object is reported as written). The rules are those of
// k8s.io/kubernetes@v1.37.2 pkg/apis/core/v1/defaults.go (SetDefaults_Pod,
// SetDefaults_NodeStatus); examples/kube-scheduler/parity
// TestLoaderDefaultsMatchUpstream runs upstream's SetObjectDefaults_Pod and
// SetObjectDefaults_Node against them.

// defaultPod gives each container and init container (not ephemeral
// containers, which upstream does not default) a request equal to its
// limit for every resource that has a limit and no request; requests
// already given are kept, even when zero. O(containers × resources); it
// allocates only a Requests map where there was none and a key is missing
// from it, and only a copy of the limit's quantity per defaulted key.
func defaultPod(p *v1.Pod) {
	for i := range p.Spec.Containers {
		defaultRequests(&p.Spec.Containers[i].Resources)
	}
	for i := range p.Spec.InitContainers {
		defaultRequests(&p.Spec.InitContainers[i].Resources)
	}
}

// defaultRequests copies into r.Requests every r.Limits key it lacks.
func defaultRequests(r *v1.ResourceRequirements) {
	for k, q := range r.Limits {
		if _, ok := r.Requests[k]; ok {
			continue
		}
		if r.Requests == nil {
			r.Requests = make(v1.ResourceList, len(r.Limits))
		}
		r.Requests[k] = q.DeepCopy()
	}
}

// defaultNode sets status.allocatable to a copy of status.capacity when
// allocatable is absent (nil; an empty allocatable, "allocatable: {}", is
// kept, as upstream keeps it) and capacity is present. O(resources).
func defaultNode(n *v1.Node) {
	s := &n.Status
	if s.Allocatable != nil || s.Capacity == nil {
		return
	}
	s.Allocatable = make(v1.ResourceList, len(s.Capacity))
	for k, q := range s.Capacity {
		s.Allocatable[k] = q.DeepCopy()
	}
}
