package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/gpushare"
)

// TestBadFlags: bad flags and bad input exit 2 with a one-line reason on
// stderr and nothing on stdout.
func TestBadFlags(t *testing.T) {
	tmp := t.TempDir()
	nodes := writeFile(t, tmp, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16384,2,T4\n")
	badPods := writeFile(t, tmp, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,lots,1,500\n")
	pods := writeFile(t, tmp, "good.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,0,1,500\n")
	allBad := writeFile(t, tmp, "allbad.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,x,16384,2,T4\nn2,8000,16384,-1,T4\n")
	allBadPods := writeFile(t, tmp, "allbadpods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,lots,1,500\np2,1000,1024,1\n")
	appsNode := writeFile(t, tmp, "node.yaml", "apiVersion: apps/v1\nkind: Node\nmetadata: {name: n1}\n")
	dirSVG := filepath.Join(tmp, "plot.svg")
	require.NoError(t, os.Mkdir(dirSVG, 0o755))
	link := filepath.Join(tmp, "link.svg") // to real.svg, which does not exist
	require.NoError(t, os.Symlink("real.svg", link))
	dangling := filepath.Join(tmp, "dangling.svg")
	require.NoError(t, os.Symlink(filepath.Join(tmp, "nowhere", "x.svg"), dangling))
	typo := writeFile(t, tmp, "typo.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default}\nspec:\n  containers:\n  - name: c\n    image: x\n    resource: {requests: {cpu: '64'}}\n")
	tests := []struct {
		name string
		args []string
		want string // in the stderr line
	}{
		{"unknown flag", []string{"-frobnicate"}, "flag provided but not defined: -frobnicate"},
		{"a what-if flag alone", []string{"-greedy"}, "flag provided but not defined: -greedy (a what-if flag: give it with -fit, -scale-up or -drain)"},
		{"unknown policy", []string{"-policy", "default,nope"}, `unknown policy "nope"`},
		{"scheduler name without objects", []string{"-scheduler-name", "volcano"}, "-scheduler-name needs -objects"},
		{"empty scheduler name", []string{"-objects", typo, "-scheduler-name", " , "}, "-scheduler-name: no scheduler name"},
		{"repeated policy", []string{"-policy", "fgd,fgd"}, `policy "fgd" listed twice`},
		// An empty element was skipped: "default,,least" ran two policies.
		{"empty policy element", []string{"-policy", "default,,least"}, `-policy: "default,,least": element 2 is empty, want comma-separated policy names, or all`},
		{"policy trailing comma", []string{"-policy", "default,"}, `-policy: "default,": element 2 is empty`},
		{"policy leading comma", []string{"-policy", " ,all"}, `-policy: " ,all": element 1 is empty`},
		{"no policy", []string{"-policy", " "}, "-policy: no policy given"},
		// The flag package said only "parse error".
		{"negative seed", []string{"-seed", "-1"}, `invalid value "-1" for flag -seed: "-1": want an unsigned integer 0..18446744073709551615`},
		{"seed out of range", []string{"-seed", "18446744073709551616"}, `"18446744073709551616": want an unsigned integer 0..18446744073709551615`},
		{"bad output", []string{"-o", "yaml"}, `-o "yaml": want table or json`},
		{"bad seeds", []string{"-shuffle", "9-3"}, `"9-3" is not a seed range`},
		{"bad percentage", []string{"-percentage", "101"}, "-percentage 101: want 0-100"},
		{"bad tiebreak", []string{"-tiebreak", "first"}, `-tiebreak "first": want random or order`},
		{"bad plot", []string{"-svg", "out.gif"}, "want a .svg, .png or .pdf file name"},
		{"plot folder missing", []string{"-svg", "/nonexistent-folder/x.svg"}, "folder /nonexistent-folder does not exist"},
		// Checked before the run, not after it (which took the whole
		// replay and then exited without a report).
		{"plot is a folder", []string{"-svg", dirSVG}, "-svg " + dirSVG + ": is a folder; want a file name"},
		{"plot under a file", []string{"-svg", filepath.Join(nodes, "x.svg")}, "-svg " + filepath.Join(nodes, "x.svg") + ": " + nodes + " is not a folder"},
		{"placements is a folder", []string{"-placements", tmp}, "-placements " + tmp + ": is a folder; want a file name"},
		{"placements folder missing", []string{"-placements", filepath.Join(tmp, "nope", "p.csv")}, "folder " + filepath.Join(tmp, "nope") + " does not exist"},
		// What the checks by name miss, the system says, before the run.
		{"placements through a file", []string{"-placements", nodes + "/../p.csv"}, "not a directory"},
		{"plot through a dangling link", []string{"-svg", dangling}, "-svg " + dangling + ": no such file or directory"},
		{"placements ends in a slash", []string{"-placements", filepath.Join(tmp, "p.csv") + "/"}, "ends in a slash; want a file name"},
		{"plot and placements one file through a link", []string{"-svg", link, "-placements", filepath.Join(tmp, "real.svg")}, "-svg and -placements name the same file"},
		{"plot and placements the same file", []string{"-svg", filepath.Join(tmp, "same.svg"), "-placements", filepath.Join(tmp, ".", "same.svg")}, "-svg and -placements name the same file"},
		// The heap profile overwrote the CPU profile after the run.
		{"two profiles one file", []string{"-cpuprofile", filepath.Join(tmp, "p.out"), "-memprofile", filepath.Join(tmp, "p.out")}, "-cpuprofile and -memprofile name the same file, " + filepath.Join(tmp, "p.out")},
		{"profile and placements one file", []string{"-placements", filepath.Join(tmp, "p.csv"), "-memprofile", filepath.Join(tmp, ".", "p.csv")}, "-placements and -memprofile name the same file"},
		{"negative inflate", []string{"-inflate", "-1"}, "-inflate -1: want a ratio in (0, 100], e.g. 1.3, or 0 (off)"},
		{"objects and trace", []string{"-objects", "x.yaml", "-trace", tmp}, "-objects cannot be combined"},
		{"departures without trace", []string{"-departures"}, "-departures needs a trace"},
		{"departures and shuffle", []string{"-nodes", nodes, "-pods", badPods, "-departures", "-shuffle", "1"}, "cannot be combined with -shuffle"},
		{"unbind without objects", []string{"-unbind"}, "-unbind needs -objects"},
		{"scale with trace", []string{"-trace", tmp, "-scale", "2"}, "-scale applies to the built-in"},
		{"flag after paths", []string{"a.yaml", "-policy", "fgd"}, "flag -policy after the object paths"},
		{"nodes without pods", []string{"-nodes", nodes}, "-nodes and -pods go together"},
		// It said "not a directory" of a path that does not exist.
		{"missing trace dir", []string{"-trace", filepath.Join(tmp, "nope")}, "-trace " + filepath.Join(tmp, "nope") + ": the directory does not exist (no such file or directory)"},
		{"trace is a file", []string{"-trace", nodes}, "-trace " + nodes + ": not a directory"},
		{"missing objects", []string{"-objects", filepath.Join(tmp, "nope.yaml")}, "nope.yaml"},
		// "resource:" for "resources:": without -strict the pod asks for
		// nothing and is placed on the 1-cpu node; -strict names the field.
		{"strict objects typo", []string{"-objects", typo, "-strict"}, `unknown field "spec.containers[0].resource"`},
		{"strict rejects a bad row", []string{"-nodes", nodes, "-pods", badPods, "-strict"}, `pods.csv:2: column memory_mib: openb: bad value: "lots" is not an integer`},
		{"explain unknown pod", []string{"-nodes", nodes, "-pods", pods, "-explain", "ghost"}, "-explain ghost: no such pod"},
		// issue 17 item 11: the reasons are shown when every row is bad
		{"all node rows bad", []string{"-nodes", allBad, "-pods", pods}, `allbad.csv: no nodes: all 2 rows malformed (` + allBad + `:2: column cpu_milli: openb: bad value: "x" is not an integer; ` + allBad + `:3: column gpu`},
		// A pod list of malformed rows only ran over 0 pods and exited 0.
		{"all pod rows bad", []string{"-nodes", nodes, "-pods", allBadPods}, allBadPods + `: no pods: all 2 rows malformed (` + allBadPods + `:2: column memory_mib: openb: bad value: "lots" is not an integer; ` + allBadPods + `:3: openb: malformed CSV row`},
		{"the one pod row bad", []string{"-nodes", nodes, "-pods", badPods}, badPods + `: no pods: its one row is malformed (` + badPods + `:2: column memory_mib: openb: bad value: "lots" is not an integer)`},
		{"only a skipped object", []string{"-objects", appsNode}, `no Node objects (skipped 1 apps/v1 Node: only apiVersion v1 Node and Pod objects`},
		// issue 17 item 12: NaN and infinities pass every range check
		{"NaN scale", []string{"-scale", "NaN"}, `invalid value "NaN" for flag -scale: "NaN": want a finite number`},
		{"NaN inflate", []string{"-inflate", "NaN"}, `invalid value "NaN" for flag -inflate`},
		{"infinite inflate", []string{"-inflate", "+Inf"}, `invalid value "+Inf" for flag -inflate`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runMain(t, tc.args...)
			assert.Equal(t, exitUsage, r.code)
			assert.Empty(t, r.stdout)
			assert.Contains(t, r.stderr, tc.want)
			assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
			assert.True(t, strings.HasPrefix(r.stderr, "simulate: "), r.stderr)
		})
	}
}

// TestFloatFlagsFinite: every float flag (one that takes 1.5 and refuses
// a word) refuses NaN and infinities, which no range check catches
// (issue 17 item 12).
func TestFloatFlagsFinite(t *testing.T) {
	var o options
	fs := newFlagSet(&o)
	var floats []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Value.Set("1.5") != nil || f.Value.Set("abc") == nil {
			return
		}
		floats = append(floats, f.Name)
		for _, v := range []string{"NaN", "nan", "+Inf", "-Inf", "inf", "1e400"} {
			assert.Error(t, f.Value.Set(v), "-%s %s", f.Name, v)
		}
		assert.NoError(t, f.Value.Set("2.5"), "-%s 2.5", f.Name)
		assert.Equal(t, "2.5", f.Value.String())
	})
	assert.ElementsMatch(t, []string{"inflate", "scale"}, floats)
}

func TestHelp(t *testing.T) {
	r := runMain(t, "-h")
	assert.Equal(t, exitOK, r.code)
	assert.Contains(t, r.stdout, "Usage: simulate")
	for _, p := range policies {
		assert.Contains(t, r.stdout, p.name)
	}
	// -seed takes a value of its own type now: still shown as SEED, with
	// its default.
	assert.Regexp(t, `-seed SEED\n\s+SEED of the synthetic workload, the cycle's tie-break, -inflate draws and the random policy \(default 1\)\n`, r.stdout)
}

// TestPodListWithoutRows: a pod list of a header alone is an empty
// workload, not malformed rows: the run goes on with 0 pods to schedule
// (as -objects whose pods are all bound), unlike a node list of a header
// alone, on which nothing can be scheduled.
func TestPodListWithoutRows(t *testing.T) {
	tmp := t.TempDir()
	nodes := writeFile(t, tmp, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16384,2,T4\n")
	pods := writeFile(t, tmp, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n")
	r := runMain(t, "-nodes", nodes, "-pods", pods, "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "1 node, 0 pods to schedule")
	assert.Empty(t, r.stderr)

	noNodes := writeFile(t, tmp, "no-nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\n")
	r = runMain(t, "-nodes", noNodes, "-pods", pods)
	assert.Equal(t, exitUsage, r.code)
	assert.Equal(t, "simulate: "+noNodes+": no nodes\n", r.stderr)
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// TestMalformedRows: a malformed row is reported with file:line and
// skipped; the other rows are replayed (a memory_mib of 0 is a valid
// request of 0 memory, not a malformed row).
func TestMalformedRows(t *testing.T) {
	tmp := t.TempDir()
	nodes := writeFile(t, tmp, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16384,2,T4\nn2,x,16384,0,\n")
	pods := writeFile(t, tmp, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"+
		"p1,1000,0,1,500\n"+
		"p2,1000,1024,1\n"+
		"p3,2000,1024,1,1000\n")
	rep, r := jsonReport(t, "-nodes", nodes, "-pods", pods, "-policy", "default")
	assert.Contains(t, r.stderr, "nodes.csv:3: column cpu_milli")
	assert.Contains(t, r.stderr, "pods.csv:3: openb: malformed CSV row: 4 fields, header has 5")
	assert.Len(t, rep.Skipped, 2)
	assert.Equal(t, 1, rep.Nodes)
	assert.Equal(t, 2, rep.Pods)
	s := rep.Summaries[0]
	assert.Equal(t, 2.0, s.Placed)
	assert.Equal(t, int64(1500), s.Results[0].GPU.Requested)
}

// TestSyntheticDefault: no flags runs the built-in workload; the same seed
// gives the same table, another seed another one; stderr stays silent
// (not a terminal, no progress bar).
func TestSyntheticDefault(t *testing.T) {
	args := []string{"-scale", "0.1", "-timing=false"}
	a := runMain(t, args...)
	require.Equal(t, exitOK, a.code, a.stderr)
	assert.Empty(t, a.stderr)
	assert.Contains(t, a.stdout, "synthetic GPU cluster (seed 1, 150 nodes, 800 pods)")
	assert.Contains(t, a.stdout, "150 nodes, 800 pods to schedule")
	for _, p := range []string{"default", "least", "most", "fgd"} {
		assert.Contains(t, a.stdout, "\n"+strings.Repeat(" ", 9-len(p))+p+" ", "row for %s", p)
	}
	b := runMain(t, args...)
	assert.Equal(t, a.stdout, b.stdout)
	c := runMain(t, append(args, "-seed", "7")...)
	assert.NotEqual(t, a.stdout, c.stdout)
}

// TestSyntheticShape: the built-in workload looks like the openb cluster:
// CPU-only and 2/4/8-GPU nodes, CPU-only, whole-GPU and shared-GPU pods,
// and arrivals asking for nearly all the GPUs.
func TestSyntheticShape(t *testing.T) {
	c, err := loadSynthetic(1, 1)
	require.NoError(t, err)
	assert.Len(t, c.nodes, 1500)
	assert.Len(t, c.pods, 8000)
	assert.Equal(t, int64(6080000), c.gpuMilli)
	kinds := map[string]int{}
	var demand int64
	for _, pi := range c.pods {
		task := gpushare.TaskOf(pi)
		switch {
		case !task.UsesGPU():
			kinds["cpu"]++
		case task.Shared():
			kinds["shared"]++
		case task.GPUCount == 1:
			kinds["whole"]++
		default:
			kinds["multi"]++
		}
		demand += task.TotalMilliGPU()
	}
	t.Logf("pods %v, GPU demand %.1f%% of capacity", kinds, 100*float64(demand)/float64(c.gpuMilli))
	assert.InDelta(t, 0.13*8000, kinds["cpu"], 150)
	assert.InDelta(t, 0.49*8000, kinds["whole"], 200)
	assert.InDelta(t, 0.37*8000, kinds["shared"], 200)
	assert.Positive(t, kinds["multi"])
	assert.InDelta(t, 0.98, float64(demand)/float64(c.gpuMilli), 0.05)
}

// TestOutputs: -o json, -svg (SVG and PNG), -placements and -explain.
func TestOutputs(t *testing.T) {
	tmp := t.TempDir()
	svg, png := filepath.Join(tmp, "fig.svg"), filepath.Join(tmp, "fig.png")
	place := filepath.Join(tmp, "p.csv")
	rep, _ := jsonReport(t, "-scale", "0.05", "-policy", "binpack,fgd", "-svg", svg, "-placements", place, "-explain", "pod-00042")
	require.Len(t, rep.Summaries, 2)
	for _, s := range rep.Summaries {
		assert.Equal(t, 400.0, s.Arrived)
		require.NotNil(t, s.WallSeconds)
		require.NotNil(t, s.PodsPerSecond)
		e := s.Results[0].Explain
		require.NotNil(t, e, s.Policy)
		assert.Equal(t, "paib-gpu/pod-00042", e.Pod)
		if e.Node != "" {
			assert.Contains(t, e.Breakdown, "node "+e.Node)
		} else {
			assert.Contains(t, e.Diagnosis, "nodes are available")
		}
	}
	assert.Contains(t, rep.Summaries[1].Results[0].Explain.Breakdown, "fragmentation")
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<svg")
	assert.Contains(t, string(b), "fgd")
	assert.Len(t, readPlacements(t, place), 800)

	r := runMain(t, "-scale", "0.05", "-policy", "fgd", "-svg", png, "-explain", "pod-00042", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	b, err = os.ReadFile(png)
	require.NoError(t, err)
	assert.Equal(t, "\x89PNG", string(b[:4]))
	assert.Contains(t, r.stdout, "explain paib-gpu/pod-00042 under fgd")
	assert.Contains(t, r.stdout, "TieBreakRank0")
}

// TestShuffleInflate: -shuffle with several seeds makes one run per seed
// (averaged); -inflate 1.3 brings the arrived GPU demand to 130 % of the
// cluster's GPUs.
func TestShuffleInflate(t *testing.T) {
	rep, _ := jsonReport(t, "-scale", "0.05", "-policy", "fgd,random", "-shuffle", "42-44", "-inflate", "1.3", "-parallel")
	for _, s := range rep.Summaries {
		require.Equal(t, 3, s.Runs)
		assert.Len(t, s.Curve, 131, s.Policy)
		for _, r := range s.Results {
			assert.Len(t, r.Curve, 131, "%s seed %d", s.Policy, r.Seed)
		}
		seeds := []uint64{s.Results[0].Seed, s.Results[1].Seed, s.Results[2].Seed}
		assert.Equal(t, []uint64{42, 43, 44}, seeds)
		assert.Greater(t, s.Unschedulable, 0.0)
	}
}

// A pod asking for vastly more than the cluster has (cpu: 1e1000, which
// saturates) is unschedulable; the allocation curve stays bounded.
func TestHugeRequest(t *testing.T) {
	tmp := t.TempDir()
	objs := writeFile(t, tmp, "huge.yaml", `apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: default}
spec:
  containers:
  - name: c
    image: x
    resources: {requests: {cpu: "1e1000"}}
`)
	var out, errb strings.Builder
	code := run([]string{"-objects", objs, "-policy", "default", "-o", "json"}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	assert.Contains(t, out.String(), `"unschedulable": 1`)
}

// TestNothingToSchedule: objects whose pods are all bound say how to
// schedule them (issue 19), and -unbind does, except a mirror pod.
func TestNothingToSchedule(t *testing.T) {
	tmp := t.TempDir()
	objs := writeFile(t, tmp, "cluster.yaml", `apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: default}
spec: {nodeName: n1, containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: etcd-n1, namespace: kube-system, annotations: {kubernetes.io/config.mirror: abc, kubernetes.io/config.source: file}}
spec: {nodeName: n1, containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}
`)
	r := runMain(t, "-objects", objs, "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "1 node, 0 pods to schedule")
	assert.Contains(t, r.stdout, "-unbind schedules them anew")

	// -explain of a bound pod says where it is bound and how to schedule
	// it, not that there is no such pod.
	r = runMain(t, "-objects", objs, "-policy", "default", "-explain", "app")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "-explain app: pod default/app is bound to node n1 in the input (spec.nodeName), so the run does not schedule it; -unbind schedules bound pods anew, except static and mirror pods")
	r = runMain(t, "-objects", objs, "-unbind", "-policy", "default", "-explain", "etcd-n1")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "-explain etcd-n1: pod kube-system/etcd-n1 stays bound to node n1: a static or mirror pod, which the kubelet runs on its node and no scheduler places, -unbind included")
	rep0, _ := jsonReport(t, "-objects", objs, "-unbind", "-policy", "default", "-timing=false", "-explain", "default/app")
	assert.Equal(t, 1, rep0.Pods)

	// Pods in phase Succeeded or Failed are left out, and the report says
	// how many.
	done := writeFile(t, tmp, "done.yaml", `apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: job-1, namespace: default}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}
status: {phase: Succeeded}
---
apiVersion: v1
kind: Pod
metadata: {name: job-2, namespace: default}
spec: {nodeName: n1, containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}
status: {phase: Failed}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}
`)
	r = runMain(t, "-objects", done, "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "1 node, 1 pod to schedule")
	assert.Contains(t, r.stdout, "2 pods in phase Succeeded or Failed left out (no scheduler takes them; they hold no capacity)")
	rep1, _ := jsonReport(t, "-objects", done, "-policy", "default", "-timing=false")
	assert.Equal(t, 2, rep1.Terminal)
	assert.Equal(t, 1, rep1.Pods)
	assert.Equal(t, 0, rep1.Bound, "the Failed pod holds no capacity: web fits")

	rep, _ := jsonReport(t, "-objects", objs, "-unbind", "-policy", "default", "-timing=false")
	assert.Equal(t, 1, rep.Pods, "the ordinary pod is scheduled anew")
	assert.Equal(t, 1, rep.Bound, "the mirror pod stays bound")
}

// TestPlotRange: the plot's axes follow the data (issue 19): from where
// the policies' curves part (less a margin) and over the values there;
// from 0 when they never part.
func TestPlotRange(t *testing.T) {
	curve := func(f func(x int) float64, n int) []*float64 {
		out := make([]*float64, n+1)
		for x := range out {
			v := f(x)
			out[x] = &v
		}
		return out
	}
	diag := func(x int) float64 { return float64(x) * 0.0097 } // ratios, as the report's curves
	parts := func(x int) float64 {
		if x < 70 {
			return diag(x)
		}
		return diag(x) - float64(x-70)/500
	}
	x, y, zoomed := plotRange([]*summary{{Curve: curve(diag, 100)}, {Curve: curve(parts, 100)}})
	assert.True(t, zoomed)
	assert.Equal(t, [2]float64{60, 100}, x, "from where they part (x=73), less 10, rounded down")
	assert.Equal(t, [2]float64{55, 100}, y, "values from x=60 on, rounded out to 5")

	x, y, zoomed = plotRange([]*summary{{Curve: curve(diag, 100)}, {Curve: curve(diag, 100)}})
	assert.False(t, zoomed)
	assert.Equal(t, [2]float64{0, 100}, x)
	assert.Equal(t, [2]float64{0, 100}, y)

	x, y, zoomed = plotRange([]*summary{{Curve: curve(func(x int) float64 { return float64(x) / 200 }, 3)}})
	assert.False(t, zoomed)
	assert.Equal(t, [2]float64{0, 3}, x, "a small input: its own range, not 0-100")
	assert.Equal(t, [2]float64{0, 5}, y)
}

// TestJSONUnits: every ratio of the JSON report is 0-1, the allocation
// curve included (it was in percent beside ratios), and the summed
// amounts say their unit (issue 19).
func TestJSONUnits(t *testing.T) {
	rep, _ := jsonReport(t, "-scale", "0.02", "-policy", "fgd", "-timing=false")
	s := rep.Summaries[0]
	last := s.Curve[len(s.Curve)-1]
	require.NotNil(t, last)
	assert.InDelta(t, s.GPURatio, *last, 0.01, "the curve ends at the final GPU ratio")
	for x, v := range s.Curve {
		if v != nil {
			assert.True(t, *v >= 0 && *v <= 1, "curve[%d] = %g: want a ratio in [0, 1]", x, *v)
		}
	}
	r := s.Results[0]
	assert.Equal(t, []string{"milliCPU", "bytes", "milliGPU"}, []string{r.CPU.Unit, r.Memory.Unit, r.GPU.Unit})
}

// TestObjectsSkippedKinds (trial 7): objects the replay does not read (a
// Node of another apiVersion, a ControllerRevision) are named on stderr, and
// -strict refuses them; before, only an input without any v1 Node said so.
func TestObjectsSkippedKinds(t *testing.T) {
	tmp := t.TempDir()
	in := writeFile(t, tmp, "skip.yaml", `apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}
---
apiVersion: v1beta1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}
---
apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: d, namespace: default}
revision: 1
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}
`)
	r := runMain(t, "-objects", in, "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "simulate: warning: "+in+": (skipped 1 apps/v1 ControllerRevision, 1 v1beta1 Node: only apiVersion v1 Node and Pod objects")
	assert.Contains(t, r.stderr, "(ignored; -strict rejects them)")

	r = runMain(t, "-objects", in, "-policy", "default", "-strict")
	assert.Equal(t, exitUsage, r.code, r.stderr)
	// Each rejected object is named, with its file and line.
	assert.Contains(t, r.stderr, in+`:6: document 2: Node "n2": load: kind not accepted: v1beta1 Node`)
	assert.Contains(t, r.stderr, in+`:11: document 3: ControllerRevision "default/d": load: kind not accepted: apps/v1 ControllerRevision`)
	assert.Empty(t, r.stdout)

	var out, errb bytes.Buffer
	require.Equal(t, exitOK, runWhatif([]string{"-drain", "n1", "-objects", in}, &out, &errb), errb.String())
	assert.Contains(t, errb.String(), "simulate: warning: "+in+": (skipped 1 apps/v1 ControllerRevision, 1 v1beta1 Node")
}

// TestExplainAmbiguous (trial 7): -explain NAME with pods of that name in
// two namespaces is an error listing both; before, it explained the last.
func TestExplainAmbiguous(t *testing.T) {
	tmp := t.TempDir()
	in := writeFile(t, tmp, "ambig.yaml", `apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: a}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: b}
spec: {containers: [{name: c, image: x}]}
`)
	r := runMain(t, "-objects", in, "-policy", "default", "-explain", "p")
	assert.Equal(t, exitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "-explain p: ambiguous, 2 pods to schedule have that name (a/p, b/p): give namespace/name")
	r = runMain(t, "-objects", in, "-policy", "default", "-explain", "b/p", "-timing=false")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "explain b/p under default")
}

// TestBadPodNamesRuleOnce: two badly named pods give two errors, one
// line, and the RFC 1123 rule with its regex once.
func TestBadPodNamesRuleOnce(t *testing.T) {
	doc := "apiVersion: v1\nkind: List\nitems:\n" +
		"- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n  status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n" +
		"- apiVersion: v1\n  kind: Pod\n  metadata: {name: Bad_One, namespace: default}\n  spec: {containers: [{name: c}]}\n" +
		"- apiVersion: v1\n  kind: Pod\n  metadata: {name: Bad_Two, namespace: default}\n  spec: {containers: [{name: c}]}\n"
	r := runMain(t, "-objects", writeInput(t, doc))
	require.Equal(t, exitUsage, r.code, r.stderr)
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
	assert.Contains(t, r.stderr, `"Bad_One"`)
	assert.Contains(t, r.stderr, `Invalid value: "Bad_Two": (as above)`)
	assert.Equal(t, 1, strings.Count(r.stderr, "regex used for validation"), r.stderr)
}

// TestObjectsUnknownPriorityClass: a workload whose template names a
// PriorityClass that is neither in the input nor built in failed only
// during the runs, once per policy, naming a generated pod. It is an
// input error before any run, said once, naming the pod, its workload,
// the field and the class, and counting the other pods; a class the
// input gives, or a built-in one, is accepted.
func TestObjectsUnknownPriorityClass(t *testing.T) {
	const node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
	rs := func(class string) string {
		return "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n" +
			"  template:\n    metadata: {labels: {app: web}}\n    spec:\n      priorityClassName: " + class + "\n      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n"
	}
	const gold = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: gold}\nvalue: 1000\n"
	dir := t.TempDir()

	var stdout, stderr bytes.Buffer
	code := run([]string{"-objects", writeFile(t, dir, "bad.yaml", node+rs("nope"))}, &stdout, &stderr)
	require.Equal(t, 2, code, stderr.String())
	const want = `(of ReplicaSet default/web): spec.priorityClassName: no PriorityClass "nope" among the input's PriorityClasses or the built-in system-cluster-critical and system-node-critical; and 2 more pods`
	require.Contains(t, stderr.String(), want)
	require.Equal(t, 1, strings.Count(stderr.String(), "no PriorityClass"), stderr.String())

	// A Deployment's pods come from the ReplicaSet made for it: the
	// message names both.
	deploy := strings.Replace(strings.Replace(rs("nope"), "kind: ReplicaSet", "kind: Deployment", 1), "replicas: 3", "replicas: 1", 1)
	stderr.Reset()
	require.Equal(t, 2, run([]string{"-objects", writeFile(t, dir, "deploy.yaml", node+deploy)}, &stdout, &stderr), stderr.String())
	require.Regexp(t, `\(of ReplicaSet default/web-[a-z0-9]+ of Deployment default/web: its spec.template\): spec.priorityClassName: no PriorityClass "nope"`, stderr.String())

	for _, in := range []string{node + rs("gold") + gold, node + rs("system-cluster-critical")} {
		stdout.Reset()
		stderr.Reset()
		require.Equal(t, 0, run([]string{"-objects", writeFile(t, dir, "good.yaml", in)}, &stdout, &stderr), stderr.String())
	}
}

// joinDistinct keeps each message once, in order, and nil when there
// is none.
func TestJoinDistinct(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	require.NoError(t, joinDistinct([]error{nil, nil}))
	err := joinDistinct([]error{a, nil, errors.New("a"), b, a})
	require.Equal(t, "a\nb", err.Error())
	require.ErrorIs(t, err, b)
}

// TestOutputFileFailsAfterTheRun: a file that passed the checks before
// the run but cannot be written after it (here /dev/full: no space)
// exits 1 with the system's error, and the report is still written (it
// was lost). A probe that made a file to check the path removes it.
func TestOutputFileFailsAfterTheRun(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	tmp := t.TempDir()
	nodes := writeFile(t, tmp, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16384,2,T4\n")
	pods := writeFile(t, tmp, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,0,1,500\n")
	plot := filepath.Join(tmp, "plot.svg")
	r := runMain(t, "-nodes", nodes, "-pods", pods, "-policy", "default", "-placements", "/dev/full", "-svg", plot)
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "-placements: write /dev/full: no space left on device")
	assert.Contains(t, r.stdout, "default", "the report")
	assert.FileExists(t, plot, "the other file is written")

	probed := filepath.Join(tmp, "probed.svg")
	r = runMain(t, "-nodes", nodes, "-pods", pods, "-svg", probed, "-scale", "2") // refused after the probe
	assert.Equal(t, exitUsage, r.code)
	assert.NoFileExists(t, probed, "the probe's file is removed")
}
