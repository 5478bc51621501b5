package parity

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	corev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/apis/core/validation"
)

// schedulingFields are the field paths of a pod the scheduling plugins
// read and schedkit validates when it parses a pod
// (snapshot.NewPodInfo): topology spread constraints and pod
// (anti-)affinity terms.
var schedulingFields = []string{
	"spec.topologySpreadConstraints",
	"spec.affinity.podAffinity.",
	"spec.affinity.podAntiAffinity.",
}

// APISchedulingErrors runs the API server's own pod validation
// (k8s.io/kubernetes v1.37.2 pkg/apis/core/validation.ValidatePodSpec,
// with the options pkg/api/pod derives for a new pod under the default
// feature gates) on pod exactly as given, and returns the errors on the
// scheduling fields (schedulingFields); errors elsewhere in the spec (the
// generators' pods have no images, for example) are dropped. nil: the API
// server would accept those fields.
func APISchedulingErrors(pod *v1.Pod) (field.ErrorList, error) {
	if a := pod.Spec.Affinity; len(pod.Spec.TopologySpreadConstraints) == 0 && (a == nil || (a.PodAffinity == nil && a.PodAntiAffinity == nil)) {
		return nil, nil // no scheduling fields to validate
	}
	var spec core.PodSpec
	if err := corev1.Convert_v1_PodSpec_To_core_PodSpec(&pod.Spec, &spec, nil); err != nil {
		return nil, err
	}
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&spec, nil, &pod.ObjectMeta, nil)
	var out field.ErrorList
	for _, e := range validation.ValidatePodSpec(&spec, &pod.ObjectMeta, field.NewPath("spec"), opts) {
		for _, f := range schedulingFields {
			if strings.HasPrefix(e.Field, f) {
				out = append(out, e)
				break
			}
		}
	}
	return out, nil
}

// APIInvalid returns the first of pods whose scheduling fields the API
// server rejects (APISchedulingErrors), with its errors; nil when it
// accepts them all. Such a case cannot occur in a cluster: schedkit
// rejects the pod when it parses it (TestDifferenceInvalidPodRejectedAtParse),
// upstream's plugins meet it only at PreFilter.
func APIInvalid(pods ...*v1.Pod) (*v1.Pod, field.ErrorList, error) {
	for _, p := range pods {
		errs, err := APISchedulingErrors(p)
		if err != nil {
			return nil, nil, err
		}
		if len(errs) > 0 {
			return p, errs, nil
		}
	}
	return nil, nil, nil
}
