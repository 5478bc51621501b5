package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/informertest"
	"github.com/schedkit/schedkit/snapshot"
)

// TestForkObjects: a Fork's object changes belong to its layer — Revert
// drops them, Commit keeps them — and never reach the snapshot it came
// from; bad objects change nothing.
func TestForkObjects(t *testing.T) {
	c := snapshot.NewCache()
	a0 := informertest.MakeObject("Service", "default", "a", 0)
	require.NoError(t, c.AddObject(a0))
	base := c.Snapshot()
	f := base.Fork()
	b := informertest.MakeObject("Service", "default", "b", 0)
	require.NoError(t, f.AddObject(b))
	assert.Equal(t, []*v1.Service{a0.(*v1.Service), b.(*v1.Service)}, f.Services("default"))

	f.Fork()
	a1 := informertest.MakeObject("Service", "default", "a", 1)
	require.NoError(t, f.AddObject(a1))
	require.NoError(t, f.AddObject(informertest.MakeObject("PriorityClass", "", "high", 0)))
	require.NotNil(t, f.PriorityClass("high"))
	require.NoError(t, f.Revert())
	assert.Nil(t, f.PriorityClass("high"), "Revert drops the layer's objects")
	assert.Equal(t, []*v1.Service{a0.(*v1.Service), b.(*v1.Service)}, f.Services("default"))

	f.Fork()
	require.NoError(t, f.RemoveObject(a0))
	require.NoError(t, f.Commit())
	assert.Equal(t, []*v1.Service{b.(*v1.Service)}, f.Services("default"), "Commit keeps them")

	err := f.AddObject(&v1.Service{})
	require.ErrorIs(t, err, snapshot.ErrInvalidObject)
	assert.Equal(t, []*v1.Service{b.(*v1.Service)}, f.Services("default"))
	assert.Equal(t, []*v1.Service{a0.(*v1.Service)}, base.Services("default"), "the snapshot is unchanged")
	assert.Equal(t, []*v1.Service{a0.(*v1.Service)}, c.Services("default"))
}

// BenchmarkCacheAddObject: one informer update of a Service per
// iteration in a cache of 1,000 namespaces with 10 Services each, a
// snapshot taken every 100 events (the copy-on-write cost is then paid
// once per snapshot).
func BenchmarkCacheAddObject(b *testing.B) {
	c := snapshot.NewCache()
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	for ns := range 1000 {
		for _, n := range names {
			require.NoError(b, c.AddObject(informertest.MakeObject("Service", nsName(ns), n, 0)))
		}
	}
	objs := make([]any, 0, 100)
	for i := range 100 {
		objs = append(objs, informertest.MakeObject("Service", nsName(i*7%1000), names[i%10], 1))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%100 == 0 {
			c.Snapshot()
		}
		_ = c.UpdateObject(objs[i%100].(*v1.Service))
		i++
	}
}

func nsName(i int) string {
	return "ns-" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
}
