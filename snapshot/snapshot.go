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
	view
}

// Empty returns a snapshot with no nodes.
func Empty() *Snapshot { return &Snapshot{view{st: state{tok: newToken()}}} }

// Fork opens a mutable copy-on-write view of s; s itself is unchanged.
// O(1), one small allocation. Any number of goroutines may fork one
// snapshot at once, each using its own Fork.
func (s *Snapshot) Fork() *Fork {
	f := &Fork{view: view{st: s.st}}
	f.st.tok = newToken()
	return f
}

// view holds the node readers [Snapshot] and [Fork] share: one
// implementation, promoted to both (for a Fork they read the current
// layer).
type view struct {
	st state
}

// NumNodes returns the number of nodes; O(1).
func (s *view) NumNodes() int { return s.st.n }

// DeviceDecoder returns the decoder the state reads devices with: the
// Cache's ([NewCacheWithDevices]), [NvidiaDevices] by default. Parse pods
// that join the state with it ([DecodePodInfo]). O(1).
func (s *view) DeviceDecoder() DeviceDecoder { return s.st.decoder() }

// Node returns node i, 0 <= i < NumNodes(); O(1), allocates nothing. It
// panics if i is out of range, like a slice index.
func (s *view) Node(i int) *NodeInfo {
	if uint(i) >= uint(s.st.n) {
		panic("snapshot: node index out of range")
	}
	return s.st.node(i)
}

// Index returns the index of the node called name; O(1), allocates nothing.
func (s *view) Index(name string) (int, bool) { return s.st.index(name) }

// Get returns the node called name, or nil; O(1), allocates nothing.
func (s *view) Get(name string) *NodeInfo {
	i, ok := s.st.index(name)
	if !ok {
		return nil
	}
	return s.st.node(i)
}

// Nodes iterates over the nodes in index order: `for i, ni := range
// s.Nodes()`. O(NumNodes()); allocates nothing.
func (s *view) Nodes() iter.Seq2[int, *NodeInfo] {
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

// AppendNodes appends the nodes, in index order (as Nodes and
// Node(i)), to dst and returns the extended slice: the batch form of
// Nodes for a caller that wants every node as a candidate list (a pod
// whose filters all pass every node). It copies a block of up to 64
// node pointers at a time instead of calling a function per node.
// O(NumNodes()); allocates only when dst lacks the capacity. The nodes
// are the state's at the call: a later change to a Fork (a pod added to
// a node, a node updated) may replace a node's *NodeInfo, so a caller
// holding the slice across changes calls again or re-reads Node(i).
func (s *view) AppendNodes(dst []*NodeInfo) []*NodeInfo {
	if s.st.tree == nil {
		return dst
	}
	left := s.st.n
	for _, m := range s.st.tree.mids {
		for _, c := range m.chunks {
			if left == 0 || c == nil {
				return dst
			}
			k := min(left, chunkSize)
			dst = append(dst, c.nodes[:k]...)
			left -= k
		}
	}
	return dst
}

// ImageNumNodes returns how many nodes of the snapshot list the image name
// in node.status.images (upstream ImageStateSummary.NumNodes); O(1).
func (s *view) ImageNumNodes(name string) int {
	c, _ := s.st.images.get(name)
	return int(c)
}
