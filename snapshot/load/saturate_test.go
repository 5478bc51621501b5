package load_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load"
)

// TestQuantitiesBeyondInt64Fit pins what the package doc promises for
// quantities too large for int64 (cpu: 1e40 is 1e43 milli-CPU): they
// saturate at math.MaxInt64, so such a request does not fit a node of
// ordinary size, fits a node whose allocatable saturates too while
// nothing else is requested there (MaxInt64 <= MaxInt64 - 0), and, once
// bound there, leaves nothing free. (Upstream reads a CPU quantity beyond
// int64 milli-units as 0: examples/kube-scheduler/parity
// TestDifferenceQuantityAboveInt64.)
func TestQuantitiesBeyondInt64Fit(t *testing.T) {
	const in = `apiVersion: v1
kind: Node
metadata: {name: small}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: vast}
status: {allocatable: {cpu: 1e1000, memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: default}
spec: {containers: [{name: c, resources: {requests: {cpu: 1e40}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
`
	cache, objs, err := load.Options{}.ReadCache(strings.NewReader(in), "in.yaml")
	require.NoError(t, err)
	require.Len(t, objs.Pods, 2)
	huge, web := snapshot.MustPodInfo(objs.Pods[0]), snapshot.MustPodInfo(objs.Pods[1])
	assert.Equal(t, int64(math.MaxInt64), huge.Requested().MilliCPU(), "1e40 cores saturate")
	assert.Equal(t, int64(math.MaxInt64), cache.Snapshot().Get("vast").Allocatable().MilliCPU(), "1e1000 cores saturate")

	fit, err := framework.NewNodeResourcesFit(nil, nil)
	require.NoError(t, err)
	fits := func(pi *snapshot.PodInfo, node string) bool {
		pf, err := fit.PreFilter(pi)
		require.NoError(t, err)
		return len(pf.Filter.Filter(cache.Snapshot().Get(node), nil)) == 0
	}
	assert.False(t, fits(huge, "small"), "a saturated request does not fit a node of ordinary size")
	assert.True(t, fits(huge, "vast"), "a saturated request fits a saturated allocatable with nothing requested")
	assert.True(t, fits(web, "vast"))

	bound := objs.Pods[0].DeepCopy()
	bound.Spec.NodeName = "vast"
	require.NoError(t, cache.AddPod(bound))
	assert.Equal(t, int64(0), cache.Snapshot().Get("vast").Free(snapshot.CPU))
	assert.False(t, fits(huge, "vast"), "a second one does not fit")
	assert.False(t, fits(web, "vast"), "nor does anything else asking for cpu")
}
