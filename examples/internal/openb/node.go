package openb

import (
	"io"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schema "github.com/schedkit/schedkit/snapshot/load/openb"
)

// Devices reads the devices of the objects [Node.Object] and [Pod.Object]
// make (and of any object of the same schema): the core's decoder
// (openb.Devices of package snapshot/load/openb). Give it to the caches,
// ledgers and replay inputs that hold them.
var Devices = schema.Devices

// Names used by the trace's authors (cluster-trace-gpu-v2023
// pod_csv_to_yaml.py and node_yaml/openb_node_list_gpu_node.yaml). GPU
// demand is not a Kubernetes resource request: pods carry it in annotations,
// nodes advertise it as two extended resources. The schema is the core's
// package snapshot/load/openb (its decoder is [Devices]); these are its
// names.
const (
	// Namespace holds every trace pod.
	Namespace = "paib-gpu"
	// ResourceGPUCount is a node's number of whole GPUs.
	ResourceGPUCount = schema.ResourceGPUCount
	// ResourceGPUMilli is a node's GPU capacity in thousandths (GPUs × 1000).
	ResourceGPUMilli = schema.ResourceGPUMilli
	// LabelGPUCardModel is a node's GPU model label.
	LabelGPUCardModel = schema.LabelGPUModel
	// AnnotationGPUCount is a pod's number of GPUs.
	AnnotationGPUCount = schema.AnnotationGPUCount
	// AnnotationGPUMilli is a pod's per-GPU share in thousandths, 0..1000.
	AnnotationGPUMilli = schema.AnnotationGPUMilli
	// AnnotationGPUCardModel is a pod's allowed GPU models, "|"-separated.
	AnnotationGPUCardModel = schema.AnnotationGPUModel
	// AnnotationGPUIndex is a bound pod's device indexes, "-"-separated.
	AnnotationGPUIndex = schema.AnnotationGPUIndex
	// MaxPods is every node's pods capacity in the authors' node YAML.
	MaxPods = 1001
)

// Node is one row of a node list (openb_node_list_all_node.csv,
// openb_node_list_gpu_node.csv): columns sn, cpu_milli, memory_mib, gpu,
// model.
type Node struct {
	Name      string // sn, e.g. "openb-node-0000"
	MilliCPU  int64  // cpu_milli: CPU capacity in milli-CPU (64000 = 64 cores)
	MemoryMiB int64  // memory_mib: memory capacity in MiB (2^20 bytes), at most MaxInt64>>20
	GPUs      int64  // gpu: whole GPUs on the node (0, 1, 2, 4, 8 in the trace)
	Model     string // model: GPU model (P100, T4, V100M16, V100M32, A10, G1..G3); "" for CPU-only nodes
}

var nodeColumns = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}

// ReadNodes parses a node list CSV from r; name is used in errors only. The
// columns are found by header name, in any order; other columns are ignored.
// An empty model means a CPU-only node. Every numeric field must be a
// non-negative integer (memory_mib at most MaxInt64>>20, gpu at most
// MaxInt64/1000, so that bytes and gpu-milli fit in int64), and sn must be
// non-empty and unique.
//
// In Strict mode the first bad row ends the read with its [*Error] and no
// nodes; skipped is always nil. In Lenient mode bad rows are left out and
// returned in skipped, in file order; err is then only for the file as a
// whole ([ErrIO], [ErrHeader]). O(rows) time; about one allocation per row
// (the name) plus the result slice's growth.
func ReadNodes(r io.Reader, name string, mode Mode) (nodes []Node, skipped []*Error, err error) {
	return readRows(r, name, mode, nodeColumns, "sn", func(t *table) (Node, string) {
		n := Node{
			Name:      t.str("sn"),
			MilliCPU:  t.int("cpu_milli", maxInt),
			MemoryMiB: t.int("memory_mib", maxMemoryMiB),
			GPUs:      t.int("gpu", maxGPUs),
			Model:     t.str("model"),
		}
		return n, n.Name
	})
}

// ReadNodesFile is [ReadNodes] on the file at path, with path as the name.
func ReadNodesFile(path string, mode Mode) (nodes []Node, skipped []*Error, err error) {
	return readFile(path, mode, ReadNodes)
}

// Object returns the node as the trace's authors give it to their
// kube-scheduler simulator (node_yaml/openb_node_list_gpu_node.yaml): labels
// kubernetes.io/hostname, kubernetes.io/os and beta.kubernetes.io/os
// "linux", and [LabelGPUCardModel] when Model is set; status.capacity and
// status.allocatable both { cpu, memory, [ResourceGPUCount] = GPUs,
// [ResourceGPUMilli] = GPUs × 1000, pods = [MaxPods] }; no taints. CPU-only
// nodes get zero GPU resources and no model label. The two resource lists
// are separate maps. O(1).
func (n Node) Object() *v1.Node {
	labels := map[string]string{
		"beta.kubernetes.io/os":  "linux",
		"kubernetes.io/hostname": n.Name,
		"kubernetes.io/os":       "linux",
	}
	if n.Model != "" {
		labels[LabelGPUCardModel] = n.Model
	}
	capacity := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(n.MilliCPU, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(n.MemoryMiB<<20, resource.BinarySI),
		ResourceGPUCount:  *resource.NewQuantity(n.GPUs, resource.DecimalSI),
		ResourceGPUMilli:  *resource.NewQuantity(n.GPUs*1000, resource.DecimalSI),
		v1.ResourcePods:   *resource.NewQuantity(MaxPods, resource.DecimalSI),
	}
	return &v1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels},
		Status: v1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
		},
	}
}

// NodeObjects converts every node with [Node.Object], in order.
func NodeObjects(nodes []Node) []*v1.Node {
	out := make([]*v1.Node, len(nodes))
	for i, n := range nodes {
		out[i] = n.Object()
	}
	return out
}

// itoa formats a non-negative count for an annotation.
func itoa(v int64) string { return strconv.FormatInt(v, 10) }
