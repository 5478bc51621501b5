//go:build !race

package score_test

const raceEnabled = false
