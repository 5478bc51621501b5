//go:build race

package score_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts that rely on the pool are not stable under -race.
const raceEnabled = true
