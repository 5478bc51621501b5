package snapshot

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Fork is a mutable copy-on-write view of a [Snapshot] for what-if
// simulation: add and remove nodes and pods, score against the result, then
// keep or discard the changes. Forks nest: [Fork.Fork] opens a layer,
// [Fork.Commit] folds the top layer into the one below, [Fork.Revert]
// discards it. The snapshot the Fork came from never changes. Changes
// made at the base (depth 0, straight after [Snapshot.Fork]) cannot be
// reverted: open a layer first, or drop the Fork. A Fork does not
// schedule: AddPod and AddPodInfo place a pod on the node named, whatever
// the filters say (a framework.Scheduler's SchedulePod method and package
// whatif choose nodes).
//
// Cost: Fork O(1); Revert O(copies the layer made); Commit O(1) (both
// cheaper than the O(nodes changed) the cluster-autoscaler contract
// allows); the first change to a node in a layer copies that node's
// NodeInfo, its 64-node chunk, the chunk's 64-chunk mid and, once per
// layer, the root (NumNodes()/4096 pointers); later changes to the same node in the same
// layer change it in place; a pod with pod (anti-)affinity terms, or one
// that a term some pod holds matches, also copies a leaf of the
// InterPodAffinity index's small map of term groups (or of views) per
// group it changes, whose totals take a layer's first two values'
// changes beside their trie; a third value folds them in, copying
// O(log) trie nodes, whatever the index's size. Revert keeps the discarded layer's copies and
// the next layers copy into them, so a steady Fork → change → Revert loop
// allocates nothing. Reads have the cost of the same reads on a Snapshot.
//
// NodeInfos read from a Fork are valid while the layer they were read in
// is open: a later change to the same node in the same layer changes them
// in place, and after Revert their memory may be reused for other nodes
// (as upstream's scheduler reuses its snapshot's NodeInfos between
// cycles). Take [Fork.Snapshot] for values that must outlive the layer.
//
// A Fork is not safe for concurrent use; [Fork.Snapshot] hands out an
// immutable view that is.
type Fork struct {
	view  // the current layer
	stack []state
	rec   recycler
}

// Depth is the number of open layers above the base (0 after
// [Snapshot.Fork]).
func (f *Fork) Depth() int { return len(f.stack) }

// Fork opens a nested layer; O(1).
func (f *Fork) Fork() {
	f.stack = append(f.stack, f.st)
	f.st.tok = newToken()
	f.st.rec = &f.rec
	f.rec.open()
}

// Revert discards every change since the matching [Fork.Fork], keeping
// the layer's copies for reuse; O(copies the layer made), no allocation.
// NodeInfos read in the discarded layer must not be used afterwards. It
// returns [ErrNoFork] at depth 0.
func (f *Fork) Revert() error {
	if len(f.stack) == 0 {
		return ErrNoFork
	}
	f.st = f.stack[len(f.stack)-1]
	f.st.rec = &f.rec
	f.stack[len(f.stack)-1] = state{}
	f.stack = f.stack[:len(f.stack)-1]
	f.rec.revert()
	return nil
}

// Commit keeps the changes of the top layer in the layer below; O(1) for
// a nested layer. Committing the outermost layer (back to depth 0) drops
// the log of copies kept for Revert's reuse: O(copies logged since the
// last [Fork.Snapshot]), no allocation. It returns [ErrNoFork] at depth 0.
func (f *Fork) Commit() error {
	if len(f.stack) == 0 {
		return ErrNoFork
	}
	f.stack[len(f.stack)-1] = state{}
	f.stack = f.stack[:len(f.stack)-1]
	f.rec.commit()
	return nil
}

// Snapshot returns an immutable snapshot of the fork's current content;
// O(depth + copies logged since the last Snapshot or depth-0 Commit), as it
// renews the layers' tokens and drops the copy log (the snapshot shares
// those copies). Later changes to the fork do not show in it.
func (f *Fork) Snapshot() *Snapshot {
	// Outer layers may own objects the snapshot shares; after a Revert
	// they would change them in place, so they get new tokens too.
	for i := range f.stack {
		f.stack[i].tok = newToken()
	}
	f.rec.forget() // the snapshot shares the copies made so far
	return &Snapshot{view{st: f.st.freeze()}}
}

// AddNode adds a node with the given pods (whose spec.nodeName is
// ignored). It fails, changing nothing, if a node of that name exists, the
// node or a pod is invalid, or a pod key repeats.
func (f *Fork) AddNode(node *v1.Node, pods ...*v1.Pod) error {
	pis := make([]*PodInfo, 0, len(pods))
	for _, p := range pods {
		pi, err := DecodePodInfo(p, f.st.decoder())
		if err != nil {
			return err
		}
		pis = append(pis, pi)
	}
	return f.AddNodeInfo(node, pis...)
}

// AddNodeInfo is AddNode with pre-parsed pods.
func (f *Fork) AddNodeInfo(node *v1.Node, pods ...*PodInfo) error {
	ni, err := newNodeInfo(node, f.st.decoder())
	if err != nil {
		return err
	}
	if _, ok := f.st.index(node.Name); ok {
		return fmt.Errorf("node %q: %w", node.Name, ErrNodeExists)
	}
	for i, p := range pods {
		if p == nil {
			return fmt.Errorf("node %s: pods[%d] is nil: %w", node.Name, i, ErrInvalidObject)
		}
		if ni.podIndexHash(p.keyHash, p.key) >= 0 {
			return fmt.Errorf("pod %s on node %s: %w", p.key, node.Name, ErrPodExists)
		}
		ni.addPod(p)
	}
	f.st.appendNode(ni)
	return nil
}

// UpdateNode replaces the node object of an existing node (allocatable,
// labels, taints, images, devices), keeping its pods; the devices the pods
// record are charged to the new devices. node is kept, not copied: do not
// change it afterwards (see [NodeInfo.Node]).
//
// Errors, which change nothing: node nil, or its metadata.name empty or
// not a valid node name ([ErrInvalidObject]); no node of that name in the
// fork ([ErrNodeNotFound], naming the node); a status.allocatable that
// does not parse (naming the node and the field).
//
// O(pods on the node + labels + images): the node is copied and the
// object re-read; when its labels change and the fork has pods with
// (anti-)affinity terms or affinity views, the node's pods also leave and
// rejoin the affinity index (O(pods on the node × terms)). Allocates the
// copy and what the object gives it (label array, image map, devices).
func (f *Fork) UpdateNode(node *v1.Node) error {
	if node == nil {
		return fmt.Errorf("node is nil: %w", ErrInvalidObject)
	}
	i, err := f.st.nodeOrErr(node.Name)
	if err != nil {
		return err
	}
	fresh := f.st.node(i).clone(f.st.tok)
	if err := fresh.setNode(node, f.st.decoder()); err != nil {
		return err
	}
	f.st.replaceNode(i, fresh)
	return nil
}

// RemoveNode removes the node called name and its pods; the last node
// takes its index (the order of [Snapshot.Nodes] changes).
//
// Errors, which change nothing: no such node ([ErrNodeNotFound], naming
// the node).
//
// O(images on the node) for the image counts, plus, when the fork has pods
// with (anti-)affinity terms or affinity views, O(pods on the node ×
// terms) for the affinity index; the node tree and the name table copy
// only the paths this layer does not own yet (O(log nodes) each, and the
// only allocations).
func (f *Fork) RemoveNode(name string) error {
	i, err := f.st.nodeOrErr(name)
	if err != nil {
		return err
	}
	f.st.removeAt(i)
	return nil
}

// AddPod binds pod to the node called nodeName (pod.spec.nodeName is not
// read). It fails, changing nothing, for an unknown node, an invalid pod or
// a pod already on that node. O(pods on the node). A pod recording a GPU
// device the node does not have is charged to none of its devices (as
// after an UpdateNode that removes devices); the Cache and the Ledger
// reject such a pod when its node is known.
//
// A Fork does not index pods across nodes (as cluster-autoscaler's
// ClusterSnapshot does not): adding a pod that is on another node counts it
// on both. To move a pod, RemovePod it from its node first; a
// reserve.Ledger or a [Cache] tracks pods by key and moves them.
func (f *Fork) AddPod(pod *v1.Pod, nodeName string) error {
	pi, err := DecodePodInfo(pod, f.st.decoder())
	if err != nil {
		return err
	}
	return f.AddPodInfo(pi, nodeName)
}

// AddPodInfo is AddPod with a pre-parsed pod; it allocates only when the
// node is first changed in this layer.
func (f *Fork) AddPodInfo(pi *PodInfo, nodeName string) error {
	if pi == nil {
		return fmt.Errorf("pod is nil: %w", ErrInvalidObject)
	}
	i, err := f.st.nodeOrErr(nodeName)
	if err != nil {
		return fmt.Errorf("pod %s: %w", pi.key, err)
	}
	if f.st.node(i).podIndexHash(pi.keyHash, pi.key) >= 0 {
		return fmt.Errorf("pod %s on node %s: %w", pi.key, nodeName, ErrPodExists)
	}
	ni := f.st.mutable(i, pi)
	ni.addPod(pi)
	f.st.affPod(ni, pi, 1)
	return nil
}

// RemovePod removes the pod with key k from the node called nodeName
// (releasing its requests, host ports and recorded devices).
//
// Errors, which change nothing: no node called nodeName
// ([ErrNodeNotFound]) or no pod with key k on it ([ErrPodNotFound]); both
// name the pod and the node.
//
// O(pods on the node + the pod's host ports × the node's used ports), plus
// the affinity index's update when the pod has (anti-)affinity terms or the
// fork has affinity views. It allocates only when the node is first
// changed in this layer (the node is copied: O(pods on the node)).
func (f *Fork) RemovePod(k PodKey, nodeName string) error {
	i, err := f.st.nodeOrErr(nodeName)
	if err != nil {
		return fmt.Errorf("pod %s: %w", k, err)
	}
	h := hashKey(k) // once, for the check and the removal
	old := f.st.node(i)
	j := old.podIndexHash(h, k)
	if j < 0 {
		return fmt.Errorf("pod %s on node %s: %w", k, nodeName, ErrPodNotFound)
	}
	ni := f.st.mutable(i, old.pods[j])
	f.st.affPod(ni, ni.removePodHash(h, k), -1)
	return nil
}
