package openb

import (
	"fmt"
	"io"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// QoS is the trace's quality-of-service class of a task.
type QoS string

// The trace's QoS classes.
const (
	QoSLS         QoS = "LS"         // latency-sensitive
	QoSBE         QoS = "BE"         // best effort
	QoSBurstable  QoS = "Burstable"  // Kubernetes Burstable
	QoSGuaranteed QoS = "Guaranteed" // Kubernetes Guaranteed
)

// Pod is one row of a pod list (openb_pod_list_*.csv). The multigpu files
// have only the first five columns; the others are then zero, empty or
// marked absent.
type Pod struct {
	Name      string // name, e.g. "openb-pod-0000"
	MilliCPU  int64  // cpu_milli: CPU request in milli-CPU
	MemoryMiB int64  // memory_mib: memory request in MiB; 0 is a real 0 request (openb-pod-1523); at most MaxInt64>>20
	NumGPU    int64  // num_gpu: GPUs requested (0..8 in the trace)
	// GPUMilli is gpu_milli, the per-GPU share in thousandths as written:
	// 1000 is a whole GPU, less is a shared GPU (meaningful when NumGPU is
	// 1), 0 when NumGPU is 0. [ReadPods] refuses values above 1000 and
	// non-zero values with NumGPU 0; a Pod built in code with a value
	// above 1000 is clamped by [Pod.Object], as the authors' script does.
	GPUMilli int64
	// GPUSpec is gpu_spec split on "|": the GPU models the task may run on,
	// in file order, with empty parts dropped and repeats kept
	// ("V100M16|V100M32|V100M32" occurs). Nil means any model.
	GPUSpec []string
	QoS     QoS         // qos; "" when the column is absent or empty
	Phase   v1.PodPhase // pod_phase, the phase at the end of the trace; "" when absent or empty
	// Creation, Deletion and Scheduled are creation_time, deletion_time and
	// scheduled_time: whole seconds since the trace start, as durations.
	// Each is valid only when its Has flag is set; an empty scheduled_time
	// means the task was never scheduled (the Pending tasks).
	Creation, Deletion, Scheduled          time.Duration
	HasCreation, HasDeletion, HasScheduled bool
}

var podColumns = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}

// ReadPods parses a pod list CSV from r; name is used in errors only.
// Columns are found by header name: name, cpu_milli, memory_mib, num_gpu and
// gpu_milli are required; gpu_spec, qos, pod_phase, creation_time,
// deletion_time and scheduled_time are optional (the multigpu files lack
// them) and may be empty in a row. Numbers must be non-negative integers
// (memory_mib at most MaxInt64>>20, times at most MaxInt64 nanoseconds in
// seconds); gpu_milli at most 1000 (a share of one GPU: more would be a
// fractional GPU count, which the API server refuses for nvidia.com/gpu)
// and 0 when num_gpu is 0; qos must be LS, BE, Burstable or Guaranteed;
// pod_phase Running, Pending, Succeeded or Failed; name non-empty and
// unique. No other rule across columns is enforced (such as deletion
// after creation, or Pending exactly when scheduled_time is empty): the
// trace breaks none of them, and what to make of such a row is the
// replay's decision.
//
// Modes, skipped and err are as for [ReadNodes]. O(rows) time.
func ReadPods(r io.Reader, name string, mode Mode) (pods []Pod, skipped []*Error, err error) {
	return readRows(r, name, mode, podColumns, "name", func(t *table) (Pod, string) {
		p := Pod{
			Name:      t.str("name"),
			MilliCPU:  t.int("cpu_milli", maxInt),
			MemoryMiB: t.int("memory_mib", maxMemoryMiB),
			NumGPU:    t.int("num_gpu", maxInt),
			GPUMilli:  t.int("gpu_milli", maxInt),
			GPUSpec:   splitSpec(t.str("gpu_spec")),
			QoS:       QoS(t.oneOf("qos", string(QoSLS), string(QoSBE), string(QoSBurstable), string(QoSGuaranteed))),
			Phase: v1.PodPhase(t.oneOf("pod_phase",
				string(v1.PodRunning), string(v1.PodPending), string(v1.PodSucceeded), string(v1.PodFailed))),
		}
		gpuShare(t, p.NumGPU, p.GPUMilli)
		p.Creation, p.HasCreation = t.seconds("creation_time")
		p.Deletion, p.HasDeletion = t.seconds("deletion_time")
		p.Scheduled, p.HasScheduled = t.seconds("scheduled_time")
		return p, p.Name
	})
}

// gpuShare rejects a gpu_milli that cannot be what the column means, a
// share of each requested GPU in thousandths: above 1000 (1500 with one
// GPU would be one and a half GPUs, a fractional nvidia.com/gpu the API
// server refuses; the authors' script clamps it to 1000, silently
// dropping the half), or non-zero with num_gpu 0 (a share of no GPU,
// which [Pod.Object] would drop). The trace has neither.
func gpuShare(t *table, numGPU, milli int64) {
	switch {
	case milli > 1000:
		t.reject("gpu_milli", fmt.Errorf("%w: %d is more than one GPU (1000): gpu_milli is the share of each GPU, at most a whole one; ask for whole GPUs in num_gpu", ErrValue, milli))
	case milli != 0 && numGPU == 0:
		t.reject("gpu_milli", fmt.Errorf("%w: %d with num_gpu 0: a share of no GPU", ErrValue, milli))
	}
}

// ReadPodsFile is [ReadPods] on the file at path, with path as the name.
func ReadPodsFile(path string, mode Mode) (pods []Pod, skipped []*Error, err error) {
	return readFile(path, mode, ReadPods)
}

// splitSpec splits a gpu_spec value, dropping empty parts; nil for none.
func splitSpec(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, "|") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// GPUMilliClamped is GPUMilli limited to [0, 1000], as the authors write the
// annotation: values above 1000 become 1000.
func (p Pod) GPUMilliClamped() int64 { return min(max(p.GPUMilli, 0), 1000) }

// Object returns the pod as the trace's authors create it
// (pod_csv_to_yaml.py): namespace [Namespace]; one container "main", image
// tensorflow:latest, imagePullPolicy Always, with requests == limits ==
// { cpu: MilliCPU m, memory: MemoryMiB Mi } (memory 0 stays an explicit 0
// request); restartPolicy OnFailure, dnsPolicy Default. When NumGPU is not
// 0, annotations [AnnotationGPUCount] = NumGPU, [AnnotationGPUMilli] =
// [Pod.GPUMilliClamped], and [AnnotationGPUCardModel] = GPUSpec joined with
// "|" when GPUSpec is set; CPU-only pods get no annotations. The trace's
// phase and times are not written, as in the authors' script (its
// creation/deletion lines are commented out): the pod is a fresh one to
// schedule. O(len(GPUSpec)).
func (p Pod) Object() *v1.Pod {
	requests := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(p.MilliCPU, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(p.MemoryMiB<<20, resource.BinarySI),
	}
	pod := &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: Namespace},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{
				Name:            "main",
				Image:           "tensorflow:latest",
				ImagePullPolicy: v1.PullAlways,
				Resources:       v1.ResourceRequirements{Requests: requests, Limits: requests.DeepCopy()},
			}},
			RestartPolicy: v1.RestartPolicyOnFailure,
			DNSPolicy:     v1.DNSDefault,
		},
	}
	if p.NumGPU != 0 {
		pod.Annotations = map[string]string{
			AnnotationGPUCount: itoa(p.NumGPU),
			AnnotationGPUMilli: itoa(p.GPUMilliClamped()),
		}
		if len(p.GPUSpec) > 0 {
			pod.Annotations[AnnotationGPUCardModel] = strings.Join(p.GPUSpec, "|")
		}
	}
	return pod
}

// PodObjects converts every pod with [Pod.Object], in order.
func PodObjects(pods []Pod) []*v1.Pod {
	out := make([]*v1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.Object()
	}
	return out
}
