// Package gpushare places GPU-sharing tasks: device arithmetic over
// device-level node state, the fragmentation measure of Weng et al.,
// "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
// Fragmentation Gradient Descent" (USENIX ATC '23, §4), the FGD policy and
// the five baselines of the paper's evaluation, as node-and-device
// choosers, and their use in a scheduler: [NewScorer] makes a policy a
// score.Scorer and a snapshot.DeviceChooser.
//
// # Layer
//
// gpushare sits above snapshot and score and imports only them (and the
// standard library and internal packages): the snapshot keeps devices as
// counted data (snapshot.Device, snapshot.DeviceSet, the demand
// snapshot.GPURequest) and makes no device choice; the policies here read
// it ([NodeStateOf], [TaskOf]) and choose. framework and replay may import
// gpushare; snapshot, score and reserve never do (the ledger takes a
// chooser as an option, reserve.WithDeviceChooser).
//
// The formulas, device choices and tie rules are those of the authors'
// simulator (github.com/hkust-adsl/kubernetes-scheduler-simulator); each
// type names the file it follows. With them, the replay in
// examples/internal/fgdlab reproduces the authors' published per-run
// results of the paper's Fig. 9(a) exactly for every deterministic policy.
//
// # Model
//
// A [NodeState] holds a node's free milli-CPU and memory and its [Device]s
// (model, capacity and free amount in milli-GPU; 1000 = one GPU). A [Task]
// asks for CPU, memory and either nothing, a share of one device
// (MilliGPU < 1000) or GPUCount whole devices, optionally restricted to
// some models. [Fits] is the filter: upstream's NodeResourcesFit for CPU and
// memory plus the simulator's Open-Gpu-Share device check.
//
// A [Workload] is the target workload: task shapes and their popularity,
// given ([NewWorkload]) or learned from observed tasks as the simulator does
// ([WorkloadFromTasks]). [Workload.Fragmentation] is the expected free GPU
// capacity of a node that a task drawn from the workload cannot use: all of
// it when the task cannot run there (not enough devices, CPU, or no device
// of an allowed model, or a CPU-only task), otherwise the free capacity of
// the devices too small for it.
//
// # Usage
//
// Every policy is a [Policy]; all but [Random] are also a [NodeScorer] (a
// per-node score in [0, MaxScore] plus a device choice over a [NodeState],
// the paper's level) that [Choose] turns into a decision:
//
//	w, _ := gpushare.WorkloadFromTasks(observed, 95)
//	d := gpushare.NewFGD(w).Choose(nodes, task)
//	if d.Node >= 0 {
//		_ = nodes[d.Node].Place(task, d.Devices)
//	}
//
// Ties go to the lowest node index, so the order of the nodes slice is the
// tie-break rule.
//
// In a scheduler, the policy is a scorer of a score.Profile and picks the
// devices of the pods placed by it; [BestFit] alone is also a
// snapshot.DeviceChooser, the simulator's default device choice for
// profiles whose scorers choose none:
//
//	p, _ := score.NewProfile(score.Weighted{Scorer: gpushare.NewScorer(gpushare.NewFGD(w)), Weight: 1})
//	s, _ := framework.New(framework.Config{Profile: p, Filters: append(framework.DefaultFilters(), framework.NewGPUDevices())})
//	ledger := reserve.New(reserve.WithDeviceChooser(gpushare.BestFit{}))
//
// # Concurrency
//
// Workload, FGD and the zero-value baselines are immutable and safe for
// concurrent use. Random holds a generator and is not. NodeState.Place
// mutates its node.
//
// # Cost
//
// Fits and the baselines' Score are O(devices) and allocate nothing.
// Workload.Fragmentation is O(shapes × devices); FGD.Score evaluates it once
// plus once per distinct candidate device (same model and free amount
// count once) and allocates nothing. Choose is O(nodes) scores. Callers
// replaying long traces cache scores per node and task shape (a node's
// score changes only when the node does).
//
// # Layer
//
// GPU sharing sits above snapshot and score: gpushare may import snapshot,
// score and internal packages, never reserve or framework, and framework
// and replay build on it. The layers are those package schedkit's doc lists
// (the repository root's doc.go), checked by its TestLayering.
package gpushare
