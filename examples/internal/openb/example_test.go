package openb_test

import (
	"fmt"
	"strings"

	"github.com/schedkit/schedkit/examples/internal/openb"
)

// Lenient reading keeps the good rows and says which rows it left out and
// why; Object gives the pod the trace's authors would create.
func ExampleReadPods() {
	const csv = `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061
openb-pod-0002,12000,lots,1,1000,,LS,Running,1558381,12902960,1558381
openb-pod-0061,11908,47104,1,1000,T4|P100,BE,Pending,10001278,10001403,
`
	pods, skipped, err := openb.ReadPods(strings.NewReader(csv), "pods.csv", openb.Lenient)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range pods {
		fmt.Printf("%s: %dm CPU, %d MiB, %d GPU × %d‰, models %v, scheduled %v\n",
			p.Name, p.MilliCPU, p.MemoryMiB, p.NumGPU, p.GPUMilli, p.GPUSpec, p.HasScheduled)
	}
	for _, e := range skipped {
		fmt.Println("skipped:", e)
	}
	obj := pods[1].Object()
	fmt.Println(obj.Namespace, obj.Spec.Containers[0].Resources.Requests.Memory(), obj.Annotations[openb.AnnotationGPUCardModel])
	// Output:
	// openb-pod-0001: 6000m CPU, 12288 MiB, 1 GPU × 460‰, models [], scheduled true
	// openb-pod-0061: 11908m CPU, 47104 MiB, 1 GPU × 1000‰, models [T4 P100], scheduled false
	// skipped: pods.csv:3: column memory_mib: openb: bad value: "lots" is not an integer
	// paib-gpu 46Gi T4|P100
}
