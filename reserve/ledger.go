package reserve

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/informer"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/objects"
	"github.com/schedkit/schedkit/snapshot"
)

// Phase is where a pod stands in the ledger.
type Phase uint8

const (
	// Held: the scheduler reserved the pod on a node ([Ledger.Reserve]); its
	// bind is not yet done or seen. Counts in [NodeUsage.Held].
	Held Phase = iota + 1
	// Confirmed: the caller's bind succeeded ([Ledger.Confirm]) and the
	// informer has not reported the pod yet. Counts in [NodeUsage.Bound].
	Confirmed
	// Bound: the informer reported the pod bound ([Ledger.AddPod] with
	// spec.nodeName). Counts in [NodeUsage.Bound].
	Bound
)

// String returns "Held", "Confirmed" or "Bound".
func (p Phase) String() string {
	switch p {
	case Held:
		return "Held"
	case Confirmed:
		return "Confirmed"
	case Bound:
		return "Bound"
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// noDeadline marks a hold that never expires.
const noDeadline = math.MaxInt64

// Ledger is the reservation ledger: one object that is fed the informer's
// node and pod events (it keeps the snapshot they build) and the
// scheduler's decisions (Reserve, Unreserve, Confirm), and answers "does
// this pod fit on that node, counting everything already promised?" — the
// state upstream keeps as assumed pods in its scheduler cache, as a library.
//
// Every pod key is in at most one [Phase] on one node; a pod's capacity is
// counted exactly once, whichever of Confirm and the informer's report comes
// first. The zero Ledger is not usable; call [New].
//
// Informer contract. The informer side (AddNode, UpdateNode, RemoveNode,
// AddPod, UpdatePod, RemovePod) follows the contract snapshot.Cache also
// follows, written once in schedkit's internal/informertest (whose
// conformance suite both pass, and which a random test runs over both side
// by side) after upstream kube-scheduler v1.37's event handlers and cache:
// a bound pod (spec.nodeName set) counts on its node; an unbound pod is
// not counted (holds and confirmations stay; an unbound report of a pod the
// informer reported bound is an error, spec.nodeName being immutable); a
// pod in phase Succeeded or Failed is gone, as a delete; a pod may arrive
// before its node and waits for it; a removed node's pods stay recorded
// until deleted or until the node returns; an update may move a pod
// created again under its name (a new metadata.uid), while the same pod
// reported bound to another node is an error, spec.nodeName being
// immutable (the informer's bind of a held pod, to any node, is not a
// move: the hold becomes the bound pod there); a
// repeated add updates and an update of an unknown object adds; removing
// an unknown pod is a no-op and removing an unknown node an error; a bad
// object is an error naming the object and field that changes nothing.
// Which pods count is decided by the same code as in the Cache
// (internal/informer). Cluster objects other than nodes and pods
// (Services, ReplicaSets, PriorityClasses, ...) are taken with
// [Ledger.AddObject], [Ledger.UpdateObject] and [Ledger.RemoveObject], as
// snapshot.Cache takes them, and ride along in the ledger's snapshots.
// The informer's nodes and bound pods are not
// journaled (the informer lists them again after a restart); what its
// reports do to holds and reservations is (see [Ledger.SetJournal]).
//
// Safe for concurrent use by any number of goroutines: every method takes
// one mutex, so two reservers racing for the last capacity of a node are
// ordered and exactly one wins. The ledger reads no clock, starts no
// goroutine and logs nothing.
type Ledger struct {
	mu sync.Mutex

	view   *snapshot.Fork                // see view.go
	inView map[snapshot.PodKey]viewEntry // ledger-owned pods in the view
	epoch  uint64

	nodes     []nodeAgg // dense per-node aggregates
	nodeIdx   nameTable // node name -> index into nodes
	freeNodes []int32   // reusable slots of forgotten absent nodes

	held     podTable // Held or Confirmed pod -> index into recs
	bound    podTable // Bound pod -> index into recs
	recs     []podRec
	freeRecs []int32
	owned    []int32 // recs in phase Held or Confirmed (ledger-owned)

	res   map[string]*reservation
	draws map[snapshot.PodKey]*draw
	// lapsed: pods whose share of a reservation was returned when their
	// hold was released (Unreserve, Expire) before the informer reported
	// them; a late report on the reservation's node draws again. See
	// observeBound.
	lapsed map[snapshot.PodKey]*reservation

	j *journal

	// devices chooses the devices of GPU pods that arrive without them
	// (WithDeviceChooser); nil for none.
	devices snapshot.DeviceChooser

	// lean: bound pods are kept as lean records (WithLeanPods).
	lean bool

	ver     uint64 // bumped by every change the overlay snapshot shows
	snap    *snapshot.Snapshot
	snapVer uint64
}

// nodeAgg is the ledger's per-node view. The Pods entry of bound and held
// counts pods (and reservations), as allocatable's Pods entry counts slots.
//
// Field order is for the fit check: the three vectors' inline parts, the
// presence flag and the reservations' length sit in the first three cache
// lines; the name, read only off the hot path, comes last.
type nodeAgg struct {
	alloc   snapshot.Vector
	bound   snapshot.Vector // pods the informer reported, plus confirmed pods
	held    snapshot.Vector // holds, plus the unallocated part of reservations
	present bool            // the informer reported the node and has not removed it
	refs    int32           // recs and reservations on this node
	res     []*reservation  // named reservations here, sorted by name
	name    string
	node    *v1.Node // the informer's object; nil when absent
}

type podRec struct {
	key      snapshot.PodKey
	hash     uint64 // nodeview.HashKey(key)
	pi       *snapshot.PodInfo
	node     int32
	phase    Phase
	ownedPos int32 // index in Ledger.owned when Held or Confirmed
	deadline int64 // UnixNano; noDeadline for none
	// uid: uidHash of the metadata.uid of a Bound pod as reported (of ""
	// when the report had none), so that the same pod reported on another
	// node is refused while a pod created again under its name moves
	// (observeBound).
	uid uint64
}

// uidSeed seeds uidHash.
var uidSeed = maphash.MakeSeed()

// uidHash is a 64-bit hash of metadata.uid ("" included): what a Bound
// record keeps to tell a pod created again (another uid: it may move)
// from the same pod reported on another node (refused: spec.nodeName
// cannot change) without holding the uid string. Two different uids
// collide with probability 2^-64, which would let such a report move the
// pod as before. O(len(uid)).
func uidHash(uid types.UID) uint64 { return maphash.String(uidSeed, string(uid)) }

// uidOf is pi's metadata.uid: "" for a lean record, which keeps none
// (as snapshot.Cache reads it).
func uidOf(pi *snapshot.PodInfo) types.UID {
	if !pi.Retained() {
		return ""
	}
	return pi.Pod().UID
}

// New returns an empty ledger with no journal, configured by opts. O(1).
func New(opts ...Option) *Ledger {
	l := &Ledger{
		view:   snapshot.Empty().Fork(),
		inView: map[snapshot.PodKey]viewEntry{},
		res:    map[string]*reservation{},
		draws:  map[snapshot.PodKey]*draw{},
		lapsed: map[snapshot.PodKey]*reservation{},
	}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Option configures a Ledger (see [New]).
type Option func(*Ledger)

// WithDeviceChooser gives the ledger the device policy for GPU pods that
// arrive without recorded devices ([snapshot.PodInfo.Devices]): a pod
// reserved without them gets dc's choice on the node as the ledger counts
// it (every bound pod, hold and confirmation), and the hold records it; a
// pod the informer reports bound without them is charged to dc's choice
// when it joins the ledger's snapshot (to no device if dc finds none: an
// informer's report is a fact). Without a chooser (the default) the
// ledger makes no device choice: reserving a pod whose demand is annotated
// by a share schema (not [snapshot.GPURequest].Whole; e.g. the openb
// annotations) without recorded devices on a node with
// devices is an error ([ErrInvalid]) — choose its devices first
// ([snapshot.PodInfo.WithDevices]), as the framework's cycle does — while
// a whole-GPU nvidia.com/gpu demand ([snapshot.GPURequest].Whole, whose
// devices the kubelet's device plugin picks) is held, after the same
// room check, on no device: the fit check counts it as the extended
// resource. A bound pod reported without devices is counted in the node's
// requests but charged to no device (see [snapshot.NodeInfo.Devices]).
// gpushare.BestFit{} is the FGD simulator's default choice.
func WithDeviceChooser(dc snapshot.DeviceChooser) Option {
	return func(l *Ledger) { l.devices = dc }
}

// WithDeviceDecoder makes the ledger read the devices of the nodes and
// pods its informer methods take, and of the pods in a journal it
// replays or a document it imports, with dec (for example openb.Devices,
// package snapshot/load/openb); the default is snapshot.NvidiaDevices.
// Pods the caller parses for Reserve should use the same decoder
// (snapshot.DecodePodInfo). Give it before any event: it starts the
// ledger's state afresh.
func WithDeviceDecoder(dec snapshot.DeviceDecoder) Option {
	return func(l *Ledger) { l.view = snapshot.NewCacheWithDevices(dec).Snapshot().Fork() }
}

// WithLeanPods makes the ledger keep a lean record
// ([snapshot.PodInfo.Lean]) of every pod it counts as bound (AddPod,
// UpdatePod, AddPodInfo): what scheduling reads, without the pod object,
// the templates of a workload's replicas shared — a simulator can then
// hold millions of pods. Decisions are the same. Holds and confirmations
// keep the records the caller reserved. Without it (the default) the
// ledger keeps the objects and records it is given. What needs the pod
// objects fails while the ledger holds a lean record, with an error
// ([ErrInvalid]) naming the pod and this option: [Ledger.Export],
// [Ledger.SetJournal] (its begin record holds the bound pods), and
// journaling a hold of a lean record.
func WithLeanPods() Option {
	return func(l *Ledger) { l.lean = true }
}

// ---- informer side --------------------------------------------------------

// AddNode adds node, or updates it if known (informers replay events).
// Holds and reservations on it count against the new allocatable; a node
// that shrank under them stays over-committed until pods leave — the ledger
// never drops a hold it granted. Errors (nil node, empty name: [ErrInvalid];
// negative allocatable: [ErrInvalid] and [snapshot.ErrNegativeQuantity])
// name the node and field and change nothing. O(resources) to update a
// known node; adding one the ledger kept pods for (reported before it, or
// left when it was removed) scans the bound pods.
func (l *Ledger) AddNode(node *v1.Node) (err error) {
	defer named("AddNode", &err)
	return l.addNode(node)
}

// UpdateNode is [Ledger.AddNode].
func (l *Ledger) UpdateNode(node *v1.Node) (err error) {
	defer named("UpdateNode", &err)
	return l.addNode(node)
}

func (l *Ledger) addNode(node *v1.Node) error {
	if node == nil {
		return fmt.Errorf("node is nil: %w", ErrInvalid)
	}
	if node.Name == "" {
		return fmt.Errorf("node: metadata.name is empty: %w", ErrInvalid)
	}
	if errs := objects.MetaNames(node.Name, "", apivalidation.NameIsDNSSubdomain); len(errs) > 0 {
		return fmt.Errorf("node %q: %w: %w: %w", node.Name, errs.ToAggregate(), ErrInvalid, snapshot.ErrInvalidObject)
	}
	alloc, err := snapshot.NewVector(node.Status.Allocatable)
	if err != nil {
		return fmt.Errorf("node %s: status.allocatable: %w: %w", node.Name, ErrInvalid, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.nodeSlot(node.Name)
	if l.nodes[i].present {
		mustView(l.view.UpdateNode(node))
	} else {
		l.viewAddNode(i, node)
	}
	n := &l.nodes[i]
	n.present, n.alloc, n.node = true, alloc, node
	l.ver++
	return nil
}

// RemoveNode removes the node called name. Its bound pods, holds and
// reservations stay recorded (outside snapshots, and nothing new can be
// reserved there) until they are removed, or until the node comes back.
// Returns an error wrapping [ErrNodeNotFound] (which errors.Is also matches to [snapshot.ErrNodeNotFound])
// for a node that is not there.
func (l *Ledger) RemoveNode(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.nodeIndex(name)
	if !ok || !l.nodes[i].present {
		return fmt.Errorf("reserve: Ledger.RemoveNode: node %q: %w", name, ErrNodeNotFound)
	}
	l.viewRemoveNode(name)
	n := &l.nodes[i]
	n.present, n.alloc, n.node = false, snapshot.Vector{}, nil
	l.maybeFreeNode(i)
	l.ver++
	return nil
}

// AddPod reports a pod from the informer, under the informer contract
// (see [Ledger]). A pod without spec.nodeName is pending: the ledger does
// not count it (a hold it may have is kept); but an unbound report of a
// pod the informer reported bound is an error (spec.nodeName cannot be
// cleared). A pod in phase Succeeded or Failed is gone, as
// [Ledger.RemovePod] (upstream's informer excludes terminal pods with a
// field selector, so they arrive as deletes; a plain informer delivers
// them as updates); only its key is read. A bound pod
// joins its node; if the ledger held or confirmed it, that record becomes
// the bound pod exactly once — on whichever node the informer names —
// and a share drawn from a named reservation stays drawn (or, for an
// allocate-once reservation, consumes it). A late bind — a pod whose hold
// and share were released by [Ledger.Unreserve] or [Ledger.Expire] (the
// bind was reported failed, or timed out) and that the informer then
// reports bound on that reservation's node after all — draws on the
// reservation again, up to what is left, so the capacity is not given out
// twice (see [Reservation]). Errors (nil pod, empty metadata.name, a
// metadata.name or metadata.namespace the API server refuses — checked for
// every pod, bound or not: only the key of an unbound or terminal pod is
// read —, invalid requests of a bound pod, a bound pod recording a GPU device its known
// node does not have, the unbound report of a bound pod, the same bound
// pod — the same metadata.uid — reported on another node, which only a
// pod created again under its name can be) wrap [ErrInvalid] and
// [snapshot.ErrInvalidObject] ([snapshot.ErrNegativeQuantity] instead of
// the latter for a negative request, limit or overhead), name the pod
// and field, and change nothing. O(containers + pods on the node).
func (l *Ledger) AddPod(pod *v1.Pod) (err error) {
	defer named("AddPod", &err)
	return l.addPod(pod)
}

// UpdatePod is [Ledger.AddPod].
func (l *Ledger) UpdatePod(pod *v1.Pod) (err error) {
	defer named("UpdatePod", &err)
	return l.addPod(pod)
}

func (l *Ledger) addPod(pod *v1.Pod) error {
	kind, err := informer.Classify(pod)
	if err != nil {
		return fmt.Errorf("%w: %w: %w", err, ErrInvalid, snapshot.ErrInvalidObject)
	}
	if err := checkNotPlaceholderKey(snapshot.KeyOf(pod)); err != nil {
		return err
	}
	switch kind {
	case informer.Terminal:
		l.RemovePod(snapshot.KeyOf(pod))
		return nil
	case informer.Unbound:
		l.mu.Lock()
		defer l.mu.Unlock()
		k := snapshot.KeyOf(pod)
		if i, ok := l.bound.get(nodeview.HashKey(k), k, l.recs); ok {
			return fmt.Errorf("%w: %w: %w", informer.UnbindError(pod, l.nodes[l.recs[i].node].name), ErrInvalid, snapshot.ErrInvalidObject)
		}
		return nil
	}
	pi, err := snapshot.DecodePodInfo(pod, l.view.DeviceDecoder())
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	if l.lean {
		pi = pi.Lean()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := snapshot.CheckRecordedDevices(pi, l.view.Get(pod.Spec.NodeName)); err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	return l.observeBound(pi, pod.UID, pod.Spec.NodeName)
}

// AddPodInfo reports pi bound to nodeName, as [Ledger.AddPod] does for a
// bound pod, without re-parsing it: for a simulator or a loop that binds
// without an API server, it turns the pod's hold or confirmation into a
// bound pod at once and keeps the devices pi records (pi.Devices). The pod
// object's spec.nodeName is not read. Errors: a nil pod, an empty node
// name, a pod recording a GPU device its known node does not have
// ([snapshot.CheckRecordedDevices]), or a pod bound to another node with
// the same metadata.uid (as [Ledger.AddPod]; a lean pi has none, so ""),
// wrapping ErrInvalid. With
// [WithLeanPods] the ledger keeps pi.Lean(). O(pods on the node).
func (l *Ledger) AddPodInfo(pi *snapshot.PodInfo, nodeName string) (err error) {
	defer named("AddPodInfo", &err)
	if pi == nil {
		return fmt.Errorf("pod is nil: %w", ErrInvalid)
	}
	if nodeName == "" {
		return fmt.Errorf("pod %s: node name is empty: %w", pi.Key(), ErrInvalid)
	}
	if err := checkNotPlaceholderKey(pi.Key()); err != nil {
		return err
	}
	uid := uidOf(pi)
	if l.lean {
		pi = pi.Lean()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := snapshot.CheckRecordedDevices(pi, l.view.Get(nodeName)); err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	return l.observeBound(pi, uid, nodeName)
}

// RemovePod reports that the pod with key k was deleted: whatever it held
// or used — a hold, a confirmation, a bound pod, a share of a named
// reservation (also one a late bind drew) — is freed at once, the share
// returning to its reservation. An unknown pod is a no-op. It reports
// whether anything was there (a lapsed share, see [Ledger.AddPod], is
// forgotten but not counted: it held nothing).
func (l *Ledger) RemovePod(k snapshot.PodKey) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.rec(k)
	_, drew := l.draws[k]
	if !ok && !drew {
		if l.lapsed[k] != nil {
			_ = l.logRelease(opRemove, k) // a fact
			delete(l.lapsed, k)
		}
		return false
	}
	l.viewUnbind(k, i, ok)
	if drew || l.recs[i].phase != Bound || l.lapsed[k] != nil {
		_ = l.logRelease(opRemove, k) // a fact: applies even with a broken journal
	}
	delete(l.lapsed, k)
	l.returnDraw(k)
	if ok {
		l.dropRec(i)
	}
	return true
}

// observeBound records that the informer reports pi (metadata.uid uid)
// bound to nodeName. A pod the ledger has bound to another node moves
// only when uid differs from the one it was reported with (a pod deleted
// and created again, the delete and add merged into one update, as
// snapshot.Cache and upstream's updatePodInCache treat it); the same pod
// on another node is refused with informer.MoveError, changing nothing.
func (l *Ledger) observeBound(pi *snapshot.PodInfo, uid types.UID, nodeName string) error {
	k := pi.Key()
	i, ok := l.rec(k)
	h := uidHash(uid)
	if ok && l.recs[i].phase == Bound && l.recs[i].uid == h {
		if from := l.nodes[l.recs[i].node].name; from != nodeName {
			return fmt.Errorf("%w: %w: %w", informer.MoveError(k.Namespace, k.Name, string(uid), from, nodeName), ErrInvalid, snapshot.ErrInvalidObject)
		}
	}
	l.viewUnbind(k, i, ok)
	defer func() {
		if ni, _ := l.nodeIndex(nodeName); l.nodes[ni].present {
			mustView(l.view.AddPodInfo(l.placeBound(pi, nodeName), nodeName))
		}
	}()
	if ok && l.recs[i].phase == Bound {
		ni := l.nodeSlot(nodeName)
		rec := &l.recs[i]
		old := rec.node
		sub(&l.nodes[old].bound, rec.pi.Requested())
		rec.pi, rec.node, rec.uid = pi, ni, h
		add(&l.nodes[ni].bound, pi.Requested())
		l.nodes[ni].refs++
		l.unref(old)
		if d := l.draws[k]; d != nil && d.res.spec.Node != nodeName {
			l.logSettle(k, nodeName)
			l.returnDraw(k)
		}
		l.ver++
		return nil
	}
	// A late bind draws again on the reservation whose share lapsed, if
	// the ledger did not count the pod on this node already (a hold here
	// was checked next to the reservation; a share here is settled).
	lapsed := l.lapsed[k]
	d := l.draws[k]
	countedHere := (ok && l.nodes[l.recs[i].node].name == nodeName) || (d != nil && d.res.spec.Node == nodeName)
	if ok || d != nil || lapsed != nil {
		l.logSettle(k, nodeName)
	}
	delete(l.lapsed, k)
	if ok {
		l.dropRec(i) // may forget an absent node: look the node up after
	}
	l.settleDraw(k, nodeName)
	ni := l.nodeSlot(nodeName)
	l.newRec(podRec{key: k, hash: nodeview.KeyHash(pi), pi: pi, node: ni, phase: Bound, deadline: noDeadline, uid: h})
	if lapsed != nil && !countedHere && lapsed.spec.Node == nodeName {
		l.lateDraw(k, lapsed, pi)
	}
	l.ver++
	return nil
}

// lateDraw makes bound pod k (request pi) draw on r, the reservation its
// released share came from, up to what r has left; an allocate-once
// reservation another pod draws on gives nothing, and one k draws on is
// consumed, as at a bind. Journaled as a draw (and a settle that consumes).
func (l *Ledger) lateDraw(k snapshot.PodKey, r *reservation, pi *snapshot.PodInfo) {
	if r.spec.AllocateOnce && len(r.pods) > 0 {
		return
	}
	share := r.shareFor(pi.Requested())
	if share.IsZero() {
		return
	}
	l.logDraw(k, r, &share)
	l.attachDraw(k, r, share)
	if r.spec.AllocateOnce {
		l.logSettle(k, r.spec.Node)
		l.consumeOnce(k)
	}
}

// lapse remembers the reservation pod k draws on, if any, before its hold
// is released by Unreserve or Expire (not by a delete: a deleted pod is
// never reported bound).
func (l *Ledger) lapse(k snapshot.PodKey) {
	if d := l.draws[k]; d != nil {
		l.lapsed[k] = d.res
	}
}

// settleDraw applies "pod k is bound on node nodeName" to its reservation
// share: a share on another node returns; a share of an allocate-once
// reservation consumes it.
func (l *Ledger) settleDraw(k snapshot.PodKey, nodeName string) {
	d := l.draws[k]
	if d == nil {
		return
	}
	if d.res.spec.Node != nodeName {
		l.returnDraw(k)
		return
	}
	l.consumeOnce(k)
}

// ---- scheduler side -------------------------------------------------------

// Fits reports what pod lacks on the node called nodeName, counting bound
// and confirmed pods, holds and named reservations (a matching pod draws on
// its reservation first): nil if it fits. The pod is judged on the request
// of a pod not yet bound ([snapshot.PodRequests].Pending: its spec, as
// upstream's NodeResourcesFit PreFilter computes it), the same request the
// framework's fit filter reads, so the two never disagree; what a hold
// charges is the effective request, as upstream's assume does (see
// [Ledger.Reserve]). It reserves nothing. Errors:
// nil pod ([ErrInvalid]), unknown node ([ErrNodeNotFound]). O(resources of
// the pod + reservations on the node); allocates only the reasons.
func (l *Ledger) Fits(pod *snapshot.PodInfo, nodeName string) (_ []Insufficient, err error) {
	defer named("Fits", &err)
	if pod == nil {
		return nil, fmt.Errorf("pod is nil: %w", ErrInvalid)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ni, ok := l.nodeIndex(nodeName)
	if !ok || !l.nodes[ni].present {
		return nil, fmt.Errorf("pod %s: node %q: %w", pod.Key(), nodeName, ErrNodeNotFound)
	}
	n := &l.nodes[ni]
	if len(n.res) > 0 {
		if r, d := l.pickReservation(n, pod); r != nil {
			return n.fit(&pod.Requests().Pending, &d, nil), nil
		}
	}
	return n.fit(&pod.Requests().Pending, nil, nil), nil
}

// Reserve holds pod's effective request ([snapshot.PodInfo.Requested]) on
// the node called nodeName, if it fits next to the node's bound and
// confirmed pods, holds and reservations (upstream NodeResourcesFit
// semantics, judged on the spec-only request as [Ledger.Fits] says; see
// [Insufficient]). A pending pod whose status carries resources above its
// spec is admitted on its spec and charged its status-aware request, as
// upstream's filter and assume do. The hold never expires; see
// [Ledger.ReserveUntil].
//
// Results:
//   - nil, nil: the pod is held (or was already held, confirmed or bound on
//     this node: a no-op; the ledger never resizes a hold — a held or
//     confirmed pod reserved again on its node with a different request is
//     an [ErrInvalid] error naming both requests: Unreserve it first).
//   - reasons, nil: it does not fit; nothing changed.
//   - nil, err: nil pod, a pod in [ReservationNamespace], or a different
//     request for a held pod ([ErrInvalid]); unknown node ([ErrNodeNotFound]);
//     the pod is held or bound on another node ([ErrConflict], naming both
//     nodes); the journal failed ([ErrJournal]).
//
// A pod matching a named reservation on the node draws on it first
// ([Ledger.AddReservation]). Cost: two pod-key look-ups with the hash the
// PodInfo caches (nodeview.KeyHash), one node-name hash and
// look-up, and O(resources of the pod); allocates nothing when the pod fits
// and the node has no named reservations (with a journal: the record).
func (l *Ledger) Reserve(pod *snapshot.PodInfo, nodeName string) (_ []Insufficient, err error) {
	defer named("Reserve", &err)
	return l.reserveUntil(pod, nodeName, time.Time{})
}

// ReserveUntil is [Ledger.Reserve] with a deadline: [Ledger.Expire] with a
// time at or after deadline releases the hold unless it was confirmed or
// bound first. The zero time means no deadline. Deadlines are kept at
// nanosecond precision (time.Time.UnixNano), clamped to years 1678–2262.
// The ledger reads no clock (the caller owns time), so a deadline already
// past is not an error: the hold is granted and the next Expire with a
// time at or after it releases it.
func (l *Ledger) ReserveUntil(pod *snapshot.PodInfo, nodeName string, deadline time.Time) (_ []Insufficient, err error) {
	defer named("ReserveUntil", &err)
	return l.reserveUntil(pod, nodeName, deadline)
}

func (l *Ledger) reserveUntil(pod *snapshot.PodInfo, nodeName string, deadline time.Time) ([]Insufficient, error) {
	if pod == nil {
		return nil, fmt.Errorf("pod is nil: %w", ErrInvalid)
	}
	dl := deadlineNanos(deadline)
	l.mu.Lock()
	defer l.mu.Unlock()
	var p plan
	reasons, err := l.plan(pod, nodeName, &p)
	if err != nil || reasons != nil || p.noop {
		return reasons, err
	}
	if p.pi != nil {
		pod = p.pi
	}
	if l.j != nil {
		if err := l.logHolds([]holdPlan{{pi: pod, plan: p, deadline: dl}}); err != nil {
			return nil, err
		}
	}
	l.applyHold(pod, &p, dl)
	return nil, nil
}

// Unreserve drops what the ledger itself records for the pod with key k —
// a hold or a confirmation the informer has not reported yet — and returns
// any share drawn from a named reservation. Pods the informer reports bound
// are untouched (only [Ledger.RemovePod] removes them). Idempotent and valid
// for a pod never reserved (upstream's Unreserve contract); it reports
// whether anything was released. The ledger remembers a returned share
// until the pod is reported bound or deleted, in case the bind succeeded
// after all (see [Ledger.AddPod]). With a broken journal
// ([Ledger.JournalErr] non-nil) it releases nothing and returns false (see
// [Ledger.SetJournal]). O(1); allocates nothing without a journal and
// without a share.
func (l *Ledger) Unreserve(k snapshot.PodKey) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.held.get(nodeview.HashKey(k), k, l.recs)
	if !ok || l.logRelease(opUnreserve, k) != nil {
		return false
	}
	l.lapse(k)
	l.returnDraw(k)
	l.dropRec(i)
	return true
}

// Confirm records that the caller's bind of the pod with key k succeeded:
// a hold becomes a confirmed pod (it stops expiring and counts as bound),
// and a share of an allocate-once reservation consumes it. When the
// informer later reports the pod, nothing is counted twice. Confirm of a
// pod already confirmed or reported bound is a no-op. Errors:
// [ErrNotHeld] if the ledger neither holds nor sees the pod bound (also
// the harmless case of a pod the informer reported and deleted already);
// [ErrJournal] if the journal is or becomes broken (the pod stays held; see
// [Ledger.SetJournal]).
func (l *Ledger) Confirm(k snapshot.PodKey) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.rec(k)
	if !ok {
		return fmt.Errorf("reserve: Ledger.Confirm: pod %s: %w", k, ErrNotHeld)
	}
	if l.recs[i].phase != Held {
		return nil
	}
	if err := l.logRelease(opConfirm, k); err != nil {
		return fmt.Errorf("reserve: Ledger.Confirm: pod %s: %w", k, err)
	}
	l.confirm(i)
	return nil
}

func (l *Ledger) confirm(i int32) {
	rec := &l.recs[i]
	n := &l.nodes[rec.node]
	sub(&n.held, rec.pi.Requested())
	add(&n.bound, rec.pi.Requested())
	rec.phase = Confirmed
	rec.deadline = noDeadline
	l.consumeOnce(rec.key)
	l.ver++
}

// Expire releases every hold whose deadline is at or before now (holds
// made with [Ledger.ReserveUntil]; confirmed and bound pods never expire)
// and returns their keys sorted by namespace and name, or nil. Expiry is
// opt-in: holds made with [Ledger.Reserve] never expire (upstream v1.37
// removed assumed-pod expiry because it double-booked nodes when a bind was
// slow). With a broken journal it releases nothing and returns nil (see
// [Ledger.SetJournal]). O(holds); allocates the result.
func (l *Ledger) Expire(now time.Time) []snapshot.PodKey {
	t := deadlineNanos(now)
	if now.IsZero() {
		t = math.MinInt64 // year 1: nothing is due
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []snapshot.PodKey
	for _, i := range l.owned {
		rec := &l.recs[i]
		if rec.phase == Held && rec.deadline <= t {
			out = append(out, rec.key)
		}
	}
	if out == nil {
		return nil
	}
	slices.SortFunc(out, cmpKey)
	if l.logUnreserve(opUnreserve, out) != nil {
		return nil // a broken journal: see SetJournal
	}
	for _, k := range out {
		l.lapse(k)
		l.returnDraw(k)
		i, _ := l.held.get(nodeview.HashKey(k), k, l.recs)
		l.dropRec(i)
	}
	return out
}

// Reconcile releases what the ledger records for pods that no longer
// exist — typically once, after a [Ledger.Replay] and the informers' first
// sync, for pods deleted while the scheduler was down. exists reports
// whether the cluster still has a pod (a pod lister look-up); it is called
// without the ledger's lock held, once per held or confirmed pod and per
// pod drawing on a reservation (or with a lapsed share, see
// [Ledger.AddPod]) that the informer has not reported bound. For each pod
// it denies, holds and confirmations are dropped, shares returned and
// lapsed shares forgotten. It returns those pods, sorted.
func (l *Ledger) Reconcile(exists func(snapshot.PodKey) bool) []snapshot.PodKey {
	l.mu.Lock()
	var cand []snapshot.PodKey
	for _, i := range l.owned {
		cand = append(cand, l.recs[i].key)
	}
	for k := range l.lapsed {
		if _, held := l.held.get(nodeview.HashKey(k), k, l.recs); !held && l.draws[k] == nil {
			cand = append(cand, k)
		}
	}
	for k := range l.draws {
		if _, ok := l.held.get(nodeview.HashKey(k), k, l.recs); !ok {
			if _, bound := l.bound.get(nodeview.HashKey(k), k, l.recs); !bound {
				cand = append(cand, k)
			}
		}
	}
	l.mu.Unlock()
	var gone []snapshot.PodKey
	for _, k := range cand {
		if !exists(k) {
			gone = append(gone, k)
		}
	}
	slices.SortFunc(gone, cmpKey)
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []snapshot.PodKey
	for _, k := range gone {
		_, held := l.held.get(nodeview.HashKey(k), k, l.recs)
		_, bound := l.bound.get(nodeview.HashKey(k), k, l.recs)
		if bound || (!held && l.draws[k] == nil && l.lapsed[k] == nil) {
			continue // reported or released meanwhile
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil
	}
	_ = l.logUnreserve(opRemove, out) // a fact: applies even with a broken journal
	for _, k := range out {
		delete(l.lapsed, k)
		l.returnDraw(k)
		if i, ok := l.held.get(nodeview.HashKey(k), k, l.recs); ok {
			l.dropRec(i)
		}
	}
	return out
}

// ---- views ----------------------------------------------------------------

// Snapshot returns an immutable snapshot of the informer's nodes and bound
// pods with the ledger's holds and confirmed pods added to their nodes, and
// one placeholder pod per named reservation (namespace
// [ReservationNamespace], requesting the reservation's unallocated
// capacity) — so filters and scorers count held capacity as requested.
// Holds on removed nodes are not shown. A reservation's own owners need
// [Ledger.SnapshotFor], which shows them the room it holds for them.
//
// Cost: O(1) when nothing changed since the last call (the same snapshot is
// returned). Otherwise the ledger's snapshot is brought up to date, not
// rebuilt: informer events were applied as they came; holds and
// reservations cost O(holds + reservations) map look-ups plus, for each one
// that changed, a copy of its node's NodeInfo on first touch
// ([snapshot.Fork] copy-on-write). Snapshots handed out never change. Safe
// for concurrent use; the result is shared and must not be modified.
func (l *Ledger) Snapshot() *snapshot.Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.snapshotLocked()
}

func (l *Ledger) snapshotLocked() *snapshot.Snapshot {
	if l.snap != nil && l.snapVer == l.ver {
		return l.snap
	}
	l.syncView()
	l.snap, l.snapVer = l.view.Snapshot(), l.ver
	return l.snap
}

// SnapshotFor returns the snapshot a scheduling cycle for pod should
// filter and score: [Ledger.Snapshot], except that on each node where pod
// would draw on a named reservation ([Ledger.Fits]' choice: the first
// matching one by name with something left), that reservation's
// placeholder requests what would be left after pod's share. The room the
// reservation holds for pod is free in pod's view, and the rest stays
// held, so a fit filter reading the result (request against allocatable −
// requested) gives, node by node, the verdict [Ledger.Fits] gives, and
// scorers see each node as it would be with pod placed there. reserved
// lists those nodes, sorted by name; it is nil when pod may draw on no
// reservation, and then snap is the shared [Ledger.Snapshot] itself.
//
// Any filter of the ledger's view for a pod that may own reservations
// must read this snapshot: on [Ledger.Snapshot] a reservation covering a
// node leaves no room for its own owner.
//
// Cost: that of [Ledger.Snapshot], plus O(reservations) owner matches
// (label selector or controller reference), allocation-free, when pod
// matches none (a ledger with no reservations skips even that); for an
// owner, an O(1) fork and, per reserved node, one placeholder and a
// copy of the node's NodeInfo (copy-on-write). Safe for concurrent use;
// the result is immutable and shared. A nil pod gets [Ledger.Snapshot].
func (l *Ledger) SnapshotFor(pod *snapshot.PodInfo) (snap *snapshot.Snapshot, reserved []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.snapshotLocked()
	if pod == nil || len(l.res) == 0 {
		return s, nil
	}
	var f *snapshot.Fork
	for _, r := range l.res {
		n := &l.nodes[r.node]
		if !n.present || !r.matches(pod) {
			continue
		}
		pr, d := l.pickReservation(n, pod)
		if pr != r {
			continue // another reservation on the node serves pod, or none has room
		}
		if f == nil {
			f = s.Fork()
		}
		left := r.cap.Clone()
		left.Sub(&r.alloc)
		left.Sub(&d)
		ph := r.placeholderOf(&left)
		mustView(f.RemovePod(ph.Key(), n.name))
		mustView(f.AddPodInfo(ph, n.name))
		reserved = append(reserved, n.name)
	}
	if f == nil {
		return s, nil
	}
	slices.Sort(reserved)
	return f.Snapshot(), reserved
}

// BoundSnapshot returns the informer's view alone — nodes and the pods it
// reported bound, without holds, confirmations or reservations.
// O(holds + reservations): it removes them from a fork of
// [Ledger.Snapshot], copying each node they touch.
func (l *Ledger) BoundSnapshot() *snapshot.Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.snapshotLocked()
	if len(l.inView) == 0 {
		return s
	}
	f := s.Fork()
	for k, e := range l.inView {
		mustView(f.RemovePod(k, e.node))
	}
	return f.Snapshot()
}

// NodeUsage is the ledger's accounting of one node. Vectors are in
// [snapshot.Vector] units; their [snapshot.Pods] entry counts pods.
type NodeUsage struct {
	// Allocatable is node.status.allocatable (zero after RemoveNode).
	Allocatable snapshot.Vector
	// Bound sums the effective requests of the pods the informer reported
	// bound and of confirmed pods; Pods entry: their number.
	Bound snapshot.Vector
	// Held sums the holds' requests and the unallocated capacity of named
	// reservations; Pods entry: holds plus one per reservation.
	Held snapshot.Vector
	// Present is false for a node the informer removed (or never
	// reported) that still has pods, holds or reservations recorded.
	Present bool
}

// Free returns Allocatable − Bound − Held for r (negative when the informer
// reported more than allocatable).
func (u *NodeUsage) Free(r snapshot.ResourceID) int64 {
	return arith.Sub(arith.Sub(u.Allocatable.Get(r), u.Bound.Get(r)), u.Held.Get(r))
}

// Usage returns the accounting of the node called name, and whether the
// ledger knows it. O(resources); allocates copies of extended vectors.
func (l *Ledger) Usage(name string) (NodeUsage, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.nodeIndex(name)
	if !ok {
		return NodeUsage{}, false
	}
	n := &l.nodes[i]
	return NodeUsage{Allocatable: n.alloc.Clone(), Bound: n.bound.Clone(), Held: n.held.Clone(), Present: n.present}, true
}

// Nodes returns the names of the nodes the ledger knows (present, or absent
// with pods or reservations recorded), sorted. O(nodes log nodes).
func (l *Ledger) Nodes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nodeIdx.sortedNames(l.nodes)
}

// HoldInfo describes a pod the ledger holds or has confirmed.
type HoldInfo struct {
	// Pod is the pod as reserved. Read-only.
	Pod *snapshot.PodInfo
	// Node is the node it is held on.
	Node string
	// Phase is Held or Confirmed.
	Phase Phase
	// Deadline is when [Ledger.Expire] releases a hold; zero for none.
	Deadline time.Time
	// Reservation names the named reservation the pod draws on, "" for
	// none; Drawn is the share drawn.
	Reservation string
	Drawn       snapshot.Vector
}

// Hold returns the hold or confirmation recorded for the pod with key k.
func (l *Ledger) Hold(k snapshot.PodKey) (HoldInfo, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.rec(k)
	if !ok || l.recs[i].phase == Bound {
		return HoldInfo{}, false
	}
	return l.holdInfo(i), true
}

// Holds returns every hold and confirmation, sorted by pod namespace and
// name. O(holds log holds); allocates the result.
func (l *Ledger) Holds() []HoldInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]HoldInfo, 0, len(l.owned))
	for _, i := range l.owned {
		out = append(out, l.holdInfo(i))
	}
	slices.SortFunc(out, func(a, b HoldInfo) int { return cmpKey(a.Pod.Key(), b.Pod.Key()) })
	return out
}

func (l *Ledger) holdInfo(i int32) HoldInfo {
	rec := &l.recs[i]
	h := HoldInfo{Pod: rec.pi, Node: l.nodes[rec.node].name, Phase: rec.phase}
	if rec.deadline != noDeadline {
		h.Deadline = time.Unix(0, rec.deadline).UTC()
	}
	if d := l.draws[rec.key]; d != nil {
		h.Reservation = d.res.spec.Name
		h.Drawn = d.amount.Clone()
	}
	return h
}

// PodPhase returns the phase and node of the pod with key k, if the ledger
// records it (held, confirmed, or reported bound by the informer).
func (l *Ledger) PodPhase(k snapshot.PodKey) (Phase, string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.rec(k)
	if !ok {
		return 0, "", false
	}
	return l.recs[i].phase, l.nodes[l.recs[i].node].name, true
}

// PodUID returns the metadata.uid of the pod the ledger records under key
// k (held, confirmed or reported bound) and whether it records one. The
// UID is empty when the pod had none or its record is lean
// (WithLeanPods drops it; see snapshot.PodInfo.Pod). O(1), allocates
// nothing.
func (l *Ledger) PodUID(k snapshot.PodKey) (types.UID, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.rec(k)
	if !ok {
		return "", false
	}
	if pi := l.recs[i].pi; pi != nil && pi.Retained() {
		return pi.Pod().UID, true
	}
	return "", true
}

// ---- internals --------------------------------------------------------------

// plan is a checked, not yet applied, Reserve.
type plan struct {
	pi    *snapshot.PodInfo // the pod to hold: with the devices deviceFit chose; nil for the pod given
	hash  uint64            // the pod's KeyHash
	node  int32
	res   *reservation
	drawn snapshot.Vector
	noop  bool
}

// plan checks a Reserve of pod on nodeName and fills *p, which must be
// the zero plan (filled in place: a plan with its vector is 96 bytes, and
// returning it by value cost a copy and a clear per Reserve).
func (l *Ledger) plan(pod *snapshot.PodInfo, nodeName string, p *plan) ([]Insufficient, error) {
	k := pod.Key()
	if err := checkNotPlaceholderKey(k); err != nil {
		return nil, err
	}
	h := nodeview.KeyHash(pod)
	i, ok := l.held.get(h, k, l.recs)
	if !ok {
		i, ok = l.bound.get(h, k, l.recs)
	}
	if ok {
		rec := &l.recs[i]
		if l.nodes[rec.node].name == nodeName {
			if rec.phase != Bound && rec.pi != pod && !rec.pi.Requested().Equal(pod.Requested()) {
				return nil, fmt.Errorf("pod %s is %s on node %s requesting %v, cannot reserve it again requesting %v (Unreserve it first): %w",
					k, rec.phase, nodeName, rec.pi.Requested(), pod.Requested(), ErrInvalid)
			}
			p.noop = true
			return nil, nil
		}
		return nil, fmt.Errorf("pod %s is %s on node %s, cannot reserve it on node %s: %w",
			k, rec.phase, l.nodes[rec.node].name, nodeName, ErrConflict)
	}
	ni, ok := l.nodeIndex(nodeName)
	if !ok || !l.nodes[ni].present {
		return nil, fmt.Errorf("pod %s: node %q: %w", k, nodeName, ErrNodeNotFound)
	}
	n := &l.nodes[ni]
	var drawn *snapshot.Vector
	if len(n.res) > 0 {
		if p.res, p.drawn = l.pickReservation(n, pod); p.res != nil {
			drawn = &p.drawn
		}
	}
	if reasons := n.fit(&pod.Requests().Pending, drawn, nil); reasons != nil {
		return reasons, nil
	}
	if pod.GPU().Count > 0 {
		withDevs, r, err := l.deviceFit(pod, nodeName)
		if err != nil || r != nil {
			if r != nil {
				return []Insufficient{*r}, nil
			}
			return nil, err
		}
		p.pi = withDevs
	}
	p.node, p.hash = ni, h
	return nil, nil
}

// deviceFit checks a GPU pod's device demand against the node's devices
// with every bound pod, hold and confirmation counted: the devices the pod
// records (PodInfo.Devices) must each be of an allowed model with
// MilliGPU free; without a recorded choice, there must be room for the
// demand and the ledger's chooser (WithDeviceChooser) picks the devices on
// that state, the returned pod recording them (with no chooser, a
// whole-GPU nvidia.com/gpu demand is held on no device and an annotated
// demand is an error wrapping ErrInvalid). It
// brings the view up to date first, so a GPU reservation costs O(holds)
// map look-ups more than a plain one. The reason names the demand's
// MilliResource (NoResource if it has none): requested = share × devices, used and
// capacity summed over the node's devices. A whole-GPU nvidia.com/gpu
// demand on a node counting its GPUs as a scalar
// (snapshot.NodeInfo.ScalarGPUDemand) has no device check.
func (l *Ledger) deviceFit(pod *snapshot.PodInfo, nodeName string) (*snapshot.PodInfo, *Insufficient, error) {
	l.syncView()
	g := pod.GPU()
	id := snapshot.NoResource
	if g.MilliResource != "" {
		id, _ = snapshot.Intern(g.MilliResource)
	}
	in := &Insufficient{Resource: id, Requested: arith.Add(0, g.MilliGPU*int64(g.Count))}
	ni := l.view.Get(nodeName)
	if ni == nil {
		return nil, in, nil
	}
	if ni.ScalarGPUDemand(g) {
		return pod, nil, nil // counted as nvidia.com/gpu by the fit check
	}
	devices := ni.Devices()
	for _, d := range devices {
		in.Capacity += d.CapacityMilliGPU
		in.Used += d.CapacityMilliGPU - max(0, d.FreeMilliGPU)
	}
	devs, assigned := pod.Devices()
	if !assigned {
		if !hasRoom(devices, g) {
			return nil, in, nil
		}
		if l.devices == nil && g.Whole {
			// Whole GPUs of an nvidia.com/gpu request: the kubelet's
			// device plugin picks them, the fit check counts them.
			return pod, nil, nil
		}
		if l.devices == nil {
			return nil, nil, fmt.Errorf("pod %s asks for GPU devices on node %s and records none: choose them (snapshot.PodInfo.WithDevices) or give the ledger a chooser (WithDeviceChooser): %w", pod.Key(), nodeName, ErrInvalid)
		}
		var ok bool
		if devs, ok = l.devices.ChooseDevices(pod, ni); !ok {
			return nil, in, nil
		}
		pod = pod.WithDevices(devs)
	}
	if devs.Len() != g.Count {
		return nil, in, nil
	}
	for _, i := range devs.AppendIndexes(nil) {
		if i >= len(devices) || !allowsModel(g.Models, devices[i].Model) || devices[i].FreeMilliGPU < g.MilliGPU {
			return nil, in, nil
		}
	}
	return pod, nil, nil
}

// hasRoom reports whether at least g.Count devices of an allowed model
// have g.MilliGPU free: whether any device choice can place g.
func hasRoom(devices []snapshot.Device, g *snapshot.GPURequest) bool {
	n := 0
	for _, d := range devices {
		if d.FreeMilliGPU >= g.MilliGPU && allowsModel(g.Models, d.Model) {
			n++
		}
	}
	return n >= g.Count
}

// allowsModel reports whether a device of model may serve a demand
// naming models (none: any model).
func allowsModel(models []string, model string) bool {
	return len(models) == 0 || slices.Contains(models, model)
}

// placeBound returns pi as it joins the view on nodeName when the
// informer reports it bound: with the ledger chooser's devices if it is a
// GPU pod recording none (WithDeviceChooser), else pi itself.
func (l *Ledger) placeBound(pi *snapshot.PodInfo, nodeName string) *snapshot.PodInfo {
	if l.devices == nil || pi.GPU().Count == 0 {
		return pi
	}
	if _, assigned := pi.Devices(); assigned {
		return pi
	}
	ni := l.view.Get(nodeName)
	if ni == nil || len(ni.Devices()) == 0 {
		return pi
	}
	if devs, ok := l.devices.ChooseDevices(pi, ni); ok {
		return pi.WithDevices(devs)
	}
	return pi
}

func (l *Ledger) applyHold(pod *snapshot.PodInfo, p *plan, deadline int64) {
	k := pod.Key()
	if l.draws[k] != nil { // a stale share of a pod not recorded otherwise
		l.returnDraw(k)
	}
	l.newRec(podRec{key: k, hash: p.hash, pi: pod, node: p.node, phase: Held, deadline: deadline})
	if p.res != nil {
		l.attachDraw(k, p.res, p.drawn)
	}
	l.ver++
}

// newRec records rec, counting it on its node. O(1) amortised.
func (l *Ledger) newRec(rec podRec) int32 {
	i := takeSlot(&l.recs, &l.freeRecs)
	n := &l.nodes[rec.node]
	n.refs++
	switch rec.phase {
	case Held:
		add(&n.held, rec.pi.Requested())
	default:
		add(&n.bound, rec.pi.Requested())
	}
	if rec.phase != Bound {
		rec.ownedPos = int32(len(l.owned))
		l.owned = append(l.owned, i)
	}
	l.recs[i] = rec
	if rec.phase == Bound {
		l.bound.Insert(rec.hash, i)
	} else {
		l.held.Insert(rec.hash, i)
	}
	return i
}

// dropRec removes record i, uncounting it. O(1).
func (l *Ledger) dropRec(i int32) {
	rec := &l.recs[i]
	n := &l.nodes[rec.node]
	if rec.phase == Held {
		sub(&n.held, rec.pi.Requested())
	} else {
		sub(&n.bound, rec.pi.Requested())
	}
	if rec.phase != Bound {
		last := l.owned[len(l.owned)-1]
		l.owned[rec.ownedPos] = last
		l.recs[last].ownedPos = rec.ownedPos
		l.owned = l.owned[:len(l.owned)-1]
		l.held.Remove(rec.hash, i)
	} else {
		l.bound.Remove(rec.hash, i)
	}
	node := rec.node
	*rec = podRec{}
	l.freeRecs = append(l.freeRecs, i)
	l.unref(node)
	l.ver++
}

// rec returns the record of pod k, in whichever phase.
func (l *Ledger) rec(k snapshot.PodKey) (int32, bool) {
	h := nodeview.HashKey(k)
	if i, ok := l.held.get(h, k, l.recs); ok {
		return i, true
	}
	return l.bound.get(h, k, l.recs)
}

// nodeSlot returns the index of the node called name, making an absent
// entry if the ledger does not know it.
func (l *Ledger) nodeSlot(name string) int32 {
	h := hashName(name)
	if i, ok := l.nodeIdx.get(h, name, l.nodes); ok {
		return i
	}
	i := takeSlot(&l.nodes, &l.freeNodes)
	l.nodes[i] = nodeAgg{name: name}
	l.nodeIdx.Insert(h, i)
	return i
}

// nodeIndex returns the index of the node called name, if the ledger
// knows it (present or absent). O(len(name)); allocates nothing.
func (l *Ledger) nodeIndex(name string) (int32, bool) {
	return l.nodeIdx.get(hashName(name), name, l.nodes)
}

// takeSlot returns a free index of *s, reusing one from *free or growing
// *s by one zero element. O(1) amortised.
func takeSlot[T any](s *[]T, free *[]int32) int32 {
	if n := len(*free); n > 0 {
		i := (*free)[n-1]
		*free = (*free)[:n-1]
		return i
	}
	var zero T
	*s = append(*s, zero)
	return int32(len(*s) - 1)
}

func (l *Ledger) unref(i int32) {
	l.nodes[i].refs--
	l.maybeFreeNode(i)
}

// maybeFreeNode forgets an absent node nothing refers to, so node churn
// does not grow the ledger.
func (l *Ledger) maybeFreeNode(i int32) {
	n := &l.nodes[i]
	if n.present || n.refs > 0 {
		return
	}
	l.nodeIdx.Remove(hashName(n.name), i)
	*n = nodeAgg{}
	l.freeNodes = append(l.freeNodes, i)
}

// add counts a pod with request req in v (its Pods entry counts pods).
func add(v *snapshot.Vector, req *snapshot.Vector) {
	v.Add(req)
	v.Set(snapshot.Pods, arith.Add(v.Get(snapshot.Pods), 1))
}

// sub uncounts a pod with request req from v.
func sub(v *snapshot.Vector, req *snapshot.Vector) {
	v.Sub(req)
	v.Set(snapshot.Pods, arith.Sub(v.Get(snapshot.Pods), 1))
}

var (
	maxDeadline = time.Unix(0, noDeadline-1)
	minDeadline = time.Unix(0, math.MinInt64)
)

// deadlineNanos converts a deadline to UnixNano, clamping to the range
// UnixNano can represent; the zero time means none.
func deadlineNanos(t time.Time) int64 {
	switch {
	case t.IsZero():
		return noDeadline
	case t.After(maxDeadline):
		return noDeadline - 1
	case t.Before(minDeadline):
		return math.MinInt64
	}
	return t.UnixNano()
}

func cmpKey(a, b snapshot.PodKey) int {
	if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
