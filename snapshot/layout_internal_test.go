package snapshot

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// The CPUMemory block is 64 bytes at offset 0 and NodeInfo's size is a
// multiple of 64, so in Go's size-class allocator (spans start on page
// boundaries and hold objects of one size back to back) the block fills
// exactly one cache line.
func TestNodeInfoLayout(t *testing.T) {
	var n NodeInfo
	require.Equal(t, uintptr(0), unsafe.Offsetof(n.cm))
	require.Equal(t, uintptr(64), unsafe.Sizeof(n.cm))
	require.Zero(t, unsafe.Sizeof(n)%64, "sizeof(NodeInfo) = %d", unsafe.Sizeof(n))
}
