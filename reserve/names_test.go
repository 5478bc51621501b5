package reserve_test

import (
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
