package framework

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestEntryPointsNameThemselves: every entry point that takes a pod from
// the caller refuses the same bad pods (one rule: the API server's,
// internal/objects.PodNames), names itself once at the start of the error,
// and wraps its package's sentinel and snapshot.ErrInvalidObject. Before
// (second trial): Ledger.UpdatePod said "AddPod:", Loop.Add's parse error
// named no entry point and did not wrap ErrInvalidPod, a pod with no
// namespace was accepted everywhere with key "/p", and a malformed
// status.nominatedNodeName was accepted.
func TestEntryPointsNameThemselves(t *testing.T) {
	bad := []struct {
		name  string
		pod   func(bound bool) *v1.Pod
		field string
	}{
		{"empty namespace", func(bound bool) *v1.Pod {
			return withNode(st.MakePod("p").Namespace("").Req("cpu", "1"), bound).Obj()
		}, "metadata.namespace: Required value"},
		{"bad nominatedNodeName", func(bound bool) *v1.Pod {
			p := withNode(st.MakePod("p").Req("cpu", "1"), bound).Obj()
			p.Status.NominatedNodeName = "Bad_Node"
			return p
		}, `status.nominatedNodeName: Invalid value: "Bad_Node"`},
		{"bad namespace", func(bound bool) *v1.Pod {
			return withNode(st.MakePod("p").Namespace("Bad_NS").Req("cpu", "1"), bound).Obj()
		}, `metadata.namespace: Invalid value: "Bad_NS"`},
	}
	type entry struct {
		name     string
		prefix   string
		sentinel error
		bound    bool // the entry point takes bound pods (the informer's)
		call     func(l *reserve.Ledger, loop *Loop, c *snapshot.Cache, pod *v1.Pod) error
	}
	entries := []entry{
		{"Ledger.AddPod", "reserve: Ledger.AddPod: ", reserve.ErrInvalid, true,
			func(l *reserve.Ledger, _ *Loop, _ *snapshot.Cache, p *v1.Pod) error { return l.AddPod(p) }},
		{"Ledger.UpdatePod", "reserve: Ledger.UpdatePod: ", reserve.ErrInvalid, true,
			func(l *reserve.Ledger, _ *Loop, _ *snapshot.Cache, p *v1.Pod) error { return l.UpdatePod(p) }},
		{"Loop.Add", "framework: Loop.Add: ", ErrInvalidPod, false,
			func(_ *reserve.Ledger, loop *Loop, _ *snapshot.Cache, p *v1.Pod) error { return loop.Add(p) }},
		{"Cache.AddPod", "", snapshot.ErrInvalidObject, true,
			func(_ *reserve.Ledger, _ *Loop, c *snapshot.Cache, p *v1.Pod) error { return c.AddPod(p) }},
	}
	for _, e := range entries {
		for _, b := range bad {
			t.Run(e.name+"/"+b.name, func(t *testing.T) {
				l := reserve.New()
				require.NoError(t, l.AddNode(st.MakeNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
				s, err := New(Config{})
				require.NoError(t, err)
				loop := NewLoop(s, l, nil)
				c := snapshot.NewCache()
				require.NoError(t, c.AddNode(st.MakeNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
				before := l.Snapshot()

				err = e.call(l, loop, c, b.pod(e.bound))
				require.Error(t, err)
				msg := err.Error()
				require.True(t, strings.HasPrefix(msg, e.prefix), "%s: %q does not start with %q", e.name, msg, e.prefix)
				if e.prefix != "" {
					require.Equal(t, 1, strings.Count(msg, strings.TrimSuffix(e.prefix, ": ")), "%s named twice: %q", e.name, msg)
				}
				require.Contains(t, msg, b.field)
				require.ErrorIs(t, err, e.sentinel)
				require.True(t, errors.Is(err, snapshot.ErrInvalidObject), "%q does not wrap snapshot.ErrInvalidObject", msg)
				// Nothing changed.
				require.Zero(t, loop.Len())
				require.Same(t, before, l.Snapshot())
				require.Zero(t, c.NumPods())
			})
		}
	}
}

func withNode(w *st.PodWrapper, bound bool) *st.PodWrapper {
	if bound {
		return w.Node("n1")
	}
	return w
}
