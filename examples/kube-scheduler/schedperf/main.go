// Command schedperf runs upstream's scheduler_perf suite — the
// performance-config.yaml files and templates of
// k8s.io/kubernetes/test/integration/scheduler_perf, read from the Go
// module cache, never copied — through two schedulers on the same objects
// in the same order: (a) the real kube-scheduler (pkg/scheduler, in
// process, on a fake clientset) and (b) schedkit's framework.Loop over a
// reserve.Ledger. For each test case it picks one workload size and prints
// pods scheduled and pending by each, pods/s over the measured pods, the
// ratio, upstream's CI threshold, and a placement comparison that does not
// depend on random tie-breaks.
//
//	go run ./examples/kube-scheduler/schedperf                    # every test case, smallest size
//	go run ./examples/kube-scheduler/schedperf -size 500Nodes     # the size nearest 500 nodes
//	go run ./examples/kube-scheduler/schedperf -workload SchedulingBasic -size 5000Nodes -o json
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"k8s.io/klog/v2"
)

// row is one test case at one size.
type row struct {
	File      string  `json:"file"`
	TestCase  string  `json:"testCase"`
	Workload  string  `json:"workload"`
	Nodes     int     `json:"nodes"`
	Pods      int     `json:"pods"`
	Measured  int     `json:"measuredPods"`
	Threshold float64 `json:"threshold"`
	// ThresholdMetric is what Threshold bounds (SchedulingThroughput:
	// pods/s, the default).
	ThresholdMetric string `json:"thresholdMetric"`
	// FeatureGates are the -feature-gates overrides UP ran with (on top
	// of the test case's and workload's own gates).
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// Skipped says why neither scheduler ran the workload.
	Skipped  string     `json:"skipped,omitempty"`
	Upstream sideResult `json:"upstream"`
	Schedkit sideResult `json:"schedkit"`
	// Ratio is schedkit's pods/s over upstream's (0 when either is
	// missing or schedkit is unsupported).
	Ratio float64 `json:"ratio"`
}

type options struct {
	dir       string
	workloads []string
	size      string
	output    string
	timeout   time.Duration
	maxPods   int
	progress  string
	logs      bool
	from      string
	gates     map[string]bool
	seed      uint64
	// limit bounds each side's run of one workload (0: none); a side
	// stopped by it reports what it did until then.
	limit time.Duration
	// cpuprofile, if set, is where SK's side of each workload writes a
	// CPU profile (upstream's side is not profiled).
	cpuprofile string
}

func main() {
	var o options
	var wl string
	flag.StringVar(&o.dir, "dir", "", "scheduler_perf directory (default: test/integration/scheduler_perf of the k8s.io/kubernetes module this program was built with)")
	flag.StringVar(&wl, "workload", "", "comma-separated test case names (default: all)")
	flag.StringVar(&o.size, "size", "smallest", "workload size per test case: smallest, a workload name, or <N>Nodes for the one nearest N nodes (500Nodes, 5000Nodes)")
	flag.StringVar(&o.output, "o", "table", "output: table or json")
	flag.DurationVar(&o.timeout, "timeout", time.Minute, "how long upstream may take to schedule one op's pods")
	flag.IntVar(&o.maxPods, "max-pods", 60000, "skip (and say so) workloads creating more pods than this")
	flag.StringVar(&o.progress, "progress", "auto", "progress bar on stderr: auto (when stderr is a terminal), on, off")
	flag.BoolVar(&o.logs, "logs", false, "keep kube-scheduler's logs (klog, on stderr)")
	flag.StringVar(&o.from, "from", "", "print the table of an earlier -o json output instead of running")
	var gates string
	flag.StringVar(&gates, "feature-gates", "", "comma-separated Gate=true|false for UP, over the workload's own (e.g. SchedulerAsyncPreemption=false)")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of SK's tie-breaking among equally scored nodes (framework.Config.Seed)")
	flag.DurationVar(&o.limit, "limit", 0, "stop each scheduler's run of a workload after this long and report what it did until then (0: no limit)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of SK's side (schedkit only, not upstream) to this file; with several workloads, to FILE.<test case>.<workload>")
	pct := flag.Int("percentage-of-nodes-to-score", -1, "percentageOfNodesToScore for both schedulers, 0-100 (100: every node; -1: the default, adaptive)")
	flag.IntVar(&upParallelism, "up-parallelism", 0, "UP's parallelism (0: its default, 16; 1 filters nodes in order, as SK does)")
	flag.Parse()
	if *pct < -1 || *pct > 100 || upParallelism < 0 {
		fmt.Fprintf(os.Stderr, "schedperf: -percentage-of-nodes-to-score %d: want -1 or 0-100; -up-parallelism %d: want >= 0\n", *pct, upParallelism)
		os.Exit(2)
	}
	nodesToScore = int32(*pct)
	if wl != "" {
		o.workloads = strings.Split(wl, ",")
	}
	var err error
	if o.gates, err = parseGates(gates); err != nil {
		fmt.Fprintln(os.Stderr, "schedperf:", err)
		os.Exit(2)
	}
	schedkitSeed = o.seed
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "schedperf:", err)
		os.Exit(1)
	}
}

// startProfile starts a CPU profile of one row's SK side into path
// (suffixed ".<test case>.<workload>" when perRow) and returns the
// function that stops it and closes the file; "" profiles nothing.
func startProfile(path string, perRow bool, r *row) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	if perRow {
		path += "." + r.TestCase + "." + r.Workload
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

func run(ctx context.Context, o options, out io.Writer) error {
	if o.output != "table" && o.output != "json" {
		return fmt.Errorf("-o %q: want table or json", o.output)
	}
	if o.from != "" {
		b, err := os.ReadFile(o.from)
		if err != nil {
			return err
		}
		var rows []row
		if err := json.Unmarshal(b, &rows); err != nil {
			return fmt.Errorf("%s: %w", o.from, err)
		}
		printTable(out, rows, "(from "+o.from+")", o.size)
		return nil
	}
	if o.logs {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("v", "4")
		_ = fs.Set("logtostderr", "true")
	} else {
		quietKlog()
	}
	dir, err := suiteLocation(o.dir)
	if err != nil {
		return err
	}
	tcs, err := loadSuite(dir)
	if err != nil {
		return err
	}
	plans, rows, err := selectRows(tcs, o)
	if err != nil {
		return err
	}
	total := 0
	for i, p := range plans {
		if p != nil && rows[i].Skipped == "" {
			total += 2 * p.Pods
		}
	}
	var bar *progressbar.ProgressBar
	if showProgress(o.progress) && total > 0 {
		bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionShowCount(),
			progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionSetWidth(30), progressbar.OptionClearOnFinish())
	}
	runs := 0
	for i, p := range plans {
		if p != nil && rows[i].Skipped == "" {
			runs++
		}
	}
	for i, p := range plans {
		r := &rows[i]
		if p == nil || r.Skipped != "" {
			continue
		}
		if bar != nil {
			bar.Describe(r.TestCase + "/" + r.Workload)
		}
		progress := func(n int) {
			if bar != nil {
				_ = bar.Add(n)
			}
		}
		// Each side starts with the previous one's heap collected and
		// returned to the OS: otherwise the runtime's background
		// scavenger returns UP's freed heap (hundreds of MB) during SK's
		// run, which a -cpuprofile of SK's side showed as a fifth of
		// its CPU (TopologySpreading 5000Nodes).
		debug.FreeOSMemory()
		r.Upstream = limited(ctx, o.limit, func(ctx context.Context) sideResult { return runUpstream(ctx, p, o.timeout, progress) })
		debug.FreeOSMemory()
		if reason := schedkitUnsupported(p); reason != "" {
			r.Schedkit.Unsupported = reason
			progress(p.Pods)
		} else {
			stop, err := startProfile(o.cpuprofile, runs > 1, r)
			if err != nil {
				return err
			}
			r.Schedkit = limited(ctx, o.limit, func(ctx context.Context) sideResult { return runSchedkit(ctx, p, progress) })
			if err := stop(); err != nil {
				return err
			}
		}
		if r.Schedkit.Unsupported == "" && r.Upstream.PodsPerSecond > 0 && r.Schedkit.PodsPerSecond > 0 {
			r.Ratio = r.Schedkit.PodsPerSecond / r.Upstream.PodsPerSecond
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if o.output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
	} else {
		printTable(out, rows, dir, o.size)
	}
	stopped := 0
	for _, r := range rows {
		if r.Upstream.Err != "" || r.Schedkit.Err != "" {
			stopped++
		}
	}
	if stopped > 0 {
		return fmt.Errorf("%d workload runs stopped with an error (see the notes)", stopped)
	}
	return nil
}

// limited runs one side under ctx, bounded by limit when it is positive;
// a run the limit stopped says so in its Err (its counts are what it did
// until then).
func limited(ctx context.Context, limit time.Duration, run func(context.Context) sideResult) sideResult {
	if limit <= 0 {
		return run(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res := run(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if res.Err == "" {
			res.Err = "the run ended"
		}
		res.Err = fmt.Sprintf("stopped by -limit %s: %s", limit, res.Err)
	}
	return res
}

// selectRows picks each selected test case's workload for o.size and
// unrolls it.
func selectRows(tcs []*testCase, o options) ([]*plan, []row, error) {
	var plans []*plan
	var rows []row
	found := map[string]bool{}
	for _, tc := range tcs {
		if len(o.workloads) > 0 && !slices.Contains(o.workloads, tc.Name) {
			continue
		}
		found[tc.Name] = true
		w, err := tc.pickWorkload(o.size)
		if err != nil {
			return nil, nil, err
		}
		r := row{File: tc.File, TestCase: tc.Name, Workload: w.Name, Nodes: tc.nodeCount(w), Pods: tc.podCount(w), ThresholdMetric: "SchedulingThroughput"}
		r.Threshold = w.Threshold.For(tc.Topic)
		if sel := w.ThresholdMetricSelector; sel != nil {
			r.ThresholdMetric = sel.Name
		} else if sel := tc.DefaultThresholdMetricSelector; sel != nil {
			r.ThresholdMetric = sel.Name
		}
		if len(o.gates) > 0 {
			r.FeatureGates = o.gates
		}
		var p *plan
		switch {
		case r.Pods > o.maxPods:
			r.Skipped = fmt.Sprintf("%d pods, above -max-pods %d", r.Pods, o.maxPods)
		case needsTestHooks(tc):
			r.Skipped = "the test registers Go hooks (WithPreRunFn/WithNodeUpdateFn in its _test.go) that change nodes; not in the YAML"
		default:
			p, err = buildPlan(tc, w)
			if err != nil {
				return nil, nil, err
			}
			r.Measured = p.Measured
			r.Skipped = p.Unrunnable
			if len(o.gates) > 0 {
				w := *p.W
				w.FeatureGates = maps.Clone(w.FeatureGates)
				if w.FeatureGates == nil {
					w.FeatureGates = map[string]bool{}
				}
				maps.Copy(w.FeatureGates, o.gates)
				p.W = &w
			}
		}
		plans = append(plans, p)
		rows = append(rows, r)
	}
	for _, name := range o.workloads {
		if !found[name] {
			return nil, nil, fmt.Errorf("-workload %s: no such test case in the suite", name)
		}
	}
	return plans, rows, nil
}

// parseGates parses -feature-gates: Gate=true|false, comma-separated;
// nil for "".
func parseGates(s string) (map[string]bool, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		b, err := strconv.ParseBool(v)
		if !ok || k == "" || err != nil {
			return nil, fmt.Errorf("-feature-gates %q: %q is not Gate=true or Gate=false", s, kv)
		}
		out[k] = b
	}
	return out, nil
}

// needsTestHooks reports whether the directory's test passes Go hooks to
// the runner, which the YAML alone does not reproduce.
func needsTestHooks(tc *testCase) bool {
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(tc.File), "*_test.go"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil && (strings.Contains(string(b), "WithPreRunFn(") || strings.Contains(string(b), "WithNodeUpdateFn(")) {
			return true
		}
	}
	return false
}

func showProgress(mode string) bool {
	switch mode {
	case "on":
		return true
	case "off":
		return false
	}
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// quietKlog sends the scheduler's logs nowhere: an unschedulable pod
// logs on every attempt.
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

// suiteLocation finds scheduler_perf in the k8s.io/kubernetes module: the
// -dir flag, else the version this binary was built with in the module
// cache, else `go list -m`.
func suiteLocation(flagDir string) (string, error) {
	if flagDir != "" {
		return flagDir, nil
	}
	var tried []string
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path != "k8s.io/kubernetes" {
				continue
			}
			if d.Replace != nil && filepath.IsAbs(d.Replace.Path) {
				dir := filepath.Join(d.Replace.Path, suiteDir)
				if isDir(dir) {
					return dir, nil
				}
				tried = append(tried, dir)
			}
			if cache := modCache(); cache != "" {
				dir := filepath.Join(cache, "k8s.io", "kubernetes@"+d.Version, suiteDir)
				if isDir(dir) {
					return dir, nil
				}
				tried = append(tried, dir)
			}
		}
	}
	b, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err == nil {
		dir := filepath.Join(strings.TrimSpace(string(b)), suiteDir)
		if isDir(dir) {
			return dir, nil
		}
		tried = append(tried, dir)
	}
	return "", fmt.Errorf("cannot find k8s.io/kubernetes's scheduler_perf (tried %s); run `go mod download k8s.io/kubernetes` in examples/kube-scheduler or pass -dir", strings.Join(tried, ", "))
}

func modCache() string {
	if c := os.Getenv("GOMODCACHE"); c != "" {
		return c
	}
	if b, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		return strings.TrimSpace(string(b))
	}
	return ""
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// printTable writes the rows with footnotes for reasons.
func printTable(out io.Writer, rows []row, dir, size string) {
	fmt.Fprintf(out, "scheduler_perf suite: %s (size %s)\n", dir, size)
	fmt.Fprintln(out, "UP = kube-scheduler v1.37.2 in process on a fake clientset; SK = schedkit framework.Loop over reserve.Ledger")
	fmt.Fprintln(out, "sched/pend: the workload's createPods pods bound / not bound at the end; pods/s over the measured (collectMetrics) pods;")
	fmt.Fprintln(out, "shape: pods-per-node histogram (pods×nodes), 'same' when equal; skew: max skew per spread topology key;")
	fmt.Fprintln(out, "anti: pods violating required anti-affinity; taint: pods on untolerated-taint or unmatched nodes;")
	fmt.Fprintln(out, "pre: pods evicted by preemption, 'same' when SK evicted exactly UP's pods")
	for _, r := range rows {
		if len(r.FeatureGates) > 0 {
			var gs []string
			for _, k := range slices.Sorted(maps.Keys(r.FeatureGates)) {
				gs = append(gs, fmt.Sprintf("%s=%t", k, r.FeatureGates[k]))
			}
			fmt.Fprintf(out, "UP feature gates (-feature-gates) on %s: %s\n", r.TestCase, strings.Join(gs, ","))
		}
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TEST CASE\tWORKLOAD\tNODES\tPODS\tMEAS\tCI-MIN\tUP sched/pend\tUP pods/s\tSK sched/pend\tSK pods/s\tSK/UP\tshape UP|SK\tskew UP|SK\tanti\ttaint\tpre\t")
	var notes []string
	note := func(s string) string {
		notes = append(notes, s)
		return fmt.Sprintf("[%d]", len(notes))
	}
	for _, r := range rows {
		thr := "-"
		if r.Threshold > 0 {
			thr = fmt.Sprintf("%.0f", r.Threshold)
			if r.ThresholdMetric != "SchedulingThroughput" {
				thr += " " + r.ThresholdMetric
			}
		}
		lead := fmt.Sprintf("%s\t%s\t%d\t%d\t%d\t%s\t", r.TestCase, r.Workload, r.Nodes, r.Pods, r.Measured, thr)
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%snot run %s\t\t\t\t\t\t\t\t\t\t\n", lead, note(r.Skipped))
			continue
		}
		up, sk := r.Upstream, r.Schedkit
		upCounts, upRate := sideCells(up, note)
		skCounts, skRate := sideCells(sk, note)
		ratio := "-"
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.1f×", r.Ratio)
		}
		shape, skew, anti, taint, pre := up.Placement.shape(3), up.Placement.skew(), fmt.Sprint(up.Placement.AntiAffinityViolations), fmt.Sprint(up.Placement.OnTaintedOrUnmatched), fmt.Sprint(up.Preempted)
		if sk.Ran && sk.Unsupported == "" {
			if slicesEqualHist(up.Placement.PodsPerNode, sk.Placement.PodsPerNode) {
				shape += "|same"
			} else {
				shape += "|" + sk.Placement.shape(3)
			}
			skew += "|" + sk.Placement.skew()
			anti += "|" + fmt.Sprint(sk.Placement.AntiAffinityViolations)
			taint += "|" + fmt.Sprint(sk.Placement.OnTaintedOrUnmatched)
			if up.Preempted > 0 && slices.Equal(up.Evicted, sk.Evicted) {
				pre += "|same"
			} else {
				pre += "|" + fmt.Sprint(sk.Preempted)
			}
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", lead, upCounts, upRate, skCounts, skRate, ratio, shape, skew, anti, taint, pre)
	}
	_ = tw.Flush()
	if len(notes) > 0 {
		fmt.Fprintln(out)
		for i, n := range notes {
			fmt.Fprintf(out, "[%d] %s\n", i+1, n)
		}
	}
}

func sideCells(s sideResult, note func(string) string) (counts, rate string) {
	switch {
	case s.Unsupported != "":
		return "unsupported " + note(s.Unsupported), "-"
	case !s.Ran:
		return "-", "-"
	}
	counts = fmt.Sprintf("%d/%d", s.Scheduled, s.Pending)
	rate = "-"
	if s.PodsPerSecond > 0 {
		rate = fmt.Sprintf("%.0f", s.PodsPerSecond)
	}
	if s.Err != "" {
		counts += " " + note("stopped: "+s.Err)
	}
	return counts, rate
}

func slicesEqualHist(a, b map[int]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
