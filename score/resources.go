package score

import (
	"fmt"
	"github.com/schedkit/schedkit/internal/resname"
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/snapshot"
)

// ResourceSpec names a resource a resource scorer looks at and its weight
// (upstream config.ResourceSpec).
type ResourceSpec struct {
	// Name is the resource: cpu, memory, ephemeral-storage, or a scalar
	// resource (nvidia.com/gpu, hugepages-2Mi, ...). Other names ("pods",
	// names the scheduler does not count) are accepted and never scored, as
	// upstream never finds them in a node's allocatable.
	Name v1.ResourceName `json:"name"`
	// Weight in [1, 100]; 0 means 1 (upstream's v1 defaulting).
	Weight int64 `json:"weight,omitempty"`
}

// DefaultResources is upstream's default resource list for NodeResourcesFit
// and BalancedAllocation: cpu and memory, weight 1 each (kube-scheduler
// v1.37 pkg/scheduler/apis/config/v1/defaults.go defaultResourceSpec).
func DefaultResources() []ResourceSpec {
	return []ResourceSpec{{Name: v1.ResourceCPU, Weight: 1}, {Name: v1.ResourceMemory, Weight: 1}}
}

// resKind says where the node side of a resource comes from.
type resKind uint8

const (
	kindNever  resKind = iota // never found in allocatable (pods, unknown names)
	kindCPU                   // cpu
	kindMemory                // memory
	kindOther                 // ephemeral-storage: node side always Requested
	kindScalar                // scalar: skipped when the pod does not request it
)

// resource is a validated ResourceSpec.
type resource struct {
	name   v1.ResourceName
	id     snapshot.ResourceID
	kind   resKind
	weight int64
}

// compileResources validates specs (empty: DefaultResources) with
// upstream's rules for NodeResourcesFitArgs (weight in (0, 100] after 0→1
// defaulting) and interns scalar names. who names the scorer in errors.
func compileResources(who string, specs []ResourceSpec, unique bool) ([]resource, error) {
	if len(specs) == 0 {
		specs = DefaultResources()
	}
	out := make([]resource, 0, len(specs))
	seen := map[v1.ResourceName]bool{}
	for i, s := range specs {
		w := s.Weight
		if w == 0 {
			w = 1
		}
		if w < 0 || w > 100 {
			return nil, fmt.Errorf("score: %s: resources[%d].weight: %d for %s not in [1, 100]: %w", who, i, s.Weight, s.Name, ErrInvalidConfig)
		}
		if s.Name == "" {
			return nil, fmt.Errorf("score: %s: resources[%d].name is empty: %w", who, i, ErrInvalidConfig)
		}
		if unique && seen[s.Name] {
			return nil, fmt.Errorf("score: %s: resources[%d].name: %s appears twice: %w", who, i, s.Name, ErrInvalidConfig)
		}
		seen[s.Name] = true
		r := resource{name: s.Name, weight: w, kind: kindNever}
		switch s.Name {
		case v1.ResourceCPU:
			r.id, r.kind = snapshot.CPU, kindCPU
		case v1.ResourceMemory:
			r.id, r.kind = snapshot.Memory, kindMemory
		case v1.ResourceEphemeralStorage:
			r.id, r.kind = snapshot.EphemeralStorage, kindOther
		default:
			if resname.IsScalarResourceName(s.Name) {
				if id, ok := snapshot.Intern(s.Name); ok {
					r.id, r.kind = id, kindScalar
				}
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// podRes is one resource as a prepared pod sees it.
type podRes struct {
	id      snapshot.ResourceID
	kind    resKind
	weight  int64
	podReq  int64
	nonZero bool // node side from NonZeroRequested (cpu, memory in NodeResourcesFit)
}

// prepareResources applies upstream's per-pod rules
// (noderesources/resource_allocation.go calculateNodeAllocatableRequest): a
// scalar resource the pod does not request, and a resource never found in
// allocatable, are dropped. scoring selects the pod side: true for
// NodeResourcesFit ([fitScoringRequests]; node side NonZeroRequested for
// cpu and memory), false for BalancedAllocation (real requests,
// [snapshot.PodInfo.Requested], on both sides). It also reports whether
// every configured resource's pod request is 0 (upstream isBestEffortPod,
// before dropping).
func prepareResources(rs []resource, pod *snapshot.PodInfo, scoring bool) (out []podRes, bestEffort bool) {
	req := pod.Requested()
	if scoring {
		req = fitScoringRequests(pod)
	}
	out = make([]podRes, 0, len(rs))
	bestEffort = true
	for _, r := range rs {
		var q int64
		if r.kind != kindNever {
			q = req.Get(r.id)
		} else if !scoring {
			// A name the snapshot does not count still has a pod-side
			// request upstream; it only matters for isBestEffortPod, and
			// such names are never in a node's allocatable.
			q = unknownRequest(pod, r.name)
		}
		if q != 0 {
			bestEffort = false
		}
		if r.kind == kindNever || (r.kind == kindScalar && q == 0) {
			continue
		}
		out = append(out, podRes{
			id: r.id, kind: r.kind, weight: r.weight, podReq: q,
			nonZero: scoring && (r.kind == kindCPU || r.kind == kindMemory),
		})
	}
	return out, bestEffort
}

// fitScoringRequests is the pod side of upstream's NodeResourcesFit
// scoring strategies. kube-scheduler v1.37.2 builds their
// resourceAllocationScorer (noderesources/fit.go
// nodeResourceStrategyTypeMap) without the feature flags, so
// calculatePodResourceRequest runs resourcehelper.PodRequests with
// SkipPodLevelResources and without UseStatusResources: the containers'
// spec requests (missing cpu/memory counted as 100m/200Mi, the
// init-container and sidecar rules) plus overhead, ignoring pod-level
// requests and in-place-resize status. That is
// [snapshot.PodRequests].Scoring of the pod with spec.resources and the
// status removed; for the usual pod, which has neither, it is Scoring
// itself and nothing is recomputed. Allocates only in the rare case.
func fitScoringRequests(pod *snapshot.PodInfo) *snapshot.Vector {
	p := pod.Pod()
	if !resname.IsPodLevelRequestsSet(p) && !resname.HasResizeStatus(p) {
		return &pod.Requests().Scoring
	}
	cp := *p
	cp.Spec.Resources = nil
	cp.Status = v1.PodStatus{}
	r, err := snapshot.ComputePodRequests(&cp)
	if err != nil { // cannot happen: the same quantities parsed in NewPodInfo
		return &pod.Requests().Scoring
	}
	return &r.Scoring
}

// unknownRequest is whether the pod's containers name the resource at all
// (1) or not (0), for resources the snapshot does not count. Only its
// non-zeroness is used.
func unknownRequest(pod *snapshot.PodInfo, name v1.ResourceName) int64 {
	spec := &pod.Pod().Spec
	for _, cs := range [][]v1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			if q, ok := cs[i].Resources.Requests[name]; ok && !q.IsZero() {
				return 1
			}
		}
	}
	if q, ok := spec.Overhead[name]; ok && !q.IsZero() {
		return 1
	}
	return 0
}

// nodeAmounts returns the node's allocatable and already-requested amount of
// r (upstream calculateResourceAllocatableRequest).
func nodeAmounts(n *snapshot.NodeInfo, r *podRes) (alloc, used int64) {
	alloc = n.Allocatable().Get(r.id)
	if r.nonZero {
		used = n.NonZeroRequested().Get(r.id)
	} else {
		used = n.Requested().Get(r.id)
	}
	return alloc, used
}

// isCPUMem reports whether rs is exactly cpu then memory (or memory then
// cpu) with the same node-side rule, the layout the fast paths handle.
func isCPUMem(rs []podRes) (cpu, mem *podRes, ok bool) {
	if len(rs) != 2 || rs[0].nonZero != rs[1].nonZero {
		return nil, nil, false
	}
	switch {
	case rs[0].kind == kindCPU && rs[1].kind == kindMemory:
		return &rs[0], &rs[1], true
	case rs[0].kind == kindMemory && rs[1].kind == kindCPU:
		return &rs[1], &rs[0], true
	}
	return nil, nil, false
}

// maxSafe is the largest amount x with x*MaxScore not overflowing.
const maxSafe = math.MaxInt64 / 100 // untyped: compares with int64 and uint64

// leastRequestedScore is upstream's leastRequestedScore
// (noderesources/least_allocated.go) for requested = used + podReq:
// (capacity-requested)*MaxScore/capacity, 0 when requested > capacity;
// capacity > 0, used and podReq >= 0. Exact also where upstream's sum or
// product would overflow.
func leastRequestedScore(used, podReq, capacity int64) int64 {
	if uint64(capacity-1) < maxSafe {
		return leastFast(used, podReq, capacity)
	}
	return leastSlow(used, podReq, capacity)
}

// leastFast is leastRequestedScore for 1 <= capacity <= maxSafe: the sum
// of two non-negative int64 fits in uint64, and the product cannot
// overflow. Unsigned division has no MinInt64/-1 fix-up. Small enough to
// inline into the per-node loops.
func leastFast(used, podReq, capacity int64) int64 {
	r := uint64(used) + uint64(podReq)
	if r > uint64(capacity) {
		return 0
	}
	return int64((uint64(capacity) - r) * uint64(MaxScore) / uint64(capacity))
}

func leastSlow(used, podReq, capacity int64) int64 {
	requested := arith.Add(used, podReq)
	if capacity <= 0 || uint64(requested) > uint64(capacity) {
		return 0
	}
	return mulDiv(capacity-requested, MaxScore, capacity)
}

// mostRequestedScore is upstream's mostRequestedScore
// (noderesources/most_allocated.go) for requested = used + podReq:
// min(requested, capacity)*MaxScore/capacity; capacity > 0.
func mostRequestedScore(used, podReq, capacity int64) int64 {
	if uint64(capacity-1) < maxSafe {
		return mostFast(used, podReq, capacity)
	}
	return mostSlow(used, podReq, capacity)
}

// mostFast is mostRequestedScore for 1 <= capacity <= maxSafe.
func mostFast(used, podReq, capacity int64) int64 {
	r := min(uint64(used)+uint64(podReq), uint64(capacity))
	return int64(r * uint64(MaxScore) / uint64(capacity))
}

func mostSlow(used, podReq, capacity int64) int64 {
	requested := min(arith.Add(used, podReq), capacity)
	if capacity <= 0 || requested <= 0 {
		return 0
	}
	return mulDiv(requested, MaxScore, capacity)
}

// explainResources formats the node-side numbers of rs for Explainers:
// "cpu 3000/4000 memory 5000/10000" with f giving each resource's part.
func explainResources(rs []podRes, n *snapshot.NodeInfo, f func(r *podRes, alloc, used int64) string) string {
	var b strings.Builder
	for i := range rs {
		r := &rs[i]
		alloc, used := nodeAmounts(n, r)
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(resourceLabel(r.id))
		b.WriteByte(' ')
		if alloc <= 0 {
			b.WriteString("skipped (allocatable 0)")
			continue
		}
		b.WriteString(f(r, alloc, used))
	}
	return b.String()
}

func resourceLabel(id snapshot.ResourceID) string { return string(id.Name()) }

// requestedResources is the pod side of the beyond-upstream scorers: the
// configured resources the pod requests (real requests,
// [snapshot.PodInfo.Requested]), node side [snapshot.NodeInfo.Requested].
func requestedResources(rs []resource, pod *snapshot.PodInfo) []podRes {
	req := pod.Requested()
	var out []podRes
	for _, r := range rs {
		if r.kind == kindNever {
			continue
		}
		if q := req.Get(r.id); q > 0 {
			out = append(out, podRes{id: r.id, kind: r.kind, weight: r.weight, podReq: q})
		}
	}
	return out
}
