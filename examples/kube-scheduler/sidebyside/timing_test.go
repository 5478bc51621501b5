package sidebyside

import (
	"runtime"
	"testing"
)

// timeLoop is the timed loop of the side-by-side benchmarks: after a
// garbage collection it runs iter (one pod through one side) in b's
// loop, with b.ReportAllocs, and returns per iteration the wall-clock
// nanoseconds, the process's CPU nanoseconds (cpuTime: all threads, so
// upstream's parallelizer goroutines and the garbage collector count;
// the steadier figure on a shared machine) and the heap allocations.
func timeLoop(b *testing.B, iter func()) (wallNs, cpuNs, allocs float64) {
	b.Helper()
	b.ReportAllocs()
	runtime.GC()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	c0 := cpuTime()
	iters := 0
	for b.Loop() {
		iter()
		iters++
	}
	cpu := cpuTime() - c0
	runtime.ReadMemStats(&ms1)
	k := float64(max(iters, 1))
	return float64(b.Elapsed().Nanoseconds()) / k, float64(cpu.Nanoseconds()) / k, float64(ms1.Mallocs-ms0.Mallocs) / k
}
