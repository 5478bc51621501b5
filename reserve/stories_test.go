package reserve_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

func node(name, cpu string) *v1.Node {
	return st.MakeNode(name).Capacity("cpu", cpu, "memory", "16Gi", "pods", "110").Obj()
}

func pod(name, cpu string) *snapshot.PodInfo {
	return snapshot.MustPodInfo(st.MakePod(name).Req("cpu", cpu).Obj())
}

// newLedger returns a ledger holding nodes that reads devices with
// openb.Devices, so the GPU stories can use the trace's annotations.
func newLedger(t *testing.T, nodes ...*v1.Node) *reserve.Ledger {
	t.Helper()
	l := reserve.New(reserve.WithDeviceDecoder(openb.Devices))
	for _, n := range nodes {
		require.NoError(t, l.AddNode(n))
	}
	return l
}

func usedCPU(t *testing.T, l *reserve.Ledger, nodeName string) (bound, held int64) {
	t.Helper()
	u, ok := l.Usage(nodeName)
	require.True(t, ok, "Usage(%s)", nodeName)
	return u.Bound.MilliCPU(), u.Held.MilliCPU()
}

// Story (a): pod A (3000m of a 4000m node) is held while its bind hangs;
// pod B (3000m) must not fit however long the bind takes, unless expiry was
// asked for.
func TestStoryBindHangs(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t.Run("no expiry", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		a, b := pod("a", "3000m"), pod("b", "3000m")
		reasons, err := l.Reserve(a, "n1")
		require.NoError(t, err)
		require.Nil(t, reasons)
		for _, after := range []time.Duration{time.Second, time.Hour, 1000 * time.Hour} {
			assert.Empty(t, l.Expire(t0.Add(after)), "Expire(+%v) released a hold made without deadline", after)
			reasons, err := l.Reserve(b, "n1")
			require.NoError(t, err)
			// 3000 requested > 4000 allocatable - 3000 held
			assert.Equal(t, []reserve.Insufficient{{Resource: snapshot.CPU, Requested: 3000, Used: 3000, Capacity: 4000}}, reasons, "after %v", after)
		}
		_, held := usedCPU(t, l, "n1")
		assert.Equal(t, int64(3000), held)
	})
	t.Run("expiry asked for", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		a, b := pod("a", "3000m"), pod("b", "3000m")
		_, err := l.ReserveUntil(a, "n1", t0.Add(30*time.Second))
		require.NoError(t, err)
		reasons, _ := l.Reserve(b, "n1")
		require.NotNil(t, reasons, "B fits while A's hold is live")
		assert.Empty(t, l.Expire(t0.Add(29*time.Second)), "expired before the deadline")
		assert.Equal(t, []snapshot.PodKey{a.Key()}, l.Expire(t0.Add(30*time.Second)))
		reasons, err = l.Reserve(b, "n1")
		require.NoError(t, err)
		assert.Nil(t, reasons, "B must fit once A's hold expired")
	})
	t.Run("confirmed before deadline never expires", func(t *testing.T) {
		l := newLedger(t, node("n1", "4"))
		a := pod("a", "3000m")
		_, err := l.ReserveUntil(a, "n1", t0.Add(time.Second))
		require.NoError(t, err)
		require.NoError(t, l.Confirm(a.Key()))
		assert.Empty(t, l.Expire(t0.Add(time.Hour)))
		bound, held := usedCPU(t, l, "n1")
		assert.Equal(t, [2]int64{3000, 0}, [2]int64{bound, held})
	})
}

// Story (b): X held on N1, bind fails, X forgotten and later bound on N2:
// only N2 holds X.
func TestStoryBindFailsThenBoundElsewhere(t *testing.T) {
	l := newLedger(t, node("n1", "4"), node("n2", "4"))
	x := st.MakePod("x").Req("cpu", "1").Obj()
	xi := snapshot.MustPodInfo(x)
	_, err := l.Reserve(xi, "n1")
	require.NoError(t, err)
	assert.True(t, l.Unreserve(xi.Key()), "bind failed: forget X")
	_, err = l.Reserve(xi, "n2")
	require.NoError(t, err)
	bound := x.DeepCopy()
	bound.Spec.NodeName = "n2"
	require.NoError(t, l.AddPod(bound))
	b1, h1 := usedCPU(t, l, "n1")
	b2, h2 := usedCPU(t, l, "n2")
	assert.Equal(t, [4]int64{0, 0, 1000, 0}, [4]int64{b1, h1, b2, h2}, "n1 bound/held, n2 bound/held")
	ph, nodeName, ok := l.PodPhase(xi.Key())
	require.True(t, ok)
	assert.Equal(t, reserve.Bound, ph)
	assert.Equal(t, "n2", nodeName)
	// A late Confirm after the informer's report counts nothing twice.
	require.NoError(t, l.Confirm(xi.Key()))
	b2, h2 = usedCPU(t, l, "n2")
	assert.Equal(t, [2]int64{1000, 0}, [2]int64{b2, h2})
	snap := l.Snapshot()
	assert.False(t, snap.Get("n1").HasPod(xi.Key()))
	assert.True(t, snap.Get("n2").HasPod(xi.Key()))
	assert.Equal(t, 1, snap.Get("n2").NumPods())

	t.Run("held elsewhere is an error naming both", func(t *testing.T) {
		y := pod("y", "1")
		_, err := l.Reserve(y, "n1")
		require.NoError(t, err)
		_, err = l.Reserve(y, "n2")
		require.ErrorIs(t, err, reserve.ErrConflict)
		assert.Contains(t, err.Error(), "n1")
		assert.Contains(t, err.Error(), "n2")
		reasons, err := l.Reserve(y, "n1")
		assert.NoError(t, err, "same node again is a no-op")
		assert.Nil(t, reasons)
	})
}

// Story (c): a held pod deleted before bind frees its space immediately.
func TestStoryHeldPodDeleted(t *testing.T) {
	for _, phase := range []string{"held", "confirmed", "bound"} {
		t.Run(phase, func(t *testing.T) {
			l := newLedger(t, node("n1", "4"))
			a := st.MakePod("a").Req("cpu", "3").Obj()
			ai := snapshot.MustPodInfo(a)
			_, err := l.Reserve(ai, "n1")
			require.NoError(t, err)
			switch phase {
			case "confirmed":
				require.NoError(t, l.Confirm(ai.Key()))
			case "bound":
				b := a.DeepCopy()
				b.Spec.NodeName = "n1"
				require.NoError(t, l.AddPod(b))
			}
			assert.True(t, l.RemovePod(ai.Key()))
			bound, held := usedCPU(t, l, "n1")
			assert.Equal(t, [2]int64{0, 0}, [2]int64{bound, held})
			reasons, err := l.Reserve(pod("b", "4"), "n1")
			require.NoError(t, err)
			assert.Nil(t, reasons, "the whole node is free again")
			assert.False(t, l.Snapshot().Get("n1").HasPod(ai.Key()))
		})
	}
}

// Story (d): Unreserve twice, and Unreserve of a never-reserved pod, change
// nothing.
func TestStoryUnreserveIdempotent(t *testing.T) {
	l := newLedger(t, node("n1", "4"))
	a, b := pod("a", "1"), pod("b", "2")
	_, err := l.Reserve(a, "n1")
	require.NoError(t, err)
	_, err = l.Reserve(b, "n1")
	require.NoError(t, err)
	before := export(t, l)
	assert.True(t, l.Unreserve(a.Key()))
	afterOne := export(t, l)
	assert.False(t, l.Unreserve(a.Key()), "second Unreserve")
	assert.Equal(t, afterOne, export(t, l), "second Unreserve changed the ledger")
	assert.False(t, l.Unreserve(snapshot.PodKey{Namespace: "default", Name: "never"}))
	assert.Equal(t, afterOne, export(t, l), "Unreserve of a never-reserved pod changed the ledger")
	assert.NotEqual(t, before, afterOne)
	_, held := usedCPU(t, l, "n1")
	assert.Equal(t, int64(2000), held)
}
