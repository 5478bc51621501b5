package framework

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/schedkit/schedkit/internal/fit"
	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/resname"
	"github.com/schedkit/schedkit/snapshot"
)

var _ Filter = (*nodeResourcesFitPlugin)(nil)

// nodeResourcesFitPlugin is the filter [NewNodeResourcesFit] returns.
type nodeResourcesFitPlugin struct {
	// IgnoredResources are extended resources not checked
	// ("example.com/foo"); upstream NodeResourcesFitArgs.ignoredResources.
	IgnoredResources []string
	// IgnoredResourceGroups are prefixes of extended resources not checked
	// ("example.com" ignores example.com/*); upstream
	// NodeResourcesFitArgs.ignoredResourceGroups.
	IgnoredResourceGroups []string
}

// NewNodeResourcesFit returns the NodeResourcesFit filter ignoring the
// extended resources ignoredResources ("example.com/foo"; upstream
// NodeResourcesFitArgs.ignoredResources) and the resource groups
// ignoredResourceGroups ("example.com" ignores example.com/*;
// ignoredResourceGroups); nil for both is upstream's default. The
// arguments are checked as upstream's ValidateNodeResourcesFitArgs (every
// ignored resource and group a qualified name, groups without '/');
// errors wrap [ErrInvalidConfig]. The filter keeps both slices.
//
// NodeResourcesFit is upstream's NodeResourcesFit filter (kube-scheduler
// v1.37 noderesources/fit.go fitsRequest): a node fits when
//
//   - pods on the node + 1 <= allocatable pods ("Too many pods"), and
//   - for cpu, memory, ephemeral-storage and every scalar resource
//     (hugepages-*, extended resources, ...) the pod requests (request > 0):
//     request <= allocatable − requested ("Insufficient <name>").
//
// The arithmetic is the one fit check the ledger uses too
// (internal/fit); a failed resource is reported as a
// [snapshot.Insufficient] inside the [Reason].
//
// The pod's request is the request of a pod not yet bound
// ([snapshot.PodRequests].Pending: init containers, sidecars, overhead,
// pod-level resources, from the spec alone), as upstream's PreFilter
// computes it: a pending pod's status.resources or resize condition does
// not change it. The nodes' Requested count their pods with the
// status-aware request ([snapshot.PodRequests].Requested), as upstream's
// NodeInfo does. A failed
// resource is Unresolvable when the request exceeds the node's whole
// allocatable (no preemption can help). Every failed resource is reported,
// in the order pods, cpu, memory, ephemeral-storage, then scalar resources
// by [snapshot.ResourceID] (upstream iterates a map: random order).
//
// Not modelled: DRA-backed extended resources (upstream skips a resource
// with no allocatable that a DeviceClass maps; with no DeviceClasses it
// checks it, as here) and the in-place-resize delta for a pod already
// bound to the node.
//
// NewNodeResourcesFit(nil, nil) is the upstream default (nothing
// ignored). Safe for concurrent use.
func NewNodeResourcesFit(ignoredResources, ignoredResourceGroups []string) (Filter, error) {
	f := &nodeResourcesFitPlugin{IgnoredResources: ignoredResources, IgnoredResourceGroups: ignoredResourceGroups}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// Name returns "NodeResourcesFit".
func (*nodeResourcesFitPlugin) Name() string { return nodeResourcesFitName }

// Validate checks the arguments as upstream's ValidateNodeResourcesFitArgs:
// every ignored resource and group is a qualified name, and groups contain
// no '/'. Errors wrap [ErrInvalidConfig].
func (f *nodeResourcesFitPlugin) Validate() error {
	for i, r := range f.IgnoredResources {
		if msgs := validation.IsQualifiedName(r); len(msgs) > 0 {
			return fmt.Errorf("NodeResourcesFit: ignoredResources[%d] %q: %s: %w", i, r, strings.Join(msgs, "; "), ErrInvalidConfig)
		}
	}
	for i, g := range f.IgnoredResourceGroups {
		if strings.Contains(g, "/") {
			return fmt.Errorf("NodeResourcesFit: ignoredResourceGroups[%d] %q: resource group name can't contain '/': %w", i, g, ErrInvalidConfig)
		}
		if msgs := validation.IsQualifiedName(g); len(msgs) > 0 {
			return fmt.Errorf("NodeResourcesFit: ignoredResourceGroups[%d] %q: %s: %w", i, g, strings.Join(msgs, "; "), ErrInvalidConfig)
		}
	}
	return nil
}

func (f *nodeResourcesFitPlugin) ignored(r snapshot.ResourceID) bool {
	if len(f.IgnoredResources) == 0 && len(f.IgnoredResourceGroups) == 0 {
		return false
	}
	name := string(r.Name())
	if !resname.IsExtendedResourceName(v1.ResourceName(name)) {
		return false
	}
	if slices.Contains(f.IgnoredResources, name) {
		return true
	}
	group, _, _ := strings.Cut(name, "/")
	return slices.Contains(f.IgnoredResourceGroups, group)
}

type scalarRequest struct {
	id     snapshot.ResourceID
	amount int64
}

// fitFilter is NodeResourcesFit prepared for one pod.
type fitFilter struct {
	cpu, memory, ephemeral int64
	scalars                []scalarRequest
}

// PreFilter reads the pod's pending request once; O(resources).
func (f *nodeResourcesFitPlugin) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	req := &pod.Requests().Pending
	c := &fitFilter{cpu: req.MilliCPU(), memory: req.Memory(), ephemeral: req.EphemeralStorage()}
	for r := snapshot.Pods + 1; int(r) < req.Len(); r++ {
		if x := req.Get(r); x > 0 && !f.ignored(r) {
			c.scalars = append(c.scalars, scalarRequest{r, x})
		}
	}
	return PreFilterResult{Filter: c}, nil
}

// Filter checks one node; O(requested resources), allocates nothing. It
// reads the node's CPUMemory and FilterBlock (two cache lines); only
// ephemeral storage and scalar resources beyond the FilterBlock's
// inline ones read the vectors.
func (c *fitFilter) Filter(ni *snapshot.NodeInfo, reasons []Reason) []Reason {
	cm, fb := nodeview.CPUMemory(ni), nodeview.FilterBlock(ni)
	if pods, allowed := int64(fb.NumPods), int64(fb.AllowedPods); fit.TooManyPods(pods, allowed) {
		reasons = append(reasons, insufficientReason(snapshot.Insufficient{Resource: snapshot.Pods, Requested: 1, Used: pods, Capacity: allowed}))
	}
	reasons = checkResource(reasons, snapshot.CPU, c.cpu, cm.Allocatable[0], cm.Requested[0])
	reasons = checkResource(reasons, snapshot.Memory, c.memory, cm.Allocatable[1], cm.Requested[1])
	if c.ephemeral > 0 {
		reasons = checkResource(reasons, snapshot.EphemeralStorage, c.ephemeral, ni.Allocatable().EphemeralStorage(), ni.Requested().EphemeralStorage())
	}
	for _, s := range c.scalars {
		if i := int(s.id - snapshot.Pods - 1); i < layout.InlineScalars {
			reasons = checkResource(reasons, s.id, s.amount, fb.ScalarAllocatable[i], fb.ScalarRequested[i])
		} else {
			reasons = checkResource(reasons, s.id, s.amount, ni.Allocatable().Get(s.id), ni.Requested().Get(s.id))
		}
	}
	return reasons
}

// fitsBlock reports whether the node passes the checks that read only
// its FilterBlock: the pod count and the inline scalar resources.
func (c *fitFilter) fitsBlock(fb *layout.FilterBlock) bool {
	if fit.TooManyPods(int64(fb.NumPods), int64(fb.AllowedPods)) {
		return false
	}
	for _, s := range c.scalars {
		if i := int(s.id - snapshot.Pods - 1); i < layout.InlineScalars && fit.Short(s.amount, fb.ScalarAllocatable[i], fb.ScalarRequested[i]) {
			return false
		}
	}
	return true
}

// fitsRest reports whether the node passes the other checks: cpu and
// memory (CPUMemory), ephemeral storage and scalars past the inline
// ones (the vectors). fitsBlock && fitsRest is Filter appending nothing.
func (c *fitFilter) fitsRest(ni *snapshot.NodeInfo) bool {
	cm := nodeview.CPUMemory(ni)
	if fit.Short(c.cpu, cm.Allocatable[0], cm.Requested[0]) ||
		fit.Short(c.memory, cm.Allocatable[1], cm.Requested[1]) ||
		(c.ephemeral > 0 && fit.Short(c.ephemeral, ni.Allocatable().EphemeralStorage(), ni.Requested().EphemeralStorage())) {
		return false
	}
	for _, s := range c.scalars {
		if int(s.id-snapshot.Pods-1) >= layout.InlineScalars && fit.Short(s.amount, ni.Allocatable().Get(s.id), ni.Requested().Get(s.id)) {
			return false
		}
	}
	return true
}

// checkResource appends the reason for resource r when the pod's request
// does not fit ([fit.Short]).
func checkResource(reasons []Reason, r snapshot.ResourceID, request, capacity, used int64) []Reason {
	if fit.Short(request, capacity, used) {
		reasons = append(reasons, insufficientReason(snapshot.Insufficient{Resource: r, Requested: request, Used: used, Capacity: capacity}))
	}
	return reasons
}
