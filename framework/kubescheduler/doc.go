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
// # Usage
//
// Each plugin has a Name constant and a New function with upstream's
// PluginFactory signature, for kube-scheduler's app.WithPlugin:
//
//	cmd := app.NewSchedulerCommand(
//		app.WithPlugin(kubescheduler.ScoreName, kubescheduler.New),        // a schedkit scorer, ScoreArgs
//		app.WithPlugin(kubescheduler.FitName, kubescheduler.NewFit),       // schedkit's NodeResourcesFit filter, FitArgs
//		app.WithPlugin(kubescheduler.ReserveName, kubescheduler.NewReserve), // the reservation ledger
//	)
//
// and a KubeSchedulerConfiguration profile enables them and passes their args:
//
//	profiles:
//	- schedulerName: schedkit
//	  plugins:
//	    score:
//	      enabled: [{name: SchedkitScore, weight: 2}]
//	    reserve:
//	      enabled: [{name: SchedkitReserve}]
//	  pluginConfig:
//	  - name: SchedkitScore
//	    args: {scorer: DominantResource, resources: [{name: cpu}, {name: memory}, {name: nvidia.com/gpu, weight: 4}]}
//
// Args are decoded strictly: an unknown or misspelled field, a wrong type or
// a value out of range is an error wrapping [ErrInvalidArgs] that names the
// plugin and the field, and the scheduler refuses to start.
// [ScoreFactory], [NewScorePlugin], [NewFilterPlugin] and
// [NewReservePlugin] wrap any scorer, filter or ledger, under any name.
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
