package snapshot

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/schedkit/schedkit/internal/objects"
)

// checkPodNames checks a pod's metadata.name as a DNS-1123 subdomain, its
// metadata.namespace, when set, as a DNS-1123 label, and its
// spec.nodeName, when set, as a node name (a DNS-1123 subdomain), as the
// API server does (k8s v1.37.2 pkg/apis/core/validation ValidatePodName,
// ValidateNamespaceName, ValidatePodSpec's ValidateNodeName). The reservation ledger's placeholder pods
// (internal/objects.MarkPlaceholder) are exempt: their namespace is
// deliberately not a label, so no real pod shares a key with them. Errors
// name the pod and field and wrap [ErrInvalidObject]. O(len(names)).
func checkPodNames(pod *v1.Pod) error {
	if errs := podNameErrors(pod); len(errs) > 0 {
		return fmt.Errorf("pod %s/%s: %w: %w", pod.Namespace, pod.Name, errs.ToAggregate(), ErrInvalidObject)
	}
	return nil
}

// podNameErrors lists checkPodNames' problems. Allocates only on error.
func podNameErrors(pod *v1.Pod) field.ErrorList {
	if objects.IsPlaceholder(pod) {
		return nil
	}
	errs := objects.MetaNames(pod.Name, pod.Namespace, apivalidation.NameIsDNSSubdomain)
	if n := pod.Spec.NodeName; n != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(n, false) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "nodeName"), n, msg))
		}
	}
	return errs
}

// checkNodeName checks a node's metadata.name as a DNS-1123 subdomain, as
// the API server does (ValidateNodeName). Errors name the node and field
// and wrap [ErrInvalidObject]. O(len(name)).
func checkNodeName(name string) error {
	if errs := objects.MetaNames(name, "", apivalidation.NameIsDNSSubdomain); len(errs) > 0 {
		return fmt.Errorf("node %q: %w: %w", name, errs.ToAggregate(), ErrInvalidObject)
	}
	return nil
}
