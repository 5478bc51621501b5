// Package replay replays a cluster and a stream of pods through the
// scheduling cycle with a given set of filters and a score profile, and
// reports what happened: pods placed and unschedulable (with upstream's
// reasons), CPU, memory and GPU allocation, GPU fragmentation, nodes
// used, wall time and pods per second, where every pod went, and the
// decision of one pod explained. It is the engine of examples/simulate;
// a program of your own replays the same inputs with its own filters and
// scorers and gets the same numbers.
//
// A replay is deterministic: the same [Input], filters, profile and
// [Config.Seed] give the same [Report] (Wall aside).
//
// # Usage
//
// Build an [Input] from Nodes and Pods — [NewInput] splits and prepares
// them as examples/simulate does (package snapshot/load reads kubectl
// output; snapshottest builds objects in tests), or fill one in, with
// trace times for departures — choose filters and a profile, and call
// [Run]:
//
//	objs, err := load.Files("cluster.yaml") // kubectl get nodes,pods -A -o yaml
//	in, err := replay.NewInput(objs.Nodes, objs.Pods, false)
//	profile, err := score.NewProfile(score.Weighted{Scorer: myScorer, Weight: 1})
//	rep, err := replay.Run(ctx, in, replay.Config{
//		Filters: append(framework.DefaultFilters(), myFilter),
//		Profile: profile,
//	})
//	fmt.Println(rep.Placed, rep.Unschedulable, rep.Reasons, rep.CPU.Ratio)
//
// Each Run builds a reserve.Ledger from the Input, schedules the pods
// through a framework.Loop (one cycle per pod, as kube-scheduler does),
// binds each placed pod in the ledger as an informer would report it,
// and with [Config.Departures] removes pods at their departure times.
// The [Report] marshals to the JSON fields examples/simulate prints for a
// run.
//
// # Concurrency
//
// Run is safe to call from several goroutines, also over one Input, which
// it only reads. Each Run has its own ledger and scheduler; filters and
// profiles shared by concurrent Runs must be safe for concurrent use, as
// the built-in ones are (package score's and framework's rules for user
// plugins). [Config.Progress] is called on the Run's goroutine.
//
// # Cost
//
// A Run costs its cycles — framework.Scheduler.Schedule per arrival, O(nodes
// × filters) to filter and O(feasible nodes × scorers) to score, less
// with PercentageOfNodesToScore and the framework's equivalence cache —
// plus O(nodes + bound pods) to set up and O(nodes) to measure at the
// end. Memory is O(nodes + pods): the ledger's snapshot, one [Placement]
// and one [Sample] per pod. For millions of pods, keep them as lean
// records: an [InputBuilder] with BuildOptions.Lean takes the pods one at
// a time and keeps no pod object, and [Config.LeanPods] keeps none in the
// ledger (examples/simulate does both). [Config.Explain] makes every cycle build its
// score breakdown and adds one O(nodes × filters) pass for the explained
// pod.
//
// # Layer
//
// The top of the core module: replay may import every package below it
// (snapshot, score, gpushare, reserve, framework and internal packages); no
// core package imports it. The layers are those package schedkit's doc
// lists (the repository root's doc.go), checked by its TestLayering.
package replay
