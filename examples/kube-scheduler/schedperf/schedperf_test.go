package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func suite(t *testing.T) []*testCase {
	t.Helper()
	dir, err := suiteLocation("")
	require.NoError(t, err)
	tcs, err := loadSuite(dir)
	require.NoError(t, err)
	return tcs
}

func testCaseNamed(t *testing.T, tcs []*testCase, name string) *testCase {
	t.Helper()
	for _, tc := range tcs {
		if tc.Name == name {
			return tc
		}
	}
	t.Fatalf("test case %s not in the suite", name)
	return nil
}

// smallestPlan unrolls the smallest workload of the suite's test case name.
func smallestPlan(t *testing.T, name string) *plan {
	t.Helper()
	return workloadPlan(t, name, "smallest")
}

// workloadPlan unrolls the workload of test case name that
// pickWorkload(size) picks.
func workloadPlan(t *testing.T, name, size string) *plan {
	t.Helper()
	tc := testCaseNamed(t, suite(t), name)
	w, err := tc.pickWorkload(size)
	require.NoError(t, err)
	p, err := buildPlan(tc, w)
	require.NoError(t, err)
	return p
}

// TestSuiteLoads reads every performance-config.yaml of k8s.io/kubernetes
// v1.37.2 strictly and unrolls every test case's smallest workload: each
// either gives a plan or says why it cannot run.
func TestSuiteLoads(t *testing.T) {
	tcs := suite(t)
	require.GreaterOrEqual(t, len(tcs), 47, "scheduler_perf has at least the 47 test cases the issue names")
	for _, name := range []string{"SchedulingBasic", "SchedulingPodAntiAffinity", "TopologySpreading", "PreemptionBasic", "SchedulingWithMixedChurn", "Unschedulable", "SchedulingDaemonset"} {
		testCaseNamed(t, tcs, name)
	}
	runnable := 0
	for _, tc := range tcs {
		w, err := tc.pickWorkload("smallest")
		require.NoError(t, err)
		p, err := buildPlan(tc, w)
		require.NoError(t, err, "%s/%s", tc.Name, w.Name)
		if p.Unrunnable == "" {
			runnable++
			assert.Positive(t, p.Pods, "%s/%s creates no pods", tc.Name, w.Name)
		}
	}
	assert.GreaterOrEqual(t, runnable, 25, "test cases this runner runs (the others say why not)")
}

// TestEndToEndSchedulingBasic runs upstream's SchedulingBasic/5Nodes
// (5 nodes, 5 + 10 pods of pod-default.yaml) through both schedulers:
// both bind every pod, measure the 10 collectMetrics pods, and place them
// the same way (3 pods on each node: both score with LeastAllocated and
// BalancedAllocation).
func TestEndToEndSchedulingBasic(t *testing.T) {
	p := smallestPlan(t, "SchedulingBasic")
	require.Empty(t, p.Unrunnable)
	require.Equal(t, 5, p.Nodes)
	require.Equal(t, 15, p.Pods)
	require.Equal(t, 10, p.Measured)
	require.Empty(t, schedkitUnsupported(p))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := runUpstream(ctx, p, time.Minute, nil)
	sk := runSchedkit(ctx, p, nil)
	for name, r := range map[string]sideResult{"upstream": up, "schedkit": sk} {
		assert.Empty(t, r.Err, name)
		assert.Empty(t, r.Unsupported, name)
		assert.Equal(t, 15, r.Scheduled, "%s: scheduled", name)
		assert.Zero(t, r.Pending, "%s: pending", name)
		assert.Equal(t, 10, r.MeasuredPods, "%s: measured pods", name)
		assert.Positive(t, r.PodsPerSecond, "%s: pods/s", name)
		assert.Equal(t, map[int]int{3: 5}, r.Placement.PodsPerNode, "%s: pods per node", name)
		assert.Zero(t, r.Placement.OnTaintedOrUnmatched, name)
	}
}

// requireSameOutcome requires that both sides ran without error or
// unsupported feature and ended with the same createPods pods bound and
// the same pods evicted by preemption, and returns them.
func requireSameOutcome(t *testing.T, up, sk sideResult) (bound, evicted []string) {
	t.Helper()
	for name, r := range map[string]sideResult{"upstream": up, "schedkit": sk} {
		require.Empty(t, r.Err, name)
		require.Empty(t, r.Unsupported, name)
		require.Equal(t, len(r.Evicted), r.Preempted, "%s: preempted counts the evicted pods", name)
	}
	require.Equal(t, up.bound, sk.bound, "pods bound")
	require.Equal(t, up.Evicted, sk.Evicted, "pods evicted")
	return sk.bound, sk.Evicted
}

// podNames lists "ns/prefixNNNNN" for i in [0, n).
func podNames(ns, prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s/%s%05d", ns, prefix, i))
	}
	return out
}

// TestPreemptionSameBoundAndEvicted runs upstream's PreemptionBasic and
// Unschedulable shapes at their smallest sizes through both schedulers,
// schedkit's Loop preempting (SetPreemption): both end with the same pods
// bound and the same pods evicted.
//
// PreemptionBasic/5Nodes: 5 nodes of 4 CPUs; 20 low-priority pods of
// 900m (priority 0) spread 4 per node (4 × 900m = 3.6 CPUs); then 5
// preemptors of 3970m at priority 9999999. A preemptor fits on a node only
// with every low pod there gone (3970m + 900m > 4000m), so each evicts
// the 4 pods of one node: all 20 evicted, the 5 preemptors bound on the 5
// nodes. Before schedkit preempted here, its side was reported
// unsupported ("preemption: pending pod ...").
//
// Upstream runs with SchedulerAsyncPreemption off (on by default; the
// decisions are the same DefaultPreemption's, only the evictions are made
// in the cycle instead of a goroutine): the fake clientset deletes a
// victim at once, and with the asynchronous evictions a preemptor
// requeued by the first victim's delete event can preempt again for a
// victim the goroutine is deleting; that second goroutine finds it gone
// and does not reactivate the preemptor, which PreEnqueue gated in the
// meantime, so it waits for the unschedulable pool's 5-minute flush
// (seen in upstream's log: "Victim Pod is already deleted", then nothing
// for the preemptor). That is why one of the five preemptors was
// sometimes left unbound here before.
//
// Unschedulable/5Nodes/1Init/10Pods: a churn creates a pod of 9 CPUs at
// priority 10 every 200 ms, which fits no 4-CPU node even with every
// lower-priority pod evicted (preemption is not helpful); the 1 + 10
// default pods are bound, nothing is evicted.
func TestPreemptionSameBoundAndEvicted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	p := smallestPlan(t, "PreemptionBasic")
	require.Equal(t, "5Nodes", p.W.Name)
	require.Empty(t, schedkitUnsupported(p))
	w := *p.W
	w.FeatureGates = maps.Clone(w.FeatureGates)
	w.FeatureGates["SchedulerAsyncPreemption"] = false
	p.W = &w
	up := runUpstream(ctx, p, time.Minute, nil)
	sk := runSchedkit(ctx, p, nil)
	bound, evicted := requireSameOutcome(t, up, sk)
	assert.Equal(t, podNames("namespace-2", "pod-high-priority-", 5), bound)
	assert.Equal(t, podNames("namespace-1", "pod-", 20), evicted)
	for name, r := range map[string]sideResult{"upstream": up, "schedkit": sk} {
		assert.Equal(t, map[int]int{1: 5}, r.Placement.PodsPerNode, "%s: one preemptor per node", name)
		assert.Equal(t, 5, r.MeasuredPods, "%s: measured pods", name)
	}

	p = smallestPlan(t, "Unschedulable")
	require.Equal(t, "5Nodes/1Init/10Pods", p.W.Name)
	up = runUpstream(ctx, p, time.Minute, nil)
	sk = runSchedkit(ctx, p, nil)
	bound, evicted = requireSameOutcome(t, up, sk)
	assert.Equal(t, append(podNames("namespace-1", "pod-", 1), podNames("namespace-3", "pod-", 10)...), bound)
	assert.Empty(t, evicted)
}

// TestPreemptionReadsObjects: PriorityClasses and a PodDisruptionBudget
// the workload creates (createAny) decide a preemption the same way on
// both sides. One node of 4 CPUs holds four 1-CPU pods: free-a (class
// low, value 100), free-b (class mid, 200), then two labelled app=db
// (class low) in namespace preempt, which a PDB with disruptionsAllowed 0
// protects. A 1-CPU pod of class high (1000) needs one of them gone. The
// dry run removes all four (4 CPUs free), then puts back as many as fit,
// the PDB-protected ones first, each group by priority: db, db, free-b
// (1 + 1 + 1 + 1 = 4 CPUs), and free-a would make 5: it is the one
// victim. Without the PDB the order would be free-b, then db, db and
// free-a tied at 100 (a tie upstream breaks by the time of the call:
// no pod has a start time here), so the PDB makes the answer unique. The
// pods name their class only (no spec.priority): the plan sets the
// priority as the Priority admission plugin would, without which
// upstream's scheduler, which does not read PriorityClasses, would see 0
// everywhere and not preempt. Each createPods op has its own namespace:
// like scheduler_perf, the runner waits for an op's count of bound pods
// in the op's namespace.
func TestPreemptionReadsObjects(t *testing.T) {
	p := pdbPlan(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := runUpstream(ctx, p, time.Minute, nil)
	sk := runSchedkit(ctx, p, nil)
	bound, evicted := requireSameOutcome(t, up, sk)
	assert.Equal(t, []string{"namespace-6/free-b-00000", "namespace-8/high-00000", "preempt/db-00000", "preempt/db-00001"}, bound)
	assert.Equal(t, []string{"namespace-5/free-a-00000"}, evicted)
}

// pdbPlan is TestPreemptionReadsObjects's workload.
func pdbPlan(t *testing.T) *plan {
	class := func(name string, value int) string {
		return fmt.Sprintf("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\nvalue: %d\n", name, value)
	}
	pod := func(prefix, class, cpu, app string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  generateName: %s
  labels: {app: %s}
spec:
  priorityClassName: %s
  terminationGracePeriodSeconds: 0
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.10.2
    resources: {requests: {cpu: %s, memory: 100Mi}}
`, prefix, app, class, cpu)
	}
	return writeSuite(t, `
- name: PDBPreemption
  workloadTemplate:
  - opcode: createNodes
    count: 1
    nodeTemplatePath: $suite/templates/node-default.yaml
  - opcode: createAny
    templatePath: low.yaml
  - opcode: createAny
    templatePath: mid.yaml
  - opcode: createAny
    templatePath: high.yaml
  - opcode: createAny
    namespace: preempt
    templatePath: pdb.yaml
  - opcode: createPods
    count: 1
    podTemplatePath: free-a.yaml
  - opcode: createPods
    count: 1
    podTemplatePath: free-b.yaml
  - opcode: createPods
    namespace: preempt
    count: 2
    podTemplatePath: db.yaml
  - opcode: createPods
    count: 1
    podTemplatePath: high-pod.yaml
    collectMetrics: true
  workloads:
  - name: 1Node
`, map[string]string{
		"low.yaml":  class("low", 100),
		"mid.yaml":  class("mid", 200),
		"high.yaml": class("high", 1000),
		"pdb.yaml": `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: db}}
status: {disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2}
`,
		"db.yaml":       pod("db-", "low", "1", "db"),
		"free-a.yaml":   pod("free-a-", "low", "1", "free"),
		"free-b.yaml":   pod("free-b-", "mid", "1", "free"),
		"high-pod.yaml": pod("high-", "high", "1", "high"),
	})
}

// TestAdmitPriority: a pod naming a class gets its value and preemption
// policy; a pod with a priority or no class is left alone; an unknown
// class is an error naming the pod and the field, and changes nothing.
func TestAdmitPriority(t *testing.T) {
	never := v1.PreemptNever
	pl := &planner{classes: map[string]*schedulingv1.PriorityClass{
		"batch": {ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Value: 7, PreemptionPolicy: &never},
	}}
	pod := func(class string, prio *int32) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1.PodSpec{PriorityClassName: class, Priority: prio}}
	}
	p := pod("batch", nil)
	require.NoError(t, pl.admitPriority(p))
	assert.Equal(t, int32(7), *p.Spec.Priority)
	assert.Equal(t, v1.PreemptNever, *p.Spec.PreemptionPolicy)

	p = pod("system-node-critical", nil)
	require.NoError(t, pl.admitPriority(p))
	assert.Equal(t, int32(2000001000), *p.Spec.Priority)
	assert.Equal(t, v1.PreemptLowerPriority, *p.Spec.PreemptionPolicy)

	three := int32(3)
	p = pod("batch", &three)
	require.NoError(t, pl.admitPriority(p))
	assert.Equal(t, int32(3), *p.Spec.Priority)
	assert.Nil(t, p.Spec.PreemptionPolicy)

	p = pod("", nil)
	require.NoError(t, pl.admitPriority(p))
	assert.Nil(t, p.Spec.Priority)

	p = pod("nope", nil)
	err := pl.admitPriority(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pod p")
	assert.Contains(t, err.Error(), `spec.priorityClassName "nope"`)
	assert.Nil(t, p.Spec.Priority)
	assert.Nil(t, p.Spec.PreemptionPolicy)
}

func TestPickWorkload(t *testing.T) {
	tcs := suite(t)
	for _, c := range []struct{ tc, size, want string }{
		{"SchedulingBasic", "smallest", "5Nodes"},
		{"SchedulingBasic", "500Nodes", "500Nodes"},
		{"SchedulingBasic", "5000Nodes", "5000Nodes"},
		{"PreemptionBasic", "5000Nodes", "1000Nodes"}, // the largest it defines; the _AsyncAPICallsEnabled twin comes later in the file
		{"PreemptionBasic", "500Nodes", "1000Nodes"},
	} {
		w, err := testCaseNamed(t, tcs, c.tc).pickWorkload(c.size)
		require.NoError(t, err)
		assert.Equal(t, c.want, w.Name, "%s -size %s", c.tc, c.size)
	}
	_, err := testCaseNamed(t, tcs, "SchedulingBasic").pickWorkload("lots")
	assert.ErrorContains(t, err, `-size "lots"`)
}

// TestStrictDecoding: an unknown field is an error naming the file, the
// test case, the op's index and opcode, and the field.
func TestStrictDecoding(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "performance-config.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	p := write(`
- name: Broken
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
  - opcode: createPods
    countParm: $initPods
  workloads:
  - name: 1Node
    params: {initNodes: 1, initPods: 1}
`)
	_, err := loadFile(p, "")
	require.Error(t, err)
	for _, want := range []string{p, "test case Broken", "workloadTemplate[1]", "opcode createPods", `unknown field "countParm"`} {
		assert.Contains(t, err.Error(), want)
	}
	p = write("- name: X\n  workloadTemplat: []\n")
	_, err = loadFile(p, "")
	assert.ErrorContains(t, err, `unknown field "workloadTemplat"`)
	p = write("- name: X\n  workloadTemplate:\n  - opcode: createPod\n")
	_, err = loadFile(p, "")
	assert.ErrorContains(t, err, `unknown opcode "createPod"`)

	// A parameter the workload does not define names the op.
	p = write(`
- name: Missing
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  workloads:
  - name: W
    params: {initNodes: 1}
`)
	tcs, err := loadFile(p, "")
	require.NoError(t, err)
	_, err = buildPlan(tcs[0], tcs[0].Workloads[0])
	require.Error(t, err)
	assert.Contains(t, err.Error(), "workloadTemplate[0] (opcode createNodes)")
	assert.Contains(t, err.Error(), "parameter nodes is undefined")
}

func TestPlacement(t *testing.T) {
	node := func(name, zone string, taint bool) *v1.Node {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name, v1.LabelTopologyZone: zone}}}
		if taint {
			n.Spec.Taints = []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}
		}
		return n
	}
	anti := &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, TopologyKey: v1.LabelHostname,
	}}}}
	spread := []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}}
	pod := func(name, node string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "a"}},
			Spec: v1.PodSpec{NodeName: node, Affinity: anti, TopologySpreadConstraints: spread}}
	}
	nodes := []*v1.Node{node("n1", "z1", false), node("n2", "z1", true), node("n3", "z2", false)}
	// n1: p1, p2 (both violate anti-affinity); n2: p3 (tainted); z1 holds
	// 3 pods, z2 none: skew 3. p4 is pending.
	pods := []*v1.Pod{pod("p1", "n1"), pod("p2", "n1"), pod("p3", "n2"), pod("p4", "")}
	pl := measurePlacement(nodes, pods, nil)
	assert.Equal(t, map[int]int{2: 1, 1: 1, 0: 1}, pl.PodsPerNode)
	assert.Equal(t, 2, pl.AntiAffinityViolations)
	assert.Equal(t, 1, pl.OnTaintedOrUnmatched)
	assert.Equal(t, map[string]int{v1.LabelTopologyZone: 3}, pl.MaxSkew)
	assert.Equal(t, "2×1 1×1 0×1", pl.shape(3))
	assert.True(t, strings.HasPrefix(pl.skew(), "zone=3"))
}

// runBoth runs p through both schedulers and requires that both ran
// without error and bound every pod.
func runBoth(t *testing.T, p *plan) (up, sk sideResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up = runUpstream(ctx, p, time.Minute, nil)
	sk = runSchedkit(ctx, p, nil)
	for name, r := range map[string]sideResult{"upstream": up, "schedkit": sk} {
		require.Empty(t, r.Err, name)
		require.Empty(t, r.Unsupported, name)
		require.Equal(t, p.Pods, r.Scheduled, "%s: scheduled", name)
		require.Zero(t, r.Pending, "%s: pending", name)
	}
	return up, sk
}

// TestEndToEndTopologySpreading runs upstream's TopologySpreading/5Nodes
// (5 nodes in zones moon-1..3, 10 plain pods, then 10 measured pods of
// pod-with-topology-spreading.yaml: zone maxSkew 5, DoNotSchedule) through
// both schedulers: schedkit runs PodTopologySpread (the row was
// unsupported before), both bind all 20 pods and keep the zone skew
// within 5.
func TestEndToEndTopologySpreading(t *testing.T) {
	p := smallestPlan(t, "TopologySpreading")
	require.Equal(t, 20, p.Pods)
	require.Empty(t, schedkitUnsupported(p))
	up, sk := runBoth(t, p)
	assert.Contains(t, sk.Spreading, "has topologySpreadConstraints")
	assert.Equal(t, 10, sk.MeasuredPods)
	for name, r := range map[string]sideResult{"upstream": up, "schedkit": sk} {
		require.Contains(t, r.Placement.MaxSkew, v1.LabelTopologyZone, name)
		assert.LessOrEqual(t, r.Placement.MaxSkew[v1.LabelTopologyZone], 5, "%s: zone skew", name)
	}
}

// TestEndToEndPodAntiAffinity runs upstream's SchedulingPodAntiAffinity
// at its smallest size through both schedulers: schedkit's default
// profile now has InterPodAffinity (the row was unsupported before), both
// bind every pod, and neither places two pods that exclude each other in
// one domain.
func TestEndToEndPodAntiAffinity(t *testing.T) {
	p := smallestPlan(t, "SchedulingPodAntiAffinity")
	require.Empty(t, schedkitUnsupported(p))
	up, sk := runBoth(t, p)
	for name, r := range map[string]sideResult{"upstream": up, "schedkit": sk} {
		assert.Zero(t, r.Placement.AntiAffinityViolations, "%s: anti-affinity violations", name)
	}
}

// writeSuite writes a performance-config.yaml (and files, name → body)
// to a temporary directory and returns the plan of its only test case's
// only workload. $suite in the bodies is the module's scheduler_perf
// directory, for its templates.
func writeSuite(t *testing.T, config string, files map[string]string) *plan {
	t.Helper()
	dir, err := suiteLocation("")
	require.NoError(t, err)
	tmp := t.TempDir()
	files["performance-config.yaml"] = config
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(tmp, name), []byte(strings.ReplaceAll(body, "$suite", dir)), 0o644))
	}
	tcs, err := loadFile(filepath.Join(tmp, "performance-config.yaml"), "")
	require.NoError(t, err)
	require.Len(t, tcs, 1)
	p, err := buildPlan(tcs[0], tcs[0].Workloads[0])
	require.NoError(t, err)
	require.Empty(t, p.Unrunnable)
	return p
}

// skewedZoneNodes are createNodes ops for writeSuite: 4 nodes of
// node-default.yaml in zone a, 1 in zone b.
const skewedZoneNodes = `  - opcode: createNodes
    count: 4
    nodeTemplatePath: $suite/templates/node-default.yaml
    labelNodePrepareStrategy: {labelKey: topology.kubernetes.io/zone, labelValues: [a]}
  - opcode: createNodes
    count: 1
    nodeTemplatePath: $suite/templates/node-default.yaml
    labelNodePrepareStrategy: {labelKey: topology.kubernetes.io/zone, labelValues: [b]}
`

// TestSpreadingFilterDecides: 4 nodes in zone a, 1 in zone b, 10 pods
// with a zone maxSkew 1 DoNotSchedule constraint. Without the filter the
// scores spread pods over nodes, 8 in a and 2 in b (skew 6); with it
// both schedulers keep the zones within 1: 5 and 5, so node b holds 5.
func TestSpreadingFilterDecides(t *testing.T) {
	p := writeSuite(t, `
- name: SkewedZones
  workloadTemplate:
`+skewedZoneNodes+`  - opcode: createPods
    count: 10
    podTemplatePath: spread.yaml
    collectMetrics: true
  workloads:
  - name: 5Nodes
`, map[string]string{"spread.yaml": `
apiVersion: v1
kind: Pod
metadata:
  generateName: spread-
  labels: {color: blue}
spec:
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {color: blue}}
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.10.2
    resources: {requests: {cpu: 100m, memory: 500Mi}}
`})
	up, sk := runBoth(t, p)
	for name, r := range map[string]sideResult{"upstream": up, "schedkit": sk} {
		require.Contains(t, r.Placement.MaxSkew, v1.LabelTopologyZone, name)
		assert.LessOrEqual(t, r.Placement.MaxSkew[v1.LabelTopologyZone], 1, "%s: zone skew", name)
		assert.Equal(t, 1, r.Placement.PodsPerNode[5], "%s: node b holds 5 pods: %v", name, r.Placement.PodsPerNode)
	}
}

// TestSystemDefaultSpreading: a Service selects the pods (upstream's
// service.yaml and pod-with-label.yaml, as DefaultTopologySpreading), so
// upstream's default profile scores them with the system default
// constraints (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway).
// schedkit finds the Service through the workload's objects: with 4 nodes
// in zone a and 1 in zone b, both schedulers put more of the 20 pods on
// node b than on any other (least-allocated scoring alone gives 4 each),
// in the same pods-per-node shape. SchedulingBasic has no such object and
// runs without PodTopologySpread.
func TestSystemDefaultSpreading(t *testing.T) {
	p := writeSuite(t, `
- name: ServiceSpreading
  workloadTemplate:
`+skewedZoneNodes+`  - opcode: createAny
    namespace: service-ns
    templatePath: $suite/templates/service.yaml
  - opcode: createPods
    namespace: service-ns
    count: 20
    podTemplatePath: $suite/templates/pod-with-label.yaml
    collectMetrics: true
  workloads:
  - name: 5Nodes
`, map[string]string{})
	require.Empty(t, schedkitUnsupported(p))
	up, sk := runBoth(t, p)
	assert.Contains(t, sk.Spreading, "system default constraints: pod service-ns/")
	assert.Contains(t, sk.Spreading, "is selected by Service service-")
	assert.Equal(t, up.Placement.PodsPerNode, sk.Placement.PodsPerNode, "pods per node")
	most := 0
	for k, n := range sk.Placement.PodsPerNode {
		if n > 0 {
			most = max(most, k)
		}
	}
	assert.Equal(t, 1, sk.Placement.PodsPerNode[most], "one node (b) holds the most pods: %v", sk.Placement.PodsPerNode)
	assert.Greater(t, most, 4, "node b holds more than an even share: %v", sk.Placement.PodsPerNode)

	assert.Empty(t, spreadingReason(smallestPlan(t, "SchedulingBasic")))
}

// TestLiveWorkloads: objects the workload creates and deletes (churn) are
// found by PodTopologySpread's lookup; a duplicate is refused and
// changes nothing; other kinds are ignored.
func TestLiveWorkloads(t *testing.T) {
	w := newLiveWorkloads()
	svc := func(name string) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": name}}}
	}
	require.NoError(t, w.apply(svc("a"), false))
	require.NoError(t, w.apply(svc("b"), false))
	require.NoError(t, w.apply(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, false))
	assert.Len(t, w.Services("ns"), 2)
	require.Error(t, w.apply(svc("a"), false), "listed twice")
	assert.Len(t, w.Services("ns"), 2)
	require.NoError(t, w.apply(svc("a"), true))
	require.Len(t, w.Services("ns"), 1)
	assert.Equal(t, "b", w.Services("ns")[0].Name)
	assert.Nil(t, w.ReplicaSet("ns", "x"))
}

// TestParseGates: -feature-gates takes Gate=bool pairs; anything else is
// an error quoting the flag and the bad pair.
func TestParseGates(t *testing.T) {
	g, err := parseGates("SchedulerAsyncPreemption=false, OpportunisticBatching=true")
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"SchedulerAsyncPreemption": false, "OpportunisticBatching": true}, g)
	g, err = parseGates("")
	require.NoError(t, err)
	assert.Nil(t, g)
	for _, bad := range []string{"A", "A=maybe", "=true", "A=true,,B=false"} {
		_, err := parseGates(bad)
		assert.ErrorContains(t, err, "is not Gate=true or Gate=false", bad)
	}
}

// TestEndToEndPodAddUnblocks runs upstream's EventHandlingPodAdd/10Pods
// (2 nodes, 41 pods): 10 pods a zone-less hostname spread constraint
// (maxSkew 1) and 10 pods a required pod affinity keep pending until
// other pods are bound, which upstream's queue moves them on (an
// assigned pod's add event). SK requeues the pods PodTopologySpread or
// InterPodAffinity rejected after each bind: both bind all 41. Before,
// SK requeued only on node adds and pod deletions and left 19 pending.
func TestEndToEndPodAddUnblocks(t *testing.T) {
	p := smallestPlan(t, "EventHandlingPodAdd")
	require.Equal(t, 41, p.Pods)
	up, sk := runBoth(t, p)
	assert.Equal(t, up.bound, sk.bound)
}

// TestEndToEndPodSetsNSSelector runs upstream's
// SchedulingRequiredPodAntiAffinityWithNSSelector at its smallest size
// (10 nodes; createPodSets: 2 pods in each of init-ns-0 and init-ns-1,
// then 6 measured pods in measure-ns-0, whose anti-affinity terms select
// namespaces by label) through both schedulers: the op is unrolled as
// upstream unrolls it (the row was "not run" before), both bind every pod
// with no anti-affinity violation.
func TestEndToEndPodSetsNSSelector(t *testing.T) {
	p := smallestPlan(t, "SchedulingRequiredPodAntiAffinityWithNSSelector")
	require.Empty(t, p.Unrunnable)
	require.Empty(t, schedkitUnsupported(p))
	perNS := map[string]int{}
	for _, s := range p.Steps {
		for _, pod := range s.Pods {
			perNS[pod.Namespace]++
		}
	}
	assert.Equal(t, map[string]int{"init-ns-0": 2, "init-ns-1": 2, "measure-ns-0": 6}, perNS)
	assert.Equal(t, 6, p.Measured)
	assert.Equal(t, 10, p.Pods)
	assert.Equal(t, 10, p.TC.podCount(p.W), "the table's PODS column")
	up, sk := runBoth(t, p)
	for name, r := range map[string]sideResult{"upstream": up, "schedkit": sk} {
		assert.Zero(t, r.Placement.AntiAffinityViolations, "%s: anti-affinity violations", name)
	}
}
