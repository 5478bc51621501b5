package whatif

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
)

// PDBLister finds PodDisruptionBudgets; snapshot's object stores
// implement it. Returned objects are read-only.
type PDBLister interface {
	// PodDisruptionBudgets returns the budgets of namespace (nil: none).
	PodDisruptionBudgets(namespace string) []*policyv1.PodDisruptionBudget
}

// Block says why a pod keeps its node from being drained; the names are
// cluster-autoscaler's drain rules (simulator/drainability/rules and
// utils/drain) with its default options (skip nodes with system pods and
// with local storage).
type Block string

const (
	// NotReplicated: the pod has no controller owner, so nothing
	// recreates it once evicted.
	NotReplicated Block = "NotReplicated"
	// UnmovableKubeSystemPod: a kube-system pod that no PDB covers.
	UnmovableKubeSystemPod Block = "UnmovableKubeSystemPod"
	// NotSafeToEvictAnnotation: annotated
	// cluster-autoscaler.kubernetes.io/safe-to-evict: "false".
	NotSafeToEvictAnnotation Block = "NotSafeToEvictAnnotation"
	// LocalStorageRequested: a hostPath volume or an emptyDir not in
	// memory, not listed in the safe-to-evict-local-volumes annotation.
	LocalStorageRequested Block = "LocalStorageRequested"
	// NotEnoughPdb: evicting the node's pods would take more disruptions
	// than a PDB allows (status.disruptionsAllowed, less what earlier
	// removals in the same answer used).
	NotEnoughPdb Block = "NotEnoughPdb"
	// NoPlaceToMovePods: a pod fits no other node (see its Placement).
	NoPlaceToMovePods Block = "NoPlaceToMovePods"
)

// The annotations the drain rules read (cluster-autoscaler's).
const (
	SafeToEvictAnnotation             = "cluster-autoscaler.kubernetes.io/safe-to-evict"
	SafeToEvictLocalVolumesAnnotation = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
)

// NodeDrain answers, for one node, whether its pods can all move
// elsewhere and where they would go.
type NodeDrain struct {
	// Node is the node's name.
	Node string
	// Removable reports that every pod to move found another node.
	Removable bool
	// Block is why the node is not removable ("" when it is).
	Block Block
	// BlockingPod is the pod that blocks (nil for NoPlaceToMovePods with
	// no single culprit, and when Removable).
	BlockingPod *v1.Pod
	// Moved is one Placement per pod to move, in the node's pod order:
	// its new node, or (Block NoPlaceToMovePods) the diagnosis of the
	// first pod that fits nowhere, which ends the list.
	Moved []Placement
	// Skipped are the pods that go with the node and need no new place:
	// mirror, DaemonSet, terminal and terminating pods.
	Skipped []*v1.Pod
}

// Drain answers, for each candidate node independently, "can this node be
// removed and its pods rescheduled elsewhere?", by cluster-autoscaler's
// removal simulation (simulator.RemovalSimulator.SimulateNodeRemoval): the
// drain rules (see [Block]; mirror, DaemonSet, terminal and terminating
// pods skipped; a pod annotated safe-to-evict "true" always movable),
// then the PDBs of pdbs (nil: the fork's own, those fed to the Cache or
// reserve.Ledger it came from), then the node removed and its other
// pods scheduled one by one onto the remaining nodes, in the node's pod
// order, by the scheduler configured by cfg (filters and scores, where
// cluster-autoscaler checks filters only).
//
// Each node is simulated on its own layer, reverted: f is as before the
// call. Deterministic for cfg.Seed.
//
// Cost: per node O(pods on it × PDBs in their namespaces) rule checks and
// one scheduling cycle per pod to move. Errors: a nil fork, an unknown or
// repeated node name (wrapping [ErrInvalidInput]; f unchanged), an
// invalid cfg, a PDB with an invalid selector (naming it).
func Drain(f *snapshot.Fork, nodes []string, pdbs PDBLister, cfg framework.Config) ([]NodeDrain, error) {
	return drain(f, nodes, pdbs, cfg, false)
}

// RemovableNodes finds the largest removable subset of nodes greedily, as
// cluster-autoscaler's RemovalSimulator.FindNodesToRemove does with
// persisted simulations: the candidates are taken in the given order and
// each is simulated as by [Drain] on the cluster where the removable
// candidates before it are gone and their pods moved, PDB disruptions
// they used counted. The answer has one NodeDrain per candidate, in
// order; the removable ones form the subset.
//
// f is as before the call. Cost and errors as [Drain].
func RemovableNodes(f *snapshot.Fork, nodes []string, pdbs PDBLister, cfg framework.Config) ([]NodeDrain, error) {
	return drain(f, nodes, pdbs, cfg, true)
}

func drain(f *snapshot.Fork, nodes []string, pdbs PDBLister, cfg framework.Config, persist bool) ([]NodeDrain, error) {
	if f == nil {
		return nil, fmt.Errorf("fork is nil: %w", ErrInvalidInput)
	}
	seen := make(map[string]bool, len(nodes))
	for i, n := range nodes {
		if f.Get(n) == nil {
			return nil, fmt.Errorf("nodes[%d]: node %q is not in the cluster: %w", i, n, ErrInvalidInput)
		}
		if seen[n] {
			return nil, fmt.Errorf("nodes[%d]: node %q repeats: %w", i, n, ErrInvalidInput)
		}
		seen[n] = true
	}
	s, err := framework.New(cfg)
	if err != nil {
		return nil, err
	}
	if pdbs == nil {
		pdbs = f
	}
	budgets := newBudgets(pdbs)
	if err := open(f); err != nil {
		return nil, err
	}
	defer f.Revert() //nolint:errcheck // the layer opened above
	out := make([]NodeDrain, 0, len(nodes))
	for _, n := range nodes {
		f.Fork()
		d, used, err := simulateRemoval(s, f, n, budgets)
		if err != nil {
			_ = f.Revert()
			return nil, err
		}
		if persist && d.Removable {
			budgets.consume(used)
			err = f.Commit()
		} else {
			err = f.Revert()
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// simulateRemoval checks the rules on node n's pods, then removes n and
// places the pods to move on f (the caller's layer). used counts the
// disruptions per PDB the removal takes.
func simulateRemoval(s *framework.Scheduler, f *snapshot.Fork, n string, b *budgets) (NodeDrain, map[*policyv1.PodDisruptionBudget]int, error) {
	d := NodeDrain{Node: n}
	var move []*snapshot.PodInfo
	used := map[*policyv1.PodDisruptionBudget]int{}
	for _, pi := range f.Get(n).Pods() {
		p := pi.Pod()
		skip, block, err := drainRule(p, b)
		if err != nil {
			return NodeDrain{}, nil, err
		}
		if skip {
			d.Skipped = append(d.Skipped, p)
			continue
		}
		if block != "" {
			d.Block, d.BlockingPod = block, p
			return d, nil, nil
		}
		ms, err := b.matching(p)
		if err != nil {
			return NodeDrain{}, nil, err
		}
		for _, m := range ms {
			used[m]++
			if used[m] > b.remaining(m) {
				d.Block, d.BlockingPod = NotEnoughPdb, p
				return d, nil, nil
			}
		}
		move = append(move, pi)
	}
	if err := f.RemoveNode(n); err != nil {
		return NodeDrain{}, nil, err
	}
	for _, pi := range move {
		// The pod leaves with its node; its copy without spec.nodeName is
		// rescheduled (NodeName would pin it to the removed node).
		c := *pi.Pod()
		c.Spec.NodeName = ""
		npi, err := snapshot.DecodePodInfo(&c, decoderOf(f))
		if err != nil {
			return NodeDrain{}, nil, err
		}
		p, err := place(s, f, npi)
		if err != nil {
			return NodeDrain{}, nil, err
		}
		d.Moved = append(d.Moved, p)
		if p.Node == "" {
			d.Block = NoPlaceToMovePods
			d.BlockingPod = pi.Pod()
			return d, nil, nil
		}
	}
	d.Removable = true
	return d, used, nil
}

// drainRule applies cluster-autoscaler's default drain rules in its
// order: skip (mirror, terminating, DaemonSet, terminal), allow
// (safe-to-evict "true"), then block (not replicated, kube-system without
// PDB, safe-to-evict "false", local storage).
func drainRule(p *v1.Pod, b *budgets) (skip bool, block Block, err error) {
	if _, ok := p.Annotations[v1.MirrorPodAnnotationKey]; ok {
		return true, "", nil
	}
	if p.DeletionTimestamp != nil {
		return true, "", nil
	}
	ctrl := metav1.GetControllerOf(p)
	if ctrl != nil && ctrl.Kind == "DaemonSet" {
		return true, "", nil
	}
	if p.Annotations[SafeToEvictAnnotation] == "true" {
		return false, "", nil
	}
	if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
		return true, "", nil
	}
	if ctrl == nil {
		return false, NotReplicated, nil
	}
	if p.Namespace == metav1.NamespaceSystem {
		ms, err := b.matching(p)
		if err != nil {
			return false, "", err
		}
		if len(ms) == 0 {
			return false, UnmovableKubeSystemPod, nil
		}
	}
	if p.Annotations[SafeToEvictAnnotation] == "false" {
		return false, NotSafeToEvictAnnotation, nil
	}
	if hasBlockingLocalStorage(p) {
		return false, LocalStorageRequested, nil
	}
	return false, "", nil
}

// hasBlockingLocalStorage: a hostPath volume, or an emptyDir whose medium
// is not Memory, not named in the safe-to-evict-local-volumes annotation
// (a comma-separated list of volume names).
func hasBlockingLocalStorage(p *v1.Pod) bool {
	var allowed []string
	if a := p.Annotations[SafeToEvictLocalVolumesAnnotation]; a != "" {
		allowed = strings.Split(a, ",")
	}
	for _, vol := range p.Spec.Volumes {
		local := vol.HostPath != nil || vol.EmptyDir != nil && vol.EmptyDir.Medium != v1.StorageMediumMemory
		if !local {
			continue
		}
		ok := false
		for _, a := range allowed {
			if strings.TrimSpace(a) == vol.Name {
				ok = true
				break
			}
		}
		if !ok {
			return true
		}
	}
	return false
}

// budgets tracks the disruptions PDBs still allow within one answer.
type budgets struct {
	pdbs PDBLister
	used map[*policyv1.PodDisruptionBudget]int
	sel  map[*policyv1.PodDisruptionBudget]labels.Selector
}

func newBudgets(pdbs PDBLister) *budgets {
	return &budgets{pdbs: pdbs, used: map[*policyv1.PodDisruptionBudget]int{}, sel: map[*policyv1.PodDisruptionBudget]labels.Selector{}}
}

// matching returns the PDBs of p's namespace whose selector matches p (a
// nil selector matches nothing, an empty one everything, as policy/v1
// says).
func (b *budgets) matching(p *v1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	if b.pdbs == nil {
		return nil, nil
	}
	var out []*policyv1.PodDisruptionBudget
	for _, pdb := range b.pdbs.PodDisruptionBudgets(p.Namespace) {
		if pdb == nil || pdb.Spec.Selector == nil {
			continue
		}
		sel, ok := b.sel[pdb]
		if !ok {
			var err error
			sel, err = metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil {
				return nil, fmt.Errorf("PodDisruptionBudget %s/%s: spec.selector: %v: %w", pdb.Namespace, pdb.Name, err, ErrInvalidInput)
			}
			b.sel[pdb] = sel
		}
		if sel.Matches(labels.Set(p.Labels)) {
			out = append(out, pdb)
		}
	}
	return out, nil
}

func (b *budgets) remaining(pdb *policyv1.PodDisruptionBudget) int {
	return int(pdb.Status.DisruptionsAllowed) - b.used[pdb]
}

func (b *budgets) consume(used map[*policyv1.PodDisruptionBudget]int) {
	for pdb, n := range used {
		b.used[pdb] += n
	}
}
