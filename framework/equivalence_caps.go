package framework

import (
	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/fit"
	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
)

// Block capacities: what every class of the equivalence cache may learn
// about a block of layout.BlockSize nodes without filtering its nodes.
// A class refreshing a block (equivalence.go's refreshBlock: a block it
// has never seen, or nodes that changed since it looked) first asks
// whether one of its checks fails on every node of the block: the pod
// needs more cpu, memory or pod slots than the freest node has free, no
// node is schedulable, or no node has as many devices of an allowed
// model with the pod's milli-GPU free. If so, every node of the block is
// infeasible for the class and none is filtered.
//
// The capacities are the block's maxima of per-node amounts (free cpu,
// memory and pod slots as fit's rule computes them, the FilterBlock's
// GPUFree, a mask of device models), kept once per Scheduler and shared
// by every class: a node is read again only when its version moves, the
// block's maxima are redone over its 64 records when its version moves.
// So a class's first look at a full block costs a few comparisons
// instead of 64 filter calls, each a NodeInfo the class has not touched.
//
// Exactness: each test is a necessary condition of the filter it stands
// for (the same arithmetic: fit.Short and fit.TooManyPods on the
// saturated difference; GPUDevices' FilterBlock test), so a block is
// rejected only when the filter itself rejects every node of it;
// otherwise the nodes are filtered as before.

// blockCaps is the capacities of a block, or of one node (a block of
// one): free cpu, memory and pod slots as arith.Sub(allocatable,
// requested), the FilterBlock's GPUFree, each the maximum over the
// nodes; the model mask and flags over them.
type blockCaps struct {
	cpu, memory, pods int64
	gpuFree           [4]uint16 // over the nodes with devices
	models            uint64    // bit model%64 of each node with devices
	devices           bool      // a node has devices
	deviceless        bool      // a node has none
	schedulable       bool      // a node is not unschedulable
}

// capsTable is a Scheduler's block capacities for one node set: per
// block the version they are for (0: none), per node its record and the
// node version it is for.
//
// It is also the Scheduler's record of when each node last changed, so
// that a class needs no node versions of its own: the table's clock
// ticks each time block reads a block whose node versions moved, and
// moved[i] is the tick at which node i's version was last seen to move.
// A class that refreshed block b when the clock read c holds results for
// exactly the node versions the table held then; node i of b has changed
// since if and only if moved[i] > c. (If its version moved, the table
// saw it move — at the class's next read of the block at the latest — at
// a tick after c; if it did not, no read after c saw it move, because
// the version the table holds equals the one it held at c. Versions that
// come back after a Fork's Revert are moves like any other.) The clock
// never goes back, also when a new node set restarts the table, so a
// restart makes every node count as moved.
type capsTable struct {
	nodeSet int64
	n       int
	ver     []int64
	blocks  []blockCaps
	nver    []int64
	nodes   []blockCaps // per node, its own
	moved   []uint64    // per node, the tick its version last moved at
	clock   uint64      // the last tick
}

// block returns block b's capacities in vc and its nodes' own (the
// table's, valid until the next call), brought up to date: O(1) when the
// block has not changed, else the changed nodes read (every node the
// first time), their moved ticks set, and O(BlockSize) maxima. A new
// node set restarts the table.
func (t *capsTable) block(vc nodeview.View, b int) (*blockCaps, []blockCaps) {
	if ns, n := vc.NodeSetVersion(), vc.NumNodes(); ns != t.nodeSet || n != t.n || len(t.ver) == 0 {
		nb := vc.NumBlocks()
		t.nodeSet, t.n = ns, n
		t.ver, t.blocks = resize(t.ver, nb), resize(t.blocks, nb)
		t.nver, t.nodes = resize(t.nver, n), resize(t.nodes, n)
		t.moved = resize(t.moved, n)
		clear(t.ver)
	}
	v := vc.BlockVersion(b)
	bc := &t.blocks[b]
	nodes, vers := vc.Block(b)
	lo := b * layout.BlockSize
	recs, seen := t.nodes[lo:lo+len(vers)], t.nver[lo:lo+len(vers)]
	if t.ver[b] == v {
		return bc, recs
	}
	all := t.ver[b] == 0
	t.clock++
	moved := t.moved[lo : lo+len(vers)]
	for j, nv := range vers {
		if all || seen[j] != nv {
			recs[j], seen[j], moved[j] = capsOf(nodes[j]), nv, t.clock
		}
	}
	*bc = blockCaps{cpu: minInt64, memory: minInt64, pods: minInt64}
	for j := range recs {
		r := &recs[j]
		bc.cpu, bc.memory, bc.pods = max(bc.cpu, r.cpu), max(bc.memory, r.memory), max(bc.pods, r.pods)
		bc.schedulable = bc.schedulable || r.schedulable
		bc.deviceless = bc.deviceless || r.deviceless
		bc.devices = bc.devices || r.devices
		bc.models |= r.models
		for k := range bc.gpuFree {
			bc.gpuFree[k] = max(bc.gpuFree[k], r.gpuFree[k])
		}
	}
	t.ver[b] = v
	return bc, recs
}

const minInt64 = -1 << 63

// capsOf returns node ni's own capacities.
func capsOf(ni *snapshot.NodeInfo) blockCaps {
	cm, fb := nodeview.CPUMemory(ni), nodeview.FilterBlock(ni)
	c := blockCaps{
		cpu:         arith.Sub(cm.Allocatable[0], cm.Requested[0]),
		memory:      arith.Sub(cm.Allocatable[1], cm.Requested[1]),
		pods:        arith.Sub(int64(fb.AllowedPods), int64(fb.NumPods)),
		schedulable: !fb.Unschedulable,
		deviceless:  fb.NumDevices == 0,
	}
	if fb.NumDevices > 0 {
		c.devices, c.gpuFree, c.models = true, fb.GPUFree, 1<<(uint32(fb.GPUModel)%64)
	}
	return c
}

// blockNeed is what a class's prepared filters demand of a node, in the
// terms of blockCaps; the zero value rejects nothing.
type blockNeed struct {
	active        bool // some test below applies
	unschedulable bool // NodeUnschedulable: the pod does not tolerate it
	fit           bool // NodeResourcesFit: pods, and cpu and memory if > 0
	cpu, memory   int64
	gpu           bool // GPUDevices with a test below
	gpuSlot       int  // index into GPUFree: min(devices, 4) − 1
	milliGPU      int64
	constrained   bool   // the pod names models; models is their mask
	models        uint64 // bit id%64 of each allowed model some node has
	deviceless    bool   // a node without devices may pass (nvidia.com/gpu scalar path)
}

// needOf reads the demand of the prepared filters pfs (after fuse): the
// first of each kind among NodeUnschedulable, NodeResourcesFit and
// GPUDevices, fused or not. O(filters).
func needOf(pfs []PodFilter) blockNeed {
	var nd blockNeed
	var fitF *fitFilter
	var gpuF *gpuFilter
	for _, pf := range pfs {
		switch f := pf.(type) {
		case *fusedFilter:
			nd.unschedulable = nd.unschedulable || f.unschedulable
			if fitF == nil {
				fitF = f.fit
			}
			if gpuF == nil {
				gpuF = f.gpu
			}
		case unschedulableFilter:
			nd.unschedulable = true
		case *fitFilter:
			if fitF == nil {
				fitF = f
			}
		case *gpuFilter:
			if gpuF == nil {
				gpuF = f
			}
		}
	}
	if fitF != nil {
		nd.fit, nd.cpu, nd.memory = true, fitF.cpu, fitF.memory
	}
	// GPUDevices' FilterBlock test holds for a request of at most 65535
	// milli-GPU: at least k devices with m free means GPUFree[min(k,4)-1]
	// >= m (the freest four, clamped).
	if gpuF != nil && gpuF.t.GPUCount >= 1 && gpuF.t.MilliGPU >= 1 && gpuF.t.MilliGPU <= 1<<16-1 {
		nd.gpu = true
		nd.gpuSlot = min(gpuF.t.GPUCount, 4) - 1
		nd.milliGPU = gpuF.t.MilliGPU
		nd.constrained = gpuF.constrained
		for _, id := range gpuF.models {
			nd.models |= 1 << (uint32(id) % 64)
		}
		nd.deviceless = gpuF.nvidia != snapshot.NoResource
	}
	nd.active = nd.unschedulable || nd.fit || nd.gpu
	return nd
}

// rejects reports whether one of nd's filters fails on every node of a
// block with capacities bc (on the node, for a node's own). O(1).
func (nd *blockNeed) rejects(bc *blockCaps) bool {
	if nd.unschedulable && !bc.schedulable {
		return true
	}
	if nd.fit && (fit.TooManyPods(0, bc.pods) || fit.Short(nd.cpu, bc.cpu, 0) || fit.Short(nd.memory, bc.memory, 0)) {
		return true
	}
	if nd.gpu {
		devicePass := bc.devices && (!nd.constrained || nd.models&bc.models != 0) &&
			int64(bc.gpuFree[nd.gpuSlot]) >= nd.milliGPU
		if !devicePass && !(nd.deviceless && bc.deviceless) {
			return true
		}
	}
	return false
}
