//go:build race

package reserve_test

// raceEnabled: the race detector is on; single-goroutine property tests
// run fewer steps (they check no concurrency).
const raceEnabled = true
