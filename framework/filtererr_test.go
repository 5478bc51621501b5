package framework

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// errFilter fails PreFilter: named like the built-in filters' errors
// ("framework: <name>: pod <key>: ...") when named, bare otherwise.
type errFilter struct {
	name  string
	named bool
}

func (f errFilter) Name() string { return f.name }

func (f errFilter) PreFilter(pod *snapshot.PodInfo) (PreFilterResult, error) {
	if f.named {
		return PreFilterResult{}, fmt.Errorf("framework: %s: pod %s: broken: %w", f.name, pod.Key(), ErrInvalidPod)
	}
	return PreFilterResult{}, errors.New("broken")
}

// TestFilterErrorSaysItOnce: a PreFilter error of a built-in filter read
// "framework: filter PodTopologySpread: pod default/p: framework:
// PodTopologySpread: pod default/p: ..." (trial 5): the cycle and the
// preemption dry run wrapped an error that already named the filter and
// pod. Each is now said once; other filters' errors still get the prefix.
func TestFilterErrorSaysItOnce(t *testing.T) {
	snap := snapshottest.Snapshot(t, []*v1.Node{mkNode("n1").Obj()})
	pi := snapshot.MustPodInfo(snapshottest.MakePod("p").Obj())
	for _, tc := range []struct {
		f    errFilter
		want string
	}{
		{errFilter{"Named", true}, "framework: Named: pod default/p: broken: framework: invalid pod"},
		{errFilter{"Bare", false}, "framework: filter Bare: pod default/p: broken"},
	} {
		s, err := New(Config{Filters: []Filter{tc.f}})
		require.NoError(t, err)
		_, err = s.SchedulePod(snap, pi)
		_, perr := s.Preempt(snap, pi, PreemptOptions{})
		for _, err := range []error{err, perr} {
			require.Error(t, err)
			require.Equal(t, tc.want, err.Error())
			require.Equal(t, 1, strings.Count(err.Error(), "pod default/p"))
		}
	}
}
