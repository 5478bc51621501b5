// Package kubescheduler plugs schedkit into the real kube-scheduler
// (k8s.io/kube-scheduler/framework v0.37, kube-scheduler v1.37). It only
// converts types and maps outcomes to *fwk.Status codes: all logic lives
// in the core packages and is tested there; examples/kube-scheduler proves
// the results identical to upstream's own plugins. It requires
// k8s.io/kube-scheduler, never k8s.io/kubernetes: no replace directives.
//
// # Usage
//
// Three plugins, each a Name constant and a factory with upstream's
// PluginFactory signature:
//
//	cmd := app.NewSchedulerCommand(
//		app.WithPlugin(kubescheduler.ScoreName, kubescheduler.NewSchedkitScore),     // a built-in scorer, ScoreArgs
//		app.WithPlugin(kubescheduler.FitName, kubescheduler.NewSchedkitFit),         // schedkit's fit filter, FitArgs
//		app.WithPlugin(kubescheduler.ReserveName, kubescheduler.NewSchedkitReserve), // the reservation ledger
//	)
//
// enabled in a profile under multiPoint (under score alone, without
// preScore, each Score call prepares the scorer anew: slow):
//
//	plugins: {multiPoint: {enabled: [{name: SchedkitScore, weight: 2}, {name: SchedkitReserve}]}}
//	pluginConfig:
//	- name: SchedkitScore
//	  args: {scorer: DominantResource, resources: [{name: cpu}, {name: nvidia.com/gpu, weight: 4}]}
//
// [SchedkitScoreFactory] registers more built-in scorers under other names.
// For your own logic, write a [score.Scorer], [framework.Filter] or
// [reserve.Ledger], test it without a cluster, and wrap it in your
// factory with [WrapScorer], [WrapFilter] or [WrapLedger]; decode your args
// with [DecodeArgs] (strict: a typo is an error naming plugin and field);
// implement [PodSigner] to keep upstream's opportunistic batching on.
// examples/kube-scheduler/myscheduler is a complete example.
//
// A capacity rule belongs in a Filter, not in Reserve: kube-scheduler
// retries a pod refused at Reserve on the same best-scored node. With a
// ledger in the profile, the built-in fit filter asks the ledger and the
// schedkit scorers score its view, so reservations count everywhere.
//
// # How nodes are read
//
// The plugins of one framework handle share a mirror of the scheduler's
// nodes (package internal/nodemirror feeding a snapshot.Cache), synced once
// per cycle: a pointer and generation comparison per node, and only the
// nodes whose generation changed are patched. The plugins own it; it goes
// when they do. A NodeInfo the framework altered for one call (nominated
// pods, preemption victims) is converted on the spot.
//
// # Concurrency and cost
//
// Score and Filter are safe for the framework's parallel calls and read the
// mirror without a lock; Score is a look-up and an index, Filter a look-up
// and the filter's check, neither allocating on the common path.
package kubescheduler
