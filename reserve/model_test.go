package reserve_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// This file checks the ledger against a deliberately simple reference:
// maps of pods and reservations, usage recomputed from scratch by summing
// after every step, fit written out resource by resource.

const gpu = v1.ResourceName("example.com/gpu")

var gpuID = func() snapshot.ResourceID {
	id, _ := snapshot.Intern(gpu)
	return id
}()

// rvec is the reference's resource vector: ResourceID -> amount.
type rvec map[snapshot.ResourceID]int64

func toRvec(v *snapshot.Vector) rvec {
	out := rvec{}
	for i := range v.Len() {
		if x := v.Get(snapshot.ResourceID(i)); x != 0 {
			out[snapshot.ResourceID(i)] = x
		}
	}
	return out
}

func (v rvec) clone() rvec {
	out := rvec{}
	for k, x := range v {
		if x != 0 {
			out[k] = x
		}
	}
	return out
}

func (v rvec) norm() rvec { return v.clone() }

type refPod struct {
	pi       *snapshot.PodInfo
	node     string
	phase    reserve.Phase
	deadline int64 // 0: none
	res      string
	drawn    rvec
}

type refRes struct {
	spec reserve.Reservation
	cap  rvec
	app  string    // selector app=<app>, "" if none
	ctrl types.UID // controller UID, "" if none
}

type refNode struct {
	present bool
	alloc   rvec
}

type refLedger struct {
	nodes map[string]*refNode
	pods  map[snapshot.PodKey]*refPod
	res   map[string]*refRes
	// over[node][r]: the informer left r over-committed on node.
	over map[string]map[snapshot.ResourceID]bool
	// lapsed[pod]: the reservation whose share the pod had when its hold
	// was unreserved or expired; a later bind report there draws again.
	lapsed map[snapshot.PodKey]string
}

func newRef() *refLedger {
	return &refLedger{nodes: map[string]*refNode{}, pods: map[snapshot.PodKey]*refPod{}, res: map[string]*refRes{},
		over: map[string]map[snapshot.ResourceID]bool{}, lapsed: map[snapshot.PodKey]string{}}
}

func (r *refLedger) clone() *refLedger {
	c := newRef()
	for k, n := range r.nodes {
		c.nodes[k] = &refNode{present: n.present, alloc: n.alloc.clone()}
	}
	for k, p := range r.pods {
		q := *p
		q.drawn = p.drawn.clone()
		c.pods[k] = &q
	}
	for k, x := range r.res {
		y := *x
		c.res[k] = &y
	}
	for k, m := range r.over {
		c.over[k] = map[snapshot.ResourceID]bool{}
		for id, b := range m {
			c.over[k][id] = b
		}
	}
	for k, x := range r.lapsed {
		c.lapsed[k] = x
	}
	return c
}

// usage sums, from scratch, what the ledger should report for a node.
func (r *refLedger) usage(name string) (bound, held rvec) {
	bound, held = rvec{}, rvec{}
	for _, p := range r.pods {
		if p.node != name {
			continue
		}
		dst := bound
		if p.phase == reserve.Held {
			dst = held
		}
		for id, x := range toRvec(p.pi.Requested()) {
			dst[id] += x
		}
		dst[snapshot.Pods]++
	}
	for _, x := range r.res {
		if x.spec.Node != name {
			continue
		}
		held[snapshot.Pods]++
		alloc := r.allocated(x.spec.Name)
		for id, c := range x.cap {
			held[id] += c - alloc[id]
		}
	}
	return bound.norm(), held.norm()
}

func (r *refLedger) allocated(name string) rvec {
	out := rvec{}
	for _, p := range r.pods {
		if p.res == name {
			for id, x := range p.drawn {
				out[id] += x
			}
		}
	}
	return out
}

func (r *refLedger) drawers(name string) []snapshot.PodKey {
	var out []snapshot.PodKey
	for k, p := range r.pods {
		if p.res == name {
			out = append(out, k)
		}
	}
	sortKeys(out)
	return out
}

func sortKeys(ks []snapshot.PodKey) {
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].Namespace != ks[j].Namespace {
			return ks[i].Namespace < ks[j].Namespace
		}
		return ks[i].Name < ks[j].Name
	})
}

// known: nodes the ledger should list — present, or referenced.
func (r *refLedger) known() []string {
	set := map[string]bool{}
	for name, n := range r.nodes {
		if n.present {
			set[name] = true
		}
	}
	for _, p := range r.pods {
		set[p.node] = true
	}
	for _, x := range r.res {
		set[x.spec.Node] = true
	}
	var out []string
	for name := range set {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func (r *refLedger) alloc(name string) rvec {
	if n := r.nodes[name]; n != nil && n.present {
		return n.alloc
	}
	return rvec{}
}

// fit is upstream's fitsRequest, spelled out: one more pod under the pod
// limit; for every resource the pod requests, what it needs (request minus
// share) at most allocatable minus bound minus held.
func (r *refLedger) fit(name string, req rvec, drawn rvec) []reserve.Insufficient {
	bound, held := r.usage(name)
	alloc := r.alloc(name)
	var out []reserve.Insufficient
	check := func(id snapshot.ResourceID, need int64) {
		used := bound[id] + held[id]
		if need > alloc[id]-used {
			out = append(out, reserve.Insufficient{Resource: id, Requested: need, Used: used, Capacity: alloc[id]})
		}
	}
	check(snapshot.Pods, 1)
	ids := make([]snapshot.ResourceID, 0, len(req))
	for id := range req {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if id == snapshot.Pods {
			continue
		}
		if req[id] > 0 {
			check(id, req[id]-drawn[id])
		}
	}
	return out
}

func (x *refRes) matches(pod *v1.Pod) bool {
	if x.spec.Owner.Namespace != "" && x.spec.Owner.Namespace != pod.Namespace {
		return false
	}
	if x.app != "" && pod.Labels["app"] == x.app {
		return true
	}
	if x.ctrl != "" {
		for _, o := range pod.OwnerReferences {
			if o.Controller != nil && *o.Controller && o.UID == x.ctrl {
				return true
			}
		}
	}
	return false
}

// pick returns the reservation a pod reserved on node draws on, and the
// share.
func (r *refLedger) pick(name string, pi *snapshot.PodInfo) (string, rvec) {
	var names []string
	for n, x := range r.res {
		if x.spec.Node == name {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	req := toRvec(pi.Requested())
	for _, n := range names {
		x := r.res[n]
		if x.spec.AllocateOnce && len(r.drawers(n)) > 0 {
			continue
		}
		if !x.matches(pi.Pod()) {
			continue
		}
		alloc := r.allocated(n)
		share := rvec{}
		for id, want := range req {
			if id == snapshot.Pods || want <= 0 {
				continue
			}
			if left := x.cap[id] - alloc[id]; left > 0 {
				share[id] = min(want, left)
			}
		}
		if len(share) > 0 {
			return n, share
		}
	}
	return "", nil
}

// errKind classifies a result for comparison.
func errKind(err error) string {
	for _, e := range []error{reserve.ErrInvalid, reserve.ErrNodeNotFound, reserve.ErrConflict, reserve.ErrNotHeld,
		reserve.ErrReservationExists, reserve.ErrReservationNotFound, snapshot.ErrNodeNotFound} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

func (r *refLedger) reserve(pi *snapshot.PodInfo, name string, deadline int64) ([]reserve.Insufficient, string) {
	k := pi.Key()
	if p := r.pods[k]; p != nil {
		if p.node == name {
			return nil, ""
		}
		return nil, reserve.ErrConflict.Error()
	}
	if n := r.nodes[name]; n == nil || !n.present {
		return nil, reserve.ErrNodeNotFound.Error()
	}
	res, share := r.pick(name, pi)
	if reasons := r.fit(name, toRvec(pi.Requested()), share); reasons != nil {
		return reasons, ""
	}
	r.pods[k] = &refPod{pi: pi, node: name, phase: reserve.Held, deadline: deadline, res: res, drawn: share}
	return nil, ""
}

func (r *refLedger) unreserve(k snapshot.PodKey) bool {
	p := r.pods[k]
	if p == nil || p.phase == reserve.Bound {
		return false
	}
	if p.res != "" {
		r.lapsed[k] = p.res
	}
	delete(r.pods, k)
	return true
}

func (r *refLedger) consumeOnce(p *refPod) {
	if p.res != "" && r.res[p.res].spec.AllocateOnce {
		r.dropRes(p.res)
	}
}

func (r *refLedger) dropRes(name string) {
	for _, q := range r.pods {
		if q.res == name {
			q.res, q.drawn = "", nil
		}
	}
	for k, x := range r.lapsed {
		if x == name {
			delete(r.lapsed, k)
		}
	}
	delete(r.res, name)
}

func (r *refLedger) confirm(k snapshot.PodKey) string {
	p := r.pods[k]
	if p == nil {
		return reserve.ErrNotHeld.Error()
	}
	if p.phase == reserve.Held {
		p.phase, p.deadline = reserve.Confirmed, 0
		r.consumeOnce(p)
	}
	return ""
}

func (r *refLedger) observe(pi *snapshot.PodInfo, name string) {
	k := pi.Key()
	if r.nodes[name] == nil {
		r.nodes[name] = &refNode{alloc: rvec{}}
	}
	p := r.pods[k]
	lapsed := r.lapsed[k]
	delete(r.lapsed, k)
	if p == nil {
		p = &refPod{pi: pi, node: name, phase: reserve.Bound}
		r.pods[k] = p
		r.lateDraw(p, lapsed)
		r.informed(name)
		return
	}
	old := p.node
	wasBound := p.phase == reserve.Bound
	counted := p.node == name || (p.res != "" && r.res[p.res].spec.Node == name)
	p.pi, p.node, p.phase, p.deadline = pi, name, reserve.Bound, 0
	if p.res != "" {
		if r.res[p.res].spec.Node != name {
			p.res, p.drawn = "", nil
		} else if !wasBound {
			r.consumeOnce(p)
		}
	}
	if !counted {
		r.lateDraw(p, lapsed)
	}
	r.informed(name)
	r.informed(old)
}

// lateDraw: bound pod p, whose share of reservation name lapsed, draws on
// it again if it is bound on its node: per resource the smaller of its
// request and what is left; nothing from an allocate-once reservation
// another pod draws on; an allocate-once one it draws on is consumed.
func (r *refLedger) lateDraw(p *refPod, name string) {
	x := r.res[name]
	if x == nil || x.spec.Node != p.node || (x.spec.AllocateOnce && len(r.drawers(name)) > 0) {
		return
	}
	alloc := r.allocated(name)
	share := rvec{}
	for id, want := range toRvec(p.pi.Requested()) {
		if id == snapshot.Pods || want <= 0 {
			continue
		}
		if left := x.cap[id] - alloc[id]; left > 0 {
			share[id] = min(want, left)
		}
	}
	if len(share) == 0 {
		return
	}
	p.res, p.drawn = name, share
	r.consumeOnce(p)
}

func (r *refLedger) remove(k snapshot.PodKey) bool {
	delete(r.lapsed, k)
	if r.pods[k] == nil {
		return false
	}
	delete(r.pods, k)
	return true
}

func (r *refLedger) expire(now int64) []snapshot.PodKey {
	var out []snapshot.PodKey
	for k, p := range r.pods {
		if p.phase == reserve.Held && p.deadline != 0 && p.deadline <= now {
			out = append(out, k)
		}
	}
	for _, k := range out {
		if p := r.pods[k]; p.res != "" {
			r.lapsed[k] = p.res
		}
		delete(r.pods, k)
	}
	sortKeys(out)
	return out
}

// informed re-derives the over-commit flags of a node after an informer
// event: a resource over allocatable is allowed only if the informer put it
// there; a flag clears once the resource is back within allocatable.
func (r *refLedger) informed(name string) {
	bound, held := r.usage(name)
	alloc := r.alloc(name)
	if r.over[name] == nil {
		r.over[name] = map[snapshot.ResourceID]bool{}
	}
	for id := range keysOf(bound, held, alloc) {
		if bound[id]+held[id] > alloc[id] {
			r.over[name][id] = true
		}
	}
}

func keysOf(vs ...rvec) map[snapshot.ResourceID]bool {
	out := map[snapshot.ResourceID]bool{}
	for _, v := range vs {
		for id := range v {
			out[id] = true
		}
	}
	return out
}

// checkInvariant: per node, holds + bound <= allocatable for every
// resource, unless the informer itself reported more.
func (r *refLedger) checkInvariant(t *testing.T, step int) {
	for _, name := range r.known() {
		bound, held := r.usage(name)
		alloc := r.alloc(name)
		for id := range keysOf(bound, held, alloc) {
			used := bound[id] + held[id]
			if used <= alloc[id] {
				if r.over[name] != nil {
					delete(r.over[name], id)
				}
				continue
			}
			if !r.over[name][id] {
				t.Fatalf("step %d: node %s: %s used %d > allocatable %d, and the informer did not report it", step, name, id, used, alloc[id])
			}
		}
	}
}

// ---- the test ---------------------------------------------------------------

type modelWorld struct {
	t     *testing.T
	rng   *rand.Rand
	l     *reserve.Ledger
	ref   *refLedger
	now   int64
	pods  map[snapshot.PodKey]*v1.Pod // current pending object per key
	names []string
	keys  []snapshot.PodKey
	resN  int
	step  int
	uids  int // pods created again under a known name (a new metadata.uid)

	prevSnap  *snapshot.Snapshot
	prevPrint string
}

var (
	cpuChoices = []string{"0", "100m", "500m", "1", "1500m", "2"}
	memChoices = []string{"0", "256Mi", "1Gi", "2Gi"}
	t0         = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

func (w *modelWorld) newPod(name string) *v1.Pod {
	b := st.MakePod(name)
	kv := []string{"cpu", cpuChoices[w.rng.IntN(len(cpuChoices))], "memory", memChoices[w.rng.IntN(len(memChoices))]}
	if w.rng.IntN(4) == 0 {
		kv = append(kv, string(gpu), fmt.Sprint(w.rng.IntN(3)))
	}
	b.Req(kv...)
	switch w.rng.IntN(3) {
	case 0:
		b.Label("app", "a")
	case 1:
		b.Label("app", "b")
	}
	p := b.Obj()
	if w.rng.IntN(3) == 0 {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "ctrl-1", Controller: &yes}}
	}
	return p
}

func (w *modelWorld) nodeObj(name string) *v1.Node {
	cpu := []string{"2", "3", "4", "6"}[w.rng.IntN(4)]
	mem := []string{"2Gi", "4Gi", "8Gi"}[w.rng.IntN(3)]
	pods := []string{"3", "5", "8"}[w.rng.IntN(3)]
	return st.MakeNode(name).Capacity("cpu", cpu, "memory", mem, "pods", pods, string(gpu), fmt.Sprint(w.rng.IntN(4))).Obj()
}

func (w *modelWorld) addNode(name string) {
	n := w.nodeObj(name)
	require.NoError(w.t, w.l.AddNode(n))
	alloc, err := snapshot.NewVector(n.Status.Allocatable)
	require.NoError(w.t, err)
	w.ref.nodes[name] = &refNode{present: true, alloc: toRvec(&alloc)}
	w.ref.informed(name)
}

func (w *modelWorld) pi(k snapshot.PodKey) *snapshot.PodInfo {
	return snapshot.MustPodInfo(w.pods[k])
}

func (w *modelWorld) randKey() snapshot.PodKey { return w.keys[w.rng.IntN(len(w.keys))] }
func (w *modelWorld) randNode() string {
	if w.rng.IntN(20) == 0 {
		return "ghost"
	}
	return w.names[w.rng.IntN(len(w.names))]
}

func (w *modelWorld) deadline() (time.Time, int64) {
	if w.rng.IntN(2) == 0 {
		return time.Time{}, 0
	}
	d := w.now + int64(w.rng.IntN(20)+1)*int64(time.Second)
	return time.Unix(0, d).UTC(), d
}

// op performs one random operation on both and compares the results.
func (w *modelWorld) op() string {
	t := w.t
	switch x := w.rng.IntN(100); {
	case x < 28: // reserve
		k, node := w.randKey(), w.randNode()
		pi := w.pi(k)
		dlt, dl := w.deadline()
		got, err := w.l.ReserveUntil(pi, node, dlt)
		want, wantErr := w.ref.reserve(pi, node, dl)
		require.Equal(t, wantErr, errKind(err), "step %d: ReserveUntil(%s, %s) error", w.step, k, node)
		require.Equal(t, want, got, "step %d: ReserveUntil(%s, %s) reasons", w.step, k, node)
		return "reserve"
	case x < 38: // unreserve
		k := w.randKey()
		require.Equal(t, w.ref.unreserve(k), w.l.Unreserve(k), "step %d: Unreserve(%s)", w.step, k)
		return "unreserve"
	case x < 46: // confirm
		k := w.randKey()
		require.Equal(t, w.ref.confirm(k), errKind(w.l.Confirm(k)), "step %d: Confirm(%s)", w.step, k)
		return "confirm"
	case x < 60: // the informer reports a pod bound (usually where it is held)
		k := w.randKey()
		node := w.randNode()
		if p := w.ref.pods[k]; p != nil && w.rng.IntN(4) != 0 {
			node = p.node
		}
		pod := w.pods[k].DeepCopy()
		if w.rng.IntN(10) == 0 { // in-place resize as seen by the informer
			uid := pod.UID
			pod = w.newPod(k.Name)
			pod.UID = uid
			w.pods[k] = pod.DeepCopy()
		}
		pod.Spec.NodeName = node
		if p := w.ref.pods[k]; p != nil && p.phase == reserve.Bound && p.node != node {
			// A bound pod on another node: the same pod (its uid as last
			// reported) is refused and changes nothing; a pod created
			// again under the name (a new uid) moves.
			if w.rng.IntN(3) == 0 {
				err := w.l.AddPod(pod)
				require.ErrorIs(t, err, reserve.ErrInvalid, "step %d: AddPod(%s on %s), bound on %s", w.step, k, node, p.node)
				require.ErrorIs(t, err, snapshot.ErrInvalidObject, "step %d", w.step)
				return "refused move"
			}
			w.uids++
			pod.UID = types.UID(fmt.Sprintf("%s-again-%d", pod.UID, w.uids))
			w.pods[k].UID = pod.UID
		}
		require.NoError(t, w.l.AddPod(pod), "step %d: AddPod(%s on %s)", w.step, k, node)
		w.ref.observe(snapshot.MustPodInfo(pod), node)
		return "bound"
	case x < 68: // delete
		k := w.randKey()
		require.Equal(t, w.ref.remove(k), w.l.RemovePod(k), "step %d: RemovePod(%s)", w.step, k)
		w.pods[k] = w.newPod(k.Name) // a new pod may take the name
		return "delete"
	case x < 73: // time passes; expire
		w.now += int64(w.rng.IntN(5)) * int64(time.Second)
		want := w.ref.expire(w.now)
		got := w.l.Expire(time.Unix(0, w.now))
		require.Equal(t, want, got, "step %d: Expire", w.step)
		return "expire"
	case x < 80: // gang
		n := 2 + w.rng.IntN(3)
		var members []reserve.GangMember
		seen := map[snapshot.PodKey]bool{}
		for len(members) < n {
			k := w.randKey()
			if seen[k] {
				continue
			}
			seen[k] = true
			members = append(members, reserve.GangMember{Pod: w.pi(k), Node: w.randNode()})
		}
		dlt, dl := w.deadline()
		got, err := w.l.ReserveGang(members, dlt)
		before := w.ref.clone()
		var want *reserve.GangUnfit
		wantErr := ""
		for i, m := range members {
			reasons, e := w.ref.reserve(m.Pod, m.Node, dl)
			if e != "" {
				wantErr = e
				break
			}
			if reasons != nil {
				want = &reserve.GangUnfit{Member: i, Reasons: reasons}
				break
			}
		}
		if want != nil || wantErr != "" {
			w.ref = before
		}
		require.Equal(t, wantErr, errKind(err), "step %d: ReserveGang error", w.step)
		require.Equal(t, want, got, "step %d: ReserveGang", w.step)
		return "gang"
	case x < 88: // node shrinks or grows (informer update)
		name := w.names[w.rng.IntN(len(w.names))]
		w.addNode(name)
		return "resize"
	case x < 90: // node removed, or comes back
		name := w.names[w.rng.IntN(len(w.names))]
		if n := w.ref.nodes[name]; n != nil && n.present {
			require.NoError(t, w.l.RemoveNode(name))
			n.present = false
			n.alloc = rvec{}
			w.ref.informed(name)
		} else {
			w.addNode(name)
		}
		return "node"
	case x < 95: // named reservation
		w.resN++
		node := w.randNode()
		spec := reserve.Reservation{Name: fmt.Sprintf("r%d", w.resN%6), Node: node, AllocateOnce: w.rng.IntN(2) == 0}
		spec.Capacity = st.List("cpu", cpuChoices[1+w.rng.IntN(len(cpuChoices)-1)], "memory", memChoices[w.rng.IntN(len(memChoices))])
		rr := &refRes{spec: spec}
		if w.rng.IntN(2) == 0 {
			app := []string{"a", "b"}[w.rng.IntN(2)]
			spec.Owner.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
			rr.app = app
		} else {
			spec.Owner.Controller = "ctrl-1"
			rr.ctrl = "ctrl-1"
		}
		if w.rng.IntN(2) == 0 {
			spec.Owner.Namespace = "default"
		}
		rr.spec = spec
		capv, err := snapshot.NewVector(spec.Capacity)
		require.NoError(t, err)
		rr.cap = toRvec(&capv)
		got, err := w.l.AddReservation(spec)
		var want []reserve.Insufficient
		wantErr := ""
		switch n := w.ref.nodes[node]; {
		case w.ref.res[spec.Name] != nil:
			wantErr = reserve.ErrReservationExists.Error()
		case n == nil || !n.present:
			wantErr = reserve.ErrNodeNotFound.Error()
		default:
			want = w.ref.fit(node, rr.cap, nil)
			if want == nil {
				w.ref.res[spec.Name] = rr
			}
		}
		require.Equal(t, wantErr, errKind(err), "step %d: AddReservation(%s)", w.step, spec.Name)
		require.Equal(t, want, got, "step %d: AddReservation(%s)", w.step, spec.Name)
		return "reservation"
	default: // remove a named reservation
		name := fmt.Sprintf("r%d", w.rng.IntN(6))
		err := w.l.RemoveReservation(name)
		if w.ref.res[name] == nil {
			require.ErrorIs(t, err, reserve.ErrReservationNotFound)
		} else {
			require.NoError(t, err)
			w.ref.dropRes(name)
		}
		return "unreservation"
	}
}

// compare checks that the ledger's whole observable state equals the
// reference's.
func (w *modelWorld) compare() {
	t := w.t
	known := w.ref.known()
	require.Equal(t, known, w.l.Nodes(), "step %d: Nodes()", w.step)
	for _, name := range known {
		u, ok := w.l.Usage(name)
		require.True(t, ok, "step %d: Usage(%s)", w.step, name)
		bound, held := w.ref.usage(name)
		if !mapsEqual(bound, toRvec(&u.Bound)) || !mapsEqual(held, toRvec(&u.Held)) || !mapsEqual(w.ref.alloc(name), toRvec(&u.Allocatable)) {
			t.Fatalf("step %d: node %s: ledger bound %v held %v alloc %v; reference bound %v held %v alloc %v",
				w.step, name, toRvec(&u.Bound), toRvec(&u.Held), toRvec(&u.Allocatable), bound, held, w.ref.alloc(name))
		}
	}
	var wantHolds []string
	for k, p := range w.ref.pods {
		if p.phase != reserve.Bound {
			wantHolds = append(wantHolds, fmt.Sprintf("%s@%s %s dl=%d res=%s drawn=%v", k, p.node, p.phase, p.deadline, p.res, p.drawn.norm()))
		}
	}
	sort.Strings(wantHolds)
	var gotHolds []string
	for _, h := range w.l.Holds() {
		var dl int64
		if !h.Deadline.IsZero() {
			dl = h.Deadline.UnixNano()
		}
		gotHolds = append(gotHolds, fmt.Sprintf("%s@%s %s dl=%d res=%s drawn=%v", h.Pod.Key(), h.Node, h.Phase, dl, h.Reservation, toRvec(&h.Drawn)))
	}
	sort.Strings(gotHolds)
	require.Equal(t, wantHolds, gotHolds, "step %d: Holds()", w.step)
	for _, k := range w.keys {
		ph, node, ok := w.l.PodPhase(k)
		p := w.ref.pods[k]
		require.Equal(t, p != nil, ok, "step %d: PodPhase(%s) known", w.step, k)
		if p != nil {
			require.Equal(t, [2]string{p.phase.String(), p.node}, [2]string{ph.String(), node}, "step %d: PodPhase(%s)", w.step, k)
		}
	}
	var wantRes, gotRes []string
	for name, x := range w.ref.res {
		wantRes = append(wantRes, fmt.Sprintf("%s@%s alloc=%v pods=%v", name, x.spec.Node, w.ref.allocated(name).norm(), w.ref.drawers(name)))
	}
	sort.Strings(wantRes)
	for _, s := range w.l.Reservations() {
		gotRes = append(gotRes, fmt.Sprintf("%s@%s alloc=%v pods=%v", s.Name, s.Node, toRvec(&s.Allocated), s.Pods))
	}
	require.Equal(t, wantRes, gotRes, "step %d: Reservations()", w.step)
	w.ref.checkInvariant(t, w.step)
}

// fingerprint describes a snapshot: per node, its pods and Requested.
func fingerprint(s *snapshot.Snapshot) string {
	var b []string
	for _, ni := range s.Nodes() {
		var keys []string
		for _, p := range ni.Pods() {
			keys = append(keys, p.Key().String())
		}
		sort.Strings(keys)
		b = append(b, fmt.Sprintf("%s %v [%v]", ni.Name(), keys, ni.Requested()))
	}
	sort.Strings(b)
	return fmt.Sprint(b)
}

// compareSnapshot checks the overlay snapshot: every present node holds
// exactly the reference's pods of every phase plus one placeholder per
// reservation, and its Requested and pod count equal bound + held; the
// bound snapshot holds the bound pods only; and the previous snapshot has
// not changed since it was taken.
func (w *modelWorld) compareSnapshot() {
	if w.prevSnap != nil {
		require.Equal(w.t, w.prevPrint, fingerprint(w.prevSnap), "step %d: an earlier snapshot changed", w.step)
	}
	snap := w.l.Snapshot()
	w.prevSnap, w.prevPrint = snap, fingerprint(snap)
	boundSnap := w.l.BoundSnapshot()
	present := 0
	for _, n := range w.ref.nodes {
		if n.present {
			present++
		}
	}
	require.Equal(w.t, present, snap.NumNodes(), "step %d: snapshot nodes", w.step)
	require.Equal(w.t, present, boundSnap.NumNodes(), "step %d: bound snapshot nodes", w.step)
	for name, n := range w.ref.nodes {
		if !n.present {
			continue
		}
		var all, bound []string
		for k, p := range w.ref.pods {
			if p.node == name {
				all = append(all, k.String())
				if p.phase == reserve.Bound {
					bound = append(bound, k.String())
				}
			}
		}
		for rn, x := range w.ref.res {
			if x.spec.Node == name {
				all = append(all, reserve.ReservationNamespace+"/"+rn)
			}
		}
		sort.Strings(all)
		sort.Strings(bound)
		keysOfNode := func(ni *snapshot.NodeInfo) []string {
			var out []string
			for _, p := range ni.Pods() {
				out = append(out, p.Key().String())
			}
			sort.Strings(out)
			return out
		}
		require.Equal(w.t, all, keysOfNode(snap.Get(name)), "step %d: snapshot pods on %s", w.step, name)
		require.Equal(w.t, bound, keysOfNode(boundSnap.Get(name)), "step %d: bound snapshot pods on %s", w.step, name)
	}
	for _, name := range w.ref.known() {
		n := w.ref.nodes[name]
		ni := snap.Get(name)
		if n == nil || !n.present {
			require.Nil(w.t, ni, "step %d: absent node %s in snapshot", w.step, name)
			continue
		}
		require.NotNil(w.t, ni, "step %d: node %s missing from snapshot", w.step, name)
		bound, held := w.ref.usage(name)
		want := rvec{}
		for id := range keysOf(bound, held) {
			if id != snapshot.Pods {
				want[id] = bound[id] + held[id]
			}
		}
		require.Equal(w.t, want.norm(), toRvec(ni.Requested()), "step %d: snapshot %s Requested", w.step, name)
		require.Equal(w.t, bound[snapshot.Pods]+held[snapshot.Pods], int64(ni.NumPods()), "step %d: snapshot %s pods", w.step, name)
	}
}

func mapsEqual(a, b rvec) bool {
	a, b = a.norm(), b.norm()
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		if b[k] != x {
			return false
		}
	}
	return true
}

// TestLedgerMatchesReference runs 10^5 random operations (reserve,
// unreserve, confirm, informer bind, delete, expire, gang, node resize and
// removal, named reservations) on the ledger and on the reference, and
// compares the whole state after every step. At the end, the journal
// replayed onto the informer's state, and Export→Import, must reproduce the
// ledger byte for byte.
func TestLedgerMatchesReference(t *testing.T) {
	steps := 100_000
	if testing.Short() || raceEnabled {
		steps = 10_000
	}
	for seed, n := range map[uint64]int{1: steps, 2: steps / 4} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			steps := n
			w := &modelWorld{t: t, rng: rand.New(rand.NewPCG(seed, 42)), l: reserve.New(), ref: newRef(), now: t0.UnixNano(), pods: map[snapshot.PodKey]*v1.Pod{}}
			var journal bytes.Buffer
			require.NoError(t, w.l.SetJournal(&journal))
			for i := range 6 {
				w.names = append(w.names, fmt.Sprintf("n%d", i))
				w.addNode(w.names[i])
			}
			for i := range 24 {
				k := snapshot.PodKey{Namespace: "default", Name: fmt.Sprintf("p%02d", i)}
				w.keys = append(w.keys, k)
				w.pods[k] = w.newPod(k.Name)
			}
			counts := map[string]int{}
			for w.step = 0; w.step < steps; w.step++ {
				counts[w.op()]++
				w.compare()
				if w.step%7 == 0 {
					w.compareSnapshot()
				}
				if w.step%10_000 == 0 {
					checkRebuild(t, w.l, journal.Bytes())
				}
			}
			t.Logf("operations: %v", counts)
			require.NoError(t, w.l.JournalErr())
			checkRebuild(t, w.l, journal.Bytes())
		})
	}
}

// checkRebuild: Export→Import, and informer state + Replay(journal), both
// reproduce l exactly.
func checkRebuild(t *testing.T, l *reserve.Ledger, journal []byte) {
	t.Helper()
	want := export(t, l)
	imp, err := reserve.Import(bytes.NewReader([]byte(want)))
	require.NoError(t, err)
	require.Equal(t, want, export(t, imp), "Export→Import→Export")
	requireSameUsage(t, l, imp)

	for _, informerFirst := range []bool{true, false} {
		r := reserve.New()
		feed := func() { feedInformer(t, r, want) }
		if informerFirst {
			feed()
		}
		res, err := r.Replay(bytes.NewReader(journal))
		require.NoError(t, err)
		require.Zero(t, res.Torn)
		require.Equal(t, int64(len(journal)), res.Bytes)
		if !informerFirst {
			feed()
		}
		require.Equal(t, want, export(t, r), "replayed (informer first: %v)", informerFirst)
		requireSameUsage(t, l, r)
	}
}

// requireSameUsage: both ledgers know the same nodes with the same
// aggregates (the incrementally maintained ones of a against b's).
func requireSameUsage(t *testing.T, a, b *reserve.Ledger) {
	t.Helper()
	require.Equal(t, a.Nodes(), b.Nodes())
	for _, n := range a.Nodes() {
		ua, _ := a.Usage(n)
		ub, _ := b.Usage(n)
		require.True(t, ua.Allocatable.Equal(&ub.Allocatable) && ua.Bound.Equal(&ub.Bound) && ua.Held.Equal(&ub.Held) && ua.Present == ub.Present,
			"node %s: %+v vs %+v", n, ua, ub)
	}
}

// feedInformer gives r the nodes and bound pods of an export, as an
// informer's initial list would.
func feedInformer(t *testing.T, r *reserve.Ledger, exported string) {
	t.Helper()
	src, err := reserve.Import(bytes.NewReader([]byte(exported)))
	require.NoError(t, err)
	for _, ni := range src.BoundSnapshot().Nodes() {
		require.NoError(t, r.AddNode(ni.Node()))
	}
	for _, p := range boundPods(t, exported) {
		require.NoError(t, r.AddPod(p))
	}
}
