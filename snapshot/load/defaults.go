package load

import (
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/internal/quantity"
	"github.com/schedkit/schedkit/internal/resname"
)

// The API server's defaults for the fields scheduling reads, applied to
// every Pod and Node the loader reads (after validation, so an invalid
// object is reported as written). The rules are those of
// k8s.io/kubernetes@v1.37.2 pkg/apis/core/v1/defaults.go (SetDefaults_Pod,
// SetDefaults_NodeStatus) and pkg/api/pod DefaultPodLevelResources;
// examples/kube-scheduler/parity TestLoaderDefaultsMatchUpstream runs
// upstream's SetObjectDefaults_Pod, SetObjectDefaults_Node and
// DefaultPodLevelResources against them.

// defaultPod gives each container and init container (not ephemeral
// containers, which upstream does not default) a request equal to its
// limit for every resource that has a limit and no request; requests
// already given are kept, even when zero. O(containers × resources); it
// allocates only a Requests map where there was none and a key is missing
// from it, and only a copy of the limit's quantity per defaulted key.
//
// Then the pod-level defaults (podLevelDefaults).
func defaultPod(p *v1.Pod) {
	for i := range p.Spec.Containers {
		defaultRequests(&p.Spec.Containers[i].Resources)
	}
	for i := range p.Spec.InitContainers {
		defaultRequests(&p.Spec.InitContainers[i].Resources)
	}
	podLevelDefaults(p)
}

// podLevelDefaults applies the API server's defaults to pod-level
// resources (spec.resources) that name any request or limit, as v1.37.2
// does when it creates the pod under the default feature gates
// (PodLevelResources and PodLevelResourcesFixDefaulting on:
// pkg/registry/core/pod strategy PrepareForCreate calls pkg/api/pod
// DefaultPodLevelResources), for what scheduling reads, the pod-level
// requests:
//
//  1. a hugepages-* limit the pod does not name, as limit or request,
//     defaults to the containers' aggregate limit of it;
//  2. a cpu or memory request the pod does not name defaults to the
//     containers' aggregate request of it (component-helpers
//     AggregateContainerRequests: the containers' sum, restartable init
//     containers included, or the largest init container's need if more);
//  3. a cpu, memory or hugepages-* request still missing defaults to the
//     pod-level limit of it.
//
// Upstream's third step (pod-level limits from container limits) is left
// out: no scheduling plugin reads pod-level limits. Ephemeral containers
// do not count, as upstream. Sums are exact (resource.Quantity.Add), except
// that a sum with a term beyond int64 milli-units is that term (scheduling
// reads both as math.MaxInt64). O(containers × resources).
func podLevelDefaults(p *v1.Pod) {
	r := p.Spec.Resources
	if r == nil || len(r.Requests) == 0 && len(r.Limits) == 0 {
		return
	}
	lims := r.Limits
	if lims == nil {
		lims = v1.ResourceList{}
	}
	for name, q := range aggregate(p, func(c *v1.Container) v1.ResourceList { return c.Resources.Limits }) {
		if !strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix) {
			continue
		}
		if _, req := r.Requests[name]; req {
			continue
		}
		if _, ok := lims[name]; !ok {
			lims[name] = q
		}
	}
	if len(lims) > 0 {
		r.Limits = lims
	}
	reqs := r.Requests
	if reqs == nil {
		reqs = v1.ResourceList{}
	}
	for name, q := range aggregate(p, func(c *v1.Container) v1.ResourceList { return c.Resources.Requests }) {
		if _, ok := reqs[name]; !ok && resname.IsPodLevelResource(name) && resname.IsOvercommitAllowed(name) {
			reqs[name] = q
		}
	}
	for name, q := range r.Limits {
		if _, ok := reqs[name]; !ok && resname.IsPodLevelResource(name) {
			reqs[name] = q.DeepCopy()
		}
	}
	if len(reqs) > 0 {
		r.Requests = reqs
	}
}

// aggregate is component-helpers' aggregateContainerResourcesByFn for
// the spec (no status, no DRA): the sum over containers and restartable
// init containers, raised per resource to what any init container needs
// (its own list plus the restartable init containers before it).
func aggregate(p *v1.Pod, list func(*v1.Container) v1.ResourceList) v1.ResourceList {
	out := v1.ResourceList{}
	for i := range p.Spec.Containers {
		addList(out, list(&p.Spec.Containers[i]))
	}
	sidecars, inits := v1.ResourceList{}, v1.ResourceList{}
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		need := v1.ResourceList{}
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			addList(out, list(c))
			addList(sidecars, list(c))
			addList(need, sidecars)
		} else {
			addList(need, list(c))
			addList(need, sidecars)
		}
		maxList(inits, need)
	}
	maxList(out, inits)
	return out
}

// addList adds add to sum, resource by resource, each term rounded up to
// milli-units first, as the API server's decoding rounds every quantity
// (SetDefaults_ResourceList) before it aggregates them (see
// podLevelDefaults for sums beyond int64 milli-units).
func addList(sum, add v1.ResourceList) {
	for name, q := range add {
		q = milliUp(q)
		v, ok := sum[name]
		switch {
		case !ok:
			sum[name] = q
		case quantity.Milli(v) == math.MaxInt64:
		case quantity.Milli(q) == math.MaxInt64:
			sum[name] = q
		default:
			v.Add(q)
			sum[name] = v
		}
	}
}

// maxList raises each resource of m to its value in o when o's is larger.
func maxList(m, o v1.ResourceList) {
	for name, q := range o {
		if v, ok := m[name]; !ok || quantity.Cmp(q, v) > 0 {
			m[name] = q.DeepCopy()
		}
	}
}

// milliUp is q rounded up to milli-units, in q's format; a quantity
// beyond int64 milli-units is returned as it is (a copy).
func milliUp(q resource.Quantity) resource.Quantity {
	m, exact := quantity.Scaled(q, resource.Milli)
	if exact || m == math.MaxInt64 {
		return q.DeepCopy()
	}
	return *resource.NewMilliQuantity(m, q.Format)
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

// defaultReplicationController is the API server's defaulting of what
// scheduling reads from a ReplicationController
// (SetDefaults_ReplicationController): with template labels, an empty
// spec.selector becomes them (the selector upstream's system default
// spreading and the expansion read), and so do empty labels. The
// template's map is shared, as upstream shares it. O(1).
func defaultReplicationController(rc *v1.ReplicationController) {
	if rc.Spec.Template == nil || rc.Spec.Template.Labels == nil {
		return
	}
	if len(rc.Spec.Selector) == 0 {
		rc.Spec.Selector = rc.Spec.Template.Labels
	}
	if len(rc.Labels) == 0 {
		rc.Labels = rc.Spec.Template.Labels
	}
}
