package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// TestResourceNotFoundIsNotCPU: a name that was never interned, or that
// the scheduler does not count, gets NoResource, which reads as 0 in any
// vector; it used to get 0, the ID of cpu, so a caller that ignored the
// boolean read the pod's cpu request (issue 17, item 13).
func TestResourceNotFoundIsNotCPU(t *testing.T) {
	var v snapshot.Vector
	v.Set(snapshot.CPU, 1000)
	for _, tc := range []struct {
		name   string
		lookup func(v1.ResourceName) (snapshot.ResourceID, bool)
		res    v1.ResourceName
	}{
		{"LookupResource never interned", snapshot.LookupResource, "example.com/never-interned-by-any-test"},
		{"LookupResource not counted", snapshot.LookupResource, "foo"},
		{"Intern not counted", snapshot.Intern, "foo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, ok := tc.lookup(tc.res)
			assert.False(t, ok)
			assert.Equal(t, snapshot.NoResource, id)
			assert.NotEqual(t, snapshot.CPU, id)
			assert.Zero(t, v.Get(id), "Get(NoResource)")
			assert.Empty(t, id.Name())
			w := v.Clone()
			w.Set(id, 7)
			assert.True(t, v.Equal(&w), "Set(NoResource) changes nothing")
		})
	}
}
