package prefetch

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// A prefetch changes nothing the program sees and never faults: on live
// memory, past its end, and at nil.
func TestHeadIsOnlyAHint(t *testing.T) {
	buf := make([]byte, 256)
	for i := range buf {
		buf[i] = byte(i)
	}
	Head(unsafe.Pointer(&buf[0]))
	Head(unsafe.Pointer(&buf[100]))
	Head(unsafe.Pointer(&buf[255])) // lines past the buffer
	Head(nil)
	for i := range buf {
		assert.Equal(t, byte(i), buf[i])
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { Head(unsafe.Pointer(&buf[0])) }))
}
