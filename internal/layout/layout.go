// Package layout is the memory layout of schedkit's fast paths, shared by
// the packages that read it and hidden from users: a layout change is
// never an API change.
//
// Layer: the bottom. layout imports no schedkit package; snapshot builds
// its NodeInfo and block versions on these types, and the packages above
// (score, framework, reserve, gpushare and the adapters) read them through
// package nodeview.
//
// A snapshot.NodeInfo starts with a [Head]: its first two cache lines,
// [CPUMemory] (what the cpu/memory scorers read) and [FilterBlock] (what
// the built-in filters read), so that a scan over many nodes that needs
// only those touches one or two lines per node. The head repeats figures
// the NodeInfo's public accessors hold; snapshot refreshes it on every
// change of the node.
//
// Snapshots and Forks number their nodes in blocks of [BlockSize]; a
// [View] gives the block versions a cache of per-node results (framework's
// equivalence cache) revalidates instead of every node.
package layout

import (
	"unique"

	v1 "k8s.io/api/core/v1"
)

// Head is the first 128 bytes of every snapshot.NodeInfo: two cache lines
// at offset 0 (snapshot pins this with a test), read through
// nodeview.Head. Read-only outside package snapshot.
type Head struct {
	CPUMemory   CPUMemory
	FilterBlock FilterBlock
}

// CPUMemory is a node's cpu and memory figures in one 64-byte block:
// index 0 is CPU (milli-CPU), index 1 is Memory (bytes). It repeats what
// the NodeInfo's Allocatable, Requested and NonZeroRequested hold, so that
// a scan over many nodes that needs only cpu and memory (LeastAllocated,
// MostAllocated, BalancedAllocation) touches one cache line per node.
type CPUMemory struct {
	Allocatable      [2]int64
	Requested        [2]int64
	NonZeroRequested [2]int64
	// Balance is upstream BalancedAllocation's balancedResourceScore of
	// the node alone for cpu and memory (kube-scheduler v1.37
	// noderesources/balanced_allocation.go): with f = min(1,
	// float64(Requested)/float64(Allocatable)) per resource (0 where
	// Allocatable <= 0), int64((1 − |(f_cpu − f_mem)/2|) × 100), bit for
	// bit; in [50, 100]. It is computed once per change, so that the
	// node's half of BalancedAllocation costs a pod nothing.
	Balance int64
	// Hostname is the value of the node's kubernetes.io/hostname label
	// as its interned handle (unique.Make of the value, as the node's
	// Labels hold it); the zero handle when the node has no such label.
	// It fills the line's last word because every node scan reads this
	// line: InterPodAffinity's filter and score find a node's domain for
	// a hostname term (the usual topology key of pod anti-affinity) here
	// instead of scanning the node's labels, one or two cache lines more.
	Hostname unique.Handle[string] // the block is one 64-byte cache line
}

// HostnameKey and ZoneKey are the handles of the kubernetes.io/hostname
// and topology.kubernetes.io/zone label keys, whose values a node's Head
// holds (Head.Value).
var (
	HostnameKey = unique.Make(v1.LabelHostname)
	ZoneKey     = unique.Make(v1.LabelTopologyZone)
)

// InHead reports whether a node's Head holds its value of label key
// (HostnameKey or ZoneKey). O(1).
func InHead(key unique.Handle[string]) bool { return key == HostnameKey || key == ZoneKey }

// Value returns the node's value of label key from h when h holds it
// (inHead, see InHead): CPUMemory.Hostname for HostnameKey,
// FilterBlock.Zone for ZoneKey, ok false when the node has no such label
// (the zero handle). For any other key inHead is false and the value is
// in the node's labels only. O(1): reads one of the head's two lines.
func (h *Head) Value(key unique.Handle[string]) (v unique.Handle[string], ok, inHead bool) {
	switch key {
	case HostnameKey:
		v = h.CPUMemory.Hostname
	case ZoneKey:
		v = h.FilterBlock.Zone
	default:
		return v, false, false
	}
	return v, v != unique.Handle[string]{}, true
}

// InlineScalars is the number of scalar resources whose amounts
// [FilterBlock] repeats: the snapshot ResourceIDs Pods+1 ..
// Pods+InlineScalars, the first scalar resources the process interned
// (normally those of the first node parsed, e.g. nvidia.com/gpu or
// alibabacloud.com/gpu-milli).
const InlineScalars = 2

// FilterBlock is the per-node figures the built-in filters read, in the
// 64-byte block right after [CPUMemory] (the node's second cache line),
// so that filtering a node that passes touches two cache lines: pod
// counts, the first [InlineScalars] scalar resources, the node's zone, a
// summary of the GPU devices, and the unschedulable and taint flags.
type FilterBlock struct {
	// AllowedPods is Allocatable().AllowedPodNumber(), at most
	// math.MaxInt32 (a larger allowance saturates: NumPods, also an
	// int32, can never reach it, so the pod-count check is unchanged).
	AllowedPods int32
	// NumPods is NumPods().
	NumPods int32
	// ScalarAllocatable[i] and ScalarRequested[i] are Allocatable and
	// Requested of ResourceID Pods+1+i, in the resource's unit.
	ScalarAllocatable, ScalarRequested [InlineScalars]int64
	// Zone is the value of the node's topology.kubernetes.io/zone label
	// as its interned handle (as the node's Labels hold it); the zero
	// handle when the node has no such label (an empty value is the
	// handle of ""). PodTopologySpread's filter finds a node's domain for
	// a zone constraint (the usual one, and one of the system defaults)
	// here instead of in the node's labels, one or two cache lines more;
	// CPUMemory.Hostname is the hostname's.
	Zone unique.Handle[string]
	// GPUModel identifies the model of the node's devices (all devices of
	// a node have one model): GPUModelID of its name; 0 when the
	// node has no devices.
	GPUModel int32
	// GPUFree holds the free milli-GPU of the node's freest devices (up to
	// len(GPUFree) of them), in descending order, each clamped to
	// [0, 65535], zero-filled; with a request m in [1, 65535] milli-GPU,
	// GPUFree[k-1] >= m says that at least k devices have m free.
	GPUFree [4]uint16
	// NumDevices is len(Devices()).
	NumDevices uint8
	// Unschedulable is Unschedulable().
	Unschedulable bool
	// NoScheduleTaints reports a NoSchedule or NoExecute taint among
	// Taints() (the only effects filters check).
	NoScheduleTaints bool
	_                byte // the block is one 64-byte cache line
}

// BlockSize is the number of consecutive nodes of a Snapshot or Fork that
// share one block version ([View.BlockVersion]).
const BlockSize = 64

// View is the block structure of a snapshot.Snapshot or snapshot.Fork
// (N is snapshot.NodeInfo), for caches of per-node results. Get one with
// nodeview.ViewOf.
type View[N any] interface {
	// NumNodes is the number of nodes.
	NumNodes() int
	// NumBlocks is ⌈NumNodes()/BlockSize⌉.
	NumBlocks() int
	// BlockVersion returns the version of block b, the nodes
	// b×BlockSize up to (b+1)×BlockSize−1 (fewer in the last block): a
	// process-wide unique number that changes whenever one of those nodes
	// changes or is moved, in any Cache, Fork or ledger. Two equal
	// versions, read from any snapshots or forks, mean the block holds
	// the same NodeInfo pointers with the same content. A Fork's Revert
	// restores the versions of the layer below. 0 <= b < NumBlocks(),
	// else it panics. O(1), allocates nothing.
	BlockVersion(b int) int64
	// Block returns views of block b: its nodes (node b×BlockSize+j is
	// nodes[j]) and their versions — versions[j] changes whenever node j
	// of the block changes (a pod added or removed, the node updated,
	// another node moved into its index), with the same meaning of
	// equality as BlockVersion. Both slices have the block's length, must
	// not be modified, and are valid until the next change of a Fork (for
	// a Snapshot: as long as it). 0 <= b < NumBlocks(), else it panics.
	// O(1), allocates nothing.
	Block(b int) (nodes []*N, versions []int64)
	// NodeSetVersion is a process-wide unique number that changes
	// whenever a node is added, removed or updated (node object
	// replaced), but not when pods are added or removed: while it is
	// unchanged, NumNodes(), every node's index and the image counts are
	// too. O(1).
	NodeSetVersion() int64
}

// ViewOf returns the [View] of c (as an any holding a View[NodeInfo]) when
// c is a non-nil *snapshot.Snapshot or *snapshot.Fork — exactly those: a
// type embedding one may change what nodes it shows — and nil otherwise.
// Package snapshot sets it in its init, which runs before that of any
// package importing snapshot, and nothing changes it afterwards: it is a
// function, holds no state, and couples nothing. Call it through
// nodeview.ViewOf, which gives the View its type.
var ViewOf func(c any) any
