package kubescheduler

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/snapshot"
)

// PodSigner is implemented by a scorer or filter of your own that declares
// which pod fields it reads, so that upstream's opportunistic batching may
// reuse its results for pods that agree on them. SignPod returns one
// fragment per field (or group of fields) read, with a key unique to what
// it reads (e.g. "example.com/labels" and the pod's labels): two pods with
// equal fragments must get the same score or verdict on every node. An
// error disables batching for that pod.
//
// A plugin from [WrapScorer] or [WrapFilter] signs a pod with the fields
// schedkit's built-in scorers and filters read plus the fragments of its
// PodSigner. Without a PodSigner it refuses to sign (Unschedulable, which
// upstream documents as "not eligible for batching"): every pod of the
// profile is then scored and filtered in full — slower, never wrong.
type PodSigner interface {
	SignPod(pod *v1.Pod) ([]fwk.SignFragment, error)
}

// signed is one signPod result.
type signed struct {
	pod    *v1.Pod
	frags  []fwk.SignFragment
	status *fwk.Status
}

// signAs is the SignPod of a plugin called name running x (a scorer or a
// filter): the built-in fields when builtin, plus x's own fragments when x
// is a PodSigner, else a refusal. The built-in fields are computed once
// for the profile's plugins, which the framework asks in turn for the same
// pod object (immutable in the scheduler: an update is a new object).
func (p *profile) signAs(name string, builtin bool, x any, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	s := p.signed.Load()
	if s == nil || s.pod != pod {
		s = &signed{pod: pod}
		s.frags, s.status = signPod(pod)
		p.signed.Store(s)
	}
	frags, st := s.frags, s.status
	if builtin || !st.IsSuccess() {
		return frags, st
	}
	ps, ok := x.(PodSigner)
	if !ok {
		return nil, fwk.NewStatus(fwk.Unschedulable, name+": "+notSigned)
	}
	own, err := ps.SignPod(pod)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("kubescheduler: %s: SignPod: %w", name, err))
	}
	return append(slices.Clip(frags), own...), nil
}

// notSigned is the reason a wrapped scorer or filter without a PodSigner
// gives for not signing a pod.
const notSigned = "does not declare the pod fields it reads (kubescheduler.PodSigner): no opportunistic batching"

// signPod signs every pod field schedkit's built-in scorers and filters
// read: requests (containers, init containers, overhead, pod level), image
// names, node affinity and selector, tolerations, host ports, spec.nodeName
// and labels (named reservations select owners by label). Two pods with the
// same signature get the same scores and verdicts on every node, which is
// what upstream's opportunistic batching requires of a SignPlugin.
// A scorer written outside schedkit may read other fields: see signAs.
func signPod(pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	req, err := snapshot.ComputePodRequests(pod)
	if err != nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, err.Error())
	}
	aff, err := fwk.NodeAffinitySigner(pod)
	if err != nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, err.Error())
	}
	return []fwk.SignFragment{
		{Key: "schedkit.io/PodRequests", Value: req.Requested.String() + "|" + req.Scoring.String() + "|" + nonZero(req)},
		{Key: fwk.ImageNamesSignerName, Value: imageNames(pod)},
		{Key: fwk.NodeAffinitySignerName, Value: aff},
		{Key: fwk.NodeSelectorSignerName, Value: pod.Spec.NodeSelector},
		{Key: fwk.TolerationsSignerName, Value: fwk.TolerationsSigner(pod)},
		{Key: fwk.HostPortsSignerName, Value: fwk.HostPortsSigner(pod)},
		{Key: fwk.NodeNameSignerName, Value: pod.Spec.NodeName},
		{Key: fwk.LabelsSignerName, Value: pod.Labels},
	}, nil
}

func nonZero(r snapshot.PodRequests) string {
	return "cpu=" + strconv.FormatInt(r.NonZeroMilliCPU, 10) + ",memory=" + strconv.FormatInt(r.NonZeroMemory, 10)
}

// imageNames lists the pod's images (containers, init containers, image
// volumes) with ":latest" added where no tag or digest is given, sorted and
// without repeats, as upstream's ImageLocality signer.
func imageNames(pod *v1.Pod) []string {
	var out []string
	add := func(name string) {
		if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
			name += ":latest"
		}
		out = append(out, name)
	}
	for _, c := range pod.Spec.Containers {
		add(c.Image)
	}
	for _, c := range pod.Spec.InitContainers {
		add(c.Image)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Image != nil {
			add(v.Image.Reference)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
