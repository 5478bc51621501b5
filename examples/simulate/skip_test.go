package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skipNode is a 2-CPU node n0.
const skipNode = `apiVersion: v1
kind: Node
metadata: {name: n0}
status:
  allocatable: {cpu: "2", memory: 8Gi, pods: "110"}
  capacity: {cpu: "2", memory: 8Gi, pods: "110"}
`

// skipPod is a pod of cpu CPU; extra is added to its spec, meta to its
// metadata.
func skipPod(name, cpu, meta, extra string) string {
	return fmt.Sprintf(`---
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default%s}
spec:
%s  containers:
  - name: c
    image: x
    resources: {requests: {cpu: "%s"}}
`, name, meta, extra, cpu)
}

const deletingMeta = `, deletionTimestamp: "2026-12-01T10:00:00Z"`

// TestDeletingPodsSkipped: simulate placed a pod being deleted
// (metadata.deletionTimestamp set) and left the next pod unschedulable
// (trial s8). kube-scheduler skips such a pod (v1.37 schedule_one.go
// skipPodSchedule); so does simulate, counting it. With -unbind a
// terminating bound pod is not re-placed; without it, it holds its node
// as upstream's cache holds it until it is gone.
func TestDeletingPodsSkipped(t *testing.T) {
	dir := t.TempDir()
	pending := writeFile(t, dir, "pending.yaml", skipNode+skipPod("deleting", "2", deletingMeta, "")+skipPod("normal", "1", "", ""))
	assert.Equal(t, map[string]string{"default/normal": "n0"}, placedNodes(t, "-objects", pending, "-policy", "default"))
	rep, r := jsonReport(t, "-objects", pending, "-policy", "default")
	s := rep.Summaries[0]
	assert.Equal(t, []float64{1, 1, 0, 1}, []float64{s.Arrived, s.Placed, s.Unschedulable, s.Skipped}, r.stdout)
	r = runMain(t, "-objects", pending, "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "1 pod being deleted (metadata.deletionTimestamp set) skipped without a cycle")

	bound := writeFile(t, dir, "bound.yaml", skipNode+skipPod("deleting", "2", deletingMeta, "  nodeName: n0\n")+skipPod("normal", "1", "", ""))
	assert.Equal(t, map[string]string{"default/normal": "n0"}, placedNodes(t, "-objects", bound, "-policy", "default", "-unbind"))
	rep, _ = jsonReport(t, "-objects", bound, "-policy", "default", "-unbind")
	s = rep.Summaries[0]
	assert.Equal(t, []float64{1, 1, 0, 1}, []float64{s.Arrived, s.Placed, s.Unschedulable, s.Skipped})
	// Without -unbind the terminating pod is bound and holds n0's 2 CPU.
	assert.Equal(t, map[string]string{"default/normal": ""}, placedNodes(t, "-objects", bound, "-policy", "default"))
}

// TestOtherSchedulersPods: simulate scheduled a pod with
// spec.schedulerName volcano (trial s8). kube-scheduler takes only pods
// of its profiles; simulate leaves the others unscheduled and counts
// them. -scheduler-name chooses; an empty spec.schedulerName is
// default-scheduler. A bound pod of another scheduler still holds its
// node.
func TestOtherSchedulersPods(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "in.yaml", skipNode+
		skipPod("volcano", "2", "", "  schedulerName: volcano\n")+
		skipPod("implicit", "1", "", "")+
		skipPod("explicit", "1", "", "  schedulerName: default-scheduler\n"))
	assert.Equal(t, map[string]string{"default/implicit": "n0", "default/explicit": "n0"}, placedNodes(t, "-objects", in, "-policy", "default"))
	rep, _ := jsonReport(t, "-objects", in, "-policy", "default")
	assert.Equal(t, 1, rep.OtherScheduler)
	assert.Equal(t, []string{"default-scheduler"}, rep.SchedulerNames)
	assert.Equal(t, 2, rep.Pods)
	r := runMain(t, "-objects", in, "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "1 pending pod of other schedulers left unscheduled (spec.schedulerName not default-scheduler; -scheduler-name chooses)")

	assert.Equal(t, map[string]string{"default/volcano": "n0"}, placedNodes(t, "-objects", in, "-policy", "default", "-scheduler-name", "volcano"))
	rep, _ = jsonReport(t, "-objects", in, "-policy", "default", "-scheduler-name", "volcano")
	assert.Equal(t, 2, rep.OtherScheduler)
	rep, _ = jsonReport(t, "-objects", in, "-policy", "default", "-scheduler-name", "volcano,default-scheduler")
	assert.Zero(t, rep.OtherScheduler)
	assert.Equal(t, 3, rep.Pods)

	bound := writeFile(t, dir, "bound.yaml", skipNode+skipPod("volcano", "2", "", "  schedulerName: volcano\n  nodeName: n0\n")+skipPod("implicit", "1", "", ""))
	assert.Equal(t, map[string]string{"default/implicit": ""}, placedNodes(t, "-objects", bound, "-policy", "default"))
}

// TestGPULimitWarning: a node with more GPUs than the device model holds
// (snapshot.MaxDevices, 64) silently lost all its devices (trial s8);
// simulate now warns on stderr naming the node. 64 GPUs give no warning.
func TestGPULimitWarning(t *testing.T) {
	dir := t.TempDir()
	gpuNode := func(name, gpus string) string {
		return fmt.Sprintf(`---
apiVersion: v1
kind: Node
metadata: {name: %s}
status:
  allocatable: {cpu: "64", memory: 256Gi, pods: "110", nvidia.com/gpu: "%s"}
`, name, gpus)
	}
	in := writeFile(t, dir, "gpu.yaml", gpuNode("big", "128")+gpuNode("max", "64")+skipPod("p", "1", "", ""))
	r := runMain(t, "-objects", in, "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "simulate: warning: node big: status.allocatable[nvidia.com/gpu] is 128 GPUs, more than the 64 devices")
	assert.NotContains(t, r.stderr, "node max")
}
