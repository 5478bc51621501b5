package snapshot

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// The CPUMemory block is 64 bytes at offset 0, the FilterBlock 64 bytes at
// offset 64, and NodeInfo's size is a multiple of 64, so in Go's
// size-class allocator (spans start on page boundaries and hold objects of
// one size back to back) each block fills exactly one cache line.
func TestNodeInfoLayout(t *testing.T) {
	var n NodeInfo
	require.Equal(t, uintptr(0), unsafe.Offsetof(n.head.CPUMemory))
	require.Equal(t, uintptr(64), unsafe.Sizeof(n.head.CPUMemory))
	require.Equal(t, uintptr(64), unsafe.Offsetof(n.head.FilterBlock))
	require.Equal(t, uintptr(64), unsafe.Sizeof(n.head.FilterBlock))
	require.Zero(t, unsafe.Sizeof(n)%64, "sizeof(NodeInfo) = %d", unsafe.Sizeof(n))
	// 512 bytes (a size class): at 576 the 15,000-node scoring benchmark
	// ran ~1.5x slower (more pages per node scan).
	require.Equal(t, uintptr(512), unsafe.Sizeof(n))
	// A look-up by name reads name; the pod filter AddPod and HasPod
	// check next is on the same line.
	line := unsafe.Offsetof(n.name) / 64
	require.Equal(t, line, (unsafe.Offsetof(n.name)+unsafe.Sizeof(n.name)-1)/64)
	require.Equal(t, line, unsafe.Offsetof(n.podBloom)/64)
	require.Equal(t, line, (unsafe.Offsetof(n.podBloom)+unsafe.Sizeof(n.podBloom)-1)/64)
	// cloneInto starts fetching the pod array and the indexes before it
	// copies the node: their pointers (idx, and pods' data pointer, its
	// first word) are on that line too, which the name check has read.
	require.Equal(t, line, unsafe.Offsetof(n.idx)/64)
	require.Equal(t, line, (unsafe.Offsetof(n.idx)+unsafe.Sizeof(n.idx)-1)/64)
	require.Equal(t, line, (unsafe.Offsetof(n.pods)+unsafe.Sizeof(uintptr(0))-1)/64)
	// Labels reads the labels pointer and its count from one line.
	require.Equal(t, unsafe.Offsetof(n.labels)/64, (unsafe.Offsetof(n.numLabels)+unsafe.Sizeof(n.numLabels)-1)/64)
}

// TestNodeviewLayout pins what internal/nodeview's pointer conversions
// rely on: a NodeInfo starts with its layout.Head (nodeview.Head converts
// a *NodeInfo to a *layout.Head) and a PodInfo with its key hash
// (nodeview.KeyHash loads the uint64 at a *PodInfo).
func TestNodeviewLayout(t *testing.T) {
	var n NodeInfo
	require.Equal(t, uintptr(0), unsafe.Offsetof(n.head))
	require.Equal(t, uintptr(128), unsafe.Sizeof(n.head))
	var p PodInfo
	require.Equal(t, uintptr(0), unsafe.Offsetof(p.keyHash))
	require.Equal(t, uintptr(8), unsafe.Sizeof(p.keyHash))
}
