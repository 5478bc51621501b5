package selector

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
)

var propNodeOps = []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists,
	v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt, "Near"}

func randTerm(rng *rand.Rand) v1.NodeSelectorTerm {
	var t v1.NodeSelectorTerm
	for range rng.IntN(3) {
		r := v1.NodeSelectorRequirement{Key: propKeys[rng.IntN(len(propKeys))], Operator: propNodeOps[rng.IntN(len(propNodeOps))]}
		for range rng.IntN(3) {
			r.Values = append(r.Values, propValues[rng.IntN(len(propValues))])
		}
		t.MatchExpressions = append(t.MatchExpressions, r)
	}
	for range rng.IntN(2) {
		r := v1.NodeSelectorRequirement{Key: "metadata.name", Operator: propNodeOps[rng.IntN(3)]}
		if rng.IntN(5) == 0 {
			r.Key = "spec.other"
		}
		for range 1 + rng.IntN(2) {
			r.Values = append(r.Values, []string{"n1", "n2"}[rng.IntN(2)])
		}
		t.MatchFields = append(t.MatchFields, r)
	}
	return t
}

// TestNodeSelectorAgainstApimachinery: random multi-term node selectors
// and preferred terms match (ORed terms, dropped empty and invalid ones)
// and score (summed weights) as apimachinery's label and field selectors
// built term by term, over a label map and over handles alike, for a node
// with and without a name.
func TestNodeSelectorAgainstApimachinery(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 4))
	for i := range 5000 {
		ns := &v1.NodeSelector{}
		var pref []v1.PreferredSchedulingTerm
		for range rng.IntN(4) {
			term := randTerm(rng)
			ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, term)
			pref = append(pref, v1.PreferredSchedulingTerm{Weight: int32(rng.IntN(5)), Preference: term})
		}
		sel, errs := CompileNodeSelector(ns, nil)
		weighted, perr := CompilePreferred(pref, nil)
		anyInvalid := false
		for j := range ns.NodeSelectorTerms {
			if _, e := CompileTerm(&ns.NodeSelectorTerms[j], nil); len(e) > 0 && !isEmptyTerm(&ns.NodeSelectorTerms[j]) {
				anyInvalid = true
			}
		}
		require.Equal(t, anyInvalid, len(errs) > 0, "case %d: errors %v", i, errs)
		for range 4 {
			node := &v1.Node{}
			node.Name = []string{"", "n1", "n2"}[rng.IntN(3)]
			node.Labels = randLabels(rng)
			want := false
			var wantScore int64
			prefInvalid := false
			for j := range ns.NodeSelectorTerms {
				m := refTermMatches(&ns.NodeSelectorTerms[j], node)
				want = want || m
				if pref[j].Weight != 0 && !isEmptyTerm(&pref[j].Preference) {
					if _, e := CompileTerm(&pref[j].Preference, nil); len(e) > 0 {
						prefInvalid = true
					} else if m {
						wantScore += int64(pref[j].Weight)
					}
				}
			}
			require.Equal(t, want, MatchNode(&sel, node.Name, handles(node.Labels)), "case %d: %+v on %v (map)", i, ns, node.ObjectMeta)
			require.Equal(t, want, MatchNode(&sel, node.Name, handles(node.Labels)), "case %d: %+v on %v (handles)", i, ns, node.ObjectMeta)
			require.Equal(t, prefInvalid, perr != nil, "case %d: preferred error %v", i, perr)
			if perr == nil {
				require.Equal(t, wantScore, Score(weighted, node.Name, handles(node.Labels)), "case %d: score of %+v on %v", i, pref, node.ObjectMeta)
			}
		}
	}
}
