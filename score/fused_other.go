//go:build !amd64

package score

// vecKernel is false: there is no vector loop on this architecture.
var vecKernel = false

func fusedUnitAVX2(*cpuMemRec, *int64, int, *vecPod) {
	panic("score: no vector kernel on this architecture")
}
