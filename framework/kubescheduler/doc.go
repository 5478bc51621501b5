// Package kubescheduler plugs schedkit into kube-scheduler v1.37
// (k8s.io/kube-scheduler/framework): it converts types and maps outcomes
// to *fwk.Status codes; the logic is the core's (package mirror runs
// scorers, filters and the ledger over the scheduler's nodes) and is
// tested there. It requires k8s.io/kube-scheduler, never k8s.io/kubernetes.
//
// # Usage
//
//	app.WithPlugin(kubescheduler.ScoreName, kubescheduler.NewSchedkitScore)     // a built-in scorer: ScoreArgs
//	app.WithPlugin(kubescheduler.FitName, kubescheduler.NewSchedkitFit)         // schedkit's fit filter: FitArgs
//	app.WithPlugin(kubescheduler.ReserveName, kubescheduler.NewSchedkitReserve) // the reservation ledger
//
// enabled under multiPoint (score without preScore works, slowly):
//
//	plugins: {multiPoint: {enabled: [{name: SchedkitScore, weight: 2}, {name: SchedkitReserve}]}}
//	pluginConfig: [{name: SchedkitScore, args: {scorer: DominantResource, resources: [{name: cpu}, {name: nvidia.com/gpu, weight: 4}]}}]
//
// For your own logic wrap a [score.Scorer], [framework.Filter] or
// [reserve.Ledger] with [WrapScorer], [WrapFilter] or [WrapLedger] in your
// factory, decode its args with [DecodeArgs] and implement [PodSigner] to
// keep upstream's batching on (examples/kube-scheduler/myscheduler). Put a
// capacity rule in a Filter: a pod refused at Reserve is retried on the
// same node. With a ledger in the profile the built-in fit filter asks it
// and the schedkit scorers score its view.
//
// The plugins of one framework handle share one [mirror.Mirror] of the
// scheduler's nodes, synced once per cycle (a pointer and generation check
// per node, only changed nodes patched); they own it and it goes with
// them. Score and Filter are safe for concurrent calls, take no lock and
// allocate nothing on the common path.
package kubescheduler
