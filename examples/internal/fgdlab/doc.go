// Package fgdlab replays the FGD paper's Fig. 9(a) experiment (Weng et al.,
// "Beware of Fragmentation", USENIX ATC '23) with the gpushare policies, the
// way the authors' simulator (hkust-adsl/kubernetes-scheduler-simulator) runs
// it: the openb trace shuffled with a seed and inflated to 130 % of the
// cluster's GPUs, pods placed one at a time with no departures, and the GPU
// allocation ratio sampled after every pod and averaged per 1 % of arrived
// GPU demand as the authors' merge script does.
//
// The replay reproduces the simulator's seeded math/rand stream (pod order,
// inflation clones, and the node permutation that decides score ties), so
// for the deterministic policies it yields the authors' published per-run
// curves (analysis_allo_discrete.csv) point for point. The facts behind each
// step, with the simulator's file and line, are in the developers' notes
// (fgd-facts.md).
//
// # Usage
//
//	nodes, _, _ := openb.ReadNodesFile(".../openb_node_list_gpu_node.csv", openb.Strict)
//	pods, _, _ := openb.ReadPodsFile(".../openb_pod_list_default.csv", openb.Strict)
//	e, _ := fgdlab.NewExperiment(nodes, pods)
//	run, _ := e.Replay("FGD", 42)
//	fmt.Println(run.Curve[fgdlab.MaxX]) // 95.29, as the authors' run
//
// # Concurrency
//
// An Experiment is read-only after NewExperiment; Replay may run
// concurrently on one Experiment.
//
// # Cost
//
// One replay of the default trace (about 10,800 pods on 1213 nodes) takes
// 0.1–0.9 s on one core depending on the policy; scores are cached per node
// and task shape, so a pod costs O(nodes) cache reads plus the rescoring of
// nodes changed since that shape was last seen.
package fgdlab
