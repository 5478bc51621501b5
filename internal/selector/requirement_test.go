package selector

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// TestRequirementValidAgrees: over random keys, operators and values
// (valid and invalid), requirementValid is exactly labels.NewRequirement
// finding nothing for every operator but Gt and Lt, and false for those
// (NewRequirement decides), so that newRequirement's fast path accepts
// nothing NewRequirement refuses and refuses nothing it accepts.
func TestRequirementValidAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	keys := []string{"app", "kubernetes.io/hostname", "-bad", "a/b/c", "", "Ex.com/x", "x_y", "/x", "a.b/", "é"}
	vals := []string{"", "web", "-bad", "a b", "v1.2_3", "UPPER", "12", "x-"}
	ops := []selection.Operator{selection.In, selection.NotIn, selection.Equals, selection.DoubleEquals, selection.NotEquals,
		selection.Exists, selection.DoesNotExist, selection.GreaterThan, selection.LessThan, "bogus"}
	accepted := 0
	for range 20_000 {
		key, op := keys[rng.IntN(len(keys))], ops[rng.IntN(len(ops))]
		var values []string
		for range rng.IntN(3) {
			values = append(values, vals[rng.IntN(len(vals))])
		}
		_, err := labels.NewRequirement(key, op, values)
		fast := requirementValid(key, op, values)
		if op == selection.GreaterThan || op == selection.LessThan {
			require.False(t, fast, "%q %s %q", key, op, values)
			continue
		}
		require.Equal(t, err == nil, fast, "%q %s %q: %v", key, op, values, err)
		if fast {
			accepted++
		}
	}
	require.Greater(t, accepted, 1000)
}

// TestFromLabelSelectorValidatesWithoutNewRequirement: compiling a valid
// one-label selector (scheduler_perf's affinity terms) allocates only the
// compiled requirements and the sorted keys; through
// labels.NewRequirement it made several more (its requirement, field
// paths) and ran its regular expressions.
func TestFromLabelSelectorValidatesWithoutNewRequirement(t *testing.T) {
	ls := &metav1.LabelSelector{MatchLabels: map[string]string{"color": "green"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}
	_, err := FromLabelSelector(ls) // interns the handles
	require.NoError(t, err)
	// reqs, keys, and the values clone of the two-valued In.
	require.LessOrEqual(t, testing.AllocsPerRun(100, func() {
		if _, err := FromLabelSelector(ls); err != nil {
			t.Fatal(err)
		}
	}), 3.0)
}
