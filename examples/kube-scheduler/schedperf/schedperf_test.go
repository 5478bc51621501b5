package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
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
	tc := testCaseNamed(t, suite(t), name)
	w, err := tc.pickWorkload("smallest")
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

// TestPreemptionIsUnsupported: in PreemptionBasic/5Nodes the high-priority
// pods (3 CPUs) fit only after evicting 900m low-priority pods; upstream
// preempts, schedkit is reported unsupported with the reason.
func TestPreemptionIsUnsupported(t *testing.T) {
	p := smallestPlan(t, "PreemptionBasic")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Upstream on the fake clientset sometimes leaves one of the five
	// preemptors unbound (open question, see the README): the test asks
	// that preemption happened and measured pods were bound, which failed
	// while the in-process event recorder blocked (0 of 5 bound).
	up := runUpstream(ctx, p, 20*time.Second, nil)
	assert.Positive(t, up.Preempted, "upstream preempts")
	assert.GreaterOrEqual(t, up.MeasuredPods, 4, "upstream binds the preemptors: %s", up.Err)
	sk := runSchedkit(ctx, p, nil)
	assert.Contains(t, sk.Unsupported, "preemption: pending pod")
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
