package score

import (
	"fmt"
	"hash/fnv"
	"strings"
	"sync"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/snapshot"
)

// DeviceChooser is implemented by a [Scorer] that also picks the devices a
// GPU pod uses on the node chosen for it (FGD chooses the device that
// lowers fragmentation most). The framework asks the first scorer of a
// profile that implements it; without one it falls back to
// gpushare.BestFitDevices. ok is false when the pod does not fit the node's
// devices.
type DeviceChooser interface {
	ChooseDevices(pod *snapshot.PodInfo, node *snapshot.NodeInfo) (devices gpushare.DeviceSet, ok bool)
}

// GPUShare turns a gpushare policy scorer — gpushare.NewFGD(workload),
// gpushare.BestFit{}, gpushare.DotProduct{}, gpushare.GPUPacking{},
// gpushare.GPUClustering{} — into a [Scorer] over snapshot nodes, with its
// device choice as a [DeviceChooser]. The formulas and their sources are
// documented on the gpushare types (the FGD paper, Weng et al., USENIX ATC
// '23, and the authors' simulator).
//
// A node's score depends only on its state and the pod's shape, so scores
// are memoised per (NodeInfo generation, pod shape): replaying a trace
// rescoring only the nodes that changed, as the authors' simulator does.
// The memo costs one map look-up per node on two integers (node
// generation, interned pod shape) and one mutex per batch — the price of the
// O(shapes × devices) fragmentation arithmetic it saves; it is cleared when
// it exceeds 1<<21 entries. Safe for concurrent use (batches scored
// concurrently take turns on the memo).
func GPUShare(s gpushare.Scorer) *GPUShareScorer {
	return &GPUShareScorer{s: s, memo: map[gpuMemoKey]gpuMemoVal{}, shapes: map[gpuShape]int32{}}
}

// GPUShareScorer is the [Scorer] returned by [GPUShare].
type GPUShareScorer struct {
	s      gpushare.Scorer
	mu     sync.Mutex
	memo   map[gpuMemoKey]gpuMemoVal
	shapes map[gpuShape]int32 // pod shape -> small id, for cheap memo keys
}

// gpuShape is what a policy's score depends on besides the node.
type gpuShape struct {
	cpu, mem  int64
	count     int
	milli     int64
	modelsKey string
}

type gpuMemoKey struct {
	gen   int64 // NodeInfo.Generation: unique per node state
	shape int32
}

type gpuMemoVal struct {
	score int64
	devs  gpushare.DeviceSet
}

var (
	_ Scorer        = (*GPUShareScorer)(nil)
	_ DeviceChooser = (*GPUShareScorer)(nil)
)

// Name returns the policy's name (e.g. "FGD").
func (g *GPUShareScorer) Name() string { return g.s.Name() }

// Prepare builds the pod's gpushare.Task once. CPU-only pods are scored
// too (FGD penalises placing them on GPU nodes whose CPU the target
// workload needs). Errors wrap [ErrInvalidPod].
func (g *GPUShareScorer) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	t := pod.Task()
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("score: %s: pod %s: %w: %w", g.s.Name(), pod.Key(), ErrInvalidPod, err)
	}
	shape := gpuShape{cpu: t.MilliCPU, mem: t.Memory, count: t.GPUCount, milli: t.MilliGPU, modelsKey: strings.Join(t.Models, "|")}
	g.mu.Lock()
	id, ok := g.shapes[shape]
	if !ok {
		id = int32(len(g.shapes))
		g.shapes[shape] = id
	}
	g.mu.Unlock()
	return &gpuPodScorer{g: g, t: t, shape: id}, nil
}

// scoreLocked returns the memoised score of node n for the pod shape, or
// computes and stores it. g.mu is held.
func (g *GPUShareScorer) scoreLocked(n *snapshot.NodeInfo, t gpushare.Task, shape int32, buf *[]gpushare.Device) gpuMemoVal {
	key := gpuMemoKey{gen: n.Generation(), shape: shape}
	if v, ok := g.memo[key]; ok {
		return v
	}
	st := n.GPUState(*buf)
	*buf = st.Devices
	var v gpuMemoVal
	v.score, v.devs = g.s.Score(&st, t)
	v.score = min(max(v.score, MinScore), MaxScore)
	if len(g.memo) >= 1<<21 {
		clear(g.memo)
	}
	g.memo[key] = v
	return v
}

// ChooseDevices returns the devices the policy picks for pod on node.
func (g *GPUShareScorer) ChooseDevices(pod *snapshot.PodInfo, node *snapshot.NodeInfo) (gpushare.DeviceSet, bool) {
	t := pod.Task()
	if !t.UsesGPU() {
		return 0, true
	}
	st := node.GPUState(nil)
	if !gpushare.Fits(&st, t) {
		return 0, false
	}
	_, devs := g.s.Score(&st, t)
	return devs, devs.Len() == t.GPUCount
}

type gpuPodScorer struct {
	g     *GPUShareScorer
	t     gpushare.Task
	shape int32
}

// Score takes the memo's lock once per batch.
func (p *gpuPodScorer) Score(nodes []*snapshot.NodeInfo, out []int64) {
	buf := make([]gpushare.Device, 0, 8)
	p.g.mu.Lock()
	defer p.g.mu.Unlock()
	for i, n := range nodes {
		out[i] = p.g.scoreLocked(n, p.t, p.shape, &buf).score
	}
}

// RandomGPU is the paper's Random baseline as a [Scorer]: every node gets
// a pseudo-random score in [0, MaxScore] derived from the seed, the pod and
// the node name (FNV-1a), so the highest-scoring feasible node is a
// uniformly random one, reproducibly for a seed. Devices are left to the
// framework's default (gpushare.BestFitDevices). Allocates nothing per
// node; safe for concurrent use.
type RandomGPU struct{ Seed uint64 }

var _ Scorer = RandomGPU{}

// Name returns "Random".
func (RandomGPU) Name() string { return "Random" }

// Prepare hashes the seed and the pod key once.
func (r RandomGPU) Prepare(pod *snapshot.PodInfo, _ Cluster) (PodScorer, error) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", r.Seed, pod.Key())
	return randomPod(h.Sum64()), nil
}

type randomPod uint64

func (s randomPod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	for i, n := range nodes {
		h := uint64(s)
		name := n.Name()
		for j := 0; j < len(name); j++ {
			h ^= uint64(name[j])
			h *= 1099511628211
		}
		h ^= h >> 33
		h *= 0xff51afd7ed558ccd
		h ^= h >> 33
		out[i] = int64(h % uint64(MaxScore+1))
	}
}
