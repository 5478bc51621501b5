package score

// NewTaintTolerationForTest returns the TaintToleration scorer with the
// alpha TaintTolerationComparisonOperators gate set to cmp (upstream's
// default is off; [NewTaintToleration] keeps it off).
func NewTaintTolerationForTest(cmp bool) Scorer { return &taintToleration{ComparisonOperators: cmp} }

// TetrisSpreads reports whether s is a DotProduct scorer in the spreading
// direction.
func TetrisSpreads(s Scorer) bool {
	t, ok := s.(*tetris)
	return ok && t.spread
}

// SetVecKernel sets whether the fused pair uses its AVX2 loop (only
// where the processor has AVX2: on = false always works) and returns a
// function restoring the previous setting. Not for parallel tests.
func SetVecKernel(on bool) (restore func()) {
	prev := vecKernel
	vecKernel = on && prev
	return func() { vecKernel = prev }
}

// IgnoresCluster is internal/scoring.IgnoresCluster.
var IgnoresCluster = ignoresCluster
