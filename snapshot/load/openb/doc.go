// Package openb decodes the GPU device schema of Alibaba's GPU sharing
// scheduler, the one the openb trace uses (see
// ../shared/data/alibaba-clusterdata-gpu-v2023/SOURCE.md): node allocatable
// [ResourceGPUCount] and [ResourceGPUMilli] with the [LabelGPUModel]
// label, and pod annotations [AnnotationGPUCount], [AnnotationGPUMilli],
// [AnnotationGPUModel] and, on a bound pod, [AnnotationGPUIndex].
//
// Package snapshot keeps devices as plain counted data (snapshot.Device,
// snapshot.GPURequest, snapshot.DeviceSet) and reads them from objects
// through a snapshot.DeviceDecoder; it knows no trace's schema. This
// package is the decoder for this one: [Devices].
//
// # Usage
//
// Make the cache with it, and parse pods outside a cache with it:
//
//	c := snapshot.NewCacheWithDevices(openb.Devices)
//	_ = c.AddNode(node) // devices from alibabacloud.com/gpu-count, gpu-milli
//	pi, err := snapshot.DecodePodInfo(pod, openb.Devices)
//
// The reservation ledger takes it as reserve.WithDeviceDecoder(openb.Devices)
// (the framework's Loop parses pods with its ledger's decoder), replay as
// replay.NewInput's last argument; the kube-scheduler adapter
// (framework/kubescheduler) reads every node and pod with it.
//
// # Scheduling GPU pods
//
// Decoding is not enough to schedule the trace's GPU pods: the default
// filters do not look at devices, so add framework.NewGPUDevices (a node
// needs enough free devices of an allowed model), and give the scheduler
// a device choice — a profile scorer that is a snapshot.DeviceChooser
// (gpushare's policy scorers) or framework.Config.DeviceChooser — or
// placing a share demand on a node with devices is an error wrapping
// framework.ErrInvalidConfig:
//
//	s, err := framework.New(framework.Config{
//		Filters:       append(framework.DefaultFilters(), framework.NewGPUDevices()),
//		DeviceChooser: gpushare.BestFit{},
//	})
//	ledger := reserve.New(reserve.WithDeviceDecoder(openb.Devices))
//	d, err := s.Schedule(ledger, pi) // pi from snapshot.DecodePodInfo(pod, openb.Devices)
//
// Objects without the schema fall back to snapshot.NvidiaDevices (a node's
// nvidia.com/gpu, a pod's nvidia.com/gpu request); the pod annotations
// [AnnotationGPUModel] and [AnnotationGPUIndex] apply to such a request
// too.
//
// # Concurrency
//
// [Devices] is stateless and safe for concurrent use.
//
// # Cost
//
// A node: O(devices), one allocation. A pod: O(annotation length); it
// allocates only for the list of models.
//
// # Layer
//
// A loader beside snapshot/load: it imports snapshot only, and only
// programs that meet this schema (the simulator, replay, tests) import it.
package openb
