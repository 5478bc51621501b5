//go:build !race

package reserve_test

const raceEnabled = false
