package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // the run failed (an output file could not be written, an internal error)
	exitUsage = 2 // bad flags or input
)

// options are the parsed flags.
type options struct {
	trace, nodes, pods string
	objects            []string
	unbind             bool
	schedulerName      string   // -scheduler-name as given
	schedulerNames     []string // -scheduler-name split: pending pods of other schedulers are left alone
	policies           string
	seed               uint64
	shuffle            []uint64
	inflate            float64
	departures         bool
	strict             bool
	parallel           bool
	percentage         int
	tieBreak           string
	explain            string
	output             string
	plot               string
	placements         string
	scale              float64
	timing             bool
	preemption         bool        // -preemption (preempt.go)
	priorityMap        priorityMap // -priority-map (preempt.go)
	cpuProfile         string      // -cpuprofile (profile.go)
	memProfile         string      // -memprofile (profile.go)
}

// listFlag collects repeated or comma-separated values.
type listFlag struct{ v *[]string }

func (l listFlag) String() string {
	if l.v == nil {
		return ""
	}
	return strings.Join(*l.v, ",")
}

func (l listFlag) Set(s string) error {
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*l.v = append(*l.v, part)
		}
	}
	return nil
}

// seedsFlag parses "42", "42,45" or "42-51".
type seedsFlag struct{ v *[]uint64 }

func (s seedsFlag) String() string {
	if s.v == nil {
		return ""
	}
	parts := make([]string, len(*s.v))
	for i, x := range *s.v {
		parts[i] = strconv.FormatUint(x, 10)
	}
	return strings.Join(parts, ",")
}

func (s seedsFlag) Set(v string) error {
	*s.v = (*s.v)[:0]
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a seed (want N, N,M or N-M)", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a || b-a >= 1000 {
				return fmt.Errorf("%q is not a seed range (want N-M, N <= M, at most 1000 seeds)", part)
			}
		}
		for x := a; ; x++ {
			*s.v = append(*s.v, x)
			if x == b {
				break
			}
		}
	}
	return nil
}

// finiteFloat is a float64 flag that rejects NaN and infinities (whose
// range checks would all be false). Every float flag uses it.
type finiteFloat struct{ v *float64 }

func (f finiteFloat) String() string {
	if f.v == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.v, 'g', -1, 64)
}

func (f finiteFloat) Set(s string) error {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("%q: want a finite number", s)
	}
	*f.v = x
	return nil
}

// uint64Flag is an unsigned 64-bit flag (-seed) whose error says the
// valid range: the flag package's own says only "parse error" for -1. It
// takes what flag.Uint64Var takes (decimal, or 0x, 0o or 0b prefixed).
type uint64Flag struct{ v *uint64 }

func (f uint64Flag) String() string {
	if f.v == nil {
		return "0"
	}
	return strconv.FormatUint(*f.v, 10)
}

func (f uint64Flag) Set(s string) error {
	x, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return fmt.Errorf("%q: want an unsigned integer 0..%d", s, uint64(math.MaxUint64))
	}
	*f.v = x
	return nil
}

func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.StringVar(&o.trace, "trace", "", "openb trace `DIR` (cluster-trace-gpu-v2023 or its csv/ folder); default files: openb_node_list_all_node.csv, openb_pod_list_default.csv")
	fs.StringVar(&o.nodes, "nodes", "", "openb node list CSV `FILE` (a bare name is looked up in -trace DIR)")
	fs.StringVar(&o.pods, "pods", "", "openb pod list CSV `FILE` (a bare name is looked up in -trace DIR)")
	fs.Var(listFlag{&o.objects}, "objects", "Kubernetes Node/Pod YAML or JSON `PATH`s (files or directories; repeat, comma-separate, or list after the flags); Deployments, ReplicaSets, StatefulSets, ReplicationControllers and DaemonSets get the pods their controllers would create: all of them when none is in the input, the missing ones when some are (a DaemonSet a pod per node it runs on; a Deployment scaled in the input scales its current ReplicaSet unless a rollout is under way, which a warning says); fields k8s.io/api does not know are ignored unless -strict")
	fs.BoolVar(&o.unbind, "unbind", false, "with -objects: schedule the pods that have spec.nodeName anew instead of binding them first (static and mirror pods stay on their nodes)")
	fs.StringVar(&o.schedulerName, "scheduler-name", v1.DefaultSchedulerName, "with -objects: schedule only the pending pods whose spec.schedulerName is one of `NAMES` (comma-separated; an empty spec.schedulerName is default-scheduler, as the API server defaults it); pods of other schedulers are left unscheduled and counted, as kube-scheduler takes only pods of its profiles")
	fs.StringVar(&o.policies, "policy", "default,least,most,fgd", "comma-separated `POLICIES` to compare, or all: "+strings.Join(policyNames(), ", "))
	o.seed = 1
	fs.Var(uint64Flag{&o.seed}, "seed", "`SEED` of the synthetic workload, the cycle's tie-break, -inflate draws and the random policy")
	fs.Var(seedsFlag{&o.shuffle}, "shuffle", "shuffle arrivals with `SEEDS` (N, N,M or N-M: one run per seed, results averaged)")
	fs.Var(finiteFloat{&o.inflate}, "inflate", "repeat random arrivals until total demand reaches `RATIO` × capacity (GPU, or CPU without GPUs), e.g. 1.3; 0: off")
	fs.BoolVar(&o.departures, "departures", false, "trace input: pods leave at their deletion_time")
	fs.BoolVar(&o.strict, "strict", false, "reject a trace with malformed rows instead of skipping them, and -objects files with unknown or repeated fields (a typo such as 'resource:' for 'resources:') or objects of kinds it does not read (a Job, a Node of another apiVersion) instead of ignoring them")
	fs.BoolVar(&o.parallel, "parallel", false, "run the policies (and seeds) in parallel instead of one after another")
	fs.IntVar(&o.percentage, "percentage", -1, "percentageOfNodesToScore `N` (0-100, 0 adaptive) for every policy; -1: adaptive for Kubernetes policies, 100 for the FGD paper's")
	fs.StringVar(&o.tieBreak, "tiebreak", "", "`RULE` among nodes with the best total: random (uniform, as kube-scheduler) or order (lowest seeded node rank, as the FGD paper's simulator); default: order for the FGD paper's policies, random otherwise")
	fs.StringVar(&o.explain, "explain", "", "print the score breakdown of `POD`'s decision (name or namespace/name)")
	fs.StringVar(&o.output, "o", "table", "output `FORMAT`: table or json")
	fs.StringVar(&o.plot, "svg", "", "plot allocation vs arrived demand to `FILE` (.svg, .png or .pdf)")
	fs.StringVar(&o.placements, "placements", "", "write every placement as CSV to `FILE` (\"-\": to standard output, and the report to standard error; a named pipe: the run's end waits for its reader)")
	o.scale = 1
	fs.Var(finiteFloat{&o.scale}, "scale", "size `F` of the built-in synthetic workload (1: 1,500 nodes, 8,000 pods); the run grows as pods × nodes for the FGD paper's policies, which score every node (scale 10: minutes per policy)")
	preemptionFlags(fs, o)
	profileFlags(fs, o)
	fs.BoolVar(&o.timing, "timing", true, "report wall time and pods/s (false: output depends only on the inputs and seeds)")
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: simulate [flags] [OBJECT-PATHS...]\n\n"+
			"Replays a cluster workload through schedkit and compares scheduling policies.\n"+
			"With no input flag it runs a built-in synthetic GPU cluster.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(out, "\nPolicies:\n")
		for _, p := range policies {
			fmt.Fprintf(out, "  %-14s %s\n", p.name, p.doc)
		}
		fmt.Fprintf(out, "\nWhat-if modes (package whatif; run one with -h for its flags):\n"+
			"  simulate -fit TEMPLATE.yaml [-limit N] [-strict] -objects CLUSTER...\n"+
			"  simulate -scale-up GROUPS.yaml [-expander least-waste] [-strict] -objects CLUSTER...\n"+
			"  simulate -drain NODES|all [-greedy] [-strict] -objects CLUSTER...\n"+
			"\nExit status: 0 done; 1 the run failed (an output file could not be written);\n"+
			"2 bad flags or input (errors name the file, line, object and field).\n"+
			"(Under go run, go prints \"exit status N\" and itself exits 1.)\n")
	}
	return fs
}

// whatifOnlyFlags are the flags only the what-if modes take.
var whatifOnlyFlags = map[string]bool{"limit": true, "expander": true, "greedy": true}

// parse reads and checks the flags; errors are one-line usage errors.
func parse(args []string, stdout io.Writer) (*options, []*policyDef, error) {
	o := &options{}
	fs := newFlagSet(o)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
		}
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok && whatifOnlyFlags[name] {
			err = fmt.Errorf("%w (a what-if flag: give it with -fit, -scale-up or -drain)", err)
		}
		return nil, nil, err
	}
	for _, a := range fs.Args() {
		if strings.HasPrefix(a, "-") {
			return nil, nil, fmt.Errorf("flag %s after the object paths: put flags first", a)
		}
	}
	if fs.NArg() > 0 {
		o.objects = append(o.objects, fs.Args()...)
	}
	pols, err := lookupPolicies(o.policies)
	if err != nil {
		return nil, nil, fmt.Errorf("-policy: %w", err)
	}
	for part := range strings.SplitSeq(o.schedulerName, ",") {
		if part = strings.TrimSpace(part); part != "" {
			o.schedulerNames = append(o.schedulerNames, part)
		}
	}
	if len(o.schedulerNames) == 0 {
		return nil, nil, errors.New("-scheduler-name: no scheduler name (default: " + v1.DefaultSchedulerName + ")")
	}
	traceIn := o.trace != "" || o.nodes != "" || o.pods != ""
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// Each output path is probed once, and only once the checks before
	// its own have passed.
	plotErr := sync.OnceValue(func() error { return outPathError(o.plot) })
	placementsErr := sync.OnceValue(func() error { return outPathError(o.placements) })
	cpuProfileErr := sync.OnceValue(func() error { return outPathError(o.cpuProfile) })
	memProfileErr := sync.OnceValue(func() error { return outPathError(o.memProfile) })
	sameOuts := sync.OnceValue(func() string { return sameOutputs(o) })
	switch {
	case traceIn && len(o.objects) > 0:
		return nil, nil, errors.New("-objects cannot be combined with -trace, -nodes or -pods")
	case o.unbind && len(o.objects) == 0:
		return nil, nil, errors.New("-unbind needs -objects")
	case set["scheduler-name"] && len(o.objects) == 0:
		return nil, nil, errors.New("-scheduler-name needs -objects (trace rows name no scheduler)")
	case o.departures && !traceIn:
		return nil, nil, errors.New("-departures needs a trace (-trace or -nodes/-pods)")
	case o.departures && (len(o.shuffle) > 0 || o.inflate > 0):
		return nil, nil, errors.New("-departures replays trace times; it cannot be combined with -shuffle or -inflate")
	case o.strict && !traceIn && len(o.objects) == 0:
		return nil, nil, errors.New("-strict applies to trace input (-trace or -nodes/-pods) and -objects")
	case o.inflate < 0 || o.inflate > 100:
		return nil, nil, fmt.Errorf("-inflate %g: want a ratio in (0, 100], e.g. 1.3, or 0 (off)", o.inflate)
	case o.percentage < -1 || o.percentage > 100:
		return nil, nil, fmt.Errorf("-percentage %d: want 0-100", o.percentage)
	case o.tieBreak != "" && o.tieBreak != tieRandom && o.tieBreak != tieOrder:
		return nil, nil, fmt.Errorf("-tiebreak %q: want random or order", o.tieBreak)
	case o.output != "table" && o.output != "json":
		return nil, nil, fmt.Errorf("-o %q: want table or json", o.output)
	case o.plot != "" && !plotFormatOK(o.plot):
		return nil, nil, fmt.Errorf("-svg %s: want a .svg, .png or .pdf file name", o.plot)
	case o.plot != "" && plotErr() != nil:
		return nil, nil, fmt.Errorf("-svg %s: %w", o.plot, plotErr())
	case o.placements != "" && o.placements != "-" && placementsErr() != nil:
		return nil, nil, fmt.Errorf("-placements %s: %w", o.placements, placementsErr())
	case o.cpuProfile != "" && cpuProfileErr() != nil:
		return nil, nil, fmt.Errorf("-cpuprofile %s: %w", o.cpuProfile, cpuProfileErr())
	case o.memProfile != "" && memProfileErr() != nil:
		return nil, nil, fmt.Errorf("-memprofile %s: %w", o.memProfile, memProfileErr())
	case sameOuts() != "":
		return nil, nil, errors.New(sameOuts())
	case set["scale"] && (traceIn || len(o.objects) > 0):
		return nil, nil, errors.New("-scale applies to the built-in synthetic workload only")
	case o.scale <= 0 || o.scale > 100:
		return nil, nil, fmt.Errorf("-scale %g: want (0, 100]", o.scale)
	case o.priorityMap != nil && !traceIn:
		return nil, nil, errors.New("-priority-map applies to trace input (-trace or -nodes/-pods); -objects pods carry spec.priority or spec.priorityClassName")
	case o.priorityMap != nil && !o.preemption:
		return nil, nil, errors.New("-priority-map needs -preemption (trace pods arrive one by one, so priorities matter only to preemption)")
	}
	return o, pols, nil
}

// run is the program: it parses args, loads the input, replays every
// policy and writes the report to stdout; diagnostics go to stderr. It
// returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	o, pols, err := parse(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v (see -h)\n", err)
		return exitUsage
	}
	stop, err := startProfiles(o)
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return exitError
	}
	err = simulate(context.Background(), o, pols, stdout, stderr)
	if perr := stop(); err == nil && perr != nil {
		err = perr
	}
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %s\n", oneLine(err))
		if errors.Is(err, errInput) {
			return exitUsage
		}
		return exitError
	}
	return exitOK
}

// oneLine strips the errInput prefix and joins lines. A line whose
// `Invalid value: "...": <rule>` repeats an earlier line's rule (the
// RFC 1123 name rule with its regex, for every badly named pod) gives
// the rule once: later lines say "(as above)".
func oneLine(err error) string {
	lines := strings.Split(strings.TrimPrefix(err.Error(), errInput.Error()+": "), "\n")
	seen := map[string]bool{}
	for i, l := range lines {
		m := invalidValue.FindStringSubmatchIndex(l)
		if m == nil {
			continue
		}
		if rule := l[m[2]:]; seen[rule] {
			lines[i] = l[:m[2]] + "(as above)"
		} else {
			seen[rule] = true
		}
	}
	return strings.Join(lines, "; ")
}

// invalidValue finds field.Invalid's `Invalid value: "...": ` and the
// rule after it (submatch 1, to the end of the line).
var invalidValue = regexp.MustCompile(`Invalid value: "(?:[^"\\]|\\.)*": (.+)$`)

// loadInput reads the input the flags name.
func loadInput(o *options) (*cluster, error) {
	switch {
	case len(o.objects) > 0:
		return loadObjects(o.objects, o.unbind, o.strict, o.schedulerNames)
	case o.trace != "" || o.nodes != "" || o.pods != "":
		nodes, pods, err := traceFiles(o.trace, o.nodes, o.pods)
		if err != nil {
			return nil, err
		}
		return loadTrace(nodes, pods, o.strict, o.priorityMap)
	default:
		return loadSynthetic(o.seed, o.scale)
	}
}

func simulate(ctx context.Context, o *options, pols []*policyDef, stdout, stderr io.Writer) error {
	c, err := loadInput(o)
	if err != nil {
		return err
	}
	for _, w := range c.warnings {
		fmt.Fprintf(stderr, "simulate: %s\n", w)
	}
	for i, e := range c.skipped {
		if i == 20 {
			fmt.Fprintf(stderr, "simulate: ... and %d more malformed rows skipped\n", len(c.skipped)-20)
			break
		}
		fmt.Fprintf(stderr, "simulate: skipped %v\n", e)
	}
	if o.departures && !c.hasTimes {
		return inputErr("-departures: the pod list has no creation_time for every row")
	}
	if o.inflate > 0 && c.capacity() == 0 {
		return inputErr("-inflate: the cluster has no capacity to inflate against")
	}
	if o.explain != "" {
		switch keys := c.podsNamed(o.explain); {
		case len(keys) == 0:
			switch bound := c.boundNamed(o.explain); {
			case len(bound) > 1:
				keys := make([]string, 0, min(len(bound), 10))
				for _, p := range bound[:cap(keys)] {
					keys = append(keys, p.Namespace+"/"+p.Name)
				}
				return inputErr("-explain %s: no pod to schedule has that name, and %d bound pods do (%s)", o.explain, len(bound), strings.Join(keys, ", "))
			case len(bound) == 1 && o.unbind:
				return inputErr("-explain %s: pod %s/%s stays bound to node %s: a static or mirror pod, which the kubelet runs on its node and no scheduler places, -unbind included", o.explain, bound[0].Namespace, bound[0].Name, bound[0].Spec.NodeName)
			case len(bound) == 1:
				return inputErr("-explain %s: pod %s/%s is bound to node %s in the input (spec.nodeName), so the run does not schedule it; -unbind schedules bound pods anew, except static and mirror pods", o.explain, bound[0].Namespace, bound[0].Name, bound[0].Spec.NodeName)
			}
			return inputErr("-explain %s: no such pod to schedule in the input", o.explain)
		case len(keys) > 1:
			return inputErr("-explain %s: ambiguous, %d pods to schedule have that name (%s): give namespace/name", o.explain, len(keys), strings.Join(keys[:min(len(keys), 10)], ", "))
		}
	}

	specs := buildSpecs(o, pols)
	results := make([]*runResult, len(specs))
	prog := startProgress(stderr, int64(len(specs)*len(c.pods))) // each run corrects its share
	errs := make([]error, len(specs))
	workers := 1
	if o.parallel {
		workers = runtime.GOMAXPROCS(0)
	}
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := range specs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i], errs[i] = c.replay(ctx, specs[i], prog)
		}()
	}
	wg.Wait()
	prog.close()
	if err := joinDistinct(errs); err != nil {
		return err
	}

	rep := &report{Input: c.source, Nodes: len(c.nodes), Bound: len(c.bound), Pods: len(c.pods), Axis: "CPU",
		Capacity: c.capacity(), timing: o.timing, Preemption: o.preemption, OtherScheduler: c.otherScheduler,
		Terminal: c.terminal, Expanded: expansions(c.expanded)}
	if c.otherScheduler > 0 {
		rep.SchedulerNames = o.schedulerNames
	}
	if c.hasGPU() {
		rep.Axis = "GPU"
	}
	rep.Order = arrivalOrder(o, c)
	for _, e := range c.skipped {
		rep.Skipped = append(rep.Skipped, e.Error())
	}
	for _, w := range c.warnings {
		rep.Warnings = append(rep.Warnings, strings.TrimPrefix(w, "warning: "))
	}
	rep.Summaries = summarize(pols, results, o.timing, o.preemption)
	// A file that cannot be written (the disk filled up during the run)
	// does not cost the report: it is written all the same, and the
	// errors are returned after it.
	var fileErrs []error
	if o.placements == "-" {
		// stdout carries the CSV alone, so that it can be piped.
		if err := placementsCSV(stdout, results); err != nil {
			return err
		}
		stdout = stderr
	} else if o.placements != "" {
		fileErrs = append(fileErrs, writePlacements(o.placements, results))
	}
	if o.plot != "" {
		fileErrs = append(fileErrs, writePlot(o.plot, rep))
	}
	write := rep.writeTable
	if o.output == "json" {
		write = rep.writeJSON
	}
	return errors.Join(append(fileErrs, write(stdout))...)
}

// buildSpecs makes one run per policy and shuffle seed.
func buildSpecs(o *options, pols []*policyDef) []*runSpec {
	seeds, shuffled := o.shuffle, true
	if len(seeds) == 0 {
		seeds, shuffled = []uint64{o.seed}, false
	}
	var specs []*runSpec
	for _, p := range pols {
		pct := int32(o.percentage)
		if pct < 0 {
			pct = 0
			if p.gpu {
				pct = 100
			}
		}
		tie := p.tie
		if o.tieBreak != "" && !p.fixed {
			tie = o.tieBreak
		}
		for _, s := range seeds {
			specs = append(specs, &runSpec{policy: p, seed: s, shuffled: shuffled, inflate: o.inflate,
				departures: o.departures, percentage: pct, tieBreak: tie, explain: o.explain, preemption: o.preemption})
		}
	}
	return specs
}

func arrivalOrder(o *options, c *cluster) string {
	var parts []string
	switch {
	case len(o.shuffle) > 0:
		parts = append(parts, fmt.Sprintf("shuffled with seed(s) %s", seedsFlag{&o.shuffle}.String()))
	case c.batch:
		parts = append(parts, "queued at once, priority order")
	case c.hasTimes:
		parts = append(parts, "creation_time order")
	default:
		parts = append(parts, "input order")
	}
	if o.inflate > 0 {
		parts = append(parts, fmt.Sprintf("inflated to %g× capacity", o.inflate))
	}
	if o.departures {
		parts = append(parts, "with departures")
	}
	return strings.Join(parts, ", ")
}

// podsNamed returns the distinct keys (namespace/name) of the pods to
// schedule that name ("ns/name" or "name") names, as replay.Config.Explain
// matches them.
func (c *cluster) podsNamed(name string) []string {
	var keys []string
	for _, pi := range c.pods {
		if k := pi.Key(); (name == k.Name || name == k.String()) && !slices.Contains(keys, k.String()) {
			keys = append(keys, k.String())
		}
	}
	return keys
}

// boundNamed returns every pod bound before the replay whose name or
// namespace/name is name.
func (c *cluster) boundNamed(name string) []*v1.Pod {
	var pods []*v1.Pod
	for _, p := range c.bound {
		if name == p.Name || name == p.Namespace+"/"+p.Name {
			pods = append(pods, p)
		}
	}
	return pods
}

// writePlacements writes policy, seed, pod, node, devices, prebound rows
// to the file at path (placementsCSV).
func writePlacements(path string, results []*runResult) (err error) {
	f, err := createOut(path)
	if err != nil {
		return fmt.Errorf("-placements: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("-placements: %w", cerr)
		}
	}()
	return placementsCSV(f, results)
}

// placementsCSV writes the -placements CSV to out.
func placementsCSV(out io.Writer, results []*runResult) error {
	w := csv.NewWriter(out)
	_ = w.Write([]string{"policy", "seed", "pod", "node", "devices", "prebound"})
	for _, r := range results {
		for _, p := range r.Placements {
			devs := make([]string, len(p.Devices))
			for i, d := range p.Devices {
				devs[i] = strconv.Itoa(d)
			}
			_ = w.Write([]string{r.Policy, strconv.FormatUint(r.Seed, 10), p.Pod, p.Node, strings.Join(devs, " "), strconv.FormatBool(p.Bound)})
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("-placements: %w", err)
	}
	return nil
}

// createOut opens path for writing as a shell's "> path" does: created
// if missing, emptied if a file, and write-only. os.Create opens read-
// write, which on a named pipe does not wait for a reader: the run wrote
// into the pipe and closed it, and what a reader not yet there would have
// read was gone, and it then waited forever. Write-only, the open waits
// for the reader.
func createOut(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
}

// outPathError says why a file cannot be written at path (-svg,
// -placements, -cpuprofile, -memprofile), so that the path is checked
// before a long run rather than after it: it ends in a slash or is a
// folder, its folder does not exist or is not a folder, or opening it for
// writing fails (probeWrite).
// Nil when none of these holds (a file that exists is replaced).
func outPathError(path string) error {
	fi, statErr := os.Stat(path)
	switch {
	case statErr == nil && fi.IsDir():
		return errors.New("is a folder; want a file name")
	case strings.HasSuffix(path, string(filepath.Separator)):
		return errors.New("ends in a slash; want a file name")
	case statErr == nil && !fi.Mode().IsRegular():
		// A named pipe or a device (/dev/null): opening it to check
		// would block on a pipe without a reader, or end the stream of
		// one with a reader before the run writes it.
		return nil
	}
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("folder %s does not exist", dir)
	case err == nil && !di.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	}
	return probeWrite(path, errors.Is(statErr, fs.ErrNotExist))
}

// probeWrite opens path (a regular file, or nothing yet: missing) for
// writing without truncating it, as the run will at its end, and removes
// the file again if it made it: what the checks by name miss (no
// permission, a dangling link, a name too long, "file/../x") fails here,
// before the run. The error is the system's.
func probeWrite(path string, missing bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666) // createOut's, without emptying the file
	if err != nil {
		return pathErrCause(err)
	}
	made := ""
	if missing {
		made, _ = filepath.EvalSymlinks(path) // the file a link led to
	}
	if err := f.Close(); err != nil {
		return err
	}
	if made != "" {
		_ = os.Remove(made)
	}
	return nil
}

// pathErrCause is the system's part of err ("no such file or directory")
// when err is an *fs.PathError, whose text repeats the operation and the
// path; err itself otherwise.
func pathErrCause(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// sameFile reports whether paths a and b name one file: the same file
// by its identity when both exist, else the same path once the links
// that exist along them are followed (resolvePath).
// sameOutputs names two output flags that name one file ("-svg and
// -placements name the same file, PATH"), or returns "": each would
// overwrite the other's output.
func sameOutputs(o *options) string {
	outs := []struct{ flag, path string }{{"-svg", o.plot}, {"-placements", o.placements}, {"-cpuprofile", o.cpuProfile}, {"-memprofile", o.memProfile}}
	for i, a := range outs {
		for _, b := range outs[i+1:] {
			if a.path != "" && a.path != "-" && b.path != "" && b.path != "-" && sameFile(a.path, b.path) {
				return fmt.Sprintf("%s and %s name the same file, %s", a.flag, b.flag, a.path)
			}
		}
	}
	return ""
}

func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	return resolvePath(a) == resolvePath(b)
}

// resolvePath is path made absolute with the links along it followed:
// all of them when it exists, else its link (a dangling one) or its
// folder's.
func resolvePath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	if t, err := os.Readlink(abs); err == nil {
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(abs), t)
		}
		return filepath.Clean(t)
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(d, filepath.Base(abs))
	}
	return abs
}

// joinDistinct joins the non-nil errors of errs, each message once: runs
// of several policies over one input often fail the same way.
func joinDistinct(errs []error) error {
	seen := map[string]bool{}
	var out []error
	for _, e := range errs {
		if e != nil && !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return errors.Join(out...)
}
