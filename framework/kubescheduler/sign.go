package kubescheduler

import (
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/snapshot"
)

// signPod signs every pod field schedkit's built-in scorers and filters
// read: requests (containers, init containers, overhead, pod level), image
// names, node affinity and selector, tolerations, host ports, spec.nodeName
// and labels (named reservations select owners by label). Two pods with the
// same signature get the same scores and verdicts on every node, which is
// what upstream's opportunistic batching requires of a SignPlugin.
// A scorer written outside schedkit that reads other pod fields must not be
// run with this signer; wrap the plugin and override SignPod.
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
