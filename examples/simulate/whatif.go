package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/internal/objects"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load"
	"github.com/schedkit/schedkit/whatif"
)

// The what-if modes (package whatif) over -objects inputs:
//
//	simulate -fit TEMPLATE.yaml [-limit N] [-strict] -objects CLUSTER...
//	simulate -scale-up GROUPS.yaml [-expander least-waste] [-strict] -objects CLUSTER...
//	simulate -drain NODES|all [-greedy] [-strict] -objects CLUSTER...
//
// The cluster is the Nodes and the bound Pods (spec.nodeName set) of the
// -objects paths; -scale-up's pending pods are its Pods without
// spec.nodeName and its groups the Nodes of GROUPS.yaml (the group's name
// is the Node's name; the annotations whatif.schedkit.io/max-nodes and
// whatif.schedkit.io/priority set NodeGroup.MaxNodes, default 100, and
// Priority). -o json prints the answer as JSON. Fields k8s.io/api does
// not know or that are given twice, and objects these modes do not read
// (in GROUPS.yaml, any but a Node), in any of these files are warnings
// on stderr, or errors with -strict.
const (
	maxNodesAnnotation = "whatif.schedkit.io/max-nodes"
	priorityAnnotation = "whatif.schedkit.io/priority"
)

// whatifOptions are the what-if modes' flags.
type whatifOptions struct {
	fit, scaleUp, drain string
	limit               int
	greedy, strict      bool
	expander            string
	seed                uint64
	output              string
	objects             []string
}

// isWhatif reports whether args ask for a what-if mode.
func isWhatif(args []string) bool {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "fit" || name == "scale-up" || name == "drain") {
			return true
		}
	}
	return false
}

// runWhatif is the what-if program: it returns the exit status.
func runWhatif(args []string, stdout, stderr io.Writer) int {
	o := whatifOptions{}
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.fit, "fit", "", "how many copies of the Pod in `TEMPLATE` (YAML or JSON) fit the -objects cluster")
	fs.IntVar(&o.limit, "limit", 1000, "with -fit: the most copies `N` to place")
	fs.StringVar(&o.scaleUp, "scale-up", "", "estimate the nodes of each group in `GROUPS` (Node templates) that the -objects pending pods need; each Node is a group named by metadata.name, its size from status.allocatable (and status.capacity, which least-waste prefers), annotations "+maxNodesAnnotation+" (nodes it may add, default 100) and "+priorityAnnotation+" (rank for -expander priority, default 0)")
	fs.StringVar(&o.expander, "expander", "least-waste", "with -scale-up: `EXPANDER` least-waste, most-pods, priority or random")
	fs.StringVar(&o.drain, "drain", "", "can the comma-separated `NODES` (or all) be drained, each alone; PodDisruptionBudgets allow status.disruptionsAllowed evictions, as the cluster autoscaler (a PDB without status allows 0)")
	fs.BoolVar(&o.greedy, "greedy", false, "with -drain: the largest removable subset, greedily, in the order given")
	o.seed = 1
	fs.Var(uint64Flag{&o.seed}, "seed", "`SEED` of the scheduler's and the expander's tie-breaks")
	fs.StringVar(&o.output, "o", "table", "output `FORMAT`: table or json")
	fs.BoolVar(&o.strict, "strict", false, "reject fields k8s.io/api does not know or given twice (a typo such as 'resource:' for 'resources:') and objects the what-if modes do not read, in -objects and in the -fit or -scale-up file, instead of ignoring them with a warning")
	fs.Var(listFlag{&o.objects}, "objects", "Kubernetes YAML or JSON `PATH`s: Nodes, Pods and the objects the scheduler and drain rules read (Namespaces, Services, ReplicaSets, StatefulSets, ReplicationControllers, PriorityClasses, PodDisruptionBudgets)")
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: simulate -fit TEMPLATE.yaml | -scale-up GROUPS.yaml | -drain NODES|all [flags] -objects CLUSTER...\n\n"+
			"Answers one what-if question about a cluster (package whatif).\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(out, "\nExit status: 0 answered (an answer may be \"no\": 0 copies fit, a node cannot be drained);\n"+
			"1 the answer could not be written; 2 bad flags or input (errors name the file, line, object and field).\n"+
			"(Under go run, go prints \"exit status N\" and itself exits 1.)\n")
	}
	// "-fit -h" would make "-h" the template's path: a help flag anywhere
	// asks for help.
	for _, a := range args {
		if a == "-h" || a == "--h" || a == "-help" || a == "--help" {
			fs.Usage()
			return exitOK
		}
	}
	fs.SetOutput(io.Discard) // a parse error is one line, as in the replay mode
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fs.Usage()
			return exitOK
		}
		return whatifUsage(stderr, err.Error())
	}
	o.objects = append(o.objects, fs.Args()...)
	var modes []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "fit" || f.Name == "scale-up" || f.Name == "drain" {
			modes = append(modes, "-"+f.Name)
		}
	})
	switch {
	case len(modes) > 1:
		return whatifUsage(stderr, "give one of -fit, -scale-up, -drain, not "+strings.Join(modes, " and "))
	case len(modes) == 0:
		return whatifUsage(stderr, "give one of -fit, -scale-up, -drain")
	case o.fit == "" && o.scaleUp == "" && o.drain == "":
		return whatifUsage(stderr, modes[0]+" is empty: "+map[string]string{
			"-fit": "give the Pod template's file", "-scale-up": "give the node groups' file", "-drain": "give node names or all"}[modes[0]])
	case len(o.objects) == 0:
		return whatifUsage(stderr, "the what-if modes need -objects")
	case o.output != "table" && o.output != "json":
		return whatifUsage(stderr, fmt.Sprintf("-o %q: want table or json", o.output))
	case o.limit < 0:
		return whatifUsage(stderr, fmt.Sprintf("-limit %d: want >= 0", o.limit))
	}
	objs, err := loadWhatifFiles(o.objects, o.strict, stderr)
	if err != nil {
		return whatifUsage(stderr, err.Error())
	}
	var bound, pending []*v1.Pod
	for _, p := range objs.Pods {
		if p.Spec.NodeName != "" {
			bound = append(bound, p)
		} else {
			pending = append(pending, p)
		}
	}
	cache := snapshot.NewCacheWithDevices(openb.Devices)
	for _, n := range objs.Nodes {
		if err := cache.AddNode(n); err != nil {
			return whatifUsage(stderr, err.Error())
		}
	}
	for _, p := range bound {
		if err := cache.AddPod(p); err != nil {
			return whatifUsage(stderr, err.Error())
		}
	}
	// Namespaces, Services, controllers, PriorityClasses and PDBs: the
	// default profile's spreading and affinity and the drain's PDB rule
	// read them from the cluster.
	for _, obj := range objs.Others {
		if err := cache.AddObject(obj); err != nil {
			return whatifUsage(stderr, err.Error())
		}
	}
	f := cache.Snapshot().Fork()
	cfg := framework.Config{Seed: o.seed}
	var answer any
	var table func(io.Writer)
	switch {
	case o.fit != "":
		t, err := loadWhatifFiles([]string{o.fit}, o.strict, stderr)
		if err != nil {
			return whatifUsage(stderr, fmt.Sprintf("-fit %s: %v", o.fit, err))
		}
		if len(t.Pods) != 1 {
			return whatifUsage(stderr, fmt.Sprintf("-fit %s: want exactly one Pod, the file has %d Pods, %d Nodes and %d other objects", o.fit, len(t.Pods), len(t.Nodes), len(t.Others)))
		}
		res, err := whatif.FitCount(f, t.Pods[0], o.limit, cfg)
		if err != nil {
			return whatifUsage(stderr, err.Error())
		}
		answer, table = fitJSON(res, o.limit), func(w io.Writer) { fitTable(w, res, o.limit) }
	case o.scaleUp != "":
		groups, err := loadGroups(o.scaleUp, o.strict, stderr)
		if err != nil {
			return whatifUsage(stderr, err.Error())
		}
		exp, err := parseExpander(o.expander)
		if err != nil {
			return whatifUsage(stderr, err.Error())
		}
		res, err := whatif.ScaleUp(f, pending, groups, whatif.ScaleUpConfig{Scheduler: cfg, Expander: exp, Seed: o.seed})
		if err != nil {
			return whatifUsage(stderr, err.Error())
		}
		answer, table = scaleUpJSON(res), func(w io.Writer) { scaleUpTable(w, res) }
	default:
		var names []string
		if o.drain == "all" {
			for _, n := range objs.Nodes {
				names = append(names, n.Name)
			}
		} else {
			_ = listFlag{&names}.Set(o.drain)
		}
		ask := whatif.Drain
		if o.greedy {
			ask = whatif.RemovableNodes
		}
		res, err := ask(f, names, nil, cfg)
		if err != nil {
			return whatifUsage(stderr, err.Error())
		}
		answer, table = drainJSON(res), func(w io.Writer) { drainTable(w, res) }
	}
	if o.output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(answer); err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return exitError
		}
		return exitOK
	}
	// Rendered first and written at once, so that a failed write (a full
	// disk) is seen and exits 1, as with -o json. (A closed pipe on
	// standard output ends the program with SIGPIPE, as for any Go
	// program.)
	var b bytes.Buffer
	table(&b)
	if _, err := stdout.Write(b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return exitError
	}
	return exitOK
}

func whatifUsage(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "simulate: %s (see -h)\n", msg)
	return exitUsage
}

func parseExpander(s string) (whatif.Expander, error) {
	for e := whatif.ExpanderLeastWaste; e <= whatif.ExpanderRandom; e++ {
		if e.String() == s {
			return e, nil
		}
	}
	return 0, fmt.Errorf("-expander %q: want least-waste, most-pods, priority or random", s)
}

// loadWhatifFiles is loadInputFiles that prints its warnings to stderr.
func loadWhatifFiles(paths []string, strict bool, stderr io.Writer) (load.Objects, error) {
	objs, warnings, err := loadInputFiles(paths, strict, false)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "simulate: %s\n", w)
	}
	return objs, err
}

// loadGroups reads node-group templates: one group per Node; strict and
// stderr are loadWhatifFiles'. An object of the file that is not a Node
// (a Pod, a Service) is, as an object of a kind the modes do not read, an
// error with strict and a warning on stderr without it (notNodes).
func loadGroups(path string, strict bool, stderr io.Writer) ([]whatif.NodeGroup, error) {
	objs, err := loadWhatifFiles([]string{path}, strict, stderr)
	if err != nil {
		return nil, fmt.Errorf("-scale-up %s: %w", path, err)
	}
	switch what, n := notNodes(objs); {
	case n > 0 && strict:
		return nil, fmt.Errorf("-scale-up %s: %s (a groups file holds one Node per group)", path, what)
	case n == 1:
		fmt.Fprintf(stderr, "simulate: warning: -scale-up %s: %s (ignored; -strict rejects it)\n", path, what)
	case n > 1:
		fmt.Fprintf(stderr, "simulate: warning: -scale-up %s: %s (ignored; -strict rejects them)\n", path, what)
	}
	if len(objs.Nodes) == 0 {
		return nil, fmt.Errorf("-scale-up %s: no Node templates", path)
	}
	var groups []whatif.NodeGroup
	for _, n := range objs.Nodes {
		g := whatif.NodeGroup{Name: n.Name, Template: n, MaxNodes: 100}
		for key, dst := range map[string]*int{maxNodesAnnotation: &g.MaxNodes, priorityAnnotation: &g.Priority} {
			if v, ok := n.Annotations[key]; ok {
				x, err := strconv.Atoi(v)
				if err != nil {
					return nil, fmt.Errorf("-scale-up %s: Node %s: metadata.annotations[%s] %q is not an integer", path, n.Name, key, v)
				}
				*dst = x
			}
		}
		groups = append(groups, g)
	}
	return groups, nil
}

// notNodes names the objects of objs that are not Nodes, Pods first
// (`Pod "default/web" is not a Node template`, or `3 objects are not
// Node templates: ...`, the first five named), and counts them; "" and
// 0 when every object is a Node. O(objects).
func notNodes(objs load.Objects) (string, int) {
	var names []string
	for _, p := range objs.Pods {
		names = append(names, "Pod "+strconv.Quote(p.Namespace+"/"+p.Name))
	}
	for _, o := range objs.Others {
		k, err := objects.Identify(o)
		if err != nil {
			names = append(names, fmt.Sprintf("an object of type %T", o))
			continue
		}
		name := k.Name
		if k.Kind.Namespaced() {
			name = k.Namespace + "/" + k.Name
		}
		names = append(names, k.Kind.String()+" "+strconv.Quote(name))
	}
	switch n := len(names); {
	case n == 0:
		return "", 0
	case n == 1:
		return names[0] + " is not a Node template", 1
	case n > 5:
		return fmt.Sprintf("%d objects are not Node templates: %s and %d more", n, strings.Join(names[:5], ", "), n-5), n
	default:
		return fmt.Sprintf("%d objects are not Node templates: %s", n, strings.Join(names, ", ")), n
	}
}

// placementJSON is a Placement for -o json.
type placementJSON struct {
	Pod  string `json:"pod"`
	Node string `json:"node,omitempty"`
	Why  string `json:"why,omitempty"`
}

func placementsJSON(ps []whatif.Placement) []placementJSON {
	out := make([]placementJSON, 0, len(ps))
	for _, p := range ps {
		j := placementJSON{Pod: p.Pod.Key().String(), Node: p.Node, Why: p.Why}
		if p.Diagnosis != nil {
			j.Why = p.Diagnosis.Message()
		}
		out = append(out, j)
	}
	return out
}

// fitJSON is -fit's -o json answer; limitReached says -limit stopped the
// count (more copies may fit).
func fitJSON(r whatif.FitResult, limit int) any {
	next := ""
	if r.Next != nil {
		next = r.Next.Message()
	}
	return struct {
		Count        int             `json:"count"`
		LimitReached bool            `json:"limitReached,omitempty"`
		Placements   []placementJSON `json:"placements"`
		Next         string          `json:"next,omitempty"`
	}{r.Count, limitReached(r, limit), placementsJSON(r.Placements), next}
}

// limitReached reports whether the count stopped at -limit (whatif's
// Next is nil then) rather than at a copy that does not fit.
func limitReached(r whatif.FitResult, limit int) bool { return r.Next == nil && r.Count == limit }

func fitTable(w io.Writer, r whatif.FitResult, limit int) {
	if limitReached(r, limit) {
		fmt.Fprintf(w, "%d copies fit (stopped at -limit %d: more may fit; raise -limit to count them)\n", r.Count, limit)
	} else {
		fmt.Fprintf(w, "%d copies fit\n", r.Count)
	}
	perNode := map[string]int{}
	var order []string
	for _, p := range r.Placements {
		if perNode[p.Node] == 0 {
			order = append(order, p.Node)
		}
		perNode[p.Node]++
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tCOPIES")
	for _, n := range order {
		fmt.Fprintf(tw, "%s\t%d\n", n, perNode[n])
	}
	_ = tw.Flush()
	if r.Next != nil {
		fmt.Fprintf(w, "next copy: %s\n", r.Next.Message())
	}
}

func scaleUpJSON(r whatif.ScaleUpResult) any {
	type group struct {
		Group      string          `json:"group"`
		NodesAdded int             `json:"nodesAdded"`
		Waste      float64         `json:"waste"`
		Placed     []placementJSON `json:"placed"`
		Pending    []placementJSON `json:"pending"`
	}
	out := struct {
		Existing []placementJSON `json:"existing"`
		Groups   []group         `json:"groups"`
		Chosen   string          `json:"chosen,omitempty"`
		Why      string          `json:"why"`
	}{Existing: placementsJSON(r.Existing), Why: r.Why}
	for _, g := range r.Groups {
		out.Groups = append(out.Groups, group{g.Group, g.NodesAdded, g.Waste, placementsJSON(g.Placed), placementsJSON(g.Pending)})
	}
	if r.Chosen >= 0 {
		out.Chosen = r.Groups[r.Chosen].Group
	}
	return out
}

func scaleUpTable(w io.Writer, r whatif.ScaleUpResult) {
	fmt.Fprintf(w, "%s fit existing nodes\n", count(len(r.Existing), "pending pod"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tNODES\tPLACED\tPENDING\tWASTE")
	for _, g := range r.Groups {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.3f\n", g.Group, g.NodesAdded, len(g.Placed), len(g.Pending), g.Waste)
	}
	_ = tw.Flush()
	fmt.Fprintln(w, r.Why)
	if r.Chosen >= 0 {
		for _, p := range r.Groups[r.Chosen].Pending {
			fmt.Fprintf(w, "pending: %s\n", p)
		}
	}
}

func drainJSON(ds []whatif.NodeDrain) any {
	type node struct {
		Node        string          `json:"node"`
		Removable   bool            `json:"removable"`
		Risky       bool            `json:"risky,omitempty"`
		Block       string          `json:"block,omitempty"`
		BlockingPod string          `json:"blockingPod,omitempty"`
		Moved       []placementJSON `json:"moved"`
	}
	out := make([]node, 0, len(ds))
	for _, d := range ds {
		n := node{Node: d.Node, Removable: d.Removable, Risky: d.Risky, Block: string(d.Block), Moved: placementsJSON(d.Moved)}
		if d.BlockingPod != nil {
			n.BlockingPod = d.BlockingPod.Namespace + "/" + d.BlockingPod.Name
		}
		out = append(out, n)
	}
	return out
}

func drainTable(w io.Writer, ds []whatif.NodeDrain) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tREMOVABLE\tBLOCK\tPOD\tMOVED")
	for _, d := range ds {
		pod := ""
		if d.BlockingPod != nil {
			pod = d.BlockingPod.Namespace + "/" + d.BlockingPod.Name
		}
		var moved []string
		for _, m := range d.Moved {
			if m.Node != "" {
				moved = append(moved, m.Pod.Key().Name+"->"+m.Node)
			}
		}
		removable := fmt.Sprint(d.Removable)
		if d.Risky {
			removable += " (risky)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Node, removable, d.Block, pod, strings.Join(moved, " "))
	}
	_ = tw.Flush()
}
