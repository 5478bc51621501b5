package snapshot

import (
	"fmt"
	"github.com/schedkit/schedkit/internal/quantity"
	"github.com/schedkit/schedkit/internal/resname"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/internal/arith"
)

// amounts is a request vector plus whether the cpu and memory keys were
// present at all (upstream distinguishes a missing key from an explicit 0).
type amounts struct {
	v   Vector
	has uint8 // bit 0: cpu key present; bit 1: memory key present
}

const (
	hasCPU uint8 = 1 << iota
	hasMem
)

func (a *amounts) add(o *amounts) { a.v.Add(&o.v); a.has |= o.has }
func (a *amounts) setMax(o *amounts) {
	a.v.setMax(&o.v)
	a.has |= o.has
}

// unitConv converts quantities to the amounts' internal unit.
type unitConv struct {
	cpu, other func(resource.Quantity) int64
	// finish converts an internal amount back to the public unit (milli-CPU,
	// bytes, counts), rounding up as apimachinery's MilliValue/Value do.
	finishCPU, finishOther func(int64) int64
}

var (
	// exactUnits is used when every quantity of the pod is an integer in its
	// public unit, which is the case for anything the API server accepts
	// in practice.
	exactUnits = unitConv{
		cpu:         func(q resource.Quantity) int64 { return quantityValue(CPU, q) },
		other:       func(q resource.Quantity) int64 { return quantityValue(Memory, q) },
		finishCPU:   func(x int64) int64 { return x },
		finishOther: func(x int64) int64 { return x },
	}
	// fineUnits keeps sub-unit precision (nano-CPU, milli-units elsewhere)
	// so that fractions sum before rounding up, as upstream sums
	// resource.Quantity values and converts once at the end.
	fineUnits = unitConv{
		cpu:         func(q resource.Quantity) int64 { return scaledSat(q, resource.Nano) },
		other:       func(q resource.Quantity) int64 { return scaledSat(q, resource.Milli) },
		finishCPU:   func(x int64) int64 { return ceilDiv(x, 1_000_000) },
		finishOther: func(x int64) int64 { return ceilDiv(x, 1000) },
	}
)

func scaledSat(q resource.Quantity, s resource.Scale) int64 {
	v, _ := quantity.Scaled(q, s)
	return v
}

func ceilDiv(x, d int64) int64 {
	if x == math.MaxInt64 {
		return math.MaxInt64
	}
	if x <= 0 {
		return x / d
	}
	return (x + d - 1) / d
}

// exactInUnit reports whether q is an integer number of its resource's
// public unit (milli-CPU for cpu, 1 otherwise).
func exactInUnit(name v1.ResourceName, q resource.Quantity) bool {
	s := resource.Scale(0)
	if name == v1.ResourceCPU {
		s = resource.Milli
	}
	_, exact := quantity.Scaled(q, s)
	return exact
}

func (u *unitConv) list(rl v1.ResourceList, nonMissing *amounts) amounts {
	var a amounts
	for name, q := range rl {
		id, ok := Intern(name)
		if !ok {
			continue
		}
		switch id {
		case CPU:
			a.has |= hasCPU
			a.v.Set(id, arith.Add(a.v.Get(id), u.cpu(q)))
		case Memory:
			a.has |= hasMem
			a.v.Set(id, arith.Add(a.v.Get(id), u.other(q)))
		default:
			a.v.Set(id, arith.Add(a.v.Get(id), u.other(q)))
		}
	}
	if nonMissing != nil {
		if a.has&hasCPU == 0 && nonMissing.has&hasCPU != 0 {
			a.v.Set(CPU, nonMissing.v.Get(CPU))
			a.has |= hasCPU
		}
		if a.has&hasMem == 0 && nonMissing.has&hasMem != 0 {
			a.v.Set(Memory, nonMissing.v.Get(Memory))
			a.has |= hasMem
		}
	}
	return a
}

func (u *unitConv) finish(a *amounts) {
	a.v.base[CPU] = u.finishCPU(a.v.base[CPU])
	for i := 1; i < numBase; i++ {
		a.v.base[i] = u.finishOther(a.v.base[i])
	}
	for i := range a.v.ext {
		a.v.ext[i] = u.finishOther(a.v.ext[i])
	}
}

// containerRequests picks the per-container request list the way upstream's
// containerSpecRequests / containerAllocatedRequests /
// containerActuatedRequests do.
type containerSource int

const (
	fromSpec containerSource = iota
	fromAllocated
	fromActuated
)

func containerList(src containerSource, c *v1.Container, cs *v1.ContainerStatus, infeasible bool) v1.ResourceList {
	switch src {
	case fromAllocated:
		if cs != nil && cs.AllocatedResources != nil {
			return cs.AllocatedResources
		}
	case fromActuated:
		if cs != nil && cs.Resources != nil && cs.Resources.Requests != nil {
			return cs.Resources.Requests
		}
		if cs != nil && cs.AllocatedResources != nil {
			return cs.AllocatedResources
		}
	default:
		return c.Resources.Requests
	}
	if infeasible {
		return nil
	}
	return c.Resources.Requests
}

func findContainerStatus(pod *v1.Pod, name string) *v1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	for i := range pod.Status.InitContainerStatuses {
		if pod.Status.InitContainerStatuses[i].Name == name {
			return &pod.Status.InitContainerStatuses[i]
		}
	}
	return nil
}

func isRestartable(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

func isResizeInfeasible(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodResizePending {
			return c.Reason == v1.PodReasonInfeasible
		}
	}
	return false
}

// aggregate is the sidecar-aware container sum of the KEP-753 formula:
// regular containers and restartable init containers are summed; each plain
// init container's peak is its own request plus the restartable ones
// started before it; the result is max(sum, every peak). Source:
// k8s.io/component-helpers v0.37 resource/helpers.go
// aggregateContainerResourcesByFn.
func (u *unitConv) aggregate(pod *v1.Pod, src containerSource, useStatus, infeasible bool, nonMissing *amounts) amounts {
	var result amounts
	status := func(name string) *v1.ContainerStatus {
		if useStatus {
			return findContainerStatus(pod, name)
		}
		return nil
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		a := u.list(containerList(src, c, status(c.Name), infeasible), nonMissing)
		result.add(&a)
	}
	var sidecars, initPeak amounts
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		a := u.list(containerList(src, c, status(c.Name), infeasible), nonMissing)
		if isRestartable(c) {
			result.add(&a)
			sidecars.add(&a)
			initPeak.setMax(&sidecars)
		} else {
			a.add(&sidecars)
			initPeak.setMax(&a)
		}
	}
	result.setMax(&initPeak)
	return result
}

// podRequests is upstream's resourcehelper.PodRequests with the options
// kube-scheduler v1.37 passes by default: status resources on
// (InPlacePodVerticalScaling, GA), pod-level resources on (PodLevelResources,
// beta, on), pod-level in-place resize on (beta, on), overhead included,
// DRA node-allocatable claims off (alpha) — except that spec.overhead is
// counted once (see [PodRequests]): the pod-level status maps already hold
// it, so it is added to the spec and container-status terms only and the
// result is, per resource, max(those + overhead, pod-level status).
// Upstream adds it to the maximum as well, counting it twice
// (kubernetes/kubernetes#139627).
//
// With useStatus false it is the request of a pod not yet bound, as
// NodeResourcesFit's PreFilter computes it: the spec alone (no container
// or pod status, no resize condition), pod-level requests and overhead.
func (u *unitConv) podRequests(pod *v1.Pod, useStatus bool, nonMissing *amounts) amounts {
	infeasible := useStatus && isResizeInfeasible(pod)
	// own holds the terms without the overhead (spec, container
	// statuses), totals the pod-level status maps, which include it.
	var own, totals amounts
	if !infeasible {
		own = u.aggregate(pod, fromSpec, useStatus, false, nonMissing)
	}
	podStatus := useStatus && pod.Status.AllocatedResources != nil && pod.Status.Resources != nil && pod.Status.Resources.Requests != nil
	if podStatus {
		totals = u.list(pod.Status.AllocatedResources, nil)
		actuated := u.list(pod.Status.Resources.Requests, nil)
		totals.setMax(&actuated)
	} else if useStatus {
		allocated := u.aggregate(pod, fromAllocated, true, infeasible, nonMissing)
		actuated := u.aggregate(pod, fromActuated, true, infeasible, nonMissing)
		own.setMax(&actuated)
		own.setMax(&allocated)
	}

	if resname.IsPodLevelRequestsSet(pod) {
		// Each pod-level resource named by the effective pod-level
		// requests replaces the container sums: the spec (dropped when a
		// resize is infeasible) and, once the kubelet reports them, the
		// pod-level status maps.
		specList := pod.Spec.Resources.Requests
		var statusLists []v1.ResourceList
		if useStatus && pod.Status.Resources != nil {
			statusLists = []v1.ResourceList{pod.Status.Resources.Requests, pod.Status.AllocatedResources}
			if infeasible {
				specList = nil
			}
		}
		apply := func(name v1.ResourceName) {
			if !resname.IsPodLevelResource(name) {
				return
			}
			id, ok := Intern(name)
			if !ok {
				return
			}
			conv := u.other
			switch id {
			case CPU:
				conv = u.cpu
				own.has |= hasCPU
			case Memory:
				own.has |= hasMem
			}
			var o, t int64
			if q, ok := specList[name]; ok {
				o = conv(q)
			}
			for _, rl := range statusLists {
				if q, ok := rl[name]; ok {
					t = max(t, conv(q))
				}
			}
			own.v.Set(id, o)
			totals.v.Set(id, t)
		}
		for name := range specList {
			apply(name)
		}
		for _, rl := range statusLists {
			for name := range rl {
				apply(name)
			}
		}
	}
	if pod.Spec.Overhead != nil {
		o := u.list(pod.Spec.Overhead, nil)
		own.add(&o)
	}
	own.setMax(&totals)
	return own
}

// podQuantitiesExact reports whether every quantity the request math reads
// is a whole number of its public unit, so the fast integer path gives the
// same result as summing exact quantities.
func podQuantitiesExact(pod *v1.Pod) bool {
	ok := func(rl v1.ResourceList) bool {
		for name, q := range rl {
			if !exactInUnit(name, q) {
				return false
			}
		}
		return true
	}
	for _, cs := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if !ok(cs[i].Resources.Requests) {
				return false
			}
		}
	}
	for _, ss := range [][]v1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range ss {
			if !ok(ss[i].AllocatedResources) || (ss[i].Resources != nil && !ok(ss[i].Resources.Requests)) {
				return false
			}
		}
	}
	if pod.Spec.Resources != nil && !ok(pod.Spec.Resources.Requests) {
		return false
	}
	if pod.Status.Resources != nil && !ok(pod.Status.Resources.Requests) {
		return false
	}
	return ok(pod.Status.AllocatedResources) && ok(pod.Spec.Overhead)
}

// checkPodQuantities returns an error naming the first negative quantity.
func checkPodQuantities(pod *v1.Pod) error {
	check := func(field string, rl v1.ResourceList) error {
		for name, q := range rl {
			if q.Sign() < 0 {
				return fmt.Errorf("pod %s/%s: %s[%s]=%s: %w", pod.Namespace, pod.Name, field, name, q.String(), ErrNegativeQuantity)
			}
		}
		return nil
	}
	// requirements checks r's requests and limits (field prefix +
	// ".requests" or ".limits"). Limits are checked though no request
	// formula reads them: the API server refuses a negative limit too
	// (ValidateResourceRequirements), so such a pod can only come from a
	// hand-written file.
	requirements := func(prefix string, r *v1.ResourceRequirements) error {
		if err := check(prefix+".requests", r.Requests); err != nil {
			return err
		}
		return check(prefix+".limits", r.Limits)
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if err := requirements("spec.containers["+c.Name+"].resources", &c.Resources); err != nil {
			return err
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if err := requirements("spec.initContainers["+c.Name+"].resources", &c.Resources); err != nil {
			return err
		}
	}
	if pod.Spec.Resources != nil {
		if err := requirements("spec.resources", pod.Spec.Resources); err != nil {
			return err
		}
	}
	if err := check("spec.overhead", pod.Spec.Overhead); err != nil {
		return err
	}
	for _, ss := range [][]v1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range ss {
			if err := check("status.containerStatuses["+ss[i].Name+"].allocatedResources", ss[i].AllocatedResources); err != nil {
				return err
			}
			if ss[i].Resources != nil {
				if err := check("status.containerStatuses["+ss[i].Name+"].resources.requests", ss[i].Resources.Requests); err != nil {
					return err
				}
			}
		}
	}
	if err := check("status.allocatedResources", pod.Status.AllocatedResources); err != nil {
		return err
	}
	if pod.Status.Resources != nil {
		return check("status.resources.requests", pod.Status.Resources.Requests)
	}
	return nil
}

// PodRequests holds the three request vectors the scheduler derives from a
// pod. Compute it with [ComputePodRequests].
type PodRequests struct {
	// Requested is the pod's effective request, upstream's
	// resourcehelper.PodRequests as the scheduler calls it for the pods
	// of a node (sidecars, init peaks, pod-level resources, overhead,
	// in-place resize status), with one deliberate difference: the
	// overhead is counted once.
	//
	// The overhead rule. The kubelet writes the pod-level status maps
	// (InPlacePodLevelResourcesVerticalScaling, beta and on since v1.36)
	// as totals that include spec.overhead: status.allocatedResources is
	// resourcehelper.PodRequests of the admitted pod with the overhead
	// added, and status.resources.requests is read back from the pod
	// cgroup, which holds the overhead (or, before the pod runs, the same
	// PodRequests) — kubernetes v1.37.2 pkg/kubelet/kubelet_pods.go
	// generateAPIPodStatus and convertToAPIPodLevelResourcesStatus. The
	// container statuses (allocatedResources, resources) never include it.
	// So, per resource: request = max(spec + overhead, container statuses
	// + overhead, status.allocatedResources, status.resources.requests),
	// the pod-level maps being read when upstream reads them (both maps
	// set for the container sums; status.resources set for pod-level
	// requests). A pod without those maps, or without overhead, gets
	// exactly upstream's value. Upstream adds the overhead to the whole
	// maximum and so counts it twice once the kubelet has reported
	// (container 1000m, overhead 250m, status maps 1250m: upstream 1500m,
	// here 1250m; kubernetes/kubernetes#139627).
	Requested Vector
	// Pending is the request of the pod as a pod not yet bound, what the
	// fit filter checks: upstream's NodeResourcesFit PreFilter
	// (kube-scheduler v1.37.2 noderesources/fit.go
	// computePodResourceRequest) reads the spec alone — no container or
	// pod status, no resize condition, "pod hasn't scheduled yet" — with
	// pod-level requests and overhead. Equal to Requested for a pod
	// without status resources or resize condition.
	Pending Vector
	// NonZeroMilliCPU and NonZeroMemory are what the pod adds to
	// NodeInfo.NonZeroRequested: the request with a missing container cpu
	// (memory) request counted as 100m (200 MiB), only where neither the
	// containers nor the pod level name cpu (memory) when pod-level
	// requests are set. Source: kube-scheduler v1.37
	// pkg/scheduler/framework/types.go CalculateResource and
	// getNonMissingContainerRequests.
	NonZeroMilliCPU, NonZeroMemory int64
	// Scoring is the pod side of upstream's resource-allocation scorers
	// with non-zero defaults: Requested, except that cpu and memory are
	// computed with every container's missing cpu / memory request
	// defaulted to 100m / 200 MiB before pod-level requests override.
	// Source: kube-scheduler v1.37 noderesources/resource_allocation.go
	// calculatePodResourceRequest with its feature flags on. Note that
	// v1.37.2 builds the NodeResourcesFit scoring strategies without those
	// flags, so for a pod with pod-level requests or resize status their
	// pod side differs; package score reproduces that exactly.
	Scoring Vector
}

// ComputePodRequests derives a pod's requests. Quantities beyond int64
// saturate; a negative quantity is an error naming the pod and field
// (wrapping [ErrNegativeQuantity]). O(containers × resources). A pod of
// regular containers alone whose quantities are whole numbers of their
// unit (milli-CPU, bytes, counts) — most pods — takes one pass over its
// requests and allocates only the extended-resource parts of the vectors
// (nothing when it requests base resources alone); any other pod takes
// the general formula, which allocates a few small vectors.
func ComputePodRequests(pod *v1.Pod) (PodRequests, error) {
	if r, ok := containerPodRequests(pod); ok {
		return r, nil
	}
	return computePodRequests(pod)
}

// containerPodRequests is ComputePodRequests, in one pass over the
// requests, for the common shape it handles (ok): regular containers alone
// — no init containers (so no sidecars), no spec.overhead, no
// spec.resources, no resize status ([resname.HasResizeStatus]: no status
// resources, no PodResizePending condition) — whose requests are all
// non-negative and whole numbers of their public unit (milli-CPU, bytes,
// counts), and whose limits are non-negative. For such a pod every term of the general formula is the sum of
// the containers' requests: Requested and Pending are that sum, the
// non-zero and scoring cpu and memory the sum with a container's missing
// cpu (memory) key counted as 100m (200 MiB). Any other pod (ok false) is
// left to computePodRequests, which also names a negative quantity.
// TestContainerPodRequestsMatchesGeneral and FuzzContainerPodRequests
// check it against computePodRequests. O(containers × resources); one
// conversion per quantity; allocates only extended-resource vectors.
func containerPodRequests(pod *v1.Pod) (PodRequests, bool) {
	if len(pod.Spec.InitContainers) != 0 || len(pod.Spec.Overhead) != 0 || pod.Spec.Resources != nil || resname.HasResizeStatus(pod) {
		return PodRequests{}, false
	}
	var sum Vector
	var nzCPU, nzMem int64
	for i := range pod.Spec.Containers {
		for _, q := range pod.Spec.Containers[i].Resources.Limits {
			if q.Sign() < 0 {
				return PodRequests{}, false // computePodRequests names it
			}
		}
		var has uint8
		for name, q := range pod.Spec.Containers[i].Resources.Requests {
			s := resource.Scale(0)
			if name == v1.ResourceCPU {
				s = resource.Milli
			}
			// Scaled rounds away from zero: x < 0 exactly when q < 0.
			x, exact := quantity.Scaled(q, s)
			if x < 0 || !exact {
				return PodRequests{}, false
			}
			id, ok := Intern(name)
			if !ok {
				continue
			}
			switch id {
			case CPU:
				has |= hasCPU
				nzCPU = arith.Add(nzCPU, x)
			case Memory:
				has |= hasMem
				nzMem = arith.Add(nzMem, x)
			}
			sum.Set(id, arith.Add(sum.Get(id), x))
		}
		if has&hasCPU == 0 {
			nzCPU = arith.Add(nzCPU, resname.DefaultMilliCPURequest)
		}
		if has&hasMem == 0 {
			nzMem = arith.Add(nzMem, resname.DefaultMemoryRequest)
		}
	}
	scoring := sum.Clone()
	scoring.Set(CPU, nzCPU)
	scoring.Set(Memory, nzMem)
	return PodRequests{Requested: sum, Pending: sum.Clone(), NonZeroMilliCPU: nzCPU, NonZeroMemory: nzMem, Scoring: scoring}, true
}

// computePodRequests is ComputePodRequests for every pod: the general
// formula, each term computed in turn.
func computePodRequests(pod *v1.Pod) (PodRequests, error) {
	if err := checkPodQuantities(pod); err != nil {
		return PodRequests{}, err
	}
	u := &exactUnits
	if !podQuantitiesExact(pod) {
		u = &fineUnits
	}
	defaults := amounts{has: hasCPU | hasMem}
	defaults.v.Set(CPU, u.cpu(*resource.NewMilliQuantity(resname.DefaultMilliCPURequest, resource.DecimalSI)))
	defaults.v.Set(Memory, u.other(*resource.NewQuantity(resname.DefaultMemoryRequest, resource.BinarySI)))

	plain := u.podRequests(pod, true, nil)
	nonZero := amounts{v: plain.v.Clone(), has: plain.has}
	if resname.IsPodLevelRequestsSet(pod) {
		nm := amounts{}
		if plain.has&hasCPU == 0 {
			nm.has |= hasCPU
			nm.v.Set(CPU, defaults.v.Get(CPU))
		}
		if plain.has&hasMem == 0 {
			nm.has |= hasMem
			nm.v.Set(Memory, defaults.v.Get(Memory))
		}
		if nm.has != 0 {
			nonZero = u.podRequests(pod, true, &nm)
		}
	} else {
		nonZero = u.podRequests(pod, true, &defaults)
	}
	scoring := u.podRequests(pod, true, &defaults)
	var pending amounts
	if resname.HasResizeStatus(pod) {
		pending = u.podRequests(pod, false, nil)
		u.finish(&pending)
	}

	u.finish(&plain)
	u.finish(&nonZero)
	u.finish(&scoring)
	sv := plain.v.Clone()
	sv.Set(CPU, scoring.v.Get(CPU))
	sv.Set(Memory, scoring.v.Get(Memory))
	if !resname.HasResizeStatus(pod) {
		pending.v = plain.v.Clone()
	}
	return PodRequests{
		Requested:       plain.v,
		Pending:         pending.v,
		NonZeroMilliCPU: nonZero.v.Get(CPU),
		NonZeroMemory:   nonZero.v.Get(Memory),
		Scoring:         sv,
	}, nil
}
