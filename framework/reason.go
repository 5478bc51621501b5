package framework

import (
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/fit"
	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/internal/spread"
	"github.com/schedkit/schedkit/snapshot"
)

// Code says which check a node failed. Each built-in code has upstream
// kube-scheduler v1.37's reason string ([Reason.Message]); [CodeCustom]
// carries its own message, for filters written outside this package.
type Code uint8

// Reason codes with the upstream plugin and status code that produce them.
const (
	// CodeCustom: a user filter's reason; the text is Reason.Text.
	CodeCustom Code = iota
	// CodeTooManyPods: NodeResourcesFit, pods on the node + 1 > allowed
	// pods. "Too many pods".
	CodeTooManyPods
	// CodeInsufficientResource: NodeResourcesFit, the pod's request of
	// Reason.Resource exceeds allocatable − requested. "Insufficient cpu",
	// "Insufficient nvidia.com/gpu", ...
	CodeInsufficientResource
	// CodeUntoleratedTaint: TaintToleration, a NoSchedule or NoExecute
	// taint (Reason.Taint, the first one) the pod does not tolerate.
	// "node(s) had untolerated taint(s)". Unresolvable.
	CodeUntoleratedTaint
	// CodeNodeUnschedulable: NodeUnschedulable, spec.unschedulable and the
	// pod does not tolerate node.kubernetes.io/unschedulable:NoSchedule.
	// "node(s) were unschedulable". Unresolvable.
	CodeNodeUnschedulable
	// CodeNodeName: NodeName, spec.nodeName names another node.
	// "node(s) didn't match the requested node name". Unresolvable.
	CodeNodeName
	// CodeNodePorts: NodePorts, a requested host port is in use.
	// "node(s) didn't have free ports for the requested pod ports".
	CodeNodePorts
	// CodeNodeAffinity: NodeAffinity, the node fails spec.nodeSelector or
	// every required node-affinity term. "node(s) didn't match Pod's node
	// affinity/selector". Unresolvable.
	CodeNodeAffinity
	// CodeEnforcedNodeAffinity: NodeAffinity, the node fails the
	// scheduler-enforced AddedAffinity. "node(s) didn't match
	// scheduler-enforced node affinity". Unresolvable.
	CodeEnforcedNodeAffinity
	// CodeNotCandidate: the node was not among the candidates a PreFilter
	// named (node affinity matchFields metadata.name, spec.nodeName) and
	// was never filtered. Text is upstream's "node(s) didn't satisfy
	// plugin(s) [NodeAffinity]". Unresolvable.
	CodeNotCandidate
	// CodeTopologySpreadLabel: PodTopologySpread, the node lacks the
	// topology key of a DoNotSchedule constraint. "node(s) didn't match
	// pod topology spread constraints (missing required label)".
	// Unresolvable.
	CodeTopologySpreadLabel
	// CodeTopologySpreadSkew: PodTopologySpread, placing the pod on the
	// node would exceed a DoNotSchedule constraint's maxSkew. "node(s)
	// didn't match pod topology spread constraints".
	CodeTopologySpreadSkew
	// CodePodAffinity: InterPodAffinity, no pod matching all the pod's
	// required affinity terms is in the node's domains (and it is not the
	// first pod of a self-affine group), or the node lacks a term's
	// topology key. "node(s) didn't match pod affinity rules".
	// Unresolvable.
	CodePodAffinity
	// CodePodAntiAffinity: InterPodAffinity, a pod matching one of the
	// pod's required anti-affinity terms is in the node's domain.
	// "node(s) didn't match pod anti-affinity rules".
	CodePodAntiAffinity
	// CodeExistingPodAntiAffinity: InterPodAffinity, an existing pod's
	// required anti-affinity term matches the pod in the node's domain.
	// "node(s) didn't satisfy existing pods anti-affinity rules".
	CodeExistingPodAntiAffinity
)

// Upstream reason strings (kube-scheduler v1.37 plugins).
const (
	msgTooManyPods        = "Too many pods"
	msgUntoleratedTaint   = "node(s) had untolerated taint(s)"
	msgNodeUnschedulable  = "node(s) were unschedulable"
	msgNodeName           = "node(s) didn't match the requested node name"
	msgNodePorts          = "node(s) didn't have free ports for the requested pod ports"
	msgNodeAffinity       = "node(s) didn't match Pod's node affinity/selector"
	msgEnforcedAffinity   = "node(s) didn't match scheduler-enforced node affinity"
	msgAffinityConflict   = "pod affinity terms conflict"
	msgNoNodesAvailable   = "no nodes available to schedule pods"
	noNodeAvailablePrefix = "0/"
	noNodeAvailableSuffix = " nodes are available:"
)

// Reason is why one node failed one check, as a value: filters append
// Reasons instead of formatting messages, so a failing node costs no
// allocation. The zero Reason is a CodeCustom with no text.
type Reason struct {
	// Plugin is the name of the filter that rejected the node (set by the
	// scheduling cycle from [Filter.Name]).
	Plugin string
	// Node is the name of the rejected node (set by the scheduling cycle).
	Node string
	// Code is the check that failed.
	Code Code
	// Unresolvable reports that removing pods from the node cannot make it
	// fit (upstream's UnschedulableAndUnresolvable): a taint, a label, a
	// name, or a request larger than the node's whole allocatable.
	Unresolvable bool
	// Insufficient (its fields Resource, Requested, Used and Capacity)
	// describes a CodeInsufficientResource or CodeTooManyPods reason in
	// the resource's unit (milli-CPU, bytes, counts): the pod's request,
	// the node's requested amount and its allocatable. For
	// CodeTooManyPods Resource is snapshot.Pods, Requested 1, Used the
	// pods on the node. It is the ledger's reason type too
	// (reserve.Insufficient is snapshot.Insufficient).
	snapshot.Insufficient
	// Taint is the first untolerated taint of a CodeUntoleratedTaint
	// reason; it points into the node's spec and is read-only.
	Taint *v1.Taint
	// Text is the message of a CodeCustom or CodeNotCandidate reason.
	Text string
}

// Message returns upstream's reason string, the text counted in a
// [Diagnosis] ("Insufficient cpu", "node(s) had untolerated taint(s)", ...).
// It allocates only for CodeInsufficientResource.
func (r *Reason) Message() string {
	switch r.Code {
	case CodeTooManyPods:
		return msgTooManyPods
	case CodeInsufficientResource:
		return r.Insufficient.Message()
	case CodeUntoleratedTaint:
		return msgUntoleratedTaint
	case CodeNodeUnschedulable:
		return msgNodeUnschedulable
	case CodeNodeName:
		return msgNodeName
	case CodeNodePorts:
		return msgNodePorts
	case CodeNodeAffinity:
		return msgNodeAffinity
	case CodeEnforcedNodeAffinity:
		return msgEnforcedAffinity
	case CodeTopologySpreadLabel:
		return spread.ReasonNodeLabelNotMatch
	case CodeTopologySpreadSkew:
		return spread.ReasonConstraintsNotMatch
	case CodePodAffinity:
		return interpod.ReasonAffinity
	case CodePodAntiAffinity:
		return interpod.ReasonAntiAffinity
	case CodeExistingPodAntiAffinity:
		return interpod.ReasonExistingAntiAffinity
	}
	return r.Text
}

// String formats the reason with its node and details, for logs:
// "node-3: Insufficient cpu (requested 2000, used 7000, capacity 8000)".
func (r Reason) String() string {
	s := r.Message()
	if r.Node != "" {
		s = r.Node + ": " + s
	}
	switch r.Code {
	case CodeInsufficientResource, CodeTooManyPods:
		s += " (requested " + strconv.FormatInt(r.Requested, 10) + ", used " + strconv.FormatInt(r.Used, 10) + ", capacity " + strconv.FormatInt(r.Capacity, 10) + ")"
	case CodeUntoleratedTaint:
		if r.Taint != nil {
			s += " (" + r.Taint.ToString() + ")"
		}
	}
	return s
}

// insufficientReason is the NodeResourcesFit reason for in, as the fit
// filter reports it: CodeTooManyPods for snapshot.Pods, else
// CodeInsufficientResource, Unresolvable when the request exceeds the
// node's whole capacity (never for pods, as upstream's fitsRequest).
// Plugin and Node are left empty. The filter and Scheduler.Schedule (for
// the ledger's reasons) both use it. O(1), allocates nothing.
func insufficientReason(in snapshot.Insufficient) Reason {
	if in.Resource == snapshot.Pods {
		return Reason{Code: CodeTooManyPods, Insufficient: in}
	}
	return Reason{Code: CodeInsufficientResource, Insufficient: in, Unresolvable: fit.Unresolvable(in.Requested, in.Capacity)}
}
