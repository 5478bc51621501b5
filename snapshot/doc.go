// Package snapshot models a cluster for scheduling: resource vectors, pod
// requests computed exactly as kube-scheduler v1.37 computes them,
// per-node aggregates ([NodeInfo]), immutable [Snapshot]s, an event-fed
// [Cache] that produces them, and copy-on-write [Fork]s for what-if
// simulation.
//
// # Usage
//
// Feed a [Cache] the informer's node and pod events (or load objects with
// package snapshot/load), take a [Snapshot] per scheduling cycle, and hand
// it to filters and scorers:
//
//	c := snapshot.NewCache()
//	_ = c.AddNode(node)          // errors name the object and field
//	_ = c.AddPod(pod)            // counted if bound; see Cache for unbound and terminal pods
//	_ = c.AddObject(replicaSet)  // Namespaces, Services, ReplicaSets, PriorityClasses, PDBs, ...
//	snap := c.Snapshot()         // O(1), immutable
//	_ = snap.ReplicaSet("shop", "web-5d8f") // the objects, as of the snapshot
//	for _, ni := range snap.Nodes() {
//		_ = ni.Free(snapshot.CPU) // milli-CPU, never negative
//	}
//	all := snap.AppendNodes(nil) // every node, in index order: a candidate list for scorers
//
// To try a change without touching the snapshot, Fork it:
//
//	f := snap.Fork()
//	f.Fork()
//	_ = f.AddPodInfo(pi, "node-7")
//	_ = f.Revert() // or f.Commit()
//
// Units: CPU in milli-CPU, memory and ephemeral storage in bytes, pods and
// extended resources as counts (their upstream Value()). Resource names are
// interned process-wide to small [ResourceID]s; a [Vector] is indexed by
// them.
//
// Pod requests ([ComputePodRequests]) follow k8s.io/component-helpers
// v0.37 resource.PodRequests with the options kube-scheduler v1.37 uses by
// default: containers summed, restartable (sidecar) init containers added
// to the sum, each plain init container's peak counted with the sidecars
// started before it, pod = max(sum, peaks), pod-level requests override,
// overhead added, in-place-resize status honoured. The scoring variants
// with non-zero defaults (100m CPU, 200 MiB memory per container without a
// request) and the request of a pod not yet bound (the spec alone, what
// the fit filter checks, [PodRequests].Pending) are computed alongside.
//
// Deliberate differences from upstream: quantities beyond int64 saturate
// to math.MaxInt64 and totals saturate instead of wrapping; spec.overhead
// is counted once where the kubelet's pod-level status maps already hold
// it (the rule is on [PodRequests].Requested); host ports are
// counted as a multiset, so removing one of two pods that declare the same
// port keeps the port in use; an image's size is the size the node itself
// reports (upstream takes the first node's).
//
// GPU devices are plain counted data: a node's devices with their model,
// capacity and free milli-GPU ([NodeInfo.Devices]), a pod's demand
// ([PodInfo.GPU]) and the devices it uses ([PodInfo.Devices], a
// [DeviceSet]). The snapshot charges a pod's share to the devices it
// records and never chooses devices: the choice is an input
// ([PodInfo.WithDevices]) made by a [DeviceChooser] the caller passes to
// the framework or the reservation ledger (package gpushare holds the
// policies). A GPU pod reported without devices counts in Requested but
// on no device.
// How objects describe devices is a schema the snapshot does not know: a
// [DeviceDecoder] reads it. A Cache decodes with the one it is made with
// ([NewCacheWithDevices]; [NvidiaDevices], the device plugin's
// nvidia.com/gpu, by default), and its snapshots and forks with the same
// ([Snapshot.DeviceDecoder]); [DecodePodInfo] parses a pod with a given
// one. The Alibaba GPU sharing scheduler's annotations, which the openb
// trace uses, are decoded by package snapshot/load/openb: a loader, like
// snapshot/load.
//
// # Concurrency
//
// Snapshots and NodeInfos reached through them are immutable and safe for
// concurrent reads. A Cache is safe for concurrent use. A Fork is for one
// goroutine at a time; [Fork.Snapshot] hands out an immutable view.
//
// # Cost
//
// Cache.Snapshot, Snapshot.Fork and Fork.Fork are O(1). Fork.Revert is
// O(the copies the layer made): it moves them to spare lists for reuse.
// Fork.Commit is O(1), except when it commits the outermost layer (back to
// depth 0), which drops the copy log in O(copies logged since the last
// Fork.Snapshot); Fork.Snapshot drops it too, plus O(depth). The first change to a node after a snapshot or in a fork layer
// copies that node's NodeInfo (its pod list), its 64-node chunk and the
// chunk's 64-chunk mid, plus once per snapshot or layer the root
// (NumNodes()/4096 pointers); the cost of an update is thus proportional to
// the nodes changed, not to the cluster. Node look-up by index or name is O(1); iteration allocates
// nothing.
//
// Every Snapshot and Fork also indexes its pods' pod (anti-)affinity
// terms for InterPodAffinity (affinity_index.go): the count of pods with
// terms, equal terms grouped with per-domain totals, and, for each term
// some pod holds, the pods it matches per domain. A pod without terms
// that no held term matches costs nothing there; a pod with terms costs
// O(its terms) map updates, plus one count over every pod the first time
// a new term appears; every pod added or removed is matched against the
// held terms (O(distinct held terms)). The first change to a group in a
// layer copies it (a bounded number of allocations) and counts as one
// copy in the costs of Revert and Commit above.
//
// # Layer
//
// The bottom of the public packages: cluster state only. snapshot imports
// no schedkit package but internal ones (internal/layout, internal/arith);
// score, reserve, gpushare, framework and replay build on it. What those
// read for speed — a node's head of cpu, memory and filter figures, block
// versions, a pod's key hash — is unexported here and reached through
// internal/nodeview, so a layout change is never an API change. The layers
// are those package schedkit's doc lists (the repository root's doc.go),
// checked by its TestLayering.
package snapshot
