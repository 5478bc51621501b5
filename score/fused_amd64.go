package score

import "os"

// vecKernel reports whether addUnit scores fast records with
// fusedUnitAVX2: whether the processor and operating system support AVX2
// (CPUID and XGETBV, read once at start-up) and GODEBUG does not turn it
// off (cpu.avx2=off or cpu.all=off, as for the Go runtime's own use of
// AVX2; see godebugOff). A variable so that tests run both paths.
var vecKernel = hasAVX2() && !godebugOff(os.Getenv("GODEBUG"), "avx2")

// hasAVX2 reports whether AVX2 instructions can run: CPUID leaf 1's AVX
// and OSXSAVE bits, XCR0's SSE and AVX state bits (the operating system
// saves the YMM registers) and CPUID leaf 7's AVX2 bit.
//
//go:noescape
func hasAVX2() bool

// fusedUnitAVX2 adds the pair's unit-weight score of recs[i] to tot[i]
// for i < n, four records at a time (n a multiple of 4, every record's
// vecBits below vecMax, pod the pod's figures): addUnitLoop's arithmetic
// in integer and float64 lanes (see addUnitVec).
//
//go:noescape
func fusedUnitAVX2(recs *cpuMemRec, tot *int64, n int, pod *vecPod)
