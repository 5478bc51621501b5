package reserve

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/objects"
	"github.com/schedkit/schedkit/snapshot"
)

// ReservationNamespace is the namespace of the placeholder pods that stand
// for named reservations in [Ledger.Snapshot]. It contains dots, so it can
// never be a real namespace (those are DNS labels) and never collides with
// a real pod's key.
const ReservationNamespace = "reserve.schedkit.io"

// Reservation is capacity held on one node for future pods of an owner —
// a capacity reservation (in the spirit of Koordinator's Reservation):
// while it exists its unallocated capacity and one pod slot count as held
// on the node, so other pods cannot take them; a pod matching [Owner] that
// is reserved on the node draws its request from the reservation first
// (per resource, up to what is left) and needs only the rest, plus its own
// pod slot, from the node's free capacity.
//
// A share drawn returns to the reservation when the pod is unreserved,
// expires, or is deleted. An allocate-once reservation serves one pod: when
// that pod is confirmed or reported bound the reservation is consumed — its
// unallocated capacity and slot are released — and it disappears. A
// reusable reservation serves any number of pods until removed; bound pods
// keep their shares until they are deleted.
//
// Late binds: a pod whose share returned because its hold was unreserved
// or expired, but whose bind had in fact succeeded, is reported bound by
// the informer later. If it is reported on the reservation's node and the
// ledger does not count it there already, it draws on that reservation
// again — per resource, up to what is left (another pod may have taken the
// rest meanwhile; an allocate-once reservation taken by another pod gives
// nothing) — and consumes an allocate-once one, exactly as if the bind had
// been reported in time; so the room is never counted both as the
// reservation's and as the pod's. Deleting the pod returns that share like
// any other. The ledger remembers such a lapsed share (and journals and
// exports it) until the pod is reported bound, deleted, or the reservation
// goes.
//
// Pods bound by someone else (never reserved on the reservation through
// the ledger) do not draw on reservations: nothing the ledger gave out is
// counted twice, and the informer may over-commit a node as it may
// anywhere. (Drawing for them would make the ledger's state depend on the
// order in which a restarted ledger hears of pods and reservations.)
type Reservation struct {
	// Name identifies the reservation; unique in the ledger.
	Name string `json:"name"`
	// Node is the name of the node the capacity is held on (a node name:
	// a DNS-1123 subdomain).
	Node string `json:"node"`
	// Capacity is what is held: cpu, memory, ephemeral-storage, scalar
	// resources (not "pods": a reservation takes exactly one pod slot).
	Capacity v1.ResourceList `json:"capacity"`
	// Owner says which pods may draw on it.
	Owner Owner `json:"owner"`
	// AllocateOnce: the first pod to be confirmed or bound consumes the
	// reservation; while one pod holds a share no other may draw.
	AllocateOnce bool `json:"allocateOnce,omitempty"`
}

// Owner selects the pods that may draw on a reservation: pods in Namespace
// ("" for any; else a namespace name, a DNS-1123 label) that match Selector, or whose controller owner reference
// (metadata.ownerReferences with controller: true) has the UID Controller.
// At least one of Selector and Controller must be set. An empty, non-nil
// Selector matches every pod (apimachinery semantics).
type Owner struct {
	Namespace  string                `json:"namespace,omitempty"`
	Selector   *metav1.LabelSelector `json:"selector,omitempty"`
	Controller types.UID             `json:"controller,omitempty"`
}

// ReservationStatus is a reservation and how much of it is in use.
type ReservationStatus struct {
	Reservation
	// Allocated is the sum of the shares drawn by Pods; the unallocated
	// rest counts as held on the node.
	Allocated snapshot.Vector
	// Pods are the pods drawing on it (held, confirmed or bound), sorted.
	Pods []snapshot.PodKey
}

type reservation struct {
	spec  Reservation
	node  int32
	cap   snapshot.Vector
	alloc snapshot.Vector
	sel   labels.Selector // nil: no selector
	pods  []snapshot.PodKey
	ph    *snapshot.PodInfo // placeholder for the overlay; nil when stale
}

// draw is the share of a reservation one pod uses.
type draw struct {
	res    *reservation
	amount snapshot.Vector
}

// parseReservation validates r. Errors name the reservation and field.
func parseReservation(r Reservation) (*reservation, error) {
	if r.Name == "" {
		return nil, fmt.Errorf("reservation: name is empty: %w", ErrInvalid)
	}
	if errs := objects.MetaNames(r.Name, "", apivalidation.NameIsDNSSubdomain); len(errs) > 0 {
		return nil, fmt.Errorf("reservation %q: name (its placeholder pod's metadata.name): %w: %w", r.Name, errs.ToAggregate(), ErrInvalid)
	}
	if r.Node == "" {
		return nil, fmt.Errorf("reservation %s: node is empty: %w", r.Name, ErrInvalid)
	}
	if msgs := apivalidation.NameIsDNSSubdomain(r.Node, false); len(msgs) > 0 {
		return nil, fmt.Errorf("reservation %s: node %q: not a node name: %s: %w", r.Name, r.Node, strings.Join(msgs, "; "), ErrInvalid)
	}
	if ns := r.Owner.Namespace; ns != "" {
		if msgs := apivalidation.ValidateNamespaceName(ns, false); len(msgs) > 0 {
			return nil, fmt.Errorf("reservation %s: owner.namespace %q: %s: %w", r.Name, ns, strings.Join(msgs, "; "), ErrInvalid)
		}
	}
	if _, ok := r.Capacity[v1.ResourcePods]; ok {
		return nil, fmt.Errorf("reservation %s: capacity: pods cannot be reserved (a reservation takes one pod slot): %w", r.Name, ErrInvalid)
	}
	capacity, err := snapshot.NewVector(r.Capacity)
	if err != nil {
		return nil, fmt.Errorf("reservation %s: capacity: %w: %w", r.Name, ErrInvalid, err)
	}
	if r.Owner.Selector == nil && r.Owner.Controller == "" {
		return nil, fmt.Errorf("reservation %s: owner: neither selector nor controller is set: %w", r.Name, ErrInvalid)
	}
	res := &reservation{spec: r, cap: capacity}
	if r.Owner.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(r.Owner.Selector)
		if err != nil {
			return nil, fmt.Errorf("reservation %s: owner.selector: %w: %w", r.Name, ErrInvalid, err)
		}
		res.sel = sel
	}
	res.spec.Capacity = r.Capacity.DeepCopy()
	res.spec.Owner.Selector = r.Owner.Selector.DeepCopy()
	return res, nil
}

// matches reports whether pod may draw on r.
func (r *reservation) matches(pi *snapshot.PodInfo) bool {
	o := &r.spec.Owner
	pod := pi.Template() // namespace, labels, owner references
	if o.Namespace != "" && o.Namespace != pod.Namespace {
		return false
	}
	if r.sel != nil && r.sel.Matches(labels.Set(pod.Labels)) {
		return true
	}
	if o.Controller != "" {
		if c := metav1.GetControllerOfNoCopy(pod); c != nil && c.UID == o.Controller {
			return true
		}
	}
	return false
}

// shareFor returns what a pod requesting req would draw: per resource, the
// smaller of its request and the unallocated capacity.
func (r *reservation) shareFor(req *snapshot.Vector) snapshot.Vector {
	var d snapshot.Vector
	for i := range req.Len() {
		id := snapshot.ResourceID(i)
		if id == snapshot.Pods {
			continue
		}
		if want := req.Get(id); want > 0 {
			if left := arith.Sub(r.cap.Get(id), r.alloc.Get(id)); left > 0 {
				d.Set(id, min(want, left))
			}
		}
	}
	return d
}

// pickReservation returns the first reservation on n (by name) that pod
// may draw on and that has something left for it, and the share.
func (l *Ledger) pickReservation(n *nodeAgg, pod *snapshot.PodInfo) (*reservation, snapshot.Vector) {
	for _, r := range n.res {
		if r.spec.AllocateOnce && len(r.pods) > 0 {
			continue
		}
		if !r.matches(pod) {
			continue
		}
		if d := r.shareFor(pod.Requested()); !d.IsZero() {
			return r, d
		}
	}
	return nil, snapshot.Vector{}
}

func (l *Ledger) attachDraw(k snapshot.PodKey, r *reservation, amount snapshot.Vector) {
	r.alloc.Add(&amount)
	l.nodes[r.node].held.Sub(&amount)
	i, _ := slices.BinarySearchFunc(r.pods, k, cmpKey)
	r.pods = slices.Insert(r.pods, i, k)
	r.ph = nil
	l.draws[k] = &draw{res: r, amount: amount}
	l.ver++
}

// returnDraw gives pod k's share back to its reservation, if it has one.
func (l *Ledger) returnDraw(k snapshot.PodKey) {
	d := l.draws[k]
	if d == nil {
		return
	}
	r := d.res
	r.alloc.Sub(&d.amount)
	l.nodes[r.node].held.Add(&d.amount)
	l.detach(k, d)
}

// detach removes pod k's draw record without returning its share.
func (l *Ledger) detach(k snapshot.PodKey, d *draw) {
	r := d.res
	if i, ok := slices.BinarySearchFunc(r.pods, k, cmpKey); ok {
		r.pods = slices.Delete(r.pods, i, i+1)
	}
	r.ph = nil
	delete(l.draws, k)
	l.ver++
}

// consumeOnce consumes the allocate-once reservation pod k draws on, if
// any: the pod keeps its whole request; the rest of the reservation is
// released.
func (l *Ledger) consumeOnce(k snapshot.PodKey) {
	if d := l.draws[k]; d != nil && d.res.spec.AllocateOnce {
		l.dropReservation(d.res)
	}
}

// dropReservation removes r: its unallocated capacity and pod slot are
// released; pods drawing on it keep their whole requests and lose the
// link; lapsed shares of it are forgotten. O(pods on r + lapsed shares).
func (l *Ledger) dropReservation(r *reservation) {
	for _, k := range slices.Clone(r.pods) {
		l.detach(k, l.draws[k])
	}
	for k, x := range l.lapsed {
		if x == r {
			delete(l.lapsed, k)
		}
	}
	n := &l.nodes[r.node]
	left := r.cap.Clone()
	left.Sub(&r.alloc)
	sub(&n.held, &left)
	if i, ok := slices.BinarySearchFunc(n.res, r.spec.Name, func(a *reservation, name string) int {
		return cmp.Compare(a.spec.Name, name)
	}); ok {
		n.res = slices.Delete(n.res, i, i+1)
	}
	delete(l.res, r.spec.Name)
	l.unref(r.node)
	l.ver++
}

// AddReservation holds r.Capacity and one pod slot on r.Node for pods of
// r.Owner, if they fit next to what the node already has committed
// (the same check as [Ledger.Reserve]). Results: nil, nil: added;
// reasons, nil: it does not fit, nothing changed; nil, err: invalid spec
// ([ErrInvalid], naming the field), unknown node ([ErrNodeNotFound]),
// name in use ([ErrReservationExists]), journal failure ([ErrJournal]).
// O(resources + reservations on the node).
func (l *Ledger) AddReservation(r Reservation) (_ []Insufficient, err error) {
	defer named("AddReservation", &err)
	res, err := parseReservation(r)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.res[r.Name]; ok {
		return nil, fmt.Errorf("reservation %s: %w", r.Name, ErrReservationExists)
	}
	ni, ok := l.nodeIndex(r.Node)
	if !ok || !l.nodes[ni].present {
		return nil, fmt.Errorf("reservation %s: node %q: %w", r.Name, r.Node, ErrNodeNotFound)
	}
	if reasons := l.nodes[ni].fit(&res.cap, nil, nil); reasons != nil {
		return reasons, nil
	}
	if err := l.logReservation(&res.spec); err != nil {
		return nil, err
	}
	l.insertReservation(res, ni)
	return nil, nil
}

func (l *Ledger) insertReservation(res *reservation, ni int32) {
	res.node = ni
	n := &l.nodes[ni]
	n.refs++
	add(&n.held, &res.cap)
	i, _ := slices.BinarySearchFunc(n.res, res.spec.Name, func(a *reservation, name string) int {
		return cmp.Compare(a.spec.Name, name)
	})
	n.res = slices.Insert(n.res, i, res)
	l.res[res.spec.Name] = res
	l.ver++
}

// RemoveReservation removes the reservation called name: its unallocated
// capacity and slot are released at once; pods drawing on it keep their
// whole requests. Errors: [ErrReservationNotFound]; a broken journal
// ([ErrJournal], nothing changed; see [Ledger.SetJournal]).
func (l *Ledger) RemoveReservation(name string) (err error) {
	defer named("RemoveReservation", &err)
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.res[name]
	if !ok {
		return fmt.Errorf("reservation %s: %w", name, ErrReservationNotFound)
	}
	if err := l.logRemoveReservation(name); err != nil {
		return fmt.Errorf("reservation %s: %w", name, err)
	}
	l.dropReservation(r)
	return nil
}

// Reservation returns the reservation called name and its use.
func (l *Ledger) Reservation(name string) (ReservationStatus, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.res[name]
	if !ok {
		return ReservationStatus{}, false
	}
	return r.status(), true
}

// Reservations returns every reservation, sorted by name.
func (l *Ledger) Reservations() []ReservationStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ReservationStatus, 0, len(l.res))
	for _, name := range sortedKeys(l.res) {
		out = append(out, l.res[name].status())
	}
	return out
}

func (r *reservation) status() ReservationStatus {
	s := ReservationStatus{Reservation: r.spec, Allocated: r.alloc.Clone(), Pods: slices.Clone(r.pods)}
	s.Capacity = r.spec.Capacity.DeepCopy()
	s.Owner.Selector = r.spec.Owner.Selector.DeepCopy()
	return s
}

// placeholder returns the pod that stands for r in the overlay snapshot:
// namespace ReservationNamespace, name r's name, one container requesting
// the unallocated capacity (cpu and memory always named, so that a zero
// does not turn into upstream's non-zero scoring defaults).
func (r *reservation) placeholder() *snapshot.PodInfo {
	if r.ph != nil {
		return r.ph
	}
	left := r.cap.Clone()
	left.Sub(&r.alloc)
	r.ph = r.placeholderOf(&left)
	return r.ph
}

// placeholderOf returns a placeholder for r requesting left.
func (r *reservation) placeholderOf(left *snapshot.Vector) *snapshot.PodInfo {
	rl := v1.ResourceList{}
	for i := range left.Len() {
		id := snapshot.ResourceID(i)
		x := left.Get(id)
		switch {
		case id == snapshot.CPU:
			rl[id.Name()] = *resource.NewMilliQuantity(x, resource.DecimalSI)
		case id == snapshot.Memory || x != 0:
			rl[id.Name()] = *resource.NewQuantity(x, resource.BinarySI)
		}
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ReservationNamespace, Name: r.spec.Name},
		Spec: v1.PodSpec{
			NodeName:   r.spec.Node,
			Containers: []v1.Container{{Name: "reservation", Resources: v1.ResourceRequirements{Requests: rl}}},
		},
	}
	pi, err := nodeview.Placeholder(pod) // its namespace is not a label: parsed without the name check
	if err != nil {
		panic(err) // quantities are non-negative by construction
	}
	return pi
}

// checkNotPlaceholderKey refuses a pod in [ReservationNamespace]: the
// ledger's placeholder pods live there, and a real pod with a
// placeholder's key would break the snapshot's one-pod-per-key rule. The
// API server never admits such a pod (the namespace is not a DNS label);
// a placeholder taken from a ledger snapshot is refused too. Errors name
// the pod and field and wrap [ErrInvalid] and [snapshot.ErrInvalidObject].
func checkNotPlaceholderKey(k snapshot.PodKey) error {
	if k.Namespace != ReservationNamespace {
		return nil
	}
	return fmt.Errorf("pod %s: metadata.namespace %q is reserved for the ledger's reservation placeholders: %w: %w",
		k, ReservationNamespace, ErrInvalid, snapshot.ErrInvalidObject)
}
