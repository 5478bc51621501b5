package interpod

import (
	"fmt"
	"testing"
	"unique"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestHandleHashSpreadsLowBits: the 4-bit digits a trie takes first
// (snapshot's pmap: bits 0–3, then 4–7, …) spread 4,096 handles over
// all 16 kids, each kid within a factor two of the mean (256). A
// pointer's alignment zeros survive plain Fibonacci hashing in the
// product's low bits (every handle in kid 0 at the first level).
func TestHandleHashSpreadsLowBits(t *testing.T) {
	const n = 4096
	hs := make([]unique.Handle[string], n) // kept alive: pointers stay distinct
	for i := range hs {
		hs[i] = unique.Make(fmt.Sprint("handlehash-node-", i))
	}
	for _, shift := range []uint{0, 4, 8} {
		var kids [16]int
		for _, h := range hs {
			kids[HandleHash(h)>>shift&15]++
		}
		for k, c := range kids {
			require.True(t, c >= n/16/2 && c <= n/16*2, "bits %d–%d: kid %d holds %d of %d handles (mean %d)", shift, shift+3, k, c, n, n/16)
		}
	}
}

// TestHandleHashTopBitsAreFibonacci: ValueTable takes HandleHash's top
// bits; folding the product's high bits into the low 35 leaves them as
// the pointer's Fibonacci hash.
func TestHandleHashTopBitsAreFibonacci(t *testing.T) {
	for i := range 1000 {
		h := unique.Make(fmt.Sprint("handlehash-top-", i))
		fib := uint64(*(*uintptr)(unsafe.Pointer(&h))) * 0x9E3779B97F4A7C15
		require.Equal(t, fib>>35, HandleHash(h)>>35, "handle %q", h.Value())
		require.Equal(t, HandleHash(h), HandleHash(unique.Make(h.Value())), "same value, same handle, same hash")
	}
}
