package spread

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unique"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/selector"
)

// TestDomains: the short list and the map it turns into past
// smallDomains agree with a plain map on every read.
func TestDomains(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 14))
	for _, n := range []int{0, 1, smallDomains, smallDomains + 1, 100} {
		var d domains
		ref := map[string]int{}
		for range 5 * n {
			v := fmt.Sprint("z", rng.IntN(n+1))
			k := rng.IntN(4)
			d.add(unique.Make(v), k)
			ref[v] += k
		}
		require.Equal(t, len(ref), d.size(), "n=%d", n)
		m := math.MaxInt32
		for v, k := range ref {
			require.Equal(t, k, d.get(unique.Make(v)), "n=%d %s", n, v)
			m = min(m, k)
		}
		require.Equal(t, m, d.min(), "n=%d", n)
		require.Zero(t, d.get(unique.Make("absent")))
	}
}

// TestMatcherCount: counting through the per-class memo (the short list,
// then the map past smallMemo classes) equals deciding the selector and
// the namespace for every pod.
func TestMatcherCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 14))
	ls, err := selector.FromLabelSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a1", "a3", "a5"}}}})
	require.NoError(t, err)
	sel := Selector{ls}
	m := newMatcher(sel, "ns")
	for node := range 200 {
		var groups []Group
		want := 0
		for range rng.IntN(8) {
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: []string{"ns", "other"}[rng.IntN(2)],
				Labels: map[string]string{"app": fmt.Sprint("a", rng.IntN(40))}}}
			if p.Namespace == "ns" && sel.Matches(p.Labels) {
				want++
			}
			groups = AddToGroups(groups, ClassOf(p), p.Namespace, p.Labels)
		}
		require.Equal(t, want, m.count(groups), "node %d", node)
	}
	require.Len(t, m.small, smallMemo)
	require.NotEmpty(t, m.big, "more classes than the short list holds")
}

// TestGroups: adding and removing pods keeps one group per class with
// its count; a terminating pod (zero class) is not counted.
func TestGroups(t *testing.T) {
	a := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Labels: map[string]string{"app": "a"}}}
	b := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Labels: map[string]string{"app": "b"}}}
	ca, cb := ClassOf(a), ClassOf(b)
	var g []Group
	g = AddToGroups(g, ca, "ns", a.Labels)
	g = AddToGroups(g, cb, "ns", b.Labels)
	g = AddToGroups(g, ca, "ns", a.Labels)
	g = AddToGroups(g, Class{}, "ns", nil)
	require.Equal(t, []Group{{ca, "ns", a.Labels, 2}, {cb, "ns", b.Labels, 1}}, g)
	g = RemoveFromGroups(g, ca)
	g = RemoveFromGroups(g, Class{})
	require.Equal(t, []Group{{ca, "ns", a.Labels, 1}, {cb, "ns", b.Labels, 1}}, g)
	g = RemoveFromGroups(g, ca)
	require.Equal(t, []Group{{cb, "ns", b.Labels, 1}}, g)
	g = RemoveFromGroups(g, ca) // not there
	g = RemoveFromGroups(g, cb)
	require.Empty(t, g)
}

// TestClassOfKeyAndAllocations: the class key is the length-prefixed
// namespace and sorted labels, the same with more labels than the stack
// buffer holds (and longer keys than it holds), and a pod of a known
// class gets its handle without allocating.
func TestClassOfKeyAndAllocations(t *testing.T) {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Labels: map[string]string{"color": "blue", "app": "web"}}}
	require.Equal(t, "7:default3:app3:web5:color4:blue", ClassOf(p).Value())
	require.Zero(t, testing.AllocsPerRun(100, func() { ClassOf(p) }))
	big := map[string]string{}
	want := "2:ns"
	for i := range 20 {
		big[fmt.Sprintf("k%02d", i)] = strings.Repeat("v", 40)
	}
	for i := range 20 {
		want += fmt.Sprintf("3:k%02d40:%s", i, strings.Repeat("v", 40))
	}
	require.Equal(t, want, ClassOf(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Labels: big}}).Value())
}
