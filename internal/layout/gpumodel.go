package layout

import (
	"strings"
	"sync"
	"sync/atomic"
)

// gpuModels numbers the GPU model names of the nodes parsed so far (from
// 1; "" is 0), process-wide like the resource names. Readers load the
// map without locking; a new name copies it.
//
// It is a global on purpose and couples nothing: it is an append-only
// intern table (a name's number never changes once given), and numbers
// are only compared with each other (FilterBlock.GPUModel against the
// numbers of a pod's allowed models), never stored outside the process or
// read as an order, so two caches, ledgers or simulators in one process
// see consistent numbers and no result depends on which parsed a model
// first. A per-cache table would need the cache at every look-up (the
// GPUDevices filter's PreFilter has only the pod) and would make a
// NodeInfo's block meaningless outside the state that numbered it. Its
// only cost is memory: one entry per distinct model name ever parsed (a
// handful in real clusters: node labels from GPU feature discovery).
var gpuModels struct {
	mu  sync.Mutex
	ids atomic.Pointer[map[string]int32]
}

// RegisterGPUModel returns the number of the GPU model name, giving it
// the next one if it has none (0 for ""). O(1) for a known name; a new
// name copies the table (O(models)). Safe for concurrent use.
func RegisterGPUModel(name string) int32 {
	if name == "" {
		return 0
	}
	if id, ok := GPUModelID(name); ok {
		return id
	}
	gpuModels.mu.Lock()
	defer gpuModels.mu.Unlock()
	var old map[string]int32
	if p := gpuModels.ids.Load(); p != nil {
		old = *p
	}
	if id, ok := old[name]; ok {
		return id
	}
	m := make(map[string]int32, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	id := int32(len(old) + 1)
	m[strings.Clone(name)] = id
	gpuModels.ids.Store(&m)
	return id
}

// GPUModelID returns the number a node's devices of the GPU model name
// get in its fast-path FilterBlock (FilterBlock.GPUModel) and whether
// a node with that model has been parsed in this process (no node has a
// model that was never registered). O(1), no allocation, safe for
// concurrent use.
func GPUModelID(name string) (int32, bool) {
	p := gpuModels.ids.Load()
	if p == nil || name == "" {
		return 0, false
	}
	id, ok := (*p)[name]
	return id, ok
}
