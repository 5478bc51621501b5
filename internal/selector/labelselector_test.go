package selector

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unique"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// handles returns ls as a sorted Handles list (a node's label shape).
func handles(ls map[string]string) []Label {
	out := make([]Label, 0, len(ls))
	for k, v := range ls {
		out = append(out, Label{Key: unique.Make(k), Value: unique.Make(v)})
	}
	slices.SortFunc(out, func(a, b Label) int { return strings.Compare(a.Key.Value(), b.Key.Value()) })
	return out
}

var (
	propKeys   = []string{"app", "tier", "zone", "example.com/team", "n", "bad key!", "", "a/b/c"}
	propValues = []string{"web", "db", "a", "", "7", "-3", "bad value!", "x"}
	propOps    = []metav1.LabelSelectorOperator{metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn,
		metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist, "Gt", "Near"}
)

func randLabels(rng *rand.Rand) map[string]string {
	ls := map[string]string{}
	for range rng.IntN(4) {
		ls[propKeys[rng.IntN(len(propKeys)-3)]] = propValues[rng.IntN(len(propValues)-1)]
	}
	return ls
}

func randLabelSelector(rng *rand.Rand) *metav1.LabelSelector {
	if rng.IntN(10) == 0 {
		return nil
	}
	ls := &metav1.LabelSelector{}
	if rng.IntN(2) == 0 {
		ls.MatchLabels = map[string]string{}
		for range rng.IntN(3) {
			ls.MatchLabels[propKeys[rng.IntN(len(propKeys))]] = propValues[rng.IntN(len(propValues))]
		}
	}
	for range rng.IntN(3) {
		e := metav1.LabelSelectorRequirement{Key: propKeys[rng.IntN(len(propKeys))], Operator: propOps[rng.IntN(len(propOps))]}
		for range rng.IntN(3) {
			e.Values = append(e.Values, propValues[rng.IntN(len(propValues))])
		}
		ls.MatchExpressions = append(ls.MatchExpressions, e)
	}
	return ls
}

// TestLabelSelectorAgainstApimachinery: on random selectors (valid and
// not: bad keys and values, wrong value counts, operators a label selector
// lacks) and random label sets, FromLabelSelector fails exactly when
// metav1.LabelSelectorAsSelector does and otherwise matches exactly what
// it matches, over a label map and over interned handles alike.
func TestLabelSelectorAgainstApimachinery(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	valid, matched := 0, 0
	for i := range 20000 {
		ps := randLabelSelector(rng)
		want, werr := metav1.LabelSelectorAsSelector(ps)
		got, gerr := FromLabelSelector(ps)
		require.Equal(t, werr == nil, gerr == nil, "case %d: %+v: apimachinery error %v, ours %v", i, ps, werr, gerr)
		if werr != nil {
			continue
		}
		valid++
		for range 4 {
			ls := randLabels(rng)
			w := want.Matches(labels.Set(ls))
			require.Equal(t, w, MatchMap(&got, ls), "case %d: %+v on %v (map)", i, ps, ls)
			require.Equal(t, w, Match(&got, handles(ls)), "case %d: %+v on %v (handles)", i, ps, ls)
			if w {
				matched++
			}
		}
	}
	// The generator covers both outcomes of both questions.
	assert.Greater(t, valid, 2000, "valid selectors")
	assert.Greater(t, matched, 2000, "matching label sets")
}

// TestFromSetAgainstApimachinery: FromSet is labels.SelectorFromSet
// (spec.nodeSelector), unvalidated keys and values included.
func TestFromSetAgainstApimachinery(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2))
	for i := range 5000 {
		set := map[string]string{}
		for range rng.IntN(3) {
			set[propKeys[rng.IntN(len(propKeys))]] = propValues[rng.IntN(len(propValues))]
		}
		if len(set) == 0 && rng.IntN(2) == 0 {
			set = nil
		}
		want := labels.SelectorFromSet(set)
		got := FromSet(set)
		for range 4 {
			ls := randLabels(rng)
			if rng.IntN(4) == 0 {
				for k, v := range set { // a superset of the selector: it must match
					ls[k] = v
				}
			}
			w := want.Matches(labels.Set(ls))
			require.Equal(t, w, MatchMap(&got, ls), "case %d: %v on %v (map)", i, set, ls)
			require.Equal(t, w, Match(&got, handles(ls)), "case %d: %v on %v (handles)", i, set, ls)
		}
	}
}

func TestLabelSelectorEdges(t *testing.T) {
	nothing, err := FromLabelSelector(nil)
	require.NoError(t, err)
	assert.False(t, MatchMap(&nothing, nil), "nil selector matches nothing")
	everything, err := FromLabelSelector(&metav1.LabelSelector{})
	require.NoError(t, err)
	assert.True(t, everything.Empty())
	assert.True(t, MatchMap(&everything, nil), "empty selector matches everything")
	_, err = FromLabelSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "n", Operator: "Gt", Values: []string{"1"}}}})
	require.EqualError(t, err, `"Gt" is not a valid label selector operator`)
	_, err = FromLabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "v"}})
	require.ErrorContains(t, err, `key: Invalid value: "bad key!"`)

	ns := NewNamespaces("team-b", "team-a", "team-b")
	assert.Equal(t, 2, ns.Len())
	assert.True(t, ns.Has("team-a"))
	assert.True(t, ns.Has("team-b"))
	assert.False(t, ns.Has("default"))
	assert.False(t, Namespaces{}.Has(""), "the zero set is empty")
}

// TestMatchAllocatesNothing pins the zero-allocation claim of matching.
func TestMatchAllocatesNothing(t *testing.T) {
	s, err := FromLabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"db"}}}})
	require.NoError(t, err)
	m := map[string]string{"app": "web", "tier": "fe"}
	h := handles(m)
	var ok bool
	allocs := testing.AllocsPerRun(100, func() { ok = MatchMap(&s, m) && Match(&s, h) })
	assert.True(t, ok)
	assert.Zero(t, allocs, "allocations per match")
}

// FuzzFromLabelSelector checks the compiler and matcher against
// apimachinery's LabelSelectorAsSelector for one matchLabels entry and
// one expression on an object with two labels.
func FuzzFromLabelSelector(f *testing.F) {
	f.Add("app", "web", "tier", uint8(0), "fe,be", "app", "web", "tier", "fe")
	f.Add("app", "web", "tier", uint8(1), "db", "app", "web", "tier", "db")
	f.Add("", "", "zone", uint8(2), "", "zone", "a", "x", "y")
	f.Add("", "", "zone", uint8(3), "", "zone", "a", "x", "y")
	f.Add("bad key!", "v", "k", uint8(2), "", "k", "v", "a", "b")
	f.Add("k", "bad value!", "k", uint8(0), "", "k", "v", "a", "b")
	f.Add("", "", "n", uint8(4), "1", "n", "2", "a", "b")
	f.Add("", "", "k", uint8(5), "v", "k", "v", "a", "b")
	f.Add("example.com/team", "a", "k", uint8(2), "x", "example.com/team", "a", "k", "v")
	f.Fuzz(func(t *testing.T, mlKey, mlValue, key string, op uint8, values, k1, v1, k2, v2 string) {
		ps := &metav1.LabelSelector{}
		if mlKey != "" || mlValue != "" {
			ps.MatchLabels = map[string]string{mlKey: mlValue}
		}
		if key != "" || op%2 == 0 {
			e := metav1.LabelSelectorRequirement{Key: key, Operator: propOps[int(op)%len(propOps)]}
			if values != "" {
				e.Values = strings.Split(values, ",")
			}
			ps.MatchExpressions = []metav1.LabelSelectorRequirement{e}
		}
		want, werr := metav1.LabelSelectorAsSelector(ps)
		got, gerr := FromLabelSelector(ps)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%+v: apimachinery error %v, ours %v", ps, werr, gerr)
		}
		if werr != nil {
			if werr.Error() != gerr.Error() {
				t.Fatalf("%+v: apimachinery error %q, ours %q", ps, werr, gerr)
			}
			return
		}
		ls := map[string]string{k1: v1, k2: v2}
		w := want.Matches(labels.Set(ls))
		if g := MatchMap(&got, ls); g != w {
			t.Fatalf("%+v on %v: map %v, apimachinery %v", ps, ls, g, w)
		}
		if g := Match(&got, handles(ls)); g != w {
			t.Fatalf("%+v on %v: handles %v, apimachinery %v", ps, ls, g, w)
		}
	})
}

// TestAppendKey: equal selectors have equal keys; selectors that differ
// in a key, operator, value, number of values or Nothing have different
// keys, also where a naive concatenation would collide.
func TestAppendKey(t *testing.T) {
	mk := func(ls *metav1.LabelSelector) Selector {
		s, err := FromLabelSelector(ls)
		require.NoError(t, err)
		return s
	}
	expr := func(key string, op metav1.LabelSelectorOperator, vals ...string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: vals}}}
	}
	sels := []Selector{
		Nothing(),
		{},
		mk(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}),
		mk(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "ab"}}),
		mk(&metav1.LabelSelector{MatchLabels: map[string]string{"appa": "b"}}),
		mk(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "a", "b": "c"}}),
		mk(expr("app", metav1.LabelSelectorOpNotIn, "a")),
		mk(expr("app", metav1.LabelSelectorOpIn, "a", "b")),
		mk(expr("app", metav1.LabelSelectorOpIn, "b", "a")),
		mk(expr("app", metav1.LabelSelectorOpExists)),
		mk(expr("app", metav1.LabelSelectorOpDoesNotExist)),
		FromSet(map[string]string{"app": "a", "b": "c"}),
	}
	keys := map[string]int{}
	for i := range sels {
		k := string(sels[i].AppendKey(nil))
		if j, dup := keys[k]; dup {
			// Only the two spellings of {app=a, b=c} may share a key.
			require.Equal(t, []int{5, 11}, []int{j, i}, "key %q", k)
			continue
		}
		keys[k] = i
	}
	require.Len(t, keys, len(sels)-1)
	again := mk(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}})
	assert.Equal(t, string(sels[2].AppendKey(nil)), string(again.AppendKey([]byte{})))
	assert.Equal(t, "x"+string(sels[2].AppendKey(nil)), string(sels[2].AppendKey([]byte("x"))))
}
