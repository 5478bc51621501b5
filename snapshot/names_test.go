package snapshot_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestNamesValidated: pod names (DNS-1123 subdomain), pod namespaces
// (DNS-1123 label) and node names (DNS-1123 subdomain) are checked as the
// API server does (k8s v1.37.2 ValidatePodName, ValidateNamespaceName,
// ValidateNodeName); before, all of these were accepted (trial 5), and a
// pod in the ledger's placeholder namespace "reserve.schedkit.io" could
// take a reservation placeholder's key.
func TestNamesValidated(t *testing.T) {
	for name, tc := range map[string]struct {
		ns, pod, field string
	}{
		"namespace with underscore": {"Bad_NS", "p", "metadata.namespace"},
		"namespace with dots":       {"reserve.schedkit.io", "r", "metadata.namespace"},
		"namespace too long":        {strings.Repeat("a", 64), "p", "metadata.namespace"},
		"pod name with space":       {"default", "Bad Pod!", "metadata.name"},
		"pod name upper case":       {"default", "Web-0", "metadata.name"},
		"pod name with slash":       {"default", "a/b", "metadata.name"},
	} {
		t.Run(name, func(t *testing.T) {
			pod := st.MakePod(tc.pod).Namespace(tc.ns).Req("cpu", "1").Node("n0").Obj()
			_, err := snapshot.NewPodInfo(pod)
			require.ErrorIs(t, err, snapshot.ErrInvalidObject)
			require.ErrorContains(t, err, "pod "+tc.ns+"/"+tc.pod+": ")
			require.ErrorContains(t, err, tc.field+": Invalid value")

			c := snapshot.NewCache()
			require.NoError(t, c.AddNode(st.MakeNode("n0").Capacity("cpu", "4").Obj()))
			require.ErrorIs(t, c.AddPod(pod), snapshot.ErrInvalidObject)
			require.Equal(t, 0, c.Snapshot().Get("n0").NumPods())
		})
	}
	// spec.nodeName names a node: a bound pod on "Bad_Node" made the
	// Ledger and the Cache count a node that could never be added (trial).
	for _, bad := range []string{"Bad_Node", "bad node", "N0"} {
		pod := st.MakePod("p").Namespace("default").Req("cpu", "1").Node(bad).Obj()
		_, err := snapshot.NewPodInfo(pod)
		require.ErrorIs(t, err, snapshot.ErrInvalidObject, bad)
		require.ErrorContains(t, err, `pod default/p: spec.nodeName: Invalid value: "`+bad+`"`)
		c := snapshot.NewCache()
		require.ErrorIs(t, c.AddPod(pod), snapshot.ErrInvalidObject, bad)
		require.Zero(t, c.NumPods(), bad)
	}
	for _, ok := range []struct{ ns, pod string }{{"default", "web-0.a"}, {"kube-system", "x"}} {
		_, err := snapshot.NewPodInfo(st.MakePod(ok.pod).Namespace(ok.ns).Obj())
		require.NoError(t, err, "%s/%s", ok.ns, ok.pod)
	}
	// No namespace: the API server fills it from the request URL and its
	// validation requires one; schedkit has no URL, so it refuses (second
	// trial: "/p" was accepted).
	_, err := snapshot.NewPodInfo(st.MakePod("p").Namespace("").Obj())
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	require.ErrorContains(t, err, "pod /p: metadata.namespace: Required value")

	for _, bad := range []string{"Bad_Name!", "node one", "-n", "N0"} {
		c := snapshot.NewCache()
		err := c.AddNode(st.MakeNode(bad).Capacity("cpu", "4").Obj())
		require.ErrorIs(t, err, snapshot.ErrInvalidObject, bad)
		require.ErrorContains(t, err, `node "`+bad+`": metadata.name`)
		require.Zero(t, c.Snapshot().NumNodes(), bad)
		f := c.Snapshot().Fork()
		require.ErrorIs(t, f.AddNode(st.MakeNode(bad).Obj()), snapshot.ErrInvalidObject, bad)
		require.Zero(t, f.NumNodes(), bad)
	}
	require.NoError(t, snapshot.NewCache().AddNode(st.MakeNode("node-1.example.com").Obj()))
}
