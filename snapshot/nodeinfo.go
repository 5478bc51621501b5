package snapshot

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"unique"
	"unsafe"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/spread"
)

var generation atomic.Int64

func nextGeneration() int64 { return generation.Add(1) }

// NodeInfo is one node with the pods bound to it and their aggregate
// requests — the scheduler's per-node view (upstream framework.NodeInfo).
//
// A NodeInfo reached through a [Snapshot] never changes: every accessor
// returns data the caller must treat as read-only, valid for as long as the
// caller holds the NodeInfo. Safe for concurrent reads. All accessors are
// O(1) and allocate nothing unless stated.
type NodeInfo struct {
	// head comes first: CPUMemory fills the first cache line (NodeInfo's
	// size is a multiple of 64 bytes, see TestNodeInfoLayout), FilterBlock
	// (what the built-in filters read) the second. Sibling packages read
	// it through internal/nodeview, which relies on its offset 0.
	head layout.Head

	owner uint64 // copy-on-write token of the layer allowed to mutate it

	name string
	// podBloom has two bits set per pod (from its key hash): a key whose
	// bits are not both set is not on the node, and HasPod returns
	// without reading podHashes. It shares a cache line with name, which
	// a look-up by name has just read.
	podBloom [2]uint64
	node     *v1.Node
	// idx holds the per-node indexes of the inter-pod plugins
	// (spread.go), nil for a node that never had a pod: a pointer, so
	// that NodeInfo stays 512 bytes. It and the pods' backing array
	// share the name's line, so that cloneInto can start fetching them
	// as soon as the name check has read it (TestNodeInfoLayout).
	idx         *podIndexes
	pods        []*PodInfo
	allocatable Vector
	requested   Vector
	nonZero     Vector     // only CPU and Memory are used
	podHashes   []uint64   // podHashes[i] is pods[i].keyHash: a contiguous scan for HasPod
	usedPorts   []HostPort // multiset: one entry per pod port
	images      map[string]int64
	generation  int64
	devices     []Device // GPUs, free milli-GPU per device
	// Copied from the node so filters need not dereference it.
	taints []v1.Taint
	// labels points to the first of numLabels labels (see Labels): a
	// slice header would not fit in 512 bytes. numLabels shares labels'
	// cache line, so that Labels reads one line of the NodeInfo, not two
	// (TestNodeInfoLayout): a label
	// reader that scans many nodes (InterPodAffinity's Filter and Score)
	// takes one cache miss fewer per cold node.
	labels    *Label
	numLabels uint32
	_         [12]byte // NodeInfo is 512 bytes (TestNodeInfoLayout)
}

// bloomBits returns the podBloom word and bit mask of a key hash's two
// bits.
func bloomBits(h uint64) (w0, b0, w1, b1 uint64) {
	return (h >> 6) & 1, 1 << (h & 63), (h >> 13) & 1, 1 << ((h >> 7) & 63)
}

func (n *NodeInfo) bloomAdd(h uint64) {
	w0, b0, w1, b1 := bloomBits(h)
	n.podBloom[w0] |= b0
	n.podBloom[w1] |= b1
}

func (n *NodeInfo) bloomMayHave(h uint64) bool {
	w0, b0, w1, b1 := bloomBits(h)
	return n.podBloom[w0]&b0 != 0 && n.podBloom[w1]&b1 != 0
}

// newNodeInfo parses node, its devices with dec. Errors name the node and
// field.
func newNodeInfo(node *v1.Node, dec DeviceDecoder) (*NodeInfo, error) {
	ni := &NodeInfo{}
	if err := ni.setNode(node, dec); err != nil {
		return nil, err
	}
	return ni, nil
}

func (n *NodeInfo) setNode(node *v1.Node, dec DeviceDecoder) error {
	if node == nil {
		return fmt.Errorf("node is nil: %w", ErrInvalidObject)
	}
	if node.Name == "" {
		return fmt.Errorf("node: metadata.name is empty: %w", ErrInvalidObject)
	}
	if err := checkNodeName(node.Name); err != nil {
		return err
	}
	if n.name != "" && n.name != node.Name {
		return fmt.Errorf("node %s: cannot become node %s: %w", n.name, node.Name, ErrInvalidObject)
	}
	alloc, err := NewVector(node.Status.Allocatable)
	if err != nil {
		return fmt.Errorf("node %s: status.allocatable: %w", node.Name, err)
	}
	var images map[string]int64
	if len(node.Status.Images) > 0 {
		images = make(map[string]int64, len(node.Status.Images))
		for _, img := range node.Status.Images {
			for _, name := range img.Names {
				if _, dup := images[name]; !dup {
					images[name] = img.SizeBytes
				}
			}
		}
	}
	devices := dec.NodeDevices(node, &alloc)
	n.node = node
	if n.name == "" {
		// A private copy: allocated next to the other nodes' names
		// rather than inside the node object, so name look-ups over many
		// nodes stay in cache.
		n.name = strings.Clone(node.Name)
	}
	n.taints = node.Spec.Taints
	n.head.FilterBlock.Unschedulable = node.Spec.Unschedulable
	n.head.FilterBlock.NoScheduleTaints = false
	for i := range n.taints {
		if e := n.taints[i].Effect; e == v1.TaintEffectNoSchedule || e == v1.TaintEffectNoExecute {
			n.head.FilterBlock.NoScheduleTaints = true
			break
		}
	}
	n.labels, n.numLabels = nil, 0
	n.head.CPUMemory.Hostname = unique.Handle[string]{}
	n.head.FilterBlock.Zone = unique.Handle[string]{}
	if len(node.Labels) > 0 {
		labels := make([]Label, 0, len(node.Labels))
		for k, v := range node.Labels {
			labels = append(labels, Label{unique.Make(k), unique.Make(v)})
			switch k {
			case v1.LabelHostname:
				n.head.CPUMemory.Hostname = labels[len(labels)-1].Value
			case v1.LabelTopologyZone:
				n.head.FilterBlock.Zone = labels[len(labels)-1].Value
			}
		}
		slices.SortFunc(labels, func(a, b Label) int { return strings.Compare(a.Key.Value(), b.Key.Value()) })
		n.labels, n.numLabels = &labels[0], uint32(len(labels))
	}
	n.head.FilterBlock.GPUModel = 0
	if len(devices) > 0 {
		n.head.FilterBlock.GPUModel = layout.RegisterGPUModel(devices[0].Model)
	}
	n.allocatable = alloc
	n.images = images
	n.devices = devices
	for _, p := range n.pods {
		n.chargeDevices(p, 1)
	}
	n.touch()
	return nil
}

// clone returns a copy that owner may mutate; pods, ports and vectors are
// copied, the node object, images map and PodInfos are shared (immutable).
func (n *NodeInfo) clone(owner uint64) *NodeInfo {
	c := &NodeInfo{}
	n.cloneInto(c, owner, false)
	return c
}

// cloneInto makes c a copy of n that owner may mutate, reusing the memory
// of c's own slices (c must not be shared: a fresh NodeInfo, or one a
// reverted Fork layer made). Allocates only where c's slices are too small.
// With labels, n's labels are fetched early too, for a change whose
// affinity index update reads them next (state.readsLabels).
func (n *NodeInfo) cloneInto(c *NodeInfo, owner uint64, labels bool) {
	// Load a word of n's pod array, of its indexes and (with labels) of
	// its labels first: on a cold node these fetches then overlap with
	// the copy of n instead of following it. KeepAlive keeps the loads.
	// Most changes read no label (a pod without terms that matches no
	// view keyed off the head): fetching them anyway costs such a change
	// a cache miss of its own on a cold node.
	var p0 *PodInfo
	if len(n.pods) > 0 {
		p0 = n.pods[0]
	}
	var g0 *spread.Group
	if n.idx != nil {
		g0 = unsafe.SliceData(n.idx.spreadGroups)
	}
	var l0 Label
	if labels && n.labels != nil {
		l0 = *n.labels
	}
	pods, hashes, ports := c.pods[:0], c.podHashes[:0], c.usedPorts[:0]
	devs, ext := c.devices[:0], c.requested.ext[:0]
	clear(pods[:cap(pods)]) // drop references to pods of the old content
	idx := c.idx
	*c = *n
	n.cloneIndexesInto(c, idx)
	c.owner = owner
	if len(n.requested.ext) > 0 {
		c.requested.ext = append(ext, n.requested.ext...)
	}
	if min(cap(pods), cap(hashes)) < len(n.pods)+1 {
		pods, hashes = newPodSlices(len(n.pods) + 1)
	}
	c.pods = append(pods, n.pods...)
	c.podHashes = append(hashes, n.podHashes...)
	// Always a private copy (nil when empty): a slice emptied by
	// removePod keeps its capacity, and two copies appending to a shared
	// backing array would overwrite each other's ports.
	c.usedPorts = nil
	if len(n.usedPorts) > 0 {
		c.usedPorts = append(ports, n.usedPorts...)
	}
	if len(n.devices) > 0 {
		c.devices = append(devs, n.devices...)
	}
	runtime.KeepAlive(p0)
	runtime.KeepAlive(g0)
	runtime.KeepAlive(l0)
}

// newPodSlices returns empty pods and podHashes slices with room for at
// least n pods (at least 4). Up to 256 pods both lie in one allocation,
// the hashes right after the pod pointers: copying a cold node's pods
// (cloneInto) then reads one page, not two, and adjacent cache lines.
func newPodSlices(n int) ([]*PodInfo, []uint64) {
	switch {
	case n <= 4:
		b := new(struct {
			p [4]*PodInfo
			h [4]uint64
		})
		return b.p[:0], b.h[:0]
	case n <= 8:
		b := new(struct {
			p [8]*PodInfo
			h [8]uint64
		})
		return b.p[:0], b.h[:0]
	case n <= 16:
		b := new(struct {
			p [16]*PodInfo
			h [16]uint64
		})
		return b.p[:0], b.h[:0]
	case n <= 32:
		b := new(struct {
			p [32]*PodInfo
			h [32]uint64
		})
		return b.p[:0], b.h[:0]
	case n <= 64:
		b := new(struct {
			p [64]*PodInfo
			h [64]uint64
		})
		return b.p[:0], b.h[:0]
	case n <= 128:
		b := new(struct {
			p [128]*PodInfo
			h [128]uint64
		})
		return b.p[:0], b.h[:0]
	case n <= 256:
		b := new(struct {
			p [256]*PodInfo
			h [256]uint64
		})
		return b.p[:0], b.h[:0]
	}
	return make([]*PodInfo, 0, n), make([]uint64, 0, n)
}

// newPodIndexes returns empty podIndexes whose spreadGroups have room
// for at least k groups (at least 2); up to 8 groups lie in the same
// allocation, right after the podIndexes: copying a cold node's indexes
// (cloneIndexesInto) then reads adjacent cache lines instead of waiting
// for the groups' address before fetching them.
func newPodIndexes(k int) *podIndexes {
	switch {
	case k <= 2:
		return podIndexesWith[[2]spread.Group]()
	case k <= 4:
		return podIndexesWith[[4]spread.Group]()
	case k <= 8:
		return podIndexesWith[[8]spread.Group]()
	}
	return &podIndexes{spreadGroups: make([]spread.Group, 0, k)}
}

// podIndexesWith returns podIndexes whose spreadGroups are the array A
// (an array of spread.Group) that follows them in one allocation.
func podIndexesWith[A any]() *podIndexes {
	b := new(struct {
		x podIndexes
		g A
	})
	k := unsafe.Sizeof(b.g) / unsafe.Sizeof(spread.Group{})
	b.x.spreadGroups = unsafe.Slice((*spread.Group)(unsafe.Pointer(&b.g)), k)[:0]
	return &b.x
}

func (n *NodeInfo) addPod(p *PodInfo) {
	n.chargeDevices(p, 1)
	if len(n.pods) == cap(n.pods) || len(n.podHashes) == cap(n.podHashes) {
		pods, hashes := newPodSlices(2 * len(n.pods))
		n.pods = append(pods, n.pods...)
		n.podHashes = append(hashes, n.podHashes...)
	}
	n.pods = append(n.pods, p)
	n.podHashes = append(n.podHashes, p.keyHash)
	n.bloomAdd(p.keyHash)
	n.requested.Add(&p.shape.req.Requested)
	n.nonZero.base[CPU] = arith.Add(n.nonZero.base[CPU], p.shape.req.NonZeroMilliCPU)
	n.nonZero.base[Memory] = arith.Add(n.nonZero.base[Memory], p.shape.req.NonZeroMemory)
	n.usedPorts = append(n.usedPorts, p.shape.hostPorts...)
	n.addAffinityPod(p)
	n.addSpreadPod(p)
	n.touch()
}

// touch records a change: a new generation and a fresh head (whose
// FilterBlock's node-level flags setNode sets).
func (n *NodeInfo) touch() {
	n.generation = nextGeneration()
	cm := &n.head.CPUMemory
	for i, r := range [2]ResourceID{CPU, Memory} {
		cm.Allocatable[i] = n.allocatable.base[r]
		cm.Requested[i] = n.requested.base[r]
		cm.NonZeroRequested[i] = n.nonZero.base[r]
	}
	cm.Balance = arith.NodeBalance(cm.Requested, cm.Allocatable)
	fb := &n.head.FilterBlock
	fb.AllowedPods = int32(min(n.allocatable.base[Pods], 1<<31-1))
	fb.NumPods = int32(min(len(n.pods), 1<<31-1))
	for i := range layout.InlineScalars {
		r := Pods + 1 + ResourceID(i)
		fb.ScalarAllocatable[i] = n.allocatable.Get(r)
		fb.ScalarRequested[i] = n.requested.Get(r)
	}
	fb.NumDevices = uint8(len(n.devices))
	fb.GPUFree = [len(fb.GPUFree)]uint16{}
	for _, d := range n.devices {
		// Insert into the descending top list.
		f := uint16(min(max(d.FreeMilliGPU, 0), 1<<16-1))
		for j := range fb.GPUFree {
			if f > fb.GPUFree[j] {
				f, fb.GPUFree[j] = fb.GPUFree[j], f
			}
		}
	}
}

// removePod removes the pod with key k and returns it, or nil.
func (n *NodeInfo) removePod(k PodKey) *PodInfo { return n.removePodHash(hashKey(k), k) }

// removePodHash is removePod with the key's hash known.
func (n *NodeInfo) removePodHash(h uint64, k PodKey) *PodInfo {
	i := n.podIndexHash(h, k)
	if i < 0 {
		return nil
	}
	p := n.pods[i]
	last := len(n.pods) - 1
	n.pods[i] = n.pods[last]
	n.pods[last] = nil
	n.pods = n.pods[:last]
	n.podHashes[i] = n.podHashes[last]
	n.podHashes = n.podHashes[:last]
	n.podBloom = [2]uint64{}
	for _, h := range n.podHashes {
		n.bloomAdd(h)
	}
	n.chargeDevices(p, -1)
	n.requested.Sub(&p.shape.req.Requested)
	n.nonZero.base[CPU] = arith.Sub(n.nonZero.base[CPU], p.shape.req.NonZeroMilliCPU)
	n.nonZero.base[Memory] = arith.Sub(n.nonZero.base[Memory], p.shape.req.NonZeroMemory)
	for _, hp := range p.shape.hostPorts {
		for j, u := range n.usedPorts {
			if u == hp {
				n.usedPorts = append(n.usedPorts[:j], n.usedPorts[j+1:]...)
				break
			}
		}
	}
	n.removeAffinityPod(p)
	n.removeSpreadPod(p)
	n.touch()
	return p
}

func (n *NodeInfo) podIndex(k PodKey) int { return n.podIndexHash(hashKey(k), k) }

// podIndexHash is podIndex with the key's hash known (PodInfo.keyHash).
func (n *NodeInfo) podIndexHash(h uint64, k PodKey) int {
	if !n.bloomMayHave(h) {
		return -1
	}
	for i, ph := range n.podHashes {
		if ph == h && n.pods[i].key == k {
			return i
		}
	}
	return -1
}

// Node returns the node object the NodeInfo was built from: the object
// given to [Cache.AddNode], [Cache.UpdateNode], [Fork.AddNode] or
// [Fork.UpdateNode], not a copy, shared by every snapshot and fork that
// holds this NodeInfo. Read-only; owned by the cache: the NodeInfo read
// its allocatable, labels, taints, images and devices once, so changing
// the object changes what later readers of Node see but none of those,
// leaving the two disagreeing. To change a node, update a copy
// (DeepCopy) and pass it to UpdateNode. O(1).
func (n *NodeInfo) Node() *v1.Node { return n.node }

// Name returns the node's name.
func (n *NodeInfo) Name() string { return n.name }

// Allocatable is the node's status.allocatable: milli-CPU, bytes, pod count,
// scalar resources.
func (n *NodeInfo) Allocatable() *Vector { return &n.allocatable }

// Requested is the sum of the effective requests ([PodRequests.Requested])
// of the pods on the node. It may exceed Allocatable (the kubelet shrank
// allocatable under running pods); use [NodeInfo.Free] for what is left.
func (n *NodeInfo) Requested() *Vector { return &n.requested }

// NonZeroRequested is upstream's NonZeroRequested: the sum of the pods'
// cpu and memory requests with missing container requests counted as
// 100m / 200 MiB ([PodRequests.NonZeroMilliCPU]). Only CPU and Memory are
// set.
func (n *NodeInfo) NonZeroRequested() *Vector { return &n.nonZero }

// Free returns Allocatable minus Requested for r, never below 0.
func (n *NodeInfo) Free(r ResourceID) int64 {
	return max(0, arith.Sub(n.allocatable.Get(r), n.requested.Get(r)))
}

// Pods returns the pods bound to (or held on) the node, in no particular
// order. Read-only; its capacity is its length (appending copies it). A
// NodeInfo read from a [Fork] changes in place with later changes to the
// node in the same layer (see [Fork]): a slice Pods returned before such
// a change may then list pods the node no longer has (a removal moves the
// last pod into the removed one's place) and not those it gained.
func (n *NodeInfo) Pods() []*PodInfo { return n.pods[:len(n.pods):len(n.pods)] }

// NumPods is len(Pods()).
func (n *NodeInfo) NumPods() int { return len(n.pods) }

// HasPod reports whether the pod with key k is on the node; O(pods).
func (n *NodeInfo) HasPod(k PodKey) bool { return n.podIndex(k) >= 0 }

// UsedPorts returns the host ports in use, one entry per pod port (a port
// two pods declare appears twice). Read-only.
func (n *NodeInfo) UsedPorts() []HostPort { return n.usedPorts }

// PortConflict reports whether p collides with a used host port
// ([HostPort.Conflicts]); O(used ports).
func (n *NodeInfo) PortConflict(p HostPort) bool {
	for _, u := range n.usedPorts {
		if u.Conflicts(p) {
			return true
		}
	}
	return false
}

// ImageSize returns the size in bytes of the image named name on this node
// (names as in node.status.images[].names) and whether the node has it.
func (n *NodeInfo) ImageSize(name string) (int64, bool) {
	s, ok := n.images[name]
	return s, ok
}

// NumImages is the number of distinct image names on the node.
func (n *NodeInfo) NumImages() int { return len(n.images) }

// Label is one node label as canonical handles (package unique): two
// labels, keys or values are equal exactly when their handles are, which
// compares pointers without reading the strings. It is an alias of the
// unnamed struct so that the selector engine reads Labels() as it is.
type Label = struct{ Key, Value unique.Handle[string] }

// Labels returns node.metadata.labels as handles, sorted by key: a
// contiguous array to scan instead of the label map (whose look-up reads
// the map's groups and the strings, several cache misses on a cold node).
// Read-only; O(1), no allocation.
func (n *NodeInfo) Labels() []Label {
	if n.labels == nil {
		return nil
	}
	return unsafe.Slice(n.labels, n.numLabels)
}

// labelValue returns the value of the node's label with key handle kh
// (ok false when it has none) as interpod.NodeValue does: from the head
// for the hostname and zone keys (the line a clone or a name look-up has
// just read), else by a scan of the labels (their own allocation, a
// cache miss on a cold node). O(labels), no allocation.
func (n *NodeInfo) labelValue(kh unique.Handle[string]) (unique.Handle[string], bool) {
	return interpod.NodeValue(&n.head, n.Labels(), kh)
}

// Taints returns node.spec.taints. Read-only.
func (n *NodeInfo) Taints() []v1.Taint { return n.taints }

// Unschedulable returns node.spec.unschedulable.
func (n *NodeInfo) Unschedulable() bool { return n.head.FilterBlock.Unschedulable }

// Generation increases (process-wide) every time the node or its pods
// change.
func (n *NodeInfo) Generation() int64 { return n.generation }

// String summarises the node for debugging.
func (n *NodeInfo) String() string {
	return fmt.Sprintf("NodeInfo{%s pods=%d allocatable=[%v] requested=[%v]}", n.name, len(n.pods), n.allocatable, n.requested)
}
