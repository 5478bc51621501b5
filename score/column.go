package score

import (
	"unsafe"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
)

// column is the fused pair's records ([cpuMemRec], made by makeRec from
// each node's [layout.CPUMemory] line) of the nodes of a Snapshot or
// Fork, in the order of its block view ([nodeview.View]), kept by a
// pooled [Profile.Score] run across calls.
//
// Why: the fused LeastAllocated + BalancedAllocation loop reads one
// 64-byte record per node. The NodeInfos' lines lie one per allocation,
// scattered over the heap (a new page every few nodes): at 15,000 nodes
// about 1 MB of lines spread over ~8 MB, which the loop reads from L3 or
// memory. Here the records are one array the hardware prefetcher
// streams, and the per-node work of a record (two 64-bit divisions for
// its reciprocals) is done once per node change, not once per pod.
//
// Validity: block b's records were copied when the view's BlockVersion(b)
// was vers[b]; a process-wide block version changes whenever one of the
// block's nodes changes or moves (a Fork's in-place changes included), in
// any Cache, Fork or ledger, and equal versions mean the same NodeInfo
// pointers with the same content (layout.View.BlockVersion), so a block
// whose version matches holds exactly what the view's nodes hold now,
// whichever Snapshot or Fork of whichever Cache the call scores. Version
// 0 is never given out: a block not yet copied has vers 0.
type column struct {
	vers []int64     // per block: the BlockVersion its records were made at; 0: none
	recs []cpuMemRec // per view index: the node's record
	ptrs []*snapshot.NodeInfo
	// scalarIn[b] is the number of block b's records (as of vers[b])
	// that the vector loop does not take (see vecBits); scalar is their
	// sum over the view's blocks at the last sync.
	scalarIn []int32
	scalar   int
	// picked[i] is the record located for candidate i by the last
	// locate that walked (candidates not the whole view in order).
	picked []cpuMemRec
}

// sync brings the column up to date with v: O(v.NumBlocks()) version
// reads, plus the records of each block that changed since the last sync
// (O(BlockSize) makeRec each; all of them on the first call). It grows
// its slices to v's size (amortised; the only allocations).
func (c *column) sync(v nodeview.View) {
	n, nb := v.NumNodes(), v.NumBlocks()
	if cap(c.recs) < n {
		recs := make([]cpuMemRec, n, n+n/8)
		ptrs := make([]*snapshot.NodeInfo, n, cap(recs))
		// The whole old arrays: blocks past a smaller view's length keep
		// their versions in vers, so their records must come along.
		copy(recs, c.recs[:cap(c.recs)])
		copy(ptrs, c.ptrs[:cap(c.ptrs)])
		c.recs, c.ptrs = recs, ptrs
	}
	c.recs, c.ptrs = c.recs[:n], c.ptrs[:n]
	for len(c.vers) < nb {
		c.vers = append(c.vers, 0)
		c.scalarIn = append(c.scalarIn, 0)
	}
	c.scalar = 0
	for b := range nb {
		ver := v.BlockVersion(b)
		if c.vers[b] != ver {
			nodes, _ := v.Block(b)
			base := b * layout.BlockSize
			var scalar int32
			for j, nd := range nodes {
				rec := makeRec(nodeview.CPUMemory(nd))
				if vecBits(&rec) >= vecMax {
					scalar++
				}
				c.recs[base+j] = rec
				c.ptrs[base+j] = nd
			}
			c.vers[b], c.scalarIn[b] = ver, scalar
		}
		c.scalar += int(c.scalarIn[b])
	}
}

// locate returns the record of each of nodes (element i is the record of
// nodes[i]), whether every candidate was found, and whether the vector
// loop takes all the records returned (vecBits below vecMax), so that it
// need not look. The whole view in
// order (the common case: a pod scored on every node) costs one
// sequential compare per node and copies nothing. Otherwise it copies
// each candidate's record (64 bytes) as it walks the
// view order once from the start, wrapping: a list that is a subsequence
// of a rotation of the view's order (a cycle's feasible nodes, which
// start at a rotating offset) costs O(len(ptrs) + len(nodes)) pointer
// compares; any other list gives up after two turns (false). A found
// entry is right whatever the order: it is used only where ptrs[j] ==
// nodes[i]. The result is valid until the next sync or locate.
func (c *column) locate(nodes []*snapshot.NodeInfo) (recs []cpuMemRec, found, fast bool) {
	n := len(c.ptrs)
	if n == 0 {
		return nil, false, false
	}
	if len(nodes) == n && sameNodes(nodes, c.ptrs) {
		return c.recs[:n], true, c.scalar == 0
	}
	if cap(c.picked) < len(nodes) {
		c.picked = make([]cpuMemRec, len(nodes))
	}
	picked := c.picked[:len(nodes)]
	ptrs := c.ptrs
	j, budget := 0, 2*n
	var bits uint64
	for i, nd := range nodes {
		for ptrs[j] != nd {
			if j++; j == n {
				j = 0
			}
			if budget--; budget < 0 {
				return nil, false, false
			}
		}
		picked[i] = c.recs[j]
		bits |= vecBits(&c.recs[j])
	}
	return picked, true, bits < vecMax
}

// sameNodes reports whether a and b (of equal length) hold the same
// pointers: a branch-free compare per node, one exit per 64.
func sameNodes(a, b []*snapshot.NodeInfo) bool {
	b = b[:len(a)]
	for start := 0; start < len(a); start += layout.BlockSize {
		end := min(start+layout.BlockSize, len(a))
		var diff uintptr
		for i, p := range a[start:end] {
			diff |= uintptr(unsafe.Pointer(p)) ^ uintptr(unsafe.Pointer(b[start+i]))
		}
		if diff != 0 {
			return false
		}
	}
	return true
}
