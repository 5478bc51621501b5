// Package selector is schedkit's one selector engine: label requirements
// compiled once per pod (or per scheduler) and matched against a label
// set with no allocation. It serves the NodeAffinity filter
// (spec.nodeSelector, required terms, the scheduler's added affinity),
// the NodeAffinity scorer (preferred terms and their weights) and the pod
// label selectors of inter-pod rules ([FromLabelSelector], [Namespaces]),
// with apimachinery's semantics:
//
//   - a node selector's terms are ORed ([NodeSelector]); a term ANDs its
//     matchExpressions and its matchFields ([Term]); a term with neither
//     is dropped, and a term with an invalid requirement is dropped and
//     reported (component-helpers v0.37 scheduling/corev1/nodeaffinity,
//     which kube-scheduler v1.37's NodeAffinity plugin uses);
//   - a requirement is validated by apimachinery's labels.NewRequirement
//     (key a qualified name, values label values, In/NotIn with values,
//     Exists/DoesNotExist without, Gt/Lt with one integer) and matches as
//     labels.Requirement.Matches does: NotIn and DoesNotExist hold for a
//     missing label, Gt/Lt compare the label's value parsed as a base-10
//     int64 and fail when it does not parse;
//   - matchFields supports In/NotIn with exactly one value; only
//     metadata.name has a value (any other key reads ""), and an object
//     without a name skips field requirements, as upstream.
//
// A label set is a node's labels as interned handles ([]Label, compared
// by pointer) or, for [Selector], a label map ([MatchMap]).
//
// Layer: internal; imports no schedkit package (k8s.io/api and
// k8s.io/apimachinery only). Compiling is O(requirements × values) and
// allocates; matching is O(requirements × (labels + values)), allocates
// nothing, and is safe for concurrent use (compiled values are
// immutable).
package selector
