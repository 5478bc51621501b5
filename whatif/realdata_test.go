package whatif_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/internal/shareddata"
	"github.com/schedkit/schedkit/snapshot/load"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
	"github.com/schedkit/schedkit/whatif"
)

// openshift loads the OpenShift Insights sample: 6 real nodes (3
// masters tainted NoSchedule, 3 workers, 3500m CPU allocatable each) and
// their 19 pods (see its SOURCE.md).
func openshift(t *testing.T) (nodes []*v1.Node, pods []*v1.Pod) {
	objs, err := load.Files(shareddata.Dir(t, "openshift-insights-archive-sample"))
	require.NoError(t, err)
	return objs.Nodes, objs.Pods
}

const osPrefix = "ci-ln-d53y532-f76d1-2btqq-"

// TestRealDataDrain drains every node of the real cluster alone:
//   - master-0: insights-operator (a ReplicaSet's) has an emptyDir
//     "snapshots": LocalStorageRequested (its static
//     kube-controller-manager is a mirror pod, skipped);
//   - master-1: seven ReplicaSet operators move (to the other masters:
//     they tolerate the master taint and select master nodes), the
//     sdn-controller DaemonSet pod is skipped: removable;
//   - master-2: machine-config-operator has hostPath volumes etcd-ca
//     and root-ca: LocalStorageRequested;
//   - worker-b: no pods: removable, nothing to move;
//   - worker-c, worker-d: prometheus-k8s (a StatefulSet's) has emptyDirs
//     config-out and prometheus-k8s-db: LocalStorageRequested.
func TestRealDataDrain(t *testing.T) {
	nodes, pods := openshift(t)
	f := forkOf(t, nodes, pods)
	before := contentOf(f)
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	got, err := whatif.Drain(f, names, nil, framework.Config{Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, before, contentOf(f))
	want := map[string]struct {
		block    whatif.Block
		blocking string
		moved    int
	}{
		"master-0":       {whatif.LocalStorageRequested, "insights-operator-5d876b745-t8z24", 0},
		"master-1":       {"", "", 7},
		"master-2":       {whatif.LocalStorageRequested, "machine-config-operator-78cdf5987-lrrrf", 0},
		"worker-b-7x8mw": {"", "", 0},
		"worker-c-nmnbz": {whatif.LocalStorageRequested, "prometheus-k8s-0", 0},
		"worker-d-bpnbd": {whatif.LocalStorageRequested, "prometheus-k8s-1", 0},
	}
	require.Len(t, got, len(want))
	for _, d := range got {
		w, ok := want[d.Node[len(osPrefix):]]
		require.True(t, ok, d.Node)
		assert.Equal(t, w.block, d.Block, d.Node)
		assert.Equal(t, w.block == "", d.Removable, d.Node)
		if w.blocking != "" {
			assert.Equal(t, w.blocking, d.BlockingPod.Name, d.Node)
		}
		if d.Removable {
			assert.Len(t, d.Moved, w.moved, d.Node)
			for _, m := range d.Moved {
				assert.Contains(t, m.Node, osPrefix+"master-", m.String())
			}
		}
	}
}

// TestRealDataFitCount: 1-CPU copies fit 3 per worker (3500m, less 76m
// on workers c and d: 3 × 1000 <= 3424 < 4 × 1000) and none on the
// tainted masters: 9, and Loop agrees pod by pod.
func TestRealDataFitCount(t *testing.T) {
	nodes, pods := openshift(t)
	f := forkOf(t, nodes, pods)
	tmpl := snapshottest.MakePod("web").Req("cpu", "1").Obj()
	cfg := framework.Config{Seed: 3}
	got, err := whatif.FitCount(f, tmpl, 100, cfg)
	require.NoError(t, err)
	assert.Equal(t, 9, got.Count)
	assert.Equal(t, "0/6 nodes are available: 3 Insufficient cpu, 3 node(s) had untolerated taint(s).", got.Next.Message())
	var copies []*v1.Pod
	for _, p := range got.Placements {
		copies = append(copies, p.Pod.Pod())
	}
	node, _ := loopPlacements(t, cfg, nodes, pods, copies)
	for _, p := range got.Placements {
		assert.Equal(t, node[p.Pod.Key().Name], p.Node)
	}
}
