package gpushare

import (
	"fmt"
	"math/bits"
)

// Task is the resource shape of one pod as the GPU policies see it.
//
// A task is a GPU task when GPUCount > 0 and MilliGPU > 0; it then needs
// GPUCount distinct devices, each with at least MilliGPU free milli-GPU of
// an allowed model. Any other task is CPU-only and only needs MilliCPU and
// Memory. A task is shared (fractional) when it is a GPU task with
// GPUCount == 1 and MilliGPU < MilliPerDevice; the openb trace's gpu_milli
// column is MilliGPU and num_gpu is GPUCount.
//
// The zero Task is a valid CPU-only task that asks for nothing.
type Task struct {
	// MilliCPU is the requested CPU in milli-cores. The scorers use it as
	// given; callers that want upstream's non-zero default for pods without
	// a CPU request (100m) apply it before building the Task.
	MilliCPU int64
	// Memory is the requested memory in bytes. Only Fits uses it: memory
	// plays no part in fragmentation or in any score (as in the paper).
	Memory int64
	// GPUCount is the number of devices the task needs, 0 for CPU-only.
	GPUCount int
	// MilliGPU is the share of each device the task needs, in
	// [0, MilliPerDevice]; MilliPerDevice means a whole device.
	MilliGPU int64
	// Models lists the device models the task may use (openb's gpu_spec,
	// the annotation alibabacloud.com/gpu-card-model split on "|").
	// Empty entries are ignored; no non-empty entry means any model.
	Models []string
}

// UsesGPU reports whether t is a GPU task (GPUCount > 0 and MilliGPU > 0).
func (t Task) UsesGPU() bool { return t.GPUCount > 0 && t.MilliGPU > 0 }

// Shared reports whether t asks for a fraction of one device: a GPU task
// with GPUCount == 1 and MilliGPU < MilliPerDevice.
func (t Task) Shared() bool { return t.UsesGPU() && t.GPUCount == 1 && t.MilliGPU < MilliPerDevice }

// TotalMilliGPU returns GPUCount × MilliGPU in milli-GPU (0 for CPU-only
// tasks), saturating at math.MaxInt64.
func (t Task) TotalMilliGPU() int64 {
	if !t.UsesGPU() {
		return 0
	}
	return satMul(int64(t.GPUCount), t.MilliGPU)
}

// Allows reports whether t may run on a device of the given model. A task
// without model constraint allows every model, including "".
func (t Task) Allows(model string) bool {
	constrained := false
	for _, m := range t.Models {
		if m == "" {
			continue
		}
		if m == model {
			return true
		}
		constrained = true
	}
	return !constrained
}

// constrained reports whether t names at least one model.
func (t Task) constrained() bool {
	for _, m := range t.Models {
		if m != "" {
			return true
		}
	}
	return false
}

// Class is the GPU affinity class of a task, used by GPUClustering: 0 for
// shared tasks, k for tasks that take k whole devices (capped at
// MaxDevices-1). The simulator spells them "share-gpu" and "<k>-gpu".
type Class uint8

// ClassSet is a set of Classes, one bit per class. A node's ResidentClasses
// records which classes of GPU task already run on it.
type ClassSet uint64

// Has reports whether c is in s.
func (s ClassSet) Has(c Class) bool { return s&(1<<(c%64)) != 0 }

// With returns s ∪ {c}.
func (s ClassSet) With(c Class) ClassSet { return s | 1<<(c%64) }

// Len returns the number of classes in s.
func (s ClassSet) Len() int { return bits.OnesCount64(uint64(s)) }

// Class returns t's GPU affinity class; ok is false for CPU-only tasks,
// which have no class.
func (t Task) Class() (c Class, ok bool) {
	if !t.UsesGPU() {
		return 0, false
	}
	if t.Shared() {
		return 0, true
	}
	return Class(min(t.GPUCount, MaxDevices-1)), true
}

// Validate reports the first field of t that is out of range, wrapping
// ErrInvalidTask: negative MilliCPU, Memory or GPUCount, or MilliGPU outside
// [0, MilliPerDevice]. A task asking for more devices than any node has is
// valid; it simply fits nowhere.
func (t Task) Validate() error {
	switch {
	case t.MilliCPU < 0:
		return fmt.Errorf("%w: MilliCPU = %d, want >= 0", ErrInvalidTask, t.MilliCPU)
	case t.Memory < 0:
		return fmt.Errorf("%w: Memory = %d, want >= 0", ErrInvalidTask, t.Memory)
	case t.GPUCount < 0:
		return fmt.Errorf("%w: GPUCount = %d, want >= 0", ErrInvalidTask, t.GPUCount)
	case t.MilliGPU < 0 || t.MilliGPU > MilliPerDevice:
		return fmt.Errorf("%w: MilliGPU = %d, want 0..%d", ErrInvalidTask, t.MilliGPU, MilliPerDevice)
	}
	return nil
}
