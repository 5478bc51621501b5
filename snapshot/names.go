package snapshot

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/schedkit/schedkit/internal/objects"
)

// checkPodNames checks a pod's names as the API server does
// (internal/objects.PodNames): metadata.name a DNS-1123 subdomain,
// metadata.namespace required and a DNS-1123 label, spec.nodeName and
// status.nominatedNodeName, when set, node names. Errors name the pod and
// field and wrap [ErrInvalidObject]. O(len(names)); allocates nothing
// for valid names (podNamesValid).
func checkPodNames(pod *v1.Pod) error {
	if podNamesValid(pod) {
		return nil
	}
	if errs := podNameErrors(pod); len(errs) > 0 {
		return fmt.Errorf("pod %s/%s: %w: %w", pod.Namespace, pod.Name, errs.ToAggregate(), ErrInvalidObject)
	}
	return nil
}

// podNameErrors lists checkPodNames' problems (internal/objects.PodNames).
func podNameErrors(pod *v1.Pod) field.ErrorList { return objects.PodNames(pod) }

// checkNodeName checks a node's metadata.name as a DNS-1123 subdomain, as
// the API server does (ValidateNodeName). Errors name the node and field
// and wrap [ErrInvalidObject]. O(len(name)).
func checkNodeName(name string) error {
	if errs := objects.MetaNames(name, "", apivalidation.NameIsDNSSubdomain); len(errs) > 0 {
		return fmt.Errorf("node %q: %w: %w", name, errs.ToAggregate(), ErrInvalidObject)
	}
	return nil
}
