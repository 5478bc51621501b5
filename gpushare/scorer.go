package gpushare

import (
	"fmt"
	"hash/fnv"
	"strings"
	"sync"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
)

// NewScorer turns a policy's device-level formula — [NewFGD](workload),
// [BestFit]{}, [DotProduct]{}, [GPUPacking]{}, [GPUClustering]{} — into a
// score.Scorer over snapshot nodes, with its device choice as a
// snapshot.DeviceChooser (the framework's cycle asks the first scorer of a
// profile that is one). The formulas and their sources are documented on
// the policy types (the FGD paper, Weng et al., USENIX ATC '23, and the
// authors' simulator). Nodes are read with [NodeStateOf] and pods with
// [TaskOf].
//
// A node's score depends only on its state and the pod's shape, so scores
// are memoised per (node, pod shape) and reused while the node's
// NodeInfo.Generation is unchanged: replaying a trace rescores only the
// nodes that changed, as the authors' simulator does. The memo is a dense
// table, one row per interned pod shape and one column per node name
// (24 bytes a cell, columns in the order nodes are first seen); a batch
// costs one mutex and, per node, finding its column — a name comparison
// with the columns just after the previous node's, as batches follow the
// cluster's order, else a map look-up on the name — and one cell read, so
// scoring unchanged nodes stays in cache. It allocates nothing once the
// memo has the nodes and the shape. One
// generation is kept per cell: alternating between two states of a node
// (two forks) recomputes. The rows are dropped when they exceed 1<<21
// cells, the name index when it exceeds 1<<20 names. Safe for concurrent
// use (batches scored concurrently take turns on the memo).
func NewScorer(s NodeScorer) *Scorer {
	return &Scorer{s: s, shapes: map[gpuShape]int32{}, slots: map[string]int32{}}
}

// Scorer is the score.Scorer returned by [NewScorer].
type Scorer struct {
	s      NodeScorer
	mu     sync.Mutex
	shapes map[gpuShape]int32 // pod shape -> row of the memo
	slots  map[string]int32   // node name -> column of the memo
	names  []string           // column -> node name
	rows   [][]gpuMemoCell    // rows[shape][slot]; nil until the shape is scored
	cells  int                // sum of cap(rows[i])
	st     NodeState          // scratch: the node being scored (its Devices reused)
}

// Bounds of the memo (see NewScorer).
const (
	gpuMemoMaxCells = 1 << 21
	gpuMemoMaxNodes = 1 << 20
)

// gpuShape is what a policy's score depends on besides the node.
type gpuShape struct {
	cpu, mem  int64
	count     int
	milli     int64
	modelsKey string
}

// gpuMemoCell is the policy's result for one node state (gen, a
// NodeInfo.Generation: unique per node state; 0 means empty) and one shape.
type gpuMemoCell struct {
	gen   int64
	score int64
	devs  DeviceSet
}

var (
	_ score.Scorer           = (*Scorer)(nil)
	_ snapshot.DeviceChooser = (*Scorer)(nil)
)

// NodeLocal reports true (see score.NodeLocal): the policy scores a node
// from the pod's task (its requests and GPU request) and the node's state.
func (*Scorer) NodeLocal() bool { return true }

// Name returns the policy's name (e.g. "FGD").
func (g *Scorer) Name() string { return g.s.Name() }

// Prepare builds the pod's [Task] once. CPU-only pods are scored
// too (FGD penalises placing them on GPU nodes whose CPU the target
// workload needs). Errors wrap score.ErrInvalidPod.
func (g *Scorer) Prepare(pod *snapshot.PodInfo, _ score.Cluster) (score.PodScorer, error) {
	t := TaskOf(pod)
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("score: %s: pod %s: %w: %w", g.s.Name(), pod.Key(), score.ErrInvalidPod, err)
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

// rowLocked returns the memo row of shape with a cell for every known
// node, after enforcing the memo's bounds. g.mu is held.
func (g *Scorer) rowLocked(shape int32) []gpuMemoCell {
	if len(g.slots) > gpuMemoMaxNodes {
		clear(g.slots)
		clear(g.names)
		g.names = g.names[:0]
		g.dropRowsLocked()
	}
	if g.cells > gpuMemoMaxCells {
		g.dropRowsLocked()
	}
	for int(shape) >= len(g.rows) {
		g.rows = append(g.rows, nil)
	}
	return g.growLocked(shape)
}

// growLocked extends row shape to cover every slot. g.mu is held.
func (g *Scorer) growLocked(shape int32) []gpuMemoCell {
	row := g.rows[shape]
	if len(row) < len(g.slots) {
		g.cells -= cap(row)
		row = append(row, make([]gpuMemoCell, len(g.slots)-len(row))...)
		g.cells += cap(row)
		g.rows[shape] = row
	}
	return row
}

func (g *Scorer) dropRowsLocked() {
	clear(g.rows)
	g.cells = 0
}

// slotLocked returns the column of node n. Batches list nodes in the
// cluster's order, skipping some, and columns are mostly in that order
// too, so the columns just after *cursor (the previous node's) are tried
// by name first and the name index only when they miss. g.mu is held;
// *row is g.rows[shape] and is re-read when a new node extends it.
func (g *Scorer) slotLocked(n *snapshot.NodeInfo, shape int32, row *[]gpuMemoCell, cursor *int32) int32 {
	name := n.Name()
	for i := *cursor + 1; i <= *cursor+4 && int(i) < len(g.names); i++ {
		if g.names[i] == name {
			*cursor = i
			return i
		}
	}
	slot, ok := g.slots[name]
	if !ok {
		slot = int32(len(g.slots))
		g.slots[name] = slot
		g.names = append(g.names, name)
		*row = g.growLocked(shape)
	}
	*cursor = slot
	return slot
}

// scoreLocked returns the memoised result for node n and the pod shape,
// computing it when the node changed since. g.mu is held; see slotLocked
// for row and cursor.
func (g *Scorer) scoreLocked(n *snapshot.NodeInfo, t Task, shape int32, row *[]gpuMemoCell, cursor *int32) gpuMemoCell {
	c := &(*row)[g.slotLocked(n, shape, row, cursor)]
	if gen := n.Generation(); c.gen != gen || gen == 0 {
		g.st = NodeStateOf(n, g.st.Devices)
		s, devs := g.s.Score(&g.st, t)
		*c = gpuMemoCell{gen: gen, score: min(max(s, score.MinScore), score.MaxScore), devs: devs}
	}
	return *c
}

// ChooseDevices returns the devices the policy picks for pod on node; ok
// is false when the pod does not fit the node (Fits). O(one Score).
func (g *Scorer) ChooseDevices(pod *snapshot.PodInfo, node *snapshot.NodeInfo) (DeviceSet, bool) {
	t := TaskOf(pod)
	if !t.UsesGPU() {
		return 0, true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.st = NodeStateOf(node, g.st.Devices)
	if !Fits(&g.st, t) {
		return 0, false
	}
	_, devs := g.s.Score(&g.st, t)
	return devs, devs.Len() == t.GPUCount
}

type gpuPodScorer struct {
	g     *Scorer
	t     Task
	shape int32
}

// Score takes the memo's lock once per batch.
func (p *gpuPodScorer) Score(nodes []*snapshot.NodeInfo, out []int64) {
	p.g.mu.Lock()
	defer p.g.mu.Unlock()
	row := p.g.rowLocked(p.shape)
	cursor := int32(-1)
	for i, n := range nodes {
		out[i] = p.g.scoreLocked(n, p.t, p.shape, &row, &cursor).score
	}
}

// RandomScorer is the paper's Random baseline's node choice as a
// score.Scorer: every node gets a pseudo-random score in [0, MaxScore]
// derived from the seed, the pod and the node name (FNV-1a), so the
// highest-scoring feasible node is a uniformly random one, reproducibly
// for a seed. It chooses no devices: give the framework a
// snapshot.DeviceChooser (framework.Config.DeviceChooser, e.g. [BestFit])
// or combine it with one. Allocates nothing per node; safe for concurrent
// use.
type RandomScorer struct{ Seed uint64 }

var _ score.Scorer = RandomScorer{}

// Name returns "Random".
func (RandomScorer) Name() string { return "Random" }

// Prepare hashes the seed and the pod key once.
func (r RandomScorer) Prepare(pod *snapshot.PodInfo, _ score.Cluster) (score.PodScorer, error) {
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
		out[i] = int64(h % uint64(score.MaxScore+1))
	}
}
