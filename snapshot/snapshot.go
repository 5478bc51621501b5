package snapshot

import "iter"

// Snapshot is an immutable view of a cluster's nodes and the pods bound to
// them, taken from a [Cache] or a [Fork]. It never changes after it is made,
// so any number of goroutines may read it without locks.
//
// Nodes are numbered 0..NumNodes()-1. The numbering is stable for the
// snapshot's lifetime; a later snapshot keeps it, except that removing a
// node moves the last node into the removed node's index.
//
// Layout: nodes sit in chunks of 64 pointers, 64 chunks to a mid, so
// [Snapshot.Node] is three indexed loads and a full scan touches
// NumNodes()/64 chunk headers. Each
// NodeInfo keeps its cpu, memory, ephemeral-storage and pods amounts inline.
type Snapshot struct {
	st state
}

// Empty returns a snapshot with no nodes.
func Empty() *Snapshot { return &Snapshot{st: state{tok: newToken()}} }

// NumNodes returns the number of nodes; O(1).
func (s *Snapshot) NumNodes() int { return s.st.n }

// Node returns node i, 0 <= i < NumNodes(); O(1), allocates nothing. It
// panics if i is out of range, like a slice index.
func (s *Snapshot) Node(i int) *NodeInfo {
	if uint(i) >= uint(s.st.n) {
		panic("snapshot: node index out of range")
	}
	return s.st.node(i)
}

// Index returns the index of the node called name; O(1), allocates nothing.
func (s *Snapshot) Index(name string) (int, bool) { return s.st.index(name) }

// Get returns the node called name, or nil; O(1), allocates nothing.
func (s *Snapshot) Get(name string) *NodeInfo {
	i, ok := s.st.index(name)
	if !ok {
		return nil
	}
	return s.st.node(i)
}

// Nodes iterates over the nodes in index order: `for i, ni := range
// s.Nodes()`. O(NumNodes()); allocates nothing.
func (s *Snapshot) Nodes() iter.Seq2[int, *NodeInfo] {
	return func(yield func(int, *NodeInfo) bool) {
		if s.st.tree == nil {
			return
		}
		i := 0
		for _, m := range s.st.tree.mids {
			for _, c := range m.chunks {
				if c == nil {
					return
				}
				for _, ni := range c.nodes {
					if i == s.st.n {
						return
					}
					if !yield(i, ni) {
						return
					}
					i++
				}
			}
		}
	}
}

// BlockSize is the number of consecutive nodes that share one
// [Snapshot.BlockVersion].
const BlockSize = chunkSize

// NumBlocks returns the number of node blocks, ⌈NumNodes()/BlockSize⌉.
func (s *Snapshot) NumBlocks() int { return (s.st.n + BlockSize - 1) / BlockSize }

// BlockVersion returns the version of block b, the nodes b×BlockSize up to
// (b+1)×BlockSize−1 (fewer in the last block): a process-wide unique number
// that changes whenever one of those nodes changes or is moved, in any
// Cache, Fork or ledger. Two equal versions, read from any snapshots or
// forks, mean the block holds the same NodeInfo pointers with the same
// content — so a cache of per-node results (framework's equivalence
// cache) revalidates NumNodes()/64 numbers instead of every node. Within
// a changed block, the per-node versions of [Snapshot.Block] tell which
// nodes changed. 0 <= b < NumBlocks(); it panics otherwise. O(1),
// allocates nothing.
func (s *Snapshot) BlockVersion(b int) int64 {
	if uint(b) >= uint(s.NumBlocks()) {
		panic("snapshot: block index out of range")
	}
	return s.st.blockVersion(b)
}

// Block returns views of block b: its nodes (node b×BlockSize+j is
// nodes[j]) and their versions — versions[j] is a process-wide unique
// number that changes whenever node j of the block changes (a pod added
// or removed, the node updated, another node moved into its index by
// RemoveNode), in any Cache, Fork or ledger; two equal versions, read
// from any snapshots or forks, mean the same NodeInfo with the same
// content. Both slices have the block's length (BlockSize, fewer in the
// last block), must not be modified, and are valid for as long as the
// snapshot. For caches of per-node results: a changed
// [Snapshot.BlockVersion] leads to 64 contiguous versions rather than 64
// NodeInfos. 0 <= b < NumBlocks(), else it panics. O(1), allocates
// nothing.
func (s *Snapshot) Block(b int) (nodes []*NodeInfo, versions []int64) { return s.st.block(b) }

// NodeSetVersion returns a process-wide unique number that changes
// whenever a node is added, removed or updated (node object replaced), but
// not when pods are added or removed: while it is unchanged, NumNodes(),
// every node's index and ImageNumNodes are too. O(1).
func (s *Snapshot) NodeSetVersion() int64 { return s.st.nodeSet }

// ImageNumNodes returns how many nodes of the snapshot list the image name
// in node.status.images (upstream ImageStateSummary.NumNodes); O(1).
func (s *Snapshot) ImageNumNodes(name string) int {
	c, _ := s.st.images.get(name)
	return int(c)
}

// Fork opens a mutable copy-on-write view of s; s itself is unchanged.
// O(1), one small allocation.
func (s *Snapshot) Fork() *Fork {
	f := &Fork{cur: s.st}
	f.cur.tok = newToken()
	return f
}
