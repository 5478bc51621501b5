package snapshot_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// A quantity with a huge exponent ("1e999999999", which ParseQuantity
// accepts in microseconds) saturates to math.MaxInt64 at once in a node
// and in a pod. Before the shared conversion, Cache.AddNode and
// NewPodInfo rescaled it to a billion digits (minutes, gigabytes). A
// generous deadline, not a timing.
func TestHugeExponentQuantitySaturatesQuickly(t *testing.T) {
	type result struct {
		alloc, req snapshot.Vector
		err        error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		c := snapshot.NewCache()
		if r.err = c.AddNode(st.MakeNode("n").Capacity("cpu", "1e999999999", "memory", "1e999999999", "pods", "110").Obj()); r.err != nil {
			done <- r
			return
		}
		pi, err := snapshot.NewPodInfo(st.MakePod("p").Req("cpu", "1e999999999", "memory", "1e5000000").Obj())
		if r.err = err; err != nil {
			done <- r
			return
		}
		r.alloc, r.req = *c.Snapshot().Node(0).Allocatable(), pi.Requests().Requested
		done <- r
	}()
	select {
	case r := <-done:
		require.NoError(t, r.err)
		assert.Equal(t, int64(math.MaxInt64), r.alloc.MilliCPU())
		assert.Equal(t, int64(math.MaxInt64), r.alloc.Memory())
		assert.Equal(t, int64(math.MaxInt64), r.req.MilliCPU())
		assert.Equal(t, int64(math.MaxInt64), r.req.Memory())
	case <-time.After(20 * time.Second):
		t.Fatal("a node and a pod with a 1e999999999 quantity did not load within 20s")
	}
}
