package framework

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// got is a Reason with the taint copied, so cases compare by value.
type got struct {
	Code                      Code
	Resource                  v1.ResourceName
	Requested, Used, Capacity int64
	Unresolvable              bool
	Taint                     string
	Text                      string
}

func flatten(rs []Reason) []got {
	out := []got{}
	for _, r := range rs {
		g := got{Code: r.Code, Requested: r.Requested, Used: r.Used, Capacity: r.Capacity, Unresolvable: r.Unresolvable, Text: r.Text}
		if r.Code == CodeInsufficientResource || r.Code == CodeTooManyPods {
			g.Resource = r.Resource.Name()
		}
		if r.Taint != nil {
			g.Taint = r.Taint.ToString()
		}
		out = append(out, g)
	}
	return out
}

// runFilter prepares f for pod and runs it on every node of a snapshot of
// nodes+bound; it returns the PreFilter result and the reasons per node.
func runFilter(t *testing.T, f Filter, pod *v1.Pod, nodes []*v1.Node, bound ...*v1.Pod) (PreFilterResult, map[string][]got) {
	t.Helper()
	snap := snapshottest.Snapshot(t, nodes, bound...)
	res, err := f.PreFilter(snapshot.MustPodInfo(pod))
	require.NoError(t, err)
	out := map[string][]got{}
	for _, ni := range snap.Nodes() {
		if res.Filter == nil {
			out[ni.Name()] = []got{}
			continue
		}
		out[ni.Name()] = flatten(res.Filter.Filter(ni, make([]Reason, 0, 16)))
	}
	return res, out
}

// filterOne runs f for pod on the single node.
func filterOne(t *testing.T, f Filter, pod *v1.Pod, node *v1.Node, bound ...*v1.Pod) []got {
	t.Helper()
	_, out := runFilter(t, f, pod, []*v1.Node{node}, bound...)
	return out[node.Name]
}

func mkPod(name string) *snapshottest.PodWrapper   { return snapshottest.MakePod(name) }
func mkNode(name string) *snapshottest.NodeWrapper { return snapshottest.MakeNode(name) }

func lookup(t *testing.T, name v1.ResourceName) (snapshot.ResourceID, bool) {
	t.Helper()
	id, ok := snapshot.LookupResource(name)
	require.True(t, ok, "resource %s not interned", name)
	return id, ok
}
