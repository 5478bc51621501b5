package load

// SetMaxExpandedPods sets the bound on the pods one load makes and
// returns a function that restores the old one: FuzzExpandWorkloads
// lowers it, so that a mutated replicas count costs milliseconds, not
// gigabytes.
func SetMaxExpandedPods(n int) (restore func()) {
	old := maxExpandedPods
	maxExpandedPods = n
	return func() { maxExpandedPods = old }
}
