package parity

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// PreemptUpstream runs kube-scheduler v1.37.2's own DefaultPreemption
// PostFilter on a framework built from the in-tree registry with the
// filters schedkit's DefaultFilters model (NodeUnschedulable, NodeName,
// TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, in
// upstream's default-profile order), on upstream's own Snapshot, with a
// PodNominator of the test's nominated pods.
//
// Preempt composes upstream's exported steps as Evaluator.evaluate does
// (which is unexported, and whose Preempt actuates: deletes pods through
// a client): the cycle's filters over every node
// (RunPreFilterPlugins, RunFilterPluginsWithNominatedPods) giving the
// NodeToStatus, PodEligibleToPreemptOthers, NodesForStatusCode,
// DryRunPreemption with every potential node (offset 0, candidatesNum =
// all, which upstream's defaults give below 100 potential nodes),
// SelectCandidate, and the FitError message with
// "Preemption is not helpful for scheduling" for absent nodes.
type PreemptUpstream struct {
	// Sample makes the dry run use upstream's default
	// DefaultPreemptionArgs (10 %, at least 100 nodes, random offset)
	// instead of every potential node; for benchmarks.
	Sample bool

	fh    framework.Framework
	snap  *mutableSwap
	nom   *testNominator
	pl    *defaultpreemption.DefaultPreemption
	nodes []*v1.Node
}

// mutableSwap is the handle's (mutable) snapshot lister.
type mutableSwap struct{ *schedcache.Snapshot }

// testNominator is a fixed PodNominator.
type testNominator struct {
	mu     sync.Mutex
	byNode map[string][]fwk.PodInfo
}

func (n *testNominator) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}
func (n *testNominator) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (n *testNominator) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)          {}
func (n *testNominator) NominatedPodsForNode(node string) []fwk.PodInfo {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.byNode[node]
}

// NewPreemptUpstream builds the framework and the plugin.
func NewPreemptUpstream(ctx context.Context) (*PreemptUpstream, error) {
	metrics.Register()
	snap := &mutableSwap{Snapshot: schedcache.NewEmptySnapshot()}
	nom := &testNominator{byNode: map[string][]fwk.PodInfo{}}
	fitArgs, err := Args(&configv1.NodeResourcesFitArgs{})
	if err != nil {
		return nil, err
	}
	affArgs, err := Args(&configv1.NodeAffinityArgs{})
	if err != nil {
		return nil, err
	}
	plug := func(ns ...string) config.PluginSet {
		var s config.PluginSet
		for _, n := range ns {
			s.Enabled = append(s.Enabled, config.Plugin{Name: n})
		}
		return s
	}
	profile := &config.KubeSchedulerProfile{
		SchedulerName: "default-scheduler",
		Plugins: &config.Plugins{
			QueueSort: plug(names.PrioritySort),
			Bind:      plug(names.DefaultBinder),
			PreFilter: plug(names.NodeAffinity, names.NodePorts, names.NodeResourcesFit),
			Filter: plug(names.NodeUnschedulable, names.NodeName, names.TaintToleration, names.NodeAffinity,
				names.NodePorts, names.NodeResourcesFit),
		},
		PluginConfig: []config.PluginConfig{
			{Name: names.NodeResourcesFit, Args: fitArgs},
			{Name: names.NodeAffinity, Args: affArgs},
		},
	}
	fh, err := frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), profile,
		frameworkruntime.WithSnapshotSharedLister(snap),
		frameworkruntime.WithMutableSnapshotLister(snap),
		frameworkruntime.WithSharedDRAManager(noDRA{}),
		frameworkruntime.WithInformerFactory(informers.NewSharedInformerFactory(nil, 0)),
		frameworkruntime.WithPodNominator(nom))
	if err != nil {
		return nil, fmt.Errorf("parity: upstream framework: %w", err)
	}
	args := &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}
	pl, err := defaultpreemption.New(ctx, args, fh, plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
	if err != nil {
		return nil, fmt.Errorf("parity: DefaultPreemption: %w", err)
	}
	return &PreemptUpstream{fh: fh, snap: snap, nom: nom, pl: pl}, nil
}

// Load sets the cluster (nodes, bound pods) and the nominated pods
// (status.nominatedNodeName set, spec.priority set).
func (u *PreemptUpstream) Load(nodes []*v1.Node, bound, nominated []*v1.Pod) error {
	u.snap.Snapshot = schedcache.NewSnapshot(bound, nodes)
	u.nodes = nodes
	byNode := map[string][]fwk.PodInfo{}
	for _, p := range nominated {
		pi, err := framework.NewPodInfo(p)
		if err != nil {
			return err
		}
		byNode[p.Status.NominatedNodeName] = append(byNode[p.Status.NominatedNodeName], pi)
	}
	u.nom.mu.Lock()
	u.nom.byNode = byNode
	u.nom.mu.Unlock()
	return nil
}

// UpstreamPreemption is upstream's outcome.
type UpstreamPreemption struct {
	// Fits: some node passed the filters (the scheduler would not preempt).
	Fits bool
	// Node is SelectCandidate's choice; Unique reports that the criteria
	// decided it (upstream breaks the last tie by map order).
	Node   string
	Unique bool
	// Tied are the nodes that tie at the best criteria.
	Tied []string
	// Victims are the chosen node's victims (names), in upstream's order.
	Victims          []string
	NumPDBViolations int64
	// Candidates maps every candidate node to its victims' names.
	Candidates map[string][]string
	// Message is the PostFilter status message ("preemption: ...") when
	// no node is chosen; Err an Error status.
	Message string
	Err     error
}

// Preempt runs upstream for pod with pdbs (in the order given).
func (u *PreemptUpstream) Preempt(ctx context.Context, pod *v1.Pod, pdbs []*policy.PodDisruptionBudget) UpstreamPreemption {
	var out UpstreamPreemption
	all, err := u.snap.NodeInfos().List()
	if err != nil {
		out.Err = err
		return out
	}
	state := framework.NewCycleState()
	m := framework.NewDefaultNodeToStatus()
	pre, st, _ := u.fh.RunPreFilterPlugins(ctx, state, pod)
	if st.IsSuccess() {
		for _, ni := range all {
			if !pre.AllNodes() && !pre.NodeNames.Has(ni.Node().Name) {
				continue
			}
			fst := u.fh.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if fst.IsSuccess() {
				out.Fits = true
				return out
			}
			m.Set(ni.Node().Name, fst)
		}
	} else if !st.IsRejected() {
		out.Err = st.AsError()
		return out
	}
	if ok, msg := u.pl.PodEligibleToPreemptOthers(ctx, pod, m.Get(pod.Status.NominatedNodeName)); !ok {
		out.Message = "preemption: " + msg
		return out
	}
	potential, err := m.NodesForStatusCode(u.snap.NodeInfos(), fwk.Unschedulable)
	if err != nil {
		out.Err = err
		return out
	}
	var cands []preemption.Candidate
	statuses := framework.NewDefaultNodeToStatus()
	if len(potential) > 0 {
		offset, num := int32(0), int32(len(potential))
		if u.Sample {
			offset, num = u.pl.GetOffsetAndNumCandidates(num)
		}
		cands, statuses, err = u.pl.Evaluator.DryRunPreemption(ctx, state, pod, potential, pdbs, offset, num)
		if err != nil && len(cands) == 0 {
			out.Err = err
			return out
		}
	}
	if len(cands) == 0 {
		fe := &framework.FitError{Pod: pod, NumAllNodes: len(all), Diagnosis: framework.Diagnosis{NodeToStatus: statuses}}
		fe.Diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "Preemption is not helpful for scheduling"))
		out.Message = "preemption: " + fe.Error()
		return out
	}
	best := u.pl.Evaluator.SelectCandidate(ctx, cands)
	out.Node = best.Name()
	out.NumPDBViolations = best.Victims().NumPDBViolations
	for _, p := range best.Victims().Pods {
		out.Victims = append(out.Victims, p.Name)
	}
	out.Candidates = map[string][]string{}
	type key struct{ pdb, high, sum, num, start int64 }
	keys := map[string]key{}
	for _, c := range cands {
		var names []string
		k := key{pdb: c.Victims().NumPDBViolations, high: int64(prio(c.Victims().Pods[0])), num: int64(len(c.Victims().Pods)), start: math.MaxInt64}
		earliest := int64(math.MaxInt64)
		for _, p := range c.Victims().Pods {
			names = append(names, p.Name)
			k.sum += int64(prio(p)) + math.MaxInt32 + 1
			if int64(prio(p)) == k.high && p.Status.StartTime != nil && p.Status.StartTime.UnixNano() < earliest {
				earliest = p.Status.StartTime.UnixNano()
			}
		}
		k.start = -earliest // later is better: smaller -start
		out.Candidates[c.Name()] = names
		keys[c.Name()] = k
	}
	less := func(a, b key) bool {
		if a.pdb != b.pdb {
			return a.pdb < b.pdb
		}
		if a.high != b.high {
			return a.high < b.high
		}
		if a.sum != b.sum {
			return a.sum < b.sum
		}
		if a.num != b.num {
			return a.num < b.num
		}
		return a.start < b.start
	}
	bk := keys[out.Node]
	for n, k := range keys {
		if !less(bk, k) && !less(k, bk) {
			out.Tied = append(out.Tied, n)
		}
	}
	sort.Strings(out.Tied)
	out.Unique = len(out.Tied) == 1
	return out
}

func prio(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}
