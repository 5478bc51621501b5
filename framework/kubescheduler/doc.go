// Package kubescheduler plugs schedkit into the real kube-scheduler: it
// adapts schedkit scorers, filters and the reservation ledger to the
// k8s.io/kube-scheduler/framework plugin interfaces (v0.37, kube-scheduler
// v1.37). The adapters only convert types and map outcomes to *fwk.Status
// codes; all logic lives in the core packages and is tested there, and
// examples/kube-scheduler proves the results identical to upstream's own
// plugins.
//
// This module requires k8s.io/kube-scheduler, never k8s.io/kubernetes, so
// importing it needs no replace directives.
//
// # Usage: schedkit's own plugins
//
// Three plugins are ready to register. Each has a Name constant and a
// factory named after it, with upstream's PluginFactory signature, for
// kube-scheduler's app.WithPlugin:
//
//	cmd := app.NewSchedulerCommand(
//		app.WithPlugin(kubescheduler.ScoreName, kubescheduler.NewSchedkitScore),     // SchedkitScore: a built-in scorer, ScoreArgs
//		app.WithPlugin(kubescheduler.FitName, kubescheduler.NewSchedkitFit),         // SchedkitNodeResourcesFit: schedkit's fit filter, FitArgs
//		app.WithPlugin(kubescheduler.ReserveName, kubescheduler.NewSchedkitReserve), // SchedkitReserve: the reservation ledger
//	)
//
// and a KubeSchedulerConfiguration profile enables them and passes their
// args. multiPoint registers each plugin at every extension point it
// implements; listing a score plugin under score alone, without preScore,
// works but prepares the scorer on every Score call (slow, allocating):
//
//	profiles:
//	- schedulerName: schedkit
//	  plugins:
//	    multiPoint:
//	      enabled: [{name: SchedkitScore, weight: 2}, {name: SchedkitReserve}]
//	    # or, point by point:
//	    # preScore: {enabled: [{name: SchedkitScore}]}
//	    # score:    {enabled: [{name: SchedkitScore, weight: 2}]}
//	    # reserve:  {enabled: [{name: SchedkitReserve}]}
//	    # postBind: {enabled: [{name: SchedkitReserve}]}
//	  pluginConfig:
//	  - name: SchedkitScore
//	    args: {scorer: DominantResource, resources: [{name: cpu}, {name: memory}, {name: nvidia.com/gpu, weight: 4}]}
//
// [SchedkitScoreFactory] registers more built-in scorers under other names.
// Args are decoded strictly: an unknown or misspelled field, a wrong type or
// a value out of range is an error wrapping [ErrInvalidArgs] that names the
// plugin and the field, and the scheduler refuses to start.
//
// # Usage: your own plugins
//
// Write the logic as a schedkit [score.Scorer], [framework.Filter] or a
// [reserve.Ledger] of your own, unit-test it without a cluster (package
// snapshot/snapshottest builds nodes and pods), and wrap it in your
// plugin's factory:
//
//   - [WrapScorer](name, scorer, h): a PreScore + Score (+ NormalizeScore)
//     plugin;
//   - [WrapFilter](name, filter, h): a PreFilter + Filter plugin;
//   - [WrapLedger](name, ledger, h): a Reserve + PostBind plugin over your
//     ledger.
//
// Decode your args with [DecodeArgs] (strict, as schedkit's own). A
// plugin needing more (its own Reserve/Unreserve bookkeeping, say) embeds
// the wrapped plugin and adds the methods. Upstream's opportunistic
// batching reuses a pod's results for pods with the same signature; a
// wrapped scorer or filter takes part only if it declares the pod fields it
// reads ([PodSigner]), and otherwise switches batching off for the
// profile's pods — always correct. examples/kube-scheduler/myscheduler in
// the repository is a complete example: a Score plugin, a capacity rule,
// their tests, a simulation, the binary, its config and manifests.
//
// # Where a capacity rule belongs
//
// In a Filter. kube-scheduler treats a Reserve failure as a failure on the
// one node it chose: the pod goes back to the queue and the next attempt,
// with the same scores, usually picks the same node, so a pod refused at
// Reserve can stay pending beside empty nodes. A Filter removes the node
// before scoring, and the pod goes to the best node that has room. Keep
// Reserve/Unreserve for bookkeeping (holding what the chosen node gives
// the pod until the bind), and make the Filter read what Reserve holds.
// schedkit's own fit filter does this with the ledger: with SchedkitReserve
// (or [WrapLedger]) in the profile, SchedkitNodeResourcesFit also asks the
// ledger, and the schedkit scorers score the ledger's view, so named
// reservations and holds made through the ledger count everywhere.
//
// # How nodes are read
//
// Upstream hands plugins its own NodeInfo; schedkit scorers read
// *snapshot.NodeInfo. The adapters keep a mirror per scheduler profile
// (framework handle). At PreFilter/PreScore it checks the scheduler's node
// list against the previous one — a pointer and generation comparison per
// node when nothing changed — and otherwise rebuilds only the nodes whose
// Generation changed (in steady state one per cycle: the node the previous
// pod was assumed on), reusing parsed pods. It then publishes an immutable
// view. Score and Filter find the node through the view with one
// pointer-keyed look-up: no lock, no copy, no allocation. A NodeInfo the
// framework altered for one call (nominated pods added, preemption victims
// removed) has a new Generation and is converted on the spot, so verdicts
// stay exact.
//
// ScorePlugin scores every candidate in PreScore, in one pass of the
// scorer's PodScorer over contiguous nodes, and Score returns the
// precomputed value; Skip, NormalizeScore and SignPod follow upstream's
// contracts, so opportunistic batching stays on.
//
// # Concurrency
//
// Score and Filter are safe for the framework's parallel calls: they read
// the mirror's published view without locking; updates (once per cycle)
// are serialised by a mutex. ReservePlugin's ledger has its own mutex.
//
// # Cost
//
// Per cycle: O(nodes) generation checks plus O(pods on changed nodes).
// Per node: Score is a map look-up and an index; Filter is a look-up and
// the filter's own check; neither allocates on the common path (tests
// check both with testing.AllocsPerRun). Reserve is O(resources of the pod)
// after parsing the pod.
package kubescheduler
