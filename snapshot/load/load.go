package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/schedkit/schedkit/internal/objects"
	"github.com/schedkit/schedkit/snapshot"
)

// Objects are the Nodes and Pods read from one or more inputs, in input
// order: files in the order given (directories in lexical order), documents
// in file order, List items in list order. The zero value is empty and ready
// to use. The caller owns the slices and the objects in them.
type Objects struct {
	Nodes []*v1.Node
	Pods  []*v1.Pod
	// Others are the other objects a snapshot.Cache takes (with
	// AddObject): v1 Namespaces, Services and ReplicationControllers,
	// apps/v1 ReplicaSets and StatefulSets, scheduling.k8s.io/v1
	// PriorityClasses and policy/v1 PodDisruptionBudgets, validated as
	// the Cache validates them (an invalid selector is an
	// [ErrInvalidObject] naming the field). A namespaced object without a
	// namespace is put in "default", as a pod is.
	Others []runtime.Object
	// Expanded counts, by kind ("Deployment", "ReplicaSet",
	// "StatefulSet", "ReplicationController", "DaemonSet"), the workloads
	// [Options.ExpandWorkloads] expanded and the pods it made for them;
	// nil when none was.
	Expanded map[string]Expansion
	// Skipped counts the objects of other kinds that were read and ignored,
	// by apiVersion and kind (for example {Version: "v1", Kind: "Service"}
	// or {Group: "apps", Version: "v1", Kind: "Deployment"}). Nil when
	// nothing was skipped.
	Skipped map[schema.GroupVersionKind]int
	// Warnings lists, without [Options.Strict], the mapping keys given
	// twice in one object (YAML or JSON), of which the last value was
	// kept, as kubectl and the API server keep it (the API server warns
	// "duplicate field" the same way); with Strict each is an error
	// instead. Each wraps [ErrUnknownField] and says where, as the
	// strict error would. Fields k8s.io/api does not know are not
	// listed: they are expected from newer clusters. With
	// [Options.ExpandWorkloads], in either mode, Deployments left
	// unscaled follow, each wrapping [ErrNotExpanded]. Nil when there
	// are none; in input order, those of expansion last.
	Warnings []*Error
}

// Options tune [Options.Read] and [Options.Files]. The zero value is the
// behaviour of the package-level [Read] and [Files].
type Options struct {
	// Strict rejects fields that k8s.io/api v0.37 does not know and fields
	// given twice (apimachinery's strict decoding), catching typos such as
	// "request:" for "requests:". Off by default, because objects written by
	// newer clusters carry fields this version does not know; fields given
	// twice are then listed in [Objects.Warnings] (the last value is kept).
	Strict bool
	// RejectOtherKinds makes a document of any kind other than Node, Pod,
	// the kinds of [Objects.Others] (a Deployment and a DaemonSet too
	// with ExpandWorkloads), List, NodeList or PodList an [ErrKind] error
	// instead of being skipped and counted in [Objects.Skipped].
	RejectOtherKinds bool
	// ExpandWorkloads makes the pods the workload controllers would
	// create, so that a manifest of workloads (what `kubectl apply`
	// would be given) schedules:
	//
	//   - an apps/v1 Deployment is accepted (not skipped; it is not in
	//     [Objects.Others], which a Cache takes) and, when the input holds
	//     none of its ReplicaSets (none with a controller ownerReference
	//     to it: kind Deployment, its namespace and name, uids equal when
	//     both are set; no orphan ReplicaSet its selector matches, which
	//     it would adopt) and none of their pods (no pod its selector
	//     matches whose controller is a ReplicaSet missing from the
	//     input, as in `kubectl get deploy,pods` output: then each such
	//     ReplicaSet is filed, as the controller made it, named as the
	//     pods' controller, with their pod-template-hash, and no pod is
	//     made, so that the pods have the ReplicaSet system default
	//     spreading reads), becomes the ReplicaSet the deployment
	//     controller creates:
	//     named <deployment>-<hash>, the label pod-template-hash=<hash>
	//     added to its labels, its selector's matchLabels and its
	//     template's labels, the Deployment's spec.replicas (nil: 1), a
	//     controller ownerReference (blockOwnerDeletion too) to the
	//     Deployment. The ReplicaSet is filed as an input one (validated,
	//     checked for duplicates, in [Objects.Others] or the cache). The
	//     hash is fnv32a over the template's JSON encoding, encoded as
	//     upstream's ComputeHash encodes its own (rand.SafeEncodeString
	//     of the decimal sum): it differs from the controller's value
	//     (upstream hashes a spew dump), which scheduling reads only as a
	//     label value.
	//   - a ReplicaSet, StatefulSet or ReplicationController (of the
	//     input, or made for a Deployment) gets the pods its controller
	//     would create: spec.replicas (nil: 1; 0: none) less its active
	//     input pods, those neither terminal (Succeeded, Failed) nor being
	//     deleted, as upstream's FilterActivePods, among its controlled
	//     pods (a controller ownerReference of its kind, its namespace and
	//     name, uids equal when both are set) and the orphans its
	//     selector matches (which it would adopt); a StatefulSet, its
	//     ordinals in range without such a pod of that name: an ordinal
	//     whose pod of its own is terminal (and not being deleted) gets a
	//     new pod in its place, as the controller deletes and recreates
	//     it (the terminal pod is dropped from [Objects.Pods]); one being
	//     deleted keeps it. A workload making no pods is checked only for
	//     a negative spec.replicas; one making pods, as below. So a
	//     workload none of whose pods is in the input becomes all of
	//     them, one with some becomes the rest, and one with more keeps
	//     them all (the controller's deletions are not simulated). When
	//     both a Deployment and its ReplicaSets are in the input, the
	//     current one (its template equal to the Deployment's but for
	//     pod-template-hash) first takes the Deployment's spec.replicas,
	//     as the controller scales it (also when the Deployment is
	//     paused), unless another of its ReplicaSets has replicas (a
	//     rollout under way) or none has its template, which is then a
	//     warning (ErrNotExpanded);
	//     a Deployment whose pods are in the input without their
	//     ReplicaSet, which is then filed at the Deployment's replicas,
	//     is topped up when the pods name one ReplicaSet. A ReplicaSet's or
	//     ReplicationController's pods are named <owner>-<5 characters>
	//     as generateName makes them (the owner's name cut to 58
	//     characters), the characters derived from the owner's uid and
	//     the pod's index instead of drawn at random, unique within the
	//     owner: two loads of the same input give the same pods. A
	//     StatefulSet's pods are <name>-<start> to
	//     <name>-<start+replicas-1> (start: spec.ordinals.start, not
	//     negative, 0 without; the names, being hostnames, at most 63
	//     characters), made at once whatever spec.podManagementPolicy
	//     (the controller's OrderedReady creates one at a time, each once
	//     the one before is ready),
	//     labelled statefulset.kubernetes.io/pod-name and
	//     apps.kubernetes.io/pod-index, with spec.hostname their name
	//     and spec.subdomain the StatefulSet's spec.serviceName, as
	//     upstream's controller makes them (its controller-revision-hash
	//     label is not set: <name>-<hash>, it is longer than 63
	//     characters for most names over 52, for which upstream's
	//     controller then creates no pods, kubernetes#64023; here they
	//     get their pods). Every pod is in its owner's namespace, has
	//     the template's labels and annotations, a deep copy of its spec
	//     (so a template with spec.nodeName gives bound pods, as
	//     upstream), a controller ownerReference (blockOwnerDeletion
	//     too) to its owner and a uid derived from its owner and name;
	//     it is then validated, defaulted and checked for duplicates as
	//     an input Pod is, and is one from then on ([Objects.Pods], or
	//     the cache when bound).
	//   - an apps/v1 DaemonSet is accepted (not skipped; not in
	//     [Objects.Others]) and, when no input pod is its controlled pod
	//     or an orphan its selector matches, becomes one pod for each
	//     input Node the DaemonSet controller would run it on
	//     (nodeShouldRunDaemonPod): the template's spec.nodeName empty
	//     or the node's, its nodeSelector and required node affinity
	//     matching the node (invalid terms match nothing), and every
	//     NoSchedule and NoExecute taint of the node tolerated by the
	//     template's tolerations plus those the controller adds to every
	//     DaemonSet pod (Exists on node.kubernetes.io/not-ready and
	//     unreachable NoExecute; on disk-pressure, memory-pressure,
	//     pid-pressure and unschedulable NoSchedule; with hostNetwork on
	//     network-unavailable NoSchedule; a template toleration with the
	//     same key, operator, value and effect is replaced). Each pod has
	//     those tolerations, its required node affinity replaced by one
	//     term selecting its node by metadata.name (so the scheduler
	//     places it there or nowhere, as upstream since v1.12), the
	//     label pod-template-generation when the DaemonSet has the
	//     deprecated.daemonset.template.generation annotation, and is
	//     named <daemonset>-<5 characters> like a ReplicaSet's, in the
	//     order of the input's nodes; it is then made as the pods above.
	//     A DaemonSet no input Node takes (or read by a call without
	//     Nodes) makes no pod and is not counted in [Objects.Expanded].
	//     One with some of its pods in the input (its controlled pods or
	//     orphans its selector matches) gets pods only on the nodes
	//     without an active one (active as above; a pod's node is its
	//     spec.nodeName or, unscheduled, the node its affinity names by
	//     metadata.name, upstream's GetTargetNodeName).
	//
	// A workload with metadata.deletionTimestamp is being deleted, and
	// its controller creates nothing for it: it is not expanded; nor is
	// a workload in a Namespace of the input being deleted
	// (deletionTimestamp or status.phase Terminating), whose new objects
	// the API server's NamespaceLifecycle admission refuses; a paused
	// Deployment (spec.paused) gets no ReplicaSet the input lacks, for
	// the deployment controller makes none (it scales those there are). A generated pod name
	// (<owner>-<5 characters>) that an input pod has is passed over for
	// another suffix, as the controller retries a generateName
	// conflict; a Deployment's ReplicaSet name that an input ReplicaSet
	// has is hashed again with one more collision (the controller's
	// status.collisionCount). A ReplicationController's empty
	// spec.selector and labels become its template's labels, as the API
	// server defaults them (with or without ExpandWorkloads).
	//
	// A Deployment, ReplicaSet, StatefulSet, ReplicationController or
	// DaemonSet without metadata.uid is given one (a UUID derived from its kind,
	// namespace and name, as the API server gives every object one), so
	// that owner references can name it; the made ReplicaSet's and pods'
	// uids are derived likewise (from the owner's uid and their name).
	// The match above reads the uid the input gave.
	//
	// The API server's checks of what this reads come first: a
	// Deployment's or DaemonSet's names, spec.replicas not negative,
	// spec.selector present, valid, not empty and matching the
	// template's labels ("selector does not match template labels",
	// field spec.template.metadata.labels), at least one container in
	// the template, a DaemonSet's template checked as an input pod is
	// (whatever the number of nodes that take it), and the same of a
	// workload being expanded ([ErrInvalidObject]). An error in a made pod names the
	// workload (a Deployment's for the pods of its ReplicaSet) and the
	// template's field (spec.template.spec.containers[0].resources...),
	// at the workload's document, once (the workload's other pods are
	// not made); a StatefulSet's pod whose name an input pod has is an
	// [ErrDuplicate] error. More than 1,000,000 pods made by one load (several times
	// the pods of the largest clusters upstream supports) is an
	// [ErrInvalidObject] error at the spec.replicas of the workload that
	// goes over, so that a mistyped count fails instead of exhausting
	// memory.
	//
	// Expansion runs once every input is read (it needs all pods and
	// ReplicaSets), in the input order of the workloads; made pods follow
	// the input's in [Objects.Pods], made ReplicaSets the input's in
	// [Objects.Others]; [Objects.Expanded] counts them. When another
	// error was found, nothing is made, but the ReplicaSets,
	// StatefulSets and ReplicationControllers it would expand are still
	// checked, so that their errors are listed too (after the input's
	// others, within the error limit). Cost: O(pods made × template
	// size) time and memory, plus the labels and controller of every
	// input pod and ReplicaSet, indexed by label pair.
	ExpandWorkloads bool
}

// scheme knows core/v1 only: Node, Pod, List, NodeList, PodList and the other
// core kinds (which are skipped). Kinds of other groups decode to a
// "not registered" error that carries their GroupVersionKind, so they are
// skipped the same way. A Scheme and its deserializers are safe for
// concurrent use once built. The decoder is strict in both modes
// (loader.object turns its reports into errors or warnings).
var (
	scheme        = newScheme()
	strictDecoder = serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1.AddToScheme, appsv1.AddToScheme, schedulingv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("load: registering API groups: %v", err)) // cannot happen: static registration
		}
	}
	return s
}

// Read reads Nodes and Pods from r with the zero [Options]; see
// [Options.Read].
func Read(r io.Reader, name string) (Objects, error) { return Options{}.Read(r, name) }

// Files reads Nodes and Pods from files and directories with the zero
// [Options]; see [Options.Files].
func Files(paths ...string) (Objects, error) { return Options{}.Files(paths...) }

// Read reads r to its end and returns the Nodes and Pods in it. name is used in
// error messages only (a file name, or "stdin").
//
// The input is YAML or JSON: a single object, "---"-separated YAML
// documents, concatenated JSON objects, a v1 List (what
// `kubectl get nodes,pods -o yaml` prints), a NodeList or a PodList, in any
// mix. Empty documents are ignored. Pods without metadata.namespace are put
// in "default", as kubectl does with a default context.
//
// Validation: every object must have metadata.name; a Pod's names and
// scheduling fields must pass snapshot.ValidatePod (what the Cache
// refuses a pod for, as the API server: names, nodeSelector, node and
// pod affinity, topology spread constraints) and a Node's name must be a
// DNS-1123 subdomain ([ErrInvalidObject]); no quantity may be
// negative in a Node's status.capacity or status.allocatable, or in a Pod's
// container (init, ephemeral) requests and limits, container statuses'
// allocatedResources and resources, spec.overhead, spec.resources,
// status.allocatedResources or status.resources; a Node's capacity and
// allocatable and a Pod's container (init, ephemeral) requirements,
// spec.overhead and spec.resources must pass the API server's resource
// rules (whole numbers for extended resources and pods, requests at most
// their limits, equal limits for extended resources and hugepages;
// [ErrInvalidObject], see the package doc); Node names and Pod
// namespace/names must be unique. Quantities too large for int64 (even in
// milli-units, such as cpu: 1e1000 or memory: 50E) are accepted unchanged:
// the snapshot model saturates them at math.MaxInt64 (see the package doc
// for what then fits), so a loader that rejected them would hide that
// behaviour. A quantity whose exponent apimachinery would take minutes to
// parse, or would truncate to 32 bits ("1e-999999999",
// "1e9919999199999999", "1e4294967297"; the rule is that of
// internal/quantity.Screen: a non-zero quantity with an exponent below
// -10000, beyond int32, or above 10000 on more than 18 significant
// digits) is an [ErrDecode] error naming the field, found before the
// document is decoded, in any quantity field of any registered kind
// (including the kinds that are then skipped, which are decoded too).
// Note that YAML reads a plain 1e-999999999 as a float, which is 0
// before any quantity is parsed; quoted, it is the error above.
//
// Defaults: the API server's defaults for the fields scheduling reads
// are applied to each valid Pod and Node (container and init-container
// requests default to limits per missing resource; pod-level requests
// are derived as the API server derives them when it creates the pod;
// allocatable defaults to capacity when absent; see the package's
// Defaults section).
//
// On any error Read returns the zero Objects and an error that is, or joins
// (errors.Join, up to 10 listed), [*Error] values wrapping the sentinels
// above. Nothing is half-loaded.
//
// A stream whose first non-blank byte is '{' is JSON unless its first or
// second value does not parse, in which case it is read as YAML (the rule
// of apimachinery's yaml.NewYAMLOrJSONDecoder, which kubectl uses): JSON
// documents separated by "---" are YAML; a syntax error after two JSON
// values is a JSON syntax error. A YAML document holding more than one
// value (a flow mapping or JSON object followed by more text, or text
// after a "..." line), of which go-yaml would convert the first and drop
// the rest, is an [ErrSyntax] error, so no object is dropped silently.
//
// Cost: O(input bytes) time; r is read as a stream, one document at a
// time (see the package's Cost section): memory is the largest document
// plus the decoded objects.
func (o Options) Read(r io.Reader, name string) (Objects, error) {
	l := o.newLoader()
	l.reader(r, name)
	return l.result()
}

// ReadCache reads r as [Options.Read] does, streaming every object into a
// new snapshot.Cache made with opts (for example snapshot.LeanPods(), to
// keep lean pod records, and a device decoder with
// snapshot.WithDeviceDecoder) as it is decoded, instead of materialising
// the objects: bound pods, Nodes and the other objects go to the cache;
// unbound and terminal pods, which a cache does not take, are returned in
// Objects.Pods, Objects.Skipped counts skipped kinds and
// Objects.Warnings lists repeated keys and, with ExpandWorkloads,
// Deployments left unscaled (Objects.Nodes and Objects.Others stay nil).
//
// Errors: those of Read for the same input, in the same order, plus what
// the cache rejects (for example a pod recording a GPU device its node
// does not have), each an [*Error] saying where, wrapping the cache's
// error. On any error ReadCache returns a nil cache: nothing is half
// loaded. Once an error is found the rest of the input is still checked
// (for the error list) but no longer fed.
//
// Cost: O(input bytes) time; r is read as a stream, one document at a
// time: memory is the largest document plus the cache plus one map entry
// per object for duplicate detection.
func (o Options) ReadCache(r io.Reader, name string, opts ...snapshot.CacheOption) (*snapshot.Cache, Objects, error) {
	l := o.newLoader()
	l.cache = snapshot.NewCache(opts...)
	l.reader(r, name)
	return l.cacheResult()
}

// FilesCache is [Options.Files] streaming into a new cache as
// [Options.ReadCache] does; errors and cost as there.
func (o Options) FilesCache(paths []string, opts ...snapshot.CacheOption) (*snapshot.Cache, Objects, error) {
	l := o.newLoader()
	l.cache = snapshot.NewCache(opts...)
	l.files(paths)
	return l.cacheResult()
}

func (l *loader) reader(r io.Reader, name string) {
	if r == nil {
		l.done.add(&Error{File: name, Err: fmt.Errorf("%w: reader is nil", ErrIO)})
		return
	}
	l.file(name, r)
}

func (l *loader) cacheResult() (*snapshot.Cache, Objects, error) {
	objs, err := l.result()
	if err != nil {
		return nil, Objects{}, err
	}
	return l.cache, objs, nil
}

// Files reads every path, in the order given. A directory is walked
// recursively in lexical order and its files ending in .yaml, .yml or .json
// (any case) are read; a file named directly is read whatever its name.
// Duplicates are checked across all files. Errors and cost are as for
// [Options.Read]; an unreadable path is an [ErrIO] error.
func (o Options) Files(paths ...string) (Objects, error) {
	l := o.newLoader()
	l.files(paths)
	return l.result()
}

func (l *loader) files(paths []string) {
	for _, p := range paths {
		files, err := expand(p)
		if err != nil {
			l.done.add(&Error{File: p, Err: fmt.Errorf("%w: %w", ErrIO, err)})
			continue
		}
		for _, f := range files {
			r, err := os.Open(f)
			if err != nil {
				l.done.add(&Error{File: f, Err: fmt.Errorf("%w: %w", ErrIO, err)})
				continue
			}
			l.file(f, r)
			_ = r.Close() // read-only: nothing to lose
		}
	}
}

// expand returns path itself if it is a file, or the YAML and JSON files
// under it in lexical order if it is a directory.
func expand(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

// where records the first place an object was seen, for duplicate errors.
type where struct {
	file string
	line int
	doc  int
	item string
}

func (w where) String() string {
	s := w.file + ":" + strconv.Itoa(w.line) + ": document " + strconv.Itoa(w.doc)
	if w.item != "" {
		s += ", " + w.item
	}
	return s
}

// loader accumulates one call's objects and errors.
type loader struct {
	opts    Options
	decoder runtime.Decoder
	out     Objects
	nodes   map[string]where
	pods    map[string]where
	others  map[objects.Key]where
	// errs: the errors of the files read so far and, while a file is
	// read, of its objects; synErrs: the current file's syntax errors,
	// listed before its objects' (file).
	errs, synErrs errorList
	// yaml is the YAML of the document (or List item) read at yamlAt,
	// during its decoding; workloadYAML keeps a copy of it for each
	// workload, so that errors found when workloads are expanded, after
	// reading, are put on their field's line too (fieldLines).
	yaml         []byte
	yamlAt       where
	workloadYAML map[where][]byte
	// scaledBy: the ReplicaSets of the input scaled to their
	// Deployment's replicas (scaleCurrent), whose made pods are the
	// Deployment's in errors.
	scaledBy map[*appsv1.ReplicaSet]scaling
	done     errorList
	// cache, when set, takes the objects as they are read (ReadCache),
	// until the first error.
	cache *snapshot.Cache
	// With ExpandWorkloads: the workloads in input order, the
	// Deployments and DaemonSets read (for duplicates), the nodes read
	// (DaemonSets run on them), the controllers named by input pods and
	// ReplicaSets, and how many pods expansion made so far.
	workloads           []workload
	topLevel            map[ownerKey]where
	terminating         map[string]bool // namespaces being deleted
	nodeObjs            []*v1.Node
	podOwners, rsOwners owners
	podLabels, rsLabels labelSets
	inputPods           map[string]*podFacts // by namespace/name
	made                int
}

func (o Options) newLoader() *loader {
	// The strict decoder in both modes: without Strict its reports of
	// repeated fields are warnings and of unknown fields ignored (object).
	l := &loader{opts: o, decoder: strictDecoder, nodes: map[string]where{}, pods: map[string]where{}, others: map[objects.Key]where{}}
	if o.ExpandWorkloads {
		l.topLevel, l.podOwners, l.rsOwners = map[ownerKey]where{}, owners{}, owners{}
		l.terminating = map[string]bool{}
		l.podLabels, l.rsLabels = labelSets{}, labelSets{}
		l.inputPods = map[string]*podFacts{}
	}
	return l
}

func (l *loader) result() (Objects, error) {
	l.expand()
	for at, text := range l.workloadYAML {
		fieldLines(text, at, l.errs.errs)
		fieldLines(text, at, l.out.Warnings)
	}
	l.done.merge(&l.errs)
	l.errs = errorList{}
	if err := l.done.err(); err != nil {
		return Objects{}, err
	}
	return l.out, nil
}

// failed reports whether any error was found so far.
func (l *loader) failed() bool { return l.done.total+l.errs.total+l.synErrs.total > 0 }

// file reads the documents of one input as it splits them, decoding and
// filing each before the next is read; its syntax errors are listed
// before its objects' errors.
func (l *loader) file(name string, r io.Reader) {
	void := split(name, r, l.opts.Strict, &l.synErrs, &l.out.Warnings, func(d document) bool {
		at := where{file: name, line: d.line, doc: d.index}
		if d.item >= 0 {
			at = at.inItem(d.item)
		}
		e0, w0 := len(l.errs.errs), len(l.out.Warnings)
		l.yaml, l.yamlAt = d.yaml, at
		decoded := l.object(at, d.json)
		l.yaml = nil
		fieldLines(d.yaml, at, l.errs.errs[e0:])
		fieldLines(d.yaml, at, l.out.Warnings[w0:])
		return decoded
	})
	if void {
		l.errs = errorList{} // read as YAML after all, and failed: only the JSON error counts
	}
	l.done.merge(&l.synErrs)
	l.done.merge(&l.errs)
	l.synErrs, l.errs = errorList{}, errorList{}
}

// fieldLines moves each of errs found in the document (or List item)
// read at at, whose YAML is text, that names a field from at's line to
// the field's line in text (see fieldLine). An error of another item (of
// a List decoded whole) is left alone: its field is the item's, and
// text the List's.
func fieldLines[E error](text []byte, at where, errs []E) {
	if text == nil {
		return
	}
	for _, err := range errs {
		var e *Error
		if !errors.As(err, &e) || e.File != at.file || e.Line != at.line || e.Document != at.doc || e.Item != at.item {
			continue
		}
		first := 0 // the line of the first of e's fields in the document
		for _, f := range errorFields(e) {
			if n, ok := fieldLine(text, f); ok && (first == 0 || n < first) {
				first = n
			}
		}
		if first > 0 {
			e.Line = at.line + first - 1
		}
	}
}

// errorFields are the fields e is about: its Field, or the unknown or
// repeated fields a strict-decoding error lists in its text.
func errorFields(e *Error) []string {
	if e.Field != "" {
		return []string{e.Field}
	}
	var se interface{ Errors() []error }
	if !errors.Is(e.Err, ErrUnknownField) || !errors.As(e.Err, &se) {
		return nil
	}
	var fields []string
	for _, fe := range se.Errors() {
		if f, ok := strictField(fe.Error()); ok {
			fields = append(fields, f)
		}
	}
	return fields
}

// strictField returns the field path X of a strict-decoding error's
// `unknown field "X"` or `duplicate field "X"`.
func strictField(msg string) (string, bool) {
	for _, p := range [...]string{`unknown field "`, `duplicate field "`} {
		if rest, ok := strings.CutPrefix(msg, p); ok && strings.HasSuffix(rest, `"`) {
			f, err := strconv.Unquote(`"` + rest)
			return f, err == nil && f != ""
		}
	}
	return "", false
}

// object decodes one JSON object (a document or a List item) and files it;
// it reports whether the object decoded (whatever its validation found).
func (l *loader) object(at where, js []byte) bool {
	js = bytes.TrimSpace(js)
	if len(js) == 0 || bytes.Equal(js, []byte("null")) {
		if at.item != "" {
			l.errs.add(l.errorAt(at, fmt.Errorf("%w: list item is null", ErrDecode)))
		}
		return false // an empty document, such as a trailing "---"
	}
	if js[0] != '{' {
		l.errs.add(l.errorAt(at, fmt.Errorf("%w: %s is not a mapping", ErrDecode, jsonKind(js[0]))))
		return false
	}
	if screenQuantities && maySlowQuantity(js) && l.slowQuantities(at, js) {
		return false
	}
	obj, gvk, err := l.decoder.Decode(js, nil, nil)
	switch {
	case err == nil:
	case runtime.IsStrictDecodingError(err) && !l.opts.Strict:
		// Decoded in full: only the repeated fields are worth a warning.
		if dups := repeatedFields(err); dups != nil {
			e := l.errorAt(at, fmt.Errorf("%w: %w", ErrUnknownField, runtime.NewStrictDecodingError(dups)))
			setIdentity(e, obj)
			l.out.Warnings = append(l.out.Warnings, e)
		}
	case runtime.IsStrictDecodingError(err):
		e := l.errorAt(at, fmt.Errorf("%w: %w", ErrUnknownField, err))
		setIdentity(e, obj)
		l.errs.add(e)
		return false
	case runtime.IsNotRegisteredError(err):
		l.other(at, *gvk, nil, js)
		return false
	case runtime.IsMissingKind(err):
		e := l.errorAt(at, fmt.Errorf("%w: no kind", ErrMissingKind))
		e.Field = "kind"
		l.errs.add(e)
		return false
	case runtime.IsMissingVersion(err):
		e := l.errorAt(at, fmt.Errorf("%w: no apiVersion", ErrMissingKind))
		e.Field = "apiVersion"
		if gvk != nil {
			e.Kind = gvk.Kind
		}
		l.errs.add(e)
		return false
	default:
		e := l.errorAt(at, fmt.Errorf("%w: %w", ErrDecode, err))
		if gvk != nil {
			e.Kind = gvk.Kind
		}
		describeDecodeError(e, js)
		l.errs.add(e)
		return false
	}
	switch obj := obj.(type) {
	case *v1.Node:
		l.node(at, obj)
	case *v1.Pod:
		l.pod(at, obj, nil)
	case *v1.NodeList:
		for i := range obj.Items {
			l.node(at.inItem(i), &obj.Items[i])
		}
	case *v1.PodList:
		for i := range obj.Items {
			l.pod(at.inItem(i), &obj.Items[i], nil)
		}
	case *v1.List:
		for i, item := range obj.Items {
			l.object(at.inItem(i), item.Raw)
		}
	case *v1.Namespace, *v1.Service, *v1.ReplicationController, *appsv1.ReplicaSet, *appsv1.StatefulSet,
		*schedulingv1.PriorityClass, *policyv1.PodDisruptionBudget:
		switch o := obj.(type) {
		case *v1.ReplicationController:
			defaultReplicationController(o)
		case *v1.Namespace:
			if l.terminating != nil && (o.DeletionTimestamp != nil || o.Status.Phase == v1.NamespaceTerminating) {
				l.terminating[o.Name] = true
			}
		}
		if !l.opts.ExpandWorkloads {
			l.cluster(at, obj)
		} else if uid := workloadUID(obj); l.cluster(at, obj) {
			l.noteWorkload(at, obj, uid)
		}
	case *appsv1.Deployment:
		if l.opts.ExpandWorkloads {
			l.deployment(at, obj)
		} else {
			l.other(at, *gvk, obj, nil)
		}
	case *appsv1.DaemonSet:
		if l.opts.ExpandWorkloads {
			l.daemonSet(at, obj)
		} else {
			l.other(at, *gvk, obj, nil)
		}
	default:
		l.other(at, *gvk, obj, nil)
	}
	return true
}

// screenQuantities turns the screening of quantities before decoding on;
// off only in benchmarks, which compare both ways.
var screenQuantities = true

// slowQuantities reports, and records as errors, the quantity fields of
// js that the decoder would take minutes to parse or would truncate
// (quantity.Screen); js is then not decoded.
func (l *loader) slowQuantities(at where, js []byte) bool {
	t := objectType(js)
	if t == nil {
		return false // not a registered kind: the decoder decodes no field
	}
	ps := slowQuantities(js, t)
	if len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		e := l.errorAt(at, fmt.Errorf("%w: %w", ErrDecode, p.err))
		identify(e, js)
		e.Field = p.field
		l.errs.add(e)
	}
	return true
}

// repeatedFields returns the "duplicate field" errors among those of a
// strict decoding error (sigs.k8s.io/json's wording, which apimachinery
// passes on; TestReadWarnsOfRepeatedKeys pins it); nil when none.
func repeatedFields(err error) []error {
	se, ok := runtime.AsStrictDecodingError(err)
	if !ok {
		return nil
	}
	var dups []error
	for _, e := range se.Errors() {
		if strings.HasPrefix(e.Error(), "duplicate field ") {
			dups = append(dups, e)
		}
	}
	return dups
}

func (w where) inItem(i int) where {
	item := "items[" + strconv.Itoa(i) + "]"
	if w.item != "" {
		item = w.item + "." + item
	}
	w.item = item
	return w
}

// other skips, or with RejectOtherKinds rejects, an object of another kind.
// obj is the decoded object, or nil with js its JSON (a kind the scheme
// does not know): either names the object in a rejection.
func (l *loader) other(at where, gvk schema.GroupVersionKind, obj runtime.Object, js []byte) {
	if l.opts.RejectOtherKinds {
		deployment := ""
		if l.opts.ExpandWorkloads {
			deployment = " Deployment, DaemonSet,"
		}
		e := l.errorAt(at, fmt.Errorf("%w: %s %s (want Node, Pod, Namespace, Service, ReplicationController, ReplicaSet, StatefulSet,%s PriorityClass, PodDisruptionBudget, List, NodeList or PodList)",
			ErrKind, gvk.GroupVersion().String(), gvk.Kind, deployment))
		if obj != nil {
			setIdentity(e, obj)
		} else {
			identify(e, js)
		}
		e.Kind = gvk.Kind
		l.errs.add(e)
		return
	}
	if l.out.Skipped == nil {
		l.out.Skipped = map[schema.GroupVersionKind]int{}
	}
	l.out.Skipped[gvk]++
}

func (l *loader) node(at where, n *v1.Node) {
	ok := true
	for _, p := range nodeProblems(n) {
		e := l.errorAt(at, p.err)
		e.Kind, e.Name, e.Field = "Node", n.Name, p.field
		l.errs.add(e)
		ok = false
	}
	if !ok {
		return
	}
	defaultNode(n)
	if first, dup := l.nodes[n.Name]; dup {
		e := l.errorAt(at, fmt.Errorf("%w: also at %s", ErrDuplicate, first))
		e.Kind, e.Name, e.Field = "Node", n.Name, "metadata.name"
		l.errs.add(e)
		return
	}
	l.nodes[n.Name] = at
	if l.opts.ExpandWorkloads {
		l.nodeObjs = append(l.nodeObjs, n)
	}
	if l.cache == nil {
		l.out.Nodes = append(l.out.Nodes, n)
	} else if !l.failed() {
		l.feed(at, "Node", "", n.Name, l.cache.AddNode(n))
	}
}

// pod files a pod of the input or, when src is set, one made for the
// workload src (Options.ExpandWorkloads), whose errors name the workload
// and the template's field. It reports whether p was valid and new.
func (l *loader) pod(at where, p *v1.Pod, src *origin) bool {
	if p.Namespace == "" {
		p.Namespace = metav1.NamespaceDefault
	}
	fail := func(field string, err error) {
		e := l.errorAt(at, err)
		e.Kind, e.Namespace, e.Name, e.Field = "Pod", p.Namespace, p.Name, field
		if src != nil {
			e.Kind, e.Namespace, e.Name, e.Field = src.kind, src.namespace, src.name, templateField(field)
		}
		l.errs.add(e)
	}
	ok := true
	for _, pr := range podProblems(p) {
		fail(pr.field, pr.err)
		ok = false
	}
	if !ok {
		return false
	}
	defaultPod(p)
	key := p.Namespace + "/" + p.Name
	if first, dup := l.pods[key]; dup {
		if src != nil {
			// The workload's name makes the pod's.
			fail("metadata.name", fmt.Errorf("%w: its pod %q is also at %s", ErrDuplicate, key, first))
		} else {
			fail("metadata.name", fmt.Errorf("%w: also at %s", ErrDuplicate, first))
		}
		return false
	}
	l.pods[key] = at
	if l.podOwners != nil && src == nil {
		ctrl := metav1.GetControllerOfNoCopy(p)
		active := podActive(p)
		l.podOwners.note(p.Namespace, ctrl, active)
		l.podLabels.add(p.Namespace, p.Labels, ctrl, active)
		l.inputPods[key] = factsOf(p, ctrl, active)
	}
	switch {
	case l.cache == nil || p.Spec.NodeName == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed:
		// Not bound, or terminal: not the cache's (see Options.ReadCache).
		l.out.Pods = append(l.out.Pods, p)
	case !l.failed():
		l.feed(at, "Pod", p.Namespace, p.Name, l.cache.AddPod(p))
	}
	return true
}

// cluster files one of the other objects a Cache takes and reports
// whether it was valid and new.
func (l *loader) cluster(at where, obj runtime.Object) bool {
	m := obj.(metav1.Object)
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	k, err := objects.Identify(obj)
	if err != nil {
		e := l.errorAt(at, ErrMissingName)
		e.Kind, e.Namespace, e.Field = kind, m.GetNamespace(), "metadata.name"
		l.errs.add(e)
		return false
	}
	if k.Kind.Namespaced() && k.Namespace == "" {
		m.SetNamespace(metav1.NamespaceDefault)
		k.Namespace = metav1.NamespaceDefault
	}
	problems := objects.Check(obj)
	for _, p := range problems {
		e := l.errorAt(at, fmt.Errorf("%w: %s", ErrInvalidObject, p.ErrorBody()))
		e.Kind, e.Namespace, e.Name, e.Field = kind, k.Namespace, k.Name, p.Field
		l.errs.add(e)
	}
	if len(problems) > 0 {
		return false
	}
	if first, dup := l.others[k]; dup {
		e := l.errorAt(at, fmt.Errorf("%w: also at %s", ErrDuplicate, first))
		e.Kind, e.Namespace, e.Name, e.Field = kind, k.Namespace, k.Name, "metadata.name"
		l.errs.add(e)
		return false
	}
	l.others[k] = at
	if l.cache == nil {
		l.out.Others = append(l.out.Others, obj)
	} else if !l.failed() {
		l.feed(at, kind, k.Namespace, k.Name, l.cache.AddObject(obj))
	}
	return true
}

// feed records the error, if any, of giving the cache an object read at
// at.
func (l *loader) feed(at where, kind, ns, name string, err error) {
	if err != nil {
		e := l.errorAt(at, err)
		e.Kind, e.Namespace, e.Name = kind, ns, name
		l.errs.add(e)
	}
}

func (l *loader) errorAt(at where, err error) *Error {
	return &Error{File: at.file, Line: at.line, Document: at.doc, Item: at.item, Err: err}
}

// setIdentity fills in kind and name from a partly decoded object.
func setIdentity(e *Error, obj runtime.Object) {
	switch o := obj.(type) {
	case *v1.Node:
		e.Kind, e.Name = "Node", o.Name
	case *v1.Pod:
		e.Kind, e.Namespace, e.Name = "Pod", o.Namespace, o.Name
	case nil:
	default:
		e.Kind = o.GetObjectKind().GroupVersionKind().Kind
		if m, ok := o.(metav1.Object); ok {
			e.Namespace, e.Name = m.GetNamespace(), m.GetName()
		}
	}
	defaultNamespace(e)
}

func jsonKind(first byte) string {
	switch first {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}
