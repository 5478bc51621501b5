package prefetch

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A prefetch changes nothing the program sees and never faults: on live
// memory, past its end, and at nil.
func TestHeadIsOnlyAHint(t *testing.T) {
	buf := make([]byte, 256)
	for i := range buf {
		buf[i] = byte(i)
	}
	Head(&buf[0])
	Head(&buf[100])
	Head(&buf[255]) // lines past the buffer
	Head[byte](nil)
	for i := range buf {
		assert.Equal(t, byte(i), buf[i])
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { Head(&buf[0]) }))
}
