package gpushare

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/schedkit/schedkit/internal/arith"
)

// Workload is a target workload: task shapes with their popularity
// (weights summing to 1). It defines the fragmentation measure of the FGD
// paper (Weng et al., "Beware of Fragmentation", USENIX ATC '23, §4): the
// expected free GPU capacity of a node that a task drawn from the workload
// cannot use.
//
// A Workload is immutable after construction and safe for concurrent use.
type Workload struct {
	shapes  []shape
	weights []float64
}

// shape is one task shape with its model constraint pre-digested.
type shape struct {
	task        Task // Memory is always 0: memory is not part of a shape
	gpu         bool // task.UsesGPU()
	constrained bool // task has a non-empty model
}

func newShape(t Task) shape {
	t.Memory = 0
	t.Models = slices.Clone(t.Models)
	return shape{task: t, gpu: t.UsesGPU(), constrained: t.constrained()}
}

// NewWorkload returns the workload with the given shapes and weights, in
// that order; weights are divided by their sum. Task.Memory is ignored.
// It returns an error wrapping ErrInvalidWorkload or ErrInvalidTask when
// there is no shape, the lengths differ, a weight is negative, NaN or
// infinite, the weights sum to 0, or a shape is invalid. O(len(shapes)).
func NewWorkload(shapes []Task, weights []float64) (*Workload, error) {
	if len(shapes) == 0 {
		return nil, fmt.Errorf("%w: no shape", ErrInvalidWorkload)
	}
	if len(shapes) != len(weights) {
		return nil, fmt.Errorf("%w: %d shapes but %d weights", ErrInvalidWorkload, len(shapes), len(weights))
	}
	var sum float64
	for i, p := range weights {
		if p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("%w: weights[%d] = %v, want finite and >= 0", ErrInvalidWorkload, i, p)
		}
		sum += p
	}
	if sum <= 0 || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("%w: weights sum to %v, want > 0 and finite", ErrInvalidWorkload, sum)
	}
	w := &Workload{shapes: make([]shape, len(shapes)), weights: make([]float64, len(shapes))}
	for i, t := range shapes {
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("shapes[%d]: %w", i, err)
		}
		w.shapes[i] = newShape(t)
		w.weights[i] = weights[i] / sum
	}
	return w, nil
}

// shapeKey identifies a task shape: the simulator's PodResource
// {MilliCpu, MilliGpu, GpuNumber, GpuType}.
type shapeKey struct {
	milliCPU, milliGPU int64
	count              int
	models             string
}

func keyOf(t *Task) shapeKey {
	var b strings.Builder
	for _, m := range t.Models {
		if m == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		b.WriteString(m)
	}
	return shapeKey{milliCPU: t.MilliCPU, milliGPU: t.MilliGPU, count: t.GPUCount, models: b.String()}
}

// WorkloadFromTasks learns a target workload from observed tasks the way the
// authors' simulator does (GetTypicalPods in pkg/utils/frag.go, with
// isInvolvedCpuPods=true, podIncreaseStep=1, gpuResWeight=0): tasks are
// grouped by shape (MilliCPU, MilliGPU, GPUCount, Models; not Memory), shapes
// are ordered by decreasing count (equal counts: larger MilliCPU, then
// MilliGPU, GPUCount, models first), and the most popular shapes are kept
// until they cover coveragePercent % of the tasks (the simulator's
// podPopularityThreshold, 95 in the paper's runs); their weights are
// count/total renormalised by the covered fraction, with the simulator's
// floating-point operations so that FGD scores match it bit for bit.
//
// It returns an error wrapping ErrInvalidWorkload for no task or a coverage
// outside (0, 100], and ErrInvalidTask for an invalid task.
// O(len(tasks) + shapes·log shapes); allocates the shape table.
func WorkloadFromTasks(tasks []Task, coveragePercent float64) (*Workload, error) {
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%w: no task", ErrInvalidWorkload)
	}
	if !(coveragePercent > 0 && coveragePercent <= 100) {
		return nil, fmt.Errorf("%w: coveragePercent = %v, want (0, 100]", ErrInvalidWorkload, coveragePercent)
	}
	type entry struct {
		key   shapeKey
		task  Task
		count float64
	}
	index := make(map[shapeKey]int)
	var entries []entry
	for i := range tasks {
		if err := tasks[i].Validate(); err != nil {
			return nil, fmt.Errorf("tasks[%d]: %w", i, err)
		}
		k := keyOf(&tasks[i])
		j, ok := index[k]
		if !ok {
			j = len(entries)
			index[k] = j
			entries = append(entries, entry{key: k, task: tasks[i]})
		}
		entries[j].count++
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := cmp.Compare(b.count, a.count); c != 0 {
			return c
		}
		return cmp.Or(
			cmp.Compare(b.key.milliCPU, a.key.milliCPU),
			cmp.Compare(b.key.milliGPU, a.key.milliGPU),
			cmp.Compare(b.key.count, a.key.count),
			cmp.Compare(b.key.models, a.key.models),
		)
	})
	total := float64(len(tasks))
	expected := coveragePercent * total / 100.0
	var cum float64
	i := 0
	w := &Workload{}
	for cum < expected && i < len(entries) {
		cum += entries[i].count
		w.shapes = append(w.shapes, newShape(entries[i].task))
		w.weights = append(w.weights, entries[i].count/total)
		i++
	}
	if i < len(entries) {
		for j := range w.weights {
			w.weights[j] /= cum / total
		}
	}
	return w, nil
}

// Len returns the number of shapes.
func (w *Workload) Len() int { return len(w.shapes) }

// Shape returns shape i (Memory 0) and its weight. The Models slice is
// shared with w and must not be modified. It panics if i is out of range.
func (w *Workload) Shape(i int) (Task, float64) { return w.shapes[i].task, w.weights[i] }

// Fragmentation buckets, in the order the simulator sums them
// (FragRatioDataMap in pkg/utils/frag.go).
const (
	bucketLackBoth  = iota // Q1: neither GPU nor CPU fits
	bucketLackGPU          // Q2: GPU does not fit (plus unusable devices in Q3)
	bucketSatisfied        // Q3: usable part of a node that can host the task; not fragment
	bucketLackCPU          // Q4: GPU fits, CPU does not
	bucketCPUFits          // XL: CPU-only task, CPU fits
	bucketCPULacks         // XR: CPU-only task, CPU does not fit
	bucketNoAccess         // NA: no device of an allowed model
	numBuckets
)

// buckets is a node's (or cluster's) free GPU split by bucket.
type buckets [numBuckets]float64

// fragment sums every bucket but Q3, in the simulator's order.
func (b *buckets) fragment() float64 {
	var out float64
	for i := range b {
		if i != bucketSatisfied {
			out += b[i]
		}
	}
	return out
}

// view is a node's free resources with a tentative placement applied.
type view struct {
	cpu   int64
	total int64
	n     int
	free  [MaxDevices]int64
}

// newView returns n's free resources after taking cpu milli-CPU and milli
// milli-GPU from each device in take.
func newView(n *NodeState, cpu int64, take DeviceSet, milli int64) view {
	devs := n.devices()
	v := view{cpu: arith.Sub(n.FreeMilliCPU, cpu), n: len(devs)}
	for i := range devs {
		f := devs[i].FreeMilliGPU
		if take.Has(i) {
			f = arith.Sub(f, milli)
		}
		v.free[i] = f
		v.total = arith.Add(v.total, f)
	}
	return v
}

// split computes the buckets of node n in state v (the simulator's
// NodeGpuShareFragAmount, pkg/utils/frag.go): for each shape m with weight
// p, all free milli-GPU goes to one non-Q3 bucket unless n can host m (enough
// devices of an allowed model with enough free, and enough CPU); then only
// the free milli-GPU of the devices that cannot take m (too little free, or
// a disallowed model) is fragment (bucket Q2) and the rest is Q3. A CPU-only
// shape makes all free milli-GPU fragment. O(shapes × devices).
func (w *Workload) split(n *NodeState, v *view) buckets {
	var b buckets
	devs := n.devices()
	for k := range w.shapes {
		s := &w.shapes[k]
		var f shapeFit
		if s.gpu {
			f = s.fit(devs, v)
		}
		b.add(s, w.weights[k], v.cpu, v.total, f)
	}
	return b
}

// shapeFit is how the devices of a node view serve one GPU shape: how many
// can take one share of it, whether any has an allowed model, and the free
// milli-GPU of those that cannot take a share.
type shapeFit struct {
	usable   int
	allowed  bool
	unusable int64
}

// fit scans the devices of view v for shape s. O(devices).
func (s *shape) fit(devs []Device, v *view) shapeFit {
	var f shapeFit
	for i := 0; i < v.n; i++ {
		ok := !s.constrained || s.task.Allows(devs[i].Model)
		f.allowed = f.allowed || ok
		if ok && v.free[i] >= s.task.MilliGPU {
			f.usable++
		} else {
			f.unusable = arith.Add(f.unusable, v.free[i])
		}
	}
	return f
}

// add puts shape s's share (weight p) of a view's free milli-GPU (total,
// with cpu milli-CPU free and fit f; f is unused for a CPU-only shape) into
// its buckets. O(1).
func (b *buckets) add(s *shape, p float64, cpu, total int64, f shapeFit) {
	all := float64(total)
	cpuFits := cpu >= s.task.MilliCPU
	if !s.gpu {
		if cpuFits {
			b[bucketCPUFits] += p * all
		} else {
			b[bucketCPULacks] += p * all
		}
		return
	}
	switch {
	case !f.allowed:
		b[bucketNoAccess] += p * all
	case f.usable >= s.task.GPUCount && cpuFits:
		b[bucketLackGPU] += p * float64(f.unusable)
		b[bucketSatisfied] += p * float64(total-f.unusable)
	case f.usable >= s.task.GPUCount:
		b[bucketLackCPU] += p * all
	case cpuFits:
		b[bucketLackGPU] += p * all
	default:
		b[bucketLackBoth] += p * all
	}
}

// maxFitShapes is the largest workload whose per-shape fits a nodeFits
// keeps (on the stack); larger workloads recompute split per placement.
const maxFitShapes = 128

// exactBound bounds the free milli-GPU of a device and a task's MilliGPU
// for nodeFits' incremental arithmetic: with |values| <= 2^55 and at most
// MaxDevices devices no sum saturates, so adjusting a sum gives exactly
// what split's saturating sum over the devices gives.
const exactBound = 1 << 55

// nodeFits is a node's free resources and, for every shape of a workload,
// its shapeFit, so that the fragmentation after a tentative placement is
// O(shapes × devices taken) instead of O(shapes × devices), with the very
// same floating-point operations as split.
type nodeFits struct {
	n     *NodeState
	v     view
	exact bool // fits holds every shape and sums adjust exactly
	fits  [maxFitShapes]shapeFit
}

// fitsOf fills nf for node n and returns n's fragmentation
// (Fragmentation(n)). O(shapes × devices).
func (w *Workload) fitsOf(n *NodeState, nf *nodeFits) float64 {
	nf.n, nf.v = n, newView(n, 0, 0, 0)
	nf.exact = len(w.shapes) <= maxFitShapes
	for i := 0; i < nf.v.n && nf.exact; i++ {
		nf.exact = nf.v.free[i] >= -exactBound && nf.v.free[i] <= exactBound
	}
	if !nf.exact {
		b := w.split(n, &nf.v)
		return b.fragment()
	}
	var b buckets
	devs := n.devices()
	for k := range w.shapes {
		s := &w.shapes[k]
		if s.gpu {
			nf.fits[k] = s.fit(devs, &nf.v)
		}
		b.add(s, w.weights[k], nf.v.cpu, nf.v.total, nf.fits[k])
	}
	return b.fragment()
}

// fragmentAfter returns the fragmentation of nf's node after taking cpu
// milli-CPU and milli milli-GPU from each device in take (devices the node
// does not have are ignored): the value split gives on newView(n, cpu,
// take, milli). O(shapes × len(take)), or O(shapes × devices) when nf is
// not exact.
func (w *Workload) fragmentAfter(nf *nodeFits, cpu int64, take DeviceSet, milli int64) float64 {
	if !nf.exact || milli < -exactBound || milli > exactBound {
		v := newView(nf.n, cpu, take, milli)
		b := w.split(nf.n, &v)
		return b.fragment()
	}
	devs := nf.n.devices()
	vcpu := arith.Sub(nf.n.FreeMilliCPU, cpu)
	total := nf.v.total
	for t := uint64(take); t != 0; t &= t - 1 {
		if i := bits.TrailingZeros64(t); i < nf.v.n {
			total -= milli
		}
	}
	var b buckets
	for k := range w.shapes {
		s := &w.shapes[k]
		f := nf.fits[k]
		if s.gpu {
			for t := uint64(take); t != 0; t &= t - 1 {
				i := bits.TrailingZeros64(t)
				if i >= nf.v.n {
					continue
				}
				ok := !s.constrained || s.task.Allows(devs[i].Model)
				f0 := nf.v.free[i]
				f1 := f0 - milli
				if ok && f0 >= s.task.MilliGPU {
					f.usable--
				} else {
					f.unusable -= f0
				}
				if ok && f1 >= s.task.MilliGPU {
					f.usable++
				} else {
					f.unusable += f1
				}
			}
		}
		b.add(s, w.weights[k], vcpu, total, f)
	}
	return b.fragment()
}

// Fragmentation returns the expected free milli-GPU of n that a task drawn
// from w cannot use: Σ_m p_m · frag(n, m) (the FGD paper's F_n(M), §4). The
// result is in [0, n.FreeMilliGPU()] for a valid node (up to rounding of the
// weights' sum). O(shapes × devices); allocates nothing.
func (w *Workload) Fragmentation(n *NodeState) float64 {
	v := newView(n, 0, 0, 0)
	b := w.split(n, &v)
	return b.fragment()
}

// ClusterFragmentation returns the sum of the nodes' fragmentation in
// milli-GPU, accumulated per bucket as the simulator's ClusterGpuFragReport
// does. O(nodes × shapes × devices); allocates nothing.
func (w *Workload) ClusterFragmentation(nodes []NodeState) float64 {
	b := w.clusterBuckets(nodes)
	return b.fragment()
}

// FragmentationRatio returns ClusterFragmentation divided by the cluster's
// free milli-GPU (the sum of all buckets, as the simulator computes it), in
// [0, 1]; 0 when nothing is free. O(nodes × shapes × devices).
func (w *Workload) FragmentationRatio(nodes []NodeState) float64 {
	b := w.clusterBuckets(nodes)
	var idle float64
	for _, x := range b {
		idle += x
	}
	if idle <= 0 {
		return 0
	}
	return min(max(b.fragment()/idle, 0), 1)
}

func (w *Workload) clusterBuckets(nodes []NodeState) buckets {
	var c buckets
	for i := range nodes {
		v := newView(&nodes[i], 0, 0, 0)
		b := w.split(&nodes[i], &v)
		for k := range c {
			c[k] += b[k]
		}
	}
	return c
}
