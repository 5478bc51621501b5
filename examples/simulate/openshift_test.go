package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
)

const masterTaint = "node-role.kubernetes.io/master"

// openshiftPods reads the sample's Pod files with encoding/json (not with
// the loader the program uses).
func openshiftPods(t *testing.T, dir string) []v1.Pod {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "pod", "*", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 19)
	var pods []v1.Pod
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var p v1.Pod
		require.NoError(t, json.Unmarshal(b, &p), f)
		pods = append(pods, p)
	}
	return pods
}

func isMaster(node string) bool { return strings.Contains(node, "-master-") }

// toleratesMaster reports whether p tolerates the masters' NoSchedule taint.
func toleratesMaster(p *v1.Pod) bool {
	for _, t := range p.Spec.Tolerations {
		if (t.Key == masterTaint || (t.Key == "" && t.Operator == v1.TolerationOpExists)) &&
			(t.Effect == "" || t.Effect == v1.TaintEffectNoSchedule) {
			return true
		}
	}
	return false
}

// TestOpenShiftSample runs the OpenShift Insights sample (3 tainted
// masters, 3 workers, 19 running pods) plus new pods: the bound pods are
// where the data says; pods that do not tolerate the masters' NoSchedule
// taint land on workers, whatever the policy; a pod that tolerates it and
// selects masters lands on a master; a pod too big for any worker is
// unschedulable with upstream's message.
func TestOpenShiftSample(t *testing.T) {
	dir := dataDir(t, "openshift-insights-archive-sample")
	place := filepath.Join(t.TempDir(), "placements.csv")
	policies := "default,least,most,binpack,drf,fgd,bestfit,random"
	rep, _ := jsonReport(t, "-objects", dir, "-objects", "testdata/openshift-new-pods.yaml", "-policy", policies,
		"-placements", place, "-timing=false")
	assert.Equal(t, 6, rep.Nodes)
	assert.Equal(t, 19, rep.Bound)
	assert.Equal(t, 6, rep.Pods)
	assert.Equal(t, "CPU", rep.Axis)

	rows := readPlacements(t, place)
	data := openshiftPods(t, dir)
	for _, s := range rep.Summaries {
		t.Run(s.Policy, func(t *testing.T) {
			got := placementsOf(rows, s.Policy)
			require.Len(t, got, 19+6)
			for _, p := range data {
				key := p.Namespace + "/" + p.Name
				row, ok := got[key]
				require.True(t, ok, "no placement for bound pod %s", key)
				assert.True(t, row.prebound, key)
				assert.Equal(t, p.Spec.NodeName, row.node, "bound pod %s", key)
			}
			for _, name := range []string{"shop/web-0", "shop/web-1", "shop/web-2", "shop/batch"} {
				require.NotEmpty(t, got[name].node, "%s unschedulable", name)
				assert.False(t, isMaster(got[name].node), "%s landed on master %s", name, got[name].node)
			}
			assert.True(t, isMaster(got["openshift-etcd/etcd-backup"].node), "etcd-backup on %q", got["openshift-etcd/etcd-backup"].node)
			assert.Empty(t, got["shop/too-big"].node)
			res := s.Results[0]
			assert.Equal(t, 5, res.Placed)
			assert.Equal(t, 1, res.Unschedulable)
			assert.Equal(t, "shop/too-big: 0/6 nodes are available: 3 Insufficient cpu, 3 node(s) had untolerated taint(s).", res.FirstFailure)
		})
	}
}

// TestOpenShiftUnbind schedules the sample's 19 pods anew (-unbind): a pod
// lands on a master only if it tolerates the masters' taint, and pods
// that select masters get one.
func TestOpenShiftUnbind(t *testing.T) {
	dir := dataDir(t, "openshift-insights-archive-sample")
	place := filepath.Join(t.TempDir(), "placements.csv")
	rep, _ := jsonReport(t, "-objects", dir, "-unbind", "-policy", "default,most", "-placements", place, "-timing=false")
	// The two mirror pods (static kube-controller-manager pods of
	// masters) stay where the kubelet runs them (issue 19).
	assert.Equal(t, 2, rep.Bound)
	assert.Equal(t, 17, rep.Pods)
	rows := readPlacements(t, place)
	for _, s := range rep.Summaries {
		got := placementsOf(rows, s.Policy)
		assert.Equal(t, 17, s.Results[0].Placed, s.Policy)
		for _, p := range openshiftPods(t, dir) {
			pl := got[p.Namespace+"/"+p.Name]
			node := pl.node
			require.NotEmpty(t, node, "%s: %s unschedulable", s.Policy, p.Name)
			if _, mirror := p.Annotations["kubernetes.io/config.mirror"]; mirror {
				assert.Equal(t, p.Spec.NodeName, node, "%s: mirror pod %s moved", s.Policy, p.Name)
				assert.True(t, pl.prebound, "%s: mirror pod %s bound first", s.Policy, p.Name)
			}
			if !toleratesMaster(&p) {
				assert.False(t, isMaster(node), "%s: %s does not tolerate the master taint but landed on %s", s.Policy, p.Name, node)
			}
			if _, ok := p.Spec.NodeSelector[masterTaint]; ok {
				assert.True(t, isMaster(node), "%s: %s selects masters but landed on %s", s.Policy, p.Name, node)
			}
		}
	}
}
