package snapshot

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/internal/informer"
)

// Cache is the event-fed, incrementally maintained cluster state that
// [Snapshot]s are taken from — upstream's scheduler cache without assumed
// pods (see package reserve for those). Feed it informer events; call
// [Cache.Snapshot] once per scheduling cycle.
//
// Informer contract. The Cache takes events under the contract that
// reserve.Ledger also follows, written once in schedkit's
// internal/informertest (whose conformance suite both pass) after upstream
// kube-scheduler v1.37's event handlers and cache: a bound pod
// (spec.nodeName set) counts on its node; an unbound pod is not the
// cache's (AddPod and UpdatePod ignore it once its key is checked, as
// upstream's handlers send it to the scheduling queue), except that an unbound report of a pod the
// cache has bound is an error (spec.nodeName cannot be cleared); a pod in
// phase Succeeded or Failed is gone (removed as by RemovePod, as
// upstream's informer filters such pods out and delivers a delete); a pod
// may arrive before its node (it is kept aside and joins the node when the
// node arrives); removing a node that still has pods keeps the pods aside
// until they are removed or the node comes back; an update naming another
// node moves a pod only when its metadata.uid differs from the one the
// cache has (a pod deleted and created again under the same name, the
// delete and add merged into one update, as upstream's event handler
// updatePodInCache treats it): the same pod reported on another node is an
// error ([ErrInvalidObject]; spec.nodeName cannot change, and upstream's
// cache exits on it); removing an unknown pod is a no-op. AddNode of a known
// node updates it and UpdateNode of an unknown node adds it, as informers
// may replay events; AddPod of a known pod updates it and UpdatePod of an
// unknown one adds it. Nodes that are not (or no longer) known are not in
// snapshots. The other cluster objects scheduling rules read (Namespaces,
// Services, ReplicationControllers, ReplicaSets, StatefulSets,
// PriorityClasses, PodDisruptionBudgets) are taken with
// [Cache.AddObject], [Cache.UpdateObject] and [Cache.RemoveObject] under
// the same contract (internal/informertest's objects suite) and read
// with the look-ups of every Snapshot ([Snapshot.Services], ...).
//
// Objects are taken as given, as an informer delivers them, after the
// API server has defaulted them: the Cache applies no API defaults (a
// container with limits and no requests requests nothing here, a node
// without status.allocatable has nothing allocatable). Objects built in
// code are the caller's to complete; package snapshot/load applies the
// API server's defaults for the fields scheduling reads to what it reads.
//
// Every method validates its input first and changes nothing on error;
// errors name the object and the field.
// Safe for concurrent use (one mutex). Events cost O(pods on the affected
// node); [Cache.Snapshot] is O(1) — the copy-on-write work is paid by the
// first event that touches a node after a snapshot (one NodeInfo, its
// 64-node chunk and 64-chunk mid, and once per snapshot the root of
// NumNodes()/4096 pointers).
type Cache struct {
	mu     sync.Mutex
	st     state
	pods   map[PodKey]boundTo   // pod -> the node it is on (or waiting for)
	ghosts map[string]*NodeInfo // pods on nodes the cache does not know
	lean   bool                 // LeanPods: store lean records
}

// boundTo is where the Cache has a pod: its node's name, and the pod's
// metadata.uid (kept apart from the record, which a lean record drops).
type boundTo struct {
	node string
	uid  types.UID
}

// CacheOption configures a Cache ([NewCache], [NewCacheWithDevices]).
type CacheOption func(*Cache)

// LeanPods makes the cache store a lean record ([PodInfo.Lean]) of every
// pod it is fed (AddPod, UpdatePod, AddPodInfo): what scheduling reads,
// without the pod object, with the templates of a workload's replicas
// shared. The cache's decisions are the same; [PodInfo.Pod] of a pod it
// holds is then a rebuilt pod that lacks what a lean record drops (see
// there). Without it (the default) the cache keeps the objects it is
// given, which [PodInfo.Pod] returns as they are. Pods added to a Fork of
// the cache are kept as given.
func LeanPods() CacheOption { return func(c *Cache) { c.lean = true } }

// WithDeviceDecoder makes the cache read devices with dec (nil:
// [NvidiaDevices]), as [NewCacheWithDevices] does; for callers that take
// CacheOptions, such as snapshot/load's ReadCache.
func WithDeviceDecoder(dec DeviceDecoder) CacheOption { return func(c *Cache) { c.st.dec = dec } }

// NewCache returns an empty cache that reads devices with [NvidiaDevices],
// configured by opts.
func NewCache(opts ...CacheOption) *Cache { return NewCacheWithDevices(nil, opts...) }

// NewCacheWithDevices returns an empty cache that reads the devices of
// the nodes and pods it is fed with dec (nil: [NvidiaDevices]), as do its
// snapshots and their forks ([Snapshot.DeviceDecoder]); e.g.
// openb.Devices (package snapshot/load/openb) for the Alibaba GPU sharing
// schema. opts configure it.
func NewCacheWithDevices(dec DeviceDecoder, opts ...CacheOption) *Cache {
	c := &Cache{st: state{tok: newToken(), dec: dec}, pods: map[PodKey]boundTo{}, ghosts: map[string]*NodeInfo{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// LeanPods reports whether the cache stores lean records ([LeanPods]).
func (c *Cache) LeanPods() bool { return c.lean }

// Snapshot returns an immutable snapshot of the current state; O(1).
func (c *Cache) Snapshot() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &Snapshot{view{st: c.st.freeze()}}
}

// NumNodes returns the number of known nodes.
func (c *Cache) NumNodes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st.n
}

// NumPods returns the number of pods the cache holds, including pods
// waiting for their node.
func (c *Cache) NumPods() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pods)
}

// AddNode adds node, or updates it if known (as an informer's add of an
// existing object is an update; [Fork.AddNode] refuses a known name with
// [ErrNodeExists] instead). Errors (invalid node, negative allocatable)
// name the node and field.
func (c *Cache) AddNode(node *v1.Node) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.upsertNode(node)
}

// UpdateNode replaces the node object (allocatable, labels, taints,
// images), keeping its pods; an unknown node is added.
func (c *Cache) UpdateNode(node *v1.Node) error { return c.AddNode(node) }

func (c *Cache) upsertNode(node *v1.Node) error {
	fresh, err := newNodeInfo(node, c.st.decoder())
	if err != nil {
		return err
	}
	if i, ok := c.st.index(node.Name); ok {
		ni := c.st.node(i).clone(c.st.tok)
		_ = ni.setNode(node, c.st.decoder()) // validated above
		c.st.replaceNode(i, ni)
		return nil
	}
	if g, ok := c.ghosts[node.Name]; ok {
		delete(c.ghosts, node.Name)
		for _, p := range g.pods {
			fresh.addPod(p)
		}
	}
	c.st.appendNode(fresh)
	return nil
}

// RemoveNode removes the node called name. Its pods stay in the cache,
// outside snapshots, until removed or until the node is added again.
// Returns [ErrNodeNotFound] for an unknown node.
func (c *Cache) RemoveNode(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, err := c.st.nodeOrErr(name)
	if err != nil {
		return err
	}
	ni := c.st.removeAt(i)
	if len(ni.pods) > 0 {
		g := &NodeInfo{name: name}
		for _, p := range ni.pods {
			g.addPod(p)
		}
		c.ghosts[name] = g
	}
	return nil
}

// AddPod reports a pod from the informer, under the informer contract
// (see [Cache]): a bound pod (spec.nodeName set) is added, or updated
// (moved to another node only as a pod created again, with a new
// metadata.uid); an unbound pod changes nothing; a pod in
// phase Succeeded or Failed is removed. Errors, which change nothing: a
// nil pod, an empty metadata.name, a metadata.name or metadata.namespace
// the API server refuses, a missing metadata.namespace (checked for every
// pod, bound or not: only the key of an unbound or terminal pod is read;
// [ValidatePod]), invalid requests, topology spread
// constraints or pod (anti-)affinity terms of a bound pod
// ([NewPodInfo]; [ErrInvalidObject], [ErrNegativeQuantity]), a bound pod
// recording a GPU device its (known) node does not have
// ([ErrInvalidObject]), a report of a pod the cache has bound on another
// node with the same metadata.uid ([ErrInvalidObject], naming the pod,
// spec.nodeName and both nodes), and an
// unbound report of a pod the cache has bound ([ErrInvalidObject]). Only a
// bound pod is parsed. O(containers + pods on the node).
func (c *Cache) AddPod(pod *v1.Pod) error {
	kind, err := informer.Classify(pod)
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalidObject)
	}
	if kind != informer.Assigned {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.notAssignedLocked(pod, kind)
	}
	pi, err := DecodePodInfo(pod, c.st.decoder())
	if err != nil {
		return err
	}
	if c.lean {
		pi = pi.Lean()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addAssignedLocked(pi, pod.UID)
}

// UpdatePod is [Cache.AddPod]: the informer's update carries the whole new
// object, so an update of an unknown pod adds it.
func (c *Cache) UpdatePod(pod *v1.Pod) error { return c.AddPod(pod) }

// AddPodInfo is AddPod with a pre-parsed pod (classified as AddPod
// classifies its pod object; a lean record by its node name and phase).
// With [LeanPods] the cache stores pi.Lean().
func (c *Cache) AddPodInfo(pi *PodInfo) error {
	if pi == nil {
		return fmt.Errorf("pod is nil: %w", ErrInvalidObject)
	}
	kind, err := pi.classify()
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalidObject)
	}
	var uid types.UID
	if pi.pod != nil {
		uid = pi.pod.UID
	}
	if c.lean && kind == informer.Assigned {
		pi = pi.Lean()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kind != informer.Assigned {
		return c.notAssignedLocked(pi.Pod(), kind)
	}
	return c.addAssignedLocked(pi, uid)
}

// notAssignedLocked applies an Unbound or Terminal report of pod.
func (c *Cache) notAssignedLocked(pod *v1.Pod, kind informer.Kind) error {
	k := KeyOf(pod)
	if kind == informer.Terminal {
		c.removePodLocked(k)
		return nil
	}
	if at, ok := c.pods[k]; ok {
		return fmt.Errorf("%w: %w", informer.UnbindError(pod, at.node), ErrInvalidObject)
	}
	return nil
}

// addAssignedLocked counts pi (metadata.uid uid) on its node, replacing
// the cache's record of the pod. A pod the cache has on another node is
// moved only when uid differs from the recorded one (the pod was deleted
// and created again, the delete and add merged into one update, as
// upstream's updatePodInCache treats it); the same pod on another node
// is an error (moveError).
func (c *Cache) addAssignedLocked(pi *PodInfo, uid types.UID) error {
	nodeName := pi.nodeName
	if at, ok := c.pods[pi.key]; ok && at.node != nodeName && at.uid == uid {
		return moveError(pi.key, uid, at.node, nodeName)
	}
	if i, ok := c.st.index(nodeName); ok {
		if err := c.st.node(i).checkDevices(pi); err != nil {
			return err
		}
	}
	c.removePodLocked(pi.key)
	c.pods[pi.key] = boundTo{nodeName, uid}
	if i, ok := c.st.index(nodeName); ok {
		ni := c.st.mutable(i, pi)
		ni.addPod(pi)
		c.st.affPod(ni, pi, 1)
		return nil
	}
	g := c.ghosts[nodeName]
	if g == nil {
		g = &NodeInfo{name: nodeName}
		c.ghosts[nodeName] = g
	}
	g.addPod(pi)
	return nil
}

// RemovePod removes the pod with key k wherever it is; an unknown pod is a
// no-op. It reports whether the pod was there.
func (c *Cache) RemovePod(k PodKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.removePodLocked(k)
}

// moveError is the error for a report of pod k (metadata.uid uid) bound
// to node to, when the cache has the same pod bound to node from
// (informer.MoveError, which reserve.Ledger returns too).
func moveError(k PodKey, uid types.UID, from, to string) error {
	return fmt.Errorf("%w: %w", informer.MoveError(k.Namespace, k.Name, string(uid), from, to), ErrInvalidObject)
}

func (c *Cache) removePodLocked(k PodKey) bool {
	at, ok := c.pods[k]
	if !ok {
		return false
	}
	nodeName := at.node
	delete(c.pods, k)
	if i, ok := c.st.index(nodeName); ok {
		ni := c.st.mutable(i, nil)
		c.st.affPod(ni, ni.removePod(k), -1)
		return true
	}
	if g := c.ghosts[nodeName]; g != nil {
		g.removePod(k)
		if len(g.pods) == 0 {
			delete(c.ghosts, nodeName)
		}
	}
	return true
}

// PodNode returns the name of the node the pod with key k is bound to.
func (c *Cache) PodNode(k PodKey) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.pods[k]
	return at.node, ok
}
