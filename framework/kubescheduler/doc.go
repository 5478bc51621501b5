// Package kubescheduler plugs schedkit into kube-scheduler v1.37: it
// converts types and maps outcomes to *fwk.Status codes; the logic is the
// core's (internal/mirror) and tested there. It requires
// k8s.io/kube-scheduler, never k8s.io/kubernetes.
//
//	app.WithPlugin(kubescheduler.ScoreName, kubescheduler.NewSchedkitScore)     // ScoreArgs
//	app.WithPlugin(kubescheduler.FitName, kubescheduler.NewSchedkitFit)         // FitArgs
//	app.WithPlugin(kubescheduler.ReserveName, kubescheduler.NewSchedkitReserve) // the ledger
//
// Enable them under multiPoint (score without preScore works, slowly). Wrap
// your own [score.Scorer], [framework.Filter] or [reserve.Ledger] with
// [WrapScorer], [WrapFilter] or [WrapLedger], decode args with [DecodeArgs],
// implement [PodSigner] for upstream's batching (see
// examples/kube-scheduler/myscheduler). Put capacity rules in a Filter: a pod
// refused at Reserve is retried on the same node. One handle's plugins share
// one mirror (with the ledger), owned by them and synced once per cycle:
// filters (yours too) and the built-in scorers that read only the nodes
// they score sync lazily, rebuilding a changed node when they meet it,
// instead of reading every node each cycle; a cycle synced lazily is
// synced again in full for a scorer that reads the whole cluster. A score
// plugin's PreScore scores every candidate (see [ScorePlugin]), a long
// candidate list in pieces on the handle's Parallelizer, across the
// scheduler's workers, as upstream runs its Score phase and its
// InterPodAffinity PreScore. Score and Filter take no lock and allocate
// nothing on the common path.
package kubescheduler
