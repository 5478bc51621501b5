package interpod

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type mapLister map[string]*v1.Namespace

func (m mapLister) Namespace(name string) *v1.Namespace { return m[name] }

// TestNamespacesMemoAgrees: over random sequences of look-ups, the memo
// answers as the lister does: a known namespace's labels (an empty map,
// not nil, for one without labels) and true; nil and false for an
// unknown one; nil and false for every name without a lister.
func TestNamespacesMemoAgrees(t *testing.T) {
	lister := mapLister{
		"a": {ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"team": "x"}}},
		"b": {ObjectMeta: metav1.ObjectMeta{Name: "b"}},
		"c": {ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"team": "y", "env": "prod"}}},
	}
	names := []string{"a", "b", "c", "unknown", ""}
	rng := rand.New(rand.NewPCG(5, 8))
	for i := range 2000 {
		n := &namespaces{lister: lister}
		var none namespaces
		for j := range 1 + rng.IntN(6) {
			name := names[rng.IntN(len(names))]
			msg := fmt.Sprintf("sequence %d, look-up %d: %q", i, j, name)
			got, ok := n.labels(name)
			o := lister[name]
			require.Equal(t, o != nil, ok, msg)
			switch {
			case o == nil:
				require.Nil(t, got, msg)
			case o.Labels == nil:
				require.NotNil(t, got, msg)
				require.Empty(t, got, msg)
			default:
				require.Equal(t, o.Labels, got, msg)
			}
			got, ok = none.labels(name)
			require.False(t, ok, msg)
			require.Nil(t, got, msg)
		}
	}
}

// TestNamespacesFirstLookupAllocatesNothing: a pod's preparation asks
// first (and mostly only) for its own namespace, which costs no
// allocation, known or not (the memo's map was made on the first
// look-up).
func TestNamespacesFirstLookupAllocatesNothing(t *testing.T) {
	lister := mapLister{"b": {ObjectMeta: metav1.ObjectMeta{Name: "b"}}}
	for _, name := range []string{"b", "unknown"} {
		require.Zero(t, testing.AllocsPerRun(100, func() {
			n := namespaces{lister: lister}
			n.labels(name)
			n.labels(name)
		}), name)
	}
}
