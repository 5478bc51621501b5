package reserve_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestPlaceholderNamespaceRefused: a pod in ReservationNamespace named
// like a reservation took the placeholder's key: AddPod returned nil and
// every later Snapshot panicked ("pod already exists"), or, on another
// node, the snapshot held two pods with one key (trial 5). The ledger now
// refuses such pods (AddPod, AddPodInfo, Reserve, gangs), with a
// placeholder taken from a snapshot too, and changes nothing.
func TestPlaceholderNamespaceRefused(t *testing.T) {
	l := reserve.New()
	for _, n := range []string{"n0", "n1"} {
		require.NoError(t, l.AddNode(st.MakeNode(n).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	}
	ins, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n0", Capacity: st.List("cpu", "2"),
		Owner: reserve.Owner{Namespace: "default", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}})
	require.NoError(t, err)
	require.Nil(t, ins)
	usage := func() []reserve.NodeUsage {
		var out []reserve.NodeUsage
		for _, n := range l.Nodes() {
			u, _ := l.Usage(n)
			out = append(out, u)
		}
		return out
	}
	before := usage()

	for _, node := range []string{"n0", "n1"} {
		pod := st.MakePod("r").Namespace(reserve.ReservationNamespace).Req("cpu", "1").Node(node).Obj()
		err := l.AddPod(pod)
		require.ErrorIs(t, err, reserve.ErrInvalid, node)
		require.ErrorIs(t, err, snapshot.ErrInvalidObject, node)
		require.ErrorContains(t, err, "pod reserve.schedkit.io/r: metadata.namespace", node)
	}
	placeholder := l.Snapshot().Get("n0").Pods()[0]
	require.Equal(t, snapshot.PodKey{Namespace: reserve.ReservationNamespace, Name: "r"}, placeholder.Key())
	require.ErrorIs(t, l.AddPodInfo(placeholder, "n1"), reserve.ErrInvalid)
	_, err = l.Reserve(placeholder, "n1")
	require.ErrorIs(t, err, reserve.ErrInvalid)
	require.ErrorContains(t, err, "reserved for the ledger's reservation placeholders")

	require.Equal(t, before, usage(), "ledger unchanged")
	require.NotPanics(t, func() { l.Snapshot() })
	require.Equal(t, 1, l.Snapshot().Get("n0").NumPods())
	require.Equal(t, 0, l.Snapshot().Get("n1").NumPods())
}

// TestLedgerNamesValidated: node and reservation names are checked as the
// API server checks node and pod names (DNS-1123 subdomain; a
// reservation's name is its placeholder pod's name); before, "Bad_Name!"
// was accepted for both (trial 5).
func TestLedgerNamesValidated(t *testing.T) {
	l := reserve.New()
	err := l.AddNode(st.MakeNode("Bad_Name!").Capacity("cpu", "4").Obj())
	require.ErrorIs(t, err, reserve.ErrInvalid)
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	require.ErrorContains(t, err, `node "Bad_Name!": metadata.name`)
	require.Empty(t, l.Nodes())

	require.NoError(t, l.AddNode(st.MakeNode("n0").Capacity("cpu", "4", "pods", "110").Obj()))
	_, err = l.AddReservation(reserve.Reservation{Name: "Bad Name!", Node: "n0", Capacity: st.List("cpu", "1"),
		Owner: reserve.Owner{Controller: "c"}})
	require.ErrorIs(t, err, reserve.ErrInvalid)
	require.ErrorContains(t, err, `reservation "Bad Name!": name`)
	require.Empty(t, l.Reservations())

	err = l.AddPod(st.MakePod("Bad Pod!").Namespace("Bad_NS").Req("cpu", "1").Node("n0").Obj())
	require.ErrorIs(t, err, reserve.ErrInvalid)
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	require.Equal(t, 0, l.Snapshot().Get("n0").NumPods())
}

// TestPlaceholderUnmarked: the ledger's placeholder pods used to be marked
// by setting spec.enableServiceLinks to a private pointer, which the name
// check let through. The mark showed in every placeholder's spec (a field
// the reservation never set), and a shallow copy of a placeholder kept the
// pointer, so snapshot.NewPodInfo accepted a pod in ReservationNamespace,
// a namespace the API server refuses. Placeholders are now parsed by the
// ledger's own path (internal/nodeview.Placeholder) and carry no mark; any
// pod in ReservationNamespace given by a caller is refused, the ledger
// still refuses one (TestPlaceholderNamespaceRefused), and scheduling
// around a reservation is unchanged.
func TestPlaceholderUnmarked(t *testing.T) {
	l := reserve.New()
	require.NoError(t, l.AddNode(st.MakeNode("n0").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	_, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n0", Capacity: st.List("cpu", "3"),
		Owner: reserve.Owner{Namespace: "default", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}})
	require.NoError(t, err)
	ph := l.Snapshot().Get("n0").Pods()[0]
	require.Equal(t, reserve.ReservationNamespace, ph.Key().Namespace)
	require.Nil(t, ph.Pod().Spec.EnableServiceLinks, "a placeholder's spec is what the reservation says, nothing more")

	shallow := *ph.Pod()
	_, err = snapshot.NewPodInfo(&shallow)
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	require.ErrorContains(t, err, `pod reserve.schedkit.io/r: metadata.namespace: Invalid value: "reserve.schedkit.io"`)

	// The reservation still holds its capacity against other pods: 1 cpu
	// of 4 is free.
	ins, err := l.Fits(snapshot.MustPodInfo(st.MakePod("other").Req("cpu", "2").Obj()), "n0")
	require.NoError(t, err)
	require.NotEmpty(t, ins)
	ins, err = l.Fits(snapshot.MustPodInfo(st.MakePod("owned").Label("app", "x").Req("cpu", "2").Obj()), "n0")
	require.NoError(t, err)
	require.Empty(t, ins)
}

// TestReservationNamesValidated: a reservation's owner.namespace and node
// are checked as the API server checks a namespace and a node name; before,
// owner.namespace "Bad_NS" was accepted (second trial) and matched no pod
// ever. Errors name the reservation and field and change nothing.
func TestReservationNamesValidated(t *testing.T) {
	l := reserve.New()
	require.NoError(t, l.AddNode(st.MakeNode("n0").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	for _, tc := range []struct {
		name string
		r    reserve.Reservation
		want string
	}{
		{"owner namespace", reserve.Reservation{Name: "r", Node: "n0", Capacity: st.List("cpu", "1"), Owner: reserve.Owner{Namespace: "Bad_NS", Selector: sel}},
			`reservation r: owner.namespace "Bad_NS": a lowercase RFC 1123 label`},
		{"owner namespace with dots", reserve.Reservation{Name: "r", Node: "n0", Capacity: st.List("cpu", "1"), Owner: reserve.Owner{Namespace: "a.b", Selector: sel}},
			`reservation r: owner.namespace "a.b"`},
		{"node", reserve.Reservation{Name: "r", Node: "Bad_Node", Capacity: st.List("cpu", "1"), Owner: reserve.Owner{Selector: sel}},
			`reservation r: node "Bad_Node": not a node name: a lowercase RFC 1123 subdomain`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ins, err := l.AddReservation(tc.r)
			require.Nil(t, ins)
			require.ErrorIs(t, err, reserve.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
			require.True(t, strings.HasPrefix(err.Error(), "reserve: Ledger.AddReservation: reservation r: "), "%q names no entry point", err)
			require.Empty(t, l.Reservations())
		})
	}
}
