package framework

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// resWorld drives a ledger with named reservations through random
// Schedule / Reserve / Unreserve / Confirm / bind reports (late ones
// included) / RemovePod / node resizes / reservation changes, and checks
// after every step that:
//
//   - the framework and the ledger agree: for a random pod and every node,
//     NodeResourcesFit on ledger.SnapshotFor(pod) passes exactly when
//     ledger.Fits says the pod fits; Schedule places a pod exactly when some
//     node fits, on a node that fits, and on a node where the pod draws on
//     its reservation whenever such a node fits;
//   - every node's charged capacity (Usage: bound + held) is exactly what
//     its bound pods, confirmations, holds and reservations account for,
//     summed from scratch from the ledger's listings;
//   - a late bind (a pod reported bound on the node of the reservation its
//     released share came from) draws on that reservation, up to what is
//     left — the reference rule, written out here.
type resWorld struct {
	t      *testing.T
	rng    *rand.Rand
	l      *reserve.Ledger
	s      *Scheduler
	nodes  []string
	keys   []snapshot.PodKey
	pods   map[snapshot.PodKey]*v1.Pod // pending object per key
	lapsed map[snapshot.PodKey]string  // the reference's lapsed shares
	step   int
	late   int // late binds that drew
	uids   int // pods created again under a known name (a new metadata.uid)
}

// newPod makes a pending pod of a random size that owns, at random, the
// app=a or the app=b reservations, those of controller ctrl-1, or none.
func (w *resWorld) newPod(name string) *v1.Pod {
	p := mkPod(name).Req("cpu", []string{"100m", "500m", "1", "1500m", "2", "3"}[w.rng.IntN(6)],
		"memory", []string{"0", "256Mi", "1Gi", "3Gi"}[w.rng.IntN(4)]).Obj()
	yes := true
	owners := []metav1.ObjectMeta{
		{Labels: map[string]string{"app": "a"}},
		{Labels: map[string]string{"app": "b"}},
		{OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "ctrl-1", Controller: &yes}}},
		{},
	}
	o := owners[w.rng.IntN(len(owners))]
	p.Labels, p.OwnerReferences = o.Labels, o.OwnerReferences
	return p
}

func (w *resWorld) nodeObj(name string) *v1.Node {
	return mkNode(name).Capacity("cpu", []string{"2", "3", "4", "6"}[w.rng.IntN(4)],
		"memory", []string{"4Gi", "8Gi"}[w.rng.IntN(2)], "pods", []string{"4", "8"}[w.rng.IntN(2)]).Obj()
}

func (w *resWorld) pi(k snapshot.PodKey) *snapshot.PodInfo { return snapshot.MustPodInfo(w.pods[k]) }
func (w *resWorld) randKey() snapshot.PodKey               { return w.keys[w.rng.IntN(len(w.keys))] }
func (w *resWorld) randNode() string                       { return w.nodes[w.rng.IntN(len(w.nodes))] }

// left is what reservation st has unallocated.
func left(t *testing.T, st reserve.ReservationStatus) snapshot.Vector {
	v, err := snapshot.NewVector(st.Capacity)
	require.NoError(t, err)
	v.Sub(&st.Allocated)
	return v
}

func (w *resWorld) op() string {
	t := w.t
	switch x := w.rng.IntN(100); {
	case x < 25: // a cycle through the framework
		k := w.randKey()
		for range 4 { // prefer a pod the ledger does not know
			if _, _, known := w.l.PodPhase(k); !known {
				break
			}
			k = w.randKey()
		}
		if _, _, known := w.l.PodPhase(k); known {
			return "schedule-skip"
		}
		pi := w.pi(k)
		_, reserved := w.l.SnapshotFor(pi)
		var fit, fitReserved []string
		for _, n := range w.nodes {
			if r, err := w.l.Fits(pi, n); err == nil && r == nil {
				fit = append(fit, n)
				if slices.Contains(reserved, n) {
					fitReserved = append(fitReserved, n)
				}
			}
		}
		d, err := w.s.Schedule(w.l, pi)
		require.NoError(t, err, "step %d", w.step)
		require.Equal(t, len(fit) > 0, d.Scheduled(), "step %d: Schedule(%s): fits on %v, decision %q %v", w.step, k, fit, d.Node, d.Diagnosis)
		if d.Scheduled() {
			require.Contains(t, fit, d.Node, "step %d: Schedule(%s) chose a node Fits rejects", w.step, k)
			if len(fitReserved) > 0 {
				require.Contains(t, fitReserved, d.Node, "step %d: Schedule(%s) passed over its reservations on %v", w.step, k, fitReserved)
			}
		}
		return "schedule"
	case x < 33:
		_, err := w.l.Reserve(w.pi(w.randKey()), w.randNode())
		if err != nil {
			require.ErrorIs(t, err, reserve.ErrConflict, "step %d", w.step)
		}
		return "reserve"
	case x < 45:
		k := w.randKey()
		if hs := w.l.Holds(); len(hs) > 0 && w.rng.IntN(4) != 0 {
			k = hs[w.rng.IntN(len(hs))].Pod.Key()
		}
		h, held := w.l.Hold(k)
		require.Equal(t, held, w.l.Unreserve(k), "step %d: Unreserve(%s)", w.step, k)
		if held && h.Reservation != "" {
			w.lapsed[k] = h.Reservation
		}
		return "unreserve"
	case x < 52:
		_ = w.l.Confirm(w.randKey())
		return "confirm"
	case x < 72: // the informer reports a pod bound; often a late bind
		k := w.randKey()
		if len(w.lapsed) > 0 && w.rng.IntN(2) == 0 {
			ks := make([]snapshot.PodKey, 0, len(w.lapsed))
			for k := range w.lapsed {
				ks = append(ks, k)
			}
			slices.SortFunc(ks, func(a, b snapshot.PodKey) int { return strings.Compare(a.Name, b.Name) })
			k = ks[w.rng.IntN(len(ks))]
		}
		node := w.randNode()
		h, held := w.l.Hold(k)
		if held && w.rng.IntN(2) == 0 {
			node = h.Node
		}
		var before reserve.ReservationStatus
		name, lapsed := w.lapsed[k]
		if lapsed {
			before, lapsed = w.l.Reservation(name)
		}
		if lapsed && w.rng.IntN(4) != 0 {
			node = before.Node
		}
		ph, pn, known := w.l.PodPhase(k)
		counted := known && pn == node
		pod := w.pods[k].DeepCopy()
		pod.Spec.NodeName = node
		if known && ph == reserve.Bound && pn != node {
			// The same pod cannot be bound elsewhere (the ledger refuses
			// it): one created again under the name, with a new uid.
			w.uids++
			pod.UID = types.UID(fmt.Sprintf("%s-again-%d", pod.UID, w.uids))
			w.pods[k].UID = pod.UID
		}
		require.NoError(t, w.l.AddPod(pod))
		delete(w.lapsed, k)
		if !lapsed || counted || before.Node != node {
			return "bound"
		}
		// The late bind: the pod draws on before, per resource the smaller of
		// its request and what is left; an allocate-once reservation another
		// pod draws on gives nothing, one the pod draws on is consumed.
		req := snapshot.MustPodInfo(pod).Requested()
		rest := left(t, before)
		var share snapshot.Vector
		for _, id := range []snapshot.ResourceID{snapshot.CPU, snapshot.Memory} {
			if want := req.Get(id); want > 0 && rest.Get(id) > 0 {
				share.Set(id, min(want, rest.Get(id)))
			}
		}
		after, ok := w.l.Reservation(name)
		switch {
		case share.IsZero() || before.AllocateOnce && len(before.Pods) > 0:
			require.True(t, ok, "step %d", w.step)
			require.Equal(t, before.Allocated.MilliCPU(), after.Allocated.MilliCPU(), "step %d: late bind of %s drew on %s with nothing to draw", w.step, k, name)
			return "bound"
		case before.AllocateOnce:
			require.False(t, ok, "step %d: late bind of %s did not consume allocate-once %s", w.step, k, name)
		default:
			require.True(t, ok, "step %d", w.step)
			want := before.Allocated.Clone()
			want.Add(&share)
			require.True(t, want.Equal(&after.Allocated), "step %d: late bind of %s: %s allocated %v, want %v", w.step, k, name, after.Allocated, want)
			require.Contains(t, after.Pods, k, "step %d", w.step)
		}
		w.late++
		return "late-bind"
	case x < 80:
		k := w.randKey()
		w.l.RemovePod(k)
		delete(w.lapsed, k)
		w.pods[k] = w.newPod(k.Name)
		return "delete"
	case x < 85: // the node shrinks or grows (may over-commit it)
		require.NoError(t, w.l.AddNode(w.nodeObj(w.randNode())))
		return "resize"
	case x < 94:
		capacity := mkPod("cap").Req("cpu", []string{"1", "2", "3", "4"}[w.rng.IntN(4)], "memory", []string{"0", "1Gi", "2Gi"}[w.rng.IntN(3)]).Obj()
		spec := reserve.Reservation{Name: fmt.Sprintf("r%d", w.rng.IntN(4)), Node: w.randNode(), AllocateOnce: w.rng.IntN(3) == 0,
			Capacity: capacity.Spec.Containers[0].Resources.Requests}
		if w.rng.IntN(3) == 0 {
			spec.Owner.Controller = "ctrl-1"
		} else {
			spec.Owner.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": []string{"a", "b"}[w.rng.IntN(2)]}}
		}
		_, err := w.l.AddReservation(spec)
		if err != nil {
			require.ErrorIs(t, err, reserve.ErrReservationExists, "step %d", w.step)
		}
		return "reservation"
	default:
		name := fmt.Sprintf("r%d", w.rng.IntN(4))
		if w.l.RemoveReservation(name) == nil {
			for k, x := range w.lapsed {
				if x == name {
					delete(w.lapsed, k)
				}
			}
		}
		return "unreservation"
	}
}

// checkAgreement: for a random pod, Fits and NodeResourcesFit on the
// pod's view agree on every node.
func (w *resWorld) checkAgreement() {
	pi := w.pi(w.randKey())
	view, reserved := w.l.SnapshotFor(pi)
	res, err := (&nodeResourcesFitPlugin{}).PreFilter(pi)
	require.NoError(w.t, err)
	for _, n := range w.nodes {
		want, err := w.l.Fits(pi, n)
		require.NoError(w.t, err)
		got := res.Filter.Filter(view.Get(n), nil)
		require.Equal(w.t, want == nil, got == nil, "step %d: pod %s node %s (reserved %v): Fits %v, NodeResourcesFit on SnapshotFor %v",
			w.step, pi.Key(), n, reserved, want, got)
	}
}

// checkCharges: each node's Usage equals, resource by resource, the sum
// of its bound pods and confirmations (Bound) and of its holds and its
// reservations' unallocated capacity (Held), each pod and reservation
// counting one pod slot.
func (w *resWorld) checkCharges() {
	t := w.t
	bound, held := map[string]*snapshot.Vector{}, map[string]*snapshot.Vector{}
	for _, n := range w.nodes {
		bound[n], held[n] = &snapshot.Vector{}, &snapshot.Vector{}
	}
	count := func(v *snapshot.Vector, req *snapshot.Vector) {
		v.Add(req)
		v.Set(snapshot.Pods, v.Get(snapshot.Pods)+1)
	}
	for _, ni := range w.l.BoundSnapshot().Nodes() {
		for _, p := range ni.Pods() {
			count(bound[ni.Name()], p.Requested())
		}
	}
	for _, h := range w.l.Holds() {
		if h.Phase == reserve.Confirmed {
			count(bound[h.Node], h.Pod.Requested())
		} else {
			count(held[h.Node], h.Pod.Requested())
		}
	}
	for _, r := range w.l.Reservations() {
		rest := left(t, r)
		count(held[r.Node], &rest)
	}
	for _, n := range w.nodes {
		u, ok := w.l.Usage(n)
		require.True(t, ok)
		for _, id := range []snapshot.ResourceID{snapshot.CPU, snapshot.Memory, snapshot.Pods} {
			require.Equal(t, [2]int64{bound[n].Get(id), held[n].Get(id)}, [2]int64{u.Bound.Get(id), u.Held.Get(id)},
				"step %d: node %s %s: ledger charges (bound, held), want what pods and reservations account for", w.step, n, id.Name())
		}
	}
}

func TestReservationOwnersProperty(t *testing.T) {
	steps := 20_000
	if testing.Short() || raceEnabled {
		steps = 3_000
	}
	for seed := range uint64(3) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			w := &resWorld{t: t, rng: rand.New(rand.NewPCG(seed, 17)), l: reserve.New(), s: mustNew(t, Config{Seed: seed}),
				pods: map[snapshot.PodKey]*v1.Pod{}, lapsed: map[snapshot.PodKey]string{}}
			for i := range 4 {
				w.nodes = append(w.nodes, fmt.Sprintf("n%d", i))
				require.NoError(t, w.l.AddNode(w.nodeObj(w.nodes[i])))
			}
			for i := range 16 {
				k := snapshot.PodKey{Namespace: "default", Name: fmt.Sprintf("p%02d", i)}
				w.keys = append(w.keys, k)
				w.pods[k] = w.newPod(k.Name)
			}
			counts := map[string]int{}
			for w.step = 0; w.step < steps; w.step++ {
				counts[w.op()]++
				w.checkAgreement()
				w.checkCharges()
			}
			t.Logf("operations: %v", counts)
			require.NotZero(t, counts["late-bind"], "no late bind drew: the test does not exercise the rule")
		})
	}
}
