// Package load reads Kubernetes Nodes, Pods and the other objects a
// snapshot.Cache takes (Namespaces, Services, ReplicationControllers,
// ReplicaSets, StatefulSets, PriorityClasses, PodDisruptionBudgets:
// [Objects.Others]) from YAML or JSON files, for
// feeding a [github.com/schedkit/schedkit/snapshot] Cache in simulators,
// tests and tools. It is the I/O side of the snapshot model, kept out of the
// core packages, which do no I/O.
//
// It accepts what people actually have on disk: one object per file,
// "---"-separated multi-document YAML, concatenated JSON objects, a v1 List
// (the output of `kubectl get nodes,pods -o yaml` or `-o json`), a NodeList
// or PodList (a raw API list), or any mix of these. Decoding is
// apimachinery's: k8s.io/apimachinery/pkg/util/yaml splits documents and
// converts YAML to JSON, and a runtime.Scheme with k8s.io/api/core/v1
// registered decodes them through its codec factory's
// UniversalDeserializer, so objects come out as the API types define
// them. Objects of other kinds (ConfigMaps,
// Deployments, ...) are skipped and counted in [Objects.Skipped], or
// rejected with [Options.RejectOtherKinds].
//
// # Workloads
//
// With [Options.ExpandWorkloads] the loader makes what the workload
// controllers would create from a manifest, so that "what happens if I
// apply this?" schedules something: a Deployment none of whose
// ReplicaSets or pods is in the input becomes its ReplicaSet
// (<deployment>-<pod-template-hash>), and a ReplicaSet, StatefulSet or
// ReplicationController none of whose pods is in the input becomes its
// spec.replicas pending pods (<owner>-<5 characters>, or <sts>-<ordinal>
// for a StatefulSet), and a DaemonSet becomes one pending pod for each
// input Node the DaemonSet controller would run it on, pinned to it by
// a required node affinity on metadata.name. A workload's objects are those with a controller
// reference to it, and those its controller would adopt or own: orphans
// its selector matches and, for a Deployment, pods its selector matches
// whose ReplicaSet is missing from the input (`kubectl get
// deploy,pods`). Made objects come with the template's labels, annotations and spec,
// controller owner references and derived uids. Made pods are validated
// and defaulted as input pods, their errors naming the workload and the
// template field (spec.template.spec...); [Objects.Expanded] counts
// them. Differences from the controllers: the pod-template-hash is
// fnv32a over the template's JSON, not the controller's value; pod name
// suffixes and uids are derived, not random, so two loads agree; no
// controller-revision-hash label; no rollout (one ReplicaSet holds every
// replica); a workload with some of its pods in the input is left as it
// is, not scaled up to spec.replicas; a StatefulSet's pods are made at
// once (no OrderedReady), also for names over 52 characters, whose
// pods upstream's controller fails to create. A Deployment whose pods
// are in the input without their ReplicaSet gets that ReplicaSet back,
// with no pods made, so that default spreading selects the pods.
// Workloads being deleted or in a namespace being deleted make nothing,
// as their controllers make nothing; a paused Deployment gets no new
// ReplicaSet, but its ReplicaSets are scaled, as upstream's sync scales
// them. Give every file to one [Files] or
// [Options.Files] call: a Deployment and its ReplicaSet read by separate
// calls are not matched. See [Options.ExpandWorkloads] for the details.
//
// # Defaults
//
// The loader applies the API server's defaults for the fields scheduling
// reads, so that objects written by hand (not `kubectl get -o yaml` of a
// real cluster, whose objects the API server has defaulted) schedule as
// they would once created: for every container and init container, each
// resource in resources.limits that resources.requests lacks is
// requested at its limit (a request given, even 0, is kept; ephemeral
// containers are not defaulted) — so a GPU pod with nvidia.com/gpu in
// its limits only requests its GPUs; a Node with status.capacity and no
// status.allocatable (absent, not "{}") has its capacity allocatable;
// a Pod or other namespaced object without metadata.namespace is put in
// "default"; pod-level spec.resources that names any request or limit
// gets the pod-level requests the API server derives when it creates the
// pod (a hugepages-* limit from the containers' limits, then cpu and
// memory requests from the containers' aggregate request, then any
// missing cpu, memory or hugepages-* request from the pod-level limit;
// pkg/api/pod DefaultPodLevelResources under the default feature gates;
// pod-level limits of cpu and memory, which scheduling does not read, are
// not derived). Nothing else: quantities that upstream rounds up to
// milli-units are kept as written (the snapshot model reads them rounded
// up anyway; the pod-level sums round each term first, as upstream). The
// rules are those of k8s.io/kubernetes v1.37 pkg/apis/core/v1
// (SetDefaults_Pod, SetDefaults_NodeStatus) and pkg/api/pod, checked
// against upstream's own SetObjectDefaults_Pod, SetObjectDefaults_Node and
// DefaultPodLevelResources by examples/kube-scheduler/parity
// TestLoaderDefaultsMatchUpstream. They are
// applied after validation (an invalid limit is reported once, as
// written) and on every path: [Read], [Files], [Options.ReadCache],
// [Options.FilesCache]. snapshot.Cache and reserve.Ledger apply no
// defaults: objects built in code are the caller's, taken as given.
//
// Bad input is an error that says where and what: the file, the line (of
// the offending field where the YAML spells it, else where the document
// starts — always for JSON; where the YAML or JSON syntax error is), the document index, the
// List item, the object's kind and namespace/name, and the field, for
// example
//
//	nodes.yaml:27: document 2: Node "n1": status.capacity[cpu]: load: negative quantity -1
//
// What the API server refuses in resources is refused too, naming the
// field (k8s.io/kubernetes v1.37.2 pkg/apis/core/validation
// validateResourceRequirements and ValidateResourceQuantityValue): a
// fractional quantity of an integer resource (nvidia.com/gpu: "0.5", any
// extended resource, pods) in a Node's capacity or allocatable or a Pod's
// container requirements, overhead or spec.resources; a request above its
// limit; a request of an extended resource or hugepages without an equal
// limit ([ErrInvalidObject]; examples/kube-scheduler/parity
// TestLoaderResourceRulesMatchUpstream runs upstream's validation on the
// same inputs).
//
// Errors wrap sentinels ([ErrSyntax], [ErrNegativeQuantity], [ErrDuplicate],
// ...) for errors.Is, and each problem is an [*Error] for errors.As. When
// anything is wrong, nothing is returned: no half-loaded cluster.
//
// Nothing read is dropped silently: a mapping key given twice in one
// object keeps its last value (as kubectl and the API server do) and is
// listed in [Objects.Warnings], or is an error with [Options.Strict].
// Fields k8s.io/api does not know are ignored unless Strict (objects from
// newer clusters carry them), and objects of other kinds are counted in
// [Objects.Skipped].
//
// Quantities too large for int64, even in milli-units (cpu: 1e1000,
// memory: 50E), are accepted unchanged, and the snapshot model saturates
// them at math.MaxInt64 (a loader that refused them would hide that). So
// such a request does not fit any node whose allocatable is below
// math.MaxInt64 — every node of ordinary size — but it does fit a node
// whose allocatable saturates too while nothing else is requested there
// (request <= allocatable - requested: MaxInt64 <= MaxInt64 - 0), after
// which that node has nothing free (TestQuantitiesBeyondInt64Fit).
// Upstream reads a CPU quantity beyond int64 milli-units as 0 instead, so
// it fits such a CPU request anywhere (a deliberate difference;
// examples/kube-scheduler/parity TestDifferenceQuantityAboveInt64).
// Negative quantities are always an error, and so are quantities whose
// exponent apimachinery's parser would take minutes over or truncate
// (cpu: "1e-999999999"; see [Options.Read]), which are found before the
// document is decoded.
//
// # Usage
//
//	objs, err := load.Files("cluster/") // *.yaml, *.yml, *.json, recursively
//	if err != nil {
//		return err // e.g. cluster/pods.yaml:12: document 3: Pod "default/web": ...
//	}
//	for _, n := range objs.Nodes {
//		cache.AddNode(n)
//	}
//	for _, p := range objs.Pods {
//		cache.AddPod(p)
//	}
//	for _, o := range objs.Others {
//		cache.AddObject(o)
//	}
//
// [Read] takes any io.Reader (stdin, an embedded file, a string in a test);
// [Options] turns on strict field checking or rejection of other kinds.
//
// To fill a cache without holding every object, [Options.ReadCache] and
// [Options.FilesCache] stream the objects into a new snapshot.Cache as
// they are decoded; with snapshot.LeanPods the cache keeps lean pod
// records, so a large cluster loads in a fraction of the memory:
//
//	cache, rest, err := load.Options{}.FilesCache([]string{"cluster/"}, snapshot.LeanPods())
//	// rest.Pods: the unbound (pending) and terminal pods, which a cache does not take
//
// # Concurrency
//
// All functions are safe for concurrent use: the only shared state is the
// scheme and its decoders, built once at package initialisation and read
// only afterwards. Each call starts no goroutine. The returned objects are
// new and owned by the caller.
//
// # Cost
//
// Time is O(input bytes): each document is converted to JSON and decoded
// once. Input is streamed: a document is read, converted, decoded,
// validated and filed (kept, or fed to the cache by [Options.ReadCache]
// and [Options.FilesCache]) before the next is read. A YAML List as
// kubectl prints it (kind: List, block style, no anchors) is converted
// and decoded one item at a time, its text held whole: the YAML tree and
// JSON of the whole List are never built. Other Lists (JSON, NodeList,
// PodList, flow style) are decoded whole. So memory is the largest
// document's text plus the largest unit converted (a document or a List
// item: its YAML tree, JSON and objects), a 64 KiB read buffer, and what
// is kept: the objects for [Read] and [Files], the cache for ReadCache
// and FilesCache, plus one map entry per object for duplicate detection.
// YAML parsing (go-yaml, under apimachinery) takes about two thirds of the
// time and typed decoding a quarter: the 1213-node openb YAML (0.6 MB) takes
// about 0.1 s and 37 MB of allocations on a shared 2-core machine
// (BenchmarkReadOpenbNodeYAML); JSON input skips the YAML step.
// Each YAML text converted is scanned once for a mapping key given twice
// (one pass, following block mappings by column); only a text the scan
// cannot clear (flow mappings, quoted keys, block scalars holding
// "key: value" lines, ...) is parsed a second time, strictly, to find
// them ([Objects.Warnings]). Every document's JSON is scanned once for an
// exponent of five or more digits before decoding (no allocation); only
// a document that has one is walked field by field to find the
// quantities among them.
// Validation and defaults are O(resources) per Node and O(containers ×
// resources) per Pod (defaults allocate only where one is applied);
// duplicate detection is one map insert per object.
//
// # Layer
//
// A loader beside the model: load may import snapshot and internal
// packages, and reads objects for it; snapshot never imports load. The
// layers are those package schedkit's doc lists (the repository root's
// doc.go), checked by its TestLayering.
package load
