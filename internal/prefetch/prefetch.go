// Package prefetch asks the processor to start loading memory that a
// scan will read soon, without waiting for it: a hint, never a load (it
// cannot fault, and a bad address is ignored by the hardware). On amd64
// and arm64 it is one prefetch instruction per line (PREFETCHT0, PRFM
// PLDL1KEEP) in an assembly function, so a call costs a few nanoseconds
// and is not inlined; elsewhere it does nothing.
//
// A plain Go load of the same memory is not a substitute: the processor
// cannot retire it until the line arrives, so a scan whose every step
// misses the cache stalls on each; a prefetch retires at once, and the
// line arrives while the scan works on the step before.
package prefetch

import "unsafe"

// HeadLines is the size of the head [Head] fetches: a NodeInfo's first
// two 64-byte blocks (internal/layout.Head), which may straddle three
// cache lines when the object is not 64-byte aligned.
const HeadLines = 128

// Head asks for the lines holding the HeadLines bytes from p. p may be
// nil: a prefetch never faults. Safe for concurrent use; O(1), no
// allocation.
func Head[T any](p *T) { head(unsafe.Pointer(p)) }
