package snapshot

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/schedkit/schedkit/internal/names"
)

// ValidatePod returns the problems NewPodInfo and [Cache.AddPod] find in
// pod before parsing it, each a field error with upstream's path and
// message, in field order; nil for a valid pod (and for a nil pod, which
// is not a pod's problem to name). They are the pod's names
// (metadata.name required and a DNS-1123 subdomain; metadata.namespace
// required — a Required value error when empty: the API server defaults it,
// so set "default" on pods built in code — and a DNS-1123 label;
// spec.nodeName and status.nominatedNodeName node names when set; the
// reservation ledger's placeholders are exempt) and the scheduling fields
// the API server rejects (see validateScheduling). A pod with no
// problem here can still be refused for a negative quantity
// ([ErrNegativeQuantity]) or by a device decoder. For loaders and
// tools that report every problem of a pod, field by field, before
// feeding a Cache. O(len(names) + constraints² + terms × requirements ×
// values); allocates only on error. Safe for concurrent use.
func ValidatePod(pod *v1.Pod) field.ErrorList {
	if pod == nil || pod.Name != "" && podNamesValid(pod) && schedulingValid(pod) {
		return nil
	}
	var errs field.ErrorList
	if pod.Name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
	}
	errs = append(errs, podNameErrors(pod)...)
	return append(errs, schedulingErrors(pod)...)
}

// validateScheduling returns an error wrapping [ErrInvalidObject], naming
// the pod and every invalid field path, for the scheduling fields the API
// server's pod validation rejects (schedulingErrors); nil for a valid pod.
func validateScheduling(pod *v1.Pod) error {
	if schedulingValid(pod) {
		return nil
	}
	errs := schedulingErrors(pod)
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("pod %s: %w: %w", KeyOf(pod), errs.ToAggregate(), ErrInvalidObject)
}

// schedulingErrors lists the problems the API server's pod validation
// finds in the scheduling fields (k8s.io/kubernetes v1.37.2
// pkg/apis/core/validation: ValidatePodSpec's nodeSelector check,
// validateTopologySpreadConstraints, validateNodeAffinity,
// validatePodAffinity, validatePodAntiAffinity, validatePodAffinityTerm),
// with upstream's field paths, for a new pod (so invalid label values in
// required node affinity are not grandfathered):
//
//   - spec.nodeSelector: keys qualified names, values label values;
//   - spec.topologySpreadConstraints[i]: maxSkew > 0; topologyKey not
//     empty (upstream checks only that); whenUnsatisfiable DoNotSchedule
//     or ScheduleAnyway; no two with the same {topologyKey,
//     whenUnsatisfiable}; minDomains > 0 and only with DoNotSchedule;
//     nodeAffinityPolicy and nodeTaintsPolicy Honor or Ignore when set; a
//     valid labelSelector;
//   - node affinity (validateNodeAffinityTerms): a required node selector
//     has at least one term; each matchExpressions requirement has a
//     known operator, values given for In/NotIn, none for
//     Exists/DoesNotExist, exactly one for Gt/Lt, a qualified-name key
//     and (required terms only) label-value values; each matchFields
//     requirement is In/NotIn with exactly one value on metadata.name,
//     the value a node name; preferred terms weigh 1..100;
//   - pod (anti-)affinity terms, required and preferred: weight 1..100
//     (preferred); topologyKey a non-empty qualified name; valid
//     labelSelector and namespaceSelector.
//
// O(constraints² + terms × requirements × values); allocates only on
// error.
func schedulingErrors(pod *v1.Pod) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if len(pod.Spec.NodeSelector) > 0 {
		errs = append(errs, metav1validation.ValidateLabels(pod.Spec.NodeSelector, spec.Child("nodeSelector"))...)
	}
	cs := pod.Spec.TopologySpreadConstraints
	for i := range cs {
		c := &cs[i]
		p := spec.Child("topologySpreadConstraints").Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		if c.WhenUnsatisfiable != v1.DoNotSchedule && c.WhenUnsatisfiable != v1.ScheduleAnyway {
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)}))
		}
		for j := i + 1; j < len(cs); j++ {
			if cs[j].TopologyKey == c.TopologyKey && cs[j].WhenUnsatisfiable == c.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(p.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, "must be greater than zero"))
			}
			if c.WhenUnsatisfiable != v1.DoNotSchedule {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", v1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		errs = append(errs, validateInclusionPolicy(p.Child("nodeAffinityPolicy"), c.NodeAffinityPolicy)...)
		errs = append(errs, validateInclusionPolicy(p.Child("nodeTaintsPolicy"), c.NodeTaintsPolicy)...)
		errs = append(errs, validateLabelKeys(p, c.MatchLabelKeys, nil, c.LabelSelector)...)
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
	}
	if a := pod.Spec.Affinity; a != nil {
		p := spec.Child("affinity")
		if na := a.NodeAffinity; na != nil {
			errs = validateNodeAffinityTerms(errs, p.Child("nodeAffinity"), na)
		}
		if pa := a.PodAffinity; pa != nil {
			errs = append(errs, validateTerms(p.Child("podAffinity"), pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)...)
		}
		if pa := a.PodAntiAffinity; pa != nil {
			errs = append(errs, validateTerms(p.Child("podAntiAffinity"), pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)...)
		}
	}
	return errs
}

// validateNodeAffinityTerms appends the problems of a pod's node affinity
// at p, as upstream's validateNodeAffinity with
// AllowInvalidLabelValueInRequiredNodeAffinity false (a new pod):
// ValidateNodeSelector for the required selector, and
// ValidatePreferredSchedulingTerms, which never checks label values
// ("they can succeed when a cluster has only one node").
func validateNodeAffinityTerms(errs field.ErrorList, p *field.Path, na *v1.NodeAffinity) field.ErrorList {
	if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		tp := p.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
		if len(req.NodeSelectorTerms) == 0 {
			errs = append(errs, field.Required(tp, "must have at least one node selector term"))
		}
		for i := range req.NodeSelectorTerms {
			errs = validateNodeSelectorTerm(errs, tp.Index(i), &req.NodeSelectorTerms[i], true)
		}
	}
	pp := p.Child("preferredDuringSchedulingIgnoredDuringExecution")
	for i := range na.PreferredDuringSchedulingIgnoredDuringExecution {
		t := &na.PreferredDuringSchedulingIgnoredDuringExecution[i]
		if t.Weight <= 0 || t.Weight > 100 {
			errs = append(errs, field.Invalid(pp.Index(i).Child("weight"), t.Weight, "must be in the range 1-100"))
		}
		errs = validateNodeSelectorTerm(errs, pp.Index(i).Child("preference"), &t.Preference, false)
	}
	return errs
}

// validateNodeSelectorTerm appends the problems of one node selector term
// at p (upstream's ValidateNodeSelectorTerm, with
// ValidateNodeSelectorRequirement and
// ValidateNodeFieldSelectorRequirement); values are checked as label
// values only when checkValues.
func validateNodeSelectorTerm(errs field.ErrorList, p *field.Path, t *v1.NodeSelectorTerm, checkValues bool) field.ErrorList {
	for j := range t.MatchExpressions {
		r := &t.MatchExpressions[j]
		rp := p.Child("matchExpressions").Index(j)
		switch r.Operator {
		case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, field.Forbidden(rp.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
			}
		default:
			errs = append(errs, field.Invalid(rp.Child("operator"), r.Operator, "not a valid selector operator"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(r.Key, rp.Child("key"))...)
		if checkValues {
			for k, v := range r.Values {
				for _, msg := range validation.IsValidLabelValue(v) {
					errs = append(errs, field.Invalid(rp.Child("values").Index(k), v, msg))
				}
			}
		}
	}
	for j := range t.MatchFields {
		r := &t.MatchFields[j]
		rp := p.Child("matchFields").Index(j)
		switch r.Operator {
		case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(rp.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
			}
		default:
			errs = append(errs, field.Invalid(rp.Child("operator"), r.Operator, "not a valid selector operator"))
		}
		if r.Key != metav1.ObjectNameField {
			errs = append(errs, field.Invalid(rp.Child("key"), r.Key, "not a valid field selector key"))
			continue
		}
		for k, v := range r.Values {
			for _, msg := range apivalidation.NameIsDNSSubdomain(v, false) {
				errs = append(errs, field.Invalid(rp.Child("values").Index(k), v, msg))
			}
		}
	}
	return errs
}

func validateInclusionPolicy(p *field.Path, policy *v1.NodeInclusionPolicy) field.ErrorList {
	if policy == nil || *policy == v1.NodeInclusionPolicyHonor || *policy == v1.NodeInclusionPolicyIgnore {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, *policy, []string{string(v1.NodeInclusionPolicyHonor), string(v1.NodeInclusionPolicyIgnore)})}
}

func validateTerms(p *field.Path, required []v1.PodAffinityTerm, preferred []v1.WeightedPodAffinityTerm) field.ErrorList {
	var errs field.ErrorList
	for i := range required {
		errs = append(errs, validateTerm(p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i), &required[i])...)
	}
	for i := range preferred {
		wp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		if w := preferred[i].Weight; w <= 0 || w > 100 {
			errs = append(errs, field.Invalid(wp.Child("weight"), w, "must be in the range 1-100"))
		}
		errs = append(errs, validateTerm(wp.Child("podAffinityTerm"), &preferred[i].PodAffinityTerm)...)
	}
	return errs
}

func validateTerm(p *field.Path, t *v1.PodAffinityTerm) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs := metav1validation.ValidateLabelSelector(t.LabelSelector, opts, p.Child("labelSelector"))
	errs = append(errs, metav1validation.ValidateLabelSelector(t.NamespaceSelector, opts, p.Child("namespaceSelector"))...)
	for _, ns := range t.Namespaces {
		for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
			errs = append(errs, field.Invalid(p.Child("namespace"), ns, msg))
		}
	}
	errs = append(errs, validateLabelKeys(p, t.MatchLabelKeys, t.MismatchLabelKeys, t.LabelSelector)...)
	if t.TopologyKey == "" {
		errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
	}
	return append(errs, metav1validation.ValidateLabelName(t.TopologyKey, p.Child("topologyKey"))...)
}

// validateLabelKeys checks the matchLabelKeys and mismatchLabelKeys of a
// term or constraint at p against its labelSelector as the API server does
// for a new pod under v1.37's default feature gates (pkg/apis/core/validation
// ValidateMatchLabelKeysAndMismatchLabelKeys, used for spread constraints
// too since MatchLabelKeysInPodTopologySpreadSelectorMerge): each key a
// valid label name, forbidden without a labelSelector; a matchLabelKeys
// key in a matchExpression after the selector named it already (in
// matchLabels or an earlier expression: the API server validates after
// merging matchLabelKeys into the selector); a key in both lists. Field paths as upstream's, including p.Index(i) (not
// p.matchLabelKeys[i]) for the selector duplicate.
func validateLabelKeys(p *field.Path, match, mismatch []string, sel *metav1.LabelSelector) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		name string
		keys []string
	}{{"matchLabelKeys", match}, {"mismatchLabelKeys", mismatch}} {
		if len(l.keys) == 0 {
			continue
		}
		if sel == nil {
			errs = append(errs, field.Forbidden(p.Child(l.name), "must not be specified when labelSelector is not set"))
			continue
		}
		for i, k := range l.keys {
			errs = append(errs, metav1validation.ValidateLabelName(k, p.Child(l.name).Index(i))...)
		}
	}
	if sel != nil && len(match) > 0 {
		for j, e := range sel.MatchExpressions {
			i := slices.Index(match, e.Key)
			if i < 0 {
				continue
			}
			_, seen := sel.MatchLabels[e.Key]
			seen = seen || slices.ContainsFunc(sel.MatchExpressions[:j], func(r metav1.LabelSelectorRequirement) bool { return r.Key == e.Key })
			if seen {
				errs = append(errs, field.Invalid(p.Index(i), e.Key, "exists in both matchLabelKeys and labelSelector"))
			}
		}
	}
	for i, k := range match {
		if slices.Contains(mismatch, k) {
			errs = append(errs, field.Invalid(p.Child("matchLabelKeys").Index(i), k, "exists in both matchLabelKeys and mismatchLabelKeys"))
		}
	}
	return errs
}

// The fast paths. The field-error functions above allocate paths and run
// apimachinery's regular expressions even for a valid pod, which is
// nearly every pod; NewPodInfo runs once per pod scheduled. The
// predicates below answer "certainly valid" without allocating, in
// O(length of the checked strings), and the caller runs the full check
// (same errors as before) only when they say no. They must never accept
// what the full check refuses (FuzzFastValidation); they may decline what
// it accepts (a pod with node affinity, matchLabelKeys or
// mismatchLabelKeys: the full check decides).

// podNamesValid reports that podNameErrors finds nothing: metadata.name a
// DNS-1123 subdomain, metadata.namespace a DNS-1123 label, spec.nodeName
// and status.nominatedNodeName empty or DNS-1123 subdomains.
func podNamesValid(pod *v1.Pod) bool {
	return names.IsDNSSubdomain(pod.Name) && names.IsDNSLabel(pod.Namespace) &&
		(pod.Spec.NodeName == "" || names.IsDNSSubdomain(pod.Spec.NodeName)) &&
		(pod.Status.NominatedNodeName == "" || names.IsDNSSubdomain(pod.Status.NominatedNodeName))
}

// schedulingValid reports that schedulingErrors finds nothing, for a pod
// whose scheduling fields are the common ones: a nodeSelector, topology
// spread constraints without matchLabelKeys, pod (anti-)affinity terms
// without matchLabelKeys or mismatchLabelKeys, no node affinity. false:
// not decided here.
func schedulingValid(pod *v1.Pod) bool {
	if a := pod.Spec.Affinity; a != nil && (a.NodeAffinity != nil || !podAffinityValid(a)) || !labelsValid(pod.Spec.NodeSelector) {
		return false
	}
	cs := pod.Spec.TopologySpreadConstraints
	for i := range cs {
		c := &cs[i]
		if c.MaxSkew <= 0 || c.TopologyKey == "" || len(c.MatchLabelKeys) > 0 ||
			c.WhenUnsatisfiable != v1.DoNotSchedule && c.WhenUnsatisfiable != v1.ScheduleAnyway ||
			c.MinDomains != nil && (*c.MinDomains <= 0 || c.WhenUnsatisfiable != v1.DoNotSchedule) ||
			!policyValid(c.NodeAffinityPolicy) || !policyValid(c.NodeTaintsPolicy) || !selectorValid(c.LabelSelector) {
			return false
		}
		for j := i + 1; j < len(cs); j++ {
			if cs[j].TopologyKey == c.TopologyKey && cs[j].WhenUnsatisfiable == c.WhenUnsatisfiable {
				return false
			}
		}
	}
	return true
}

// podAffinityValid reports that validateTerms finds nothing in a's pod
// affinity and pod anti-affinity, for terms without matchLabelKeys or
// mismatchLabelKeys (false: not decided here).
func podAffinityValid(a *v1.Affinity) bool {
	if pa := a.PodAffinity; pa != nil && !termsValid(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution) {
		return false
	}
	pa := a.PodAntiAffinity
	return pa == nil || termsValid(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
}

// termsValid is validateTerms finding nothing (see podAffinityValid).
func termsValid(required []v1.PodAffinityTerm, preferred []v1.WeightedPodAffinityTerm) bool {
	for i := range required {
		if !termValid(&required[i]) {
			return false
		}
	}
	for i := range preferred {
		if w := preferred[i].Weight; w <= 0 || w > 100 || !termValid(&preferred[i].PodAffinityTerm) {
			return false
		}
	}
	return true
}

// termValid is validateTerm finding nothing, for a term without
// matchLabelKeys or mismatchLabelKeys (false: not decided here).
func termValid(t *v1.PodAffinityTerm) bool {
	if len(t.MatchLabelKeys) > 0 || len(t.MismatchLabelKeys) > 0 || !names.IsLabelKey(t.TopologyKey) ||
		!selectorValid(t.LabelSelector) || !selectorValid(t.NamespaceSelector) {
		return false
	}
	for _, ns := range t.Namespaces {
		if !names.IsDNSLabel(ns) {
			return false
		}
	}
	return true
}

func policyValid(p *v1.NodeInclusionPolicy) bool {
	return p == nil || *p == v1.NodeInclusionPolicyHonor || *p == v1.NodeInclusionPolicyIgnore
}

// selectorValid is metav1validation.ValidateLabelSelector finding
// nothing (options: none allowed).
func selectorValid(s *metav1.LabelSelector) bool {
	if s == nil {
		return true
	}
	if !labelsValid(s.MatchLabels) {
		return false
	}
	for i := range s.MatchExpressions {
		r := &s.MatchExpressions[i]
		switch r.Operator {
		case metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn:
			if len(r.Values) == 0 {
				return false
			}
		case metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				return false
			}
		default:
			return false
		}
		if !names.IsLabelKey(r.Key) {
			return false
		}
		for _, v := range r.Values {
			if !names.IsLabelValue(v) {
				return false
			}
		}
	}
	return true
}

// labelsValid is metav1validation.ValidateLabels finding nothing.
func labelsValid(ls map[string]string) bool {
	for k, v := range ls {
		if !names.IsLabelKey(k) || !names.IsLabelValue(v) {
			return false
		}
	}
	return true
}
