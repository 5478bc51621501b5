// Package openb parses the Alibaba "openb" GPU cluster trace
// (cluster-trace-gpu-v2023, the trace of Weng et al., "Beware of
// Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
// Descent", USENIX ATC '23) and turns its rows into Kubernetes objects the
// way the trace's authors do.
//
// The trace is CSV: node lists (sn, cpu_milli, memory_mib, gpu, model) and
// pod lists (name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos,
// pod_phase, creation_time, deletion_time, scheduled_time; the multigpu
// variants have the first five columns only). The files live outside the
// repository, in ../shared/data/alibaba-clusterdata-gpu-v2023 (see its
// SOURCE.md for origin, terms of use and column meanings); research use with
// citation.
//
// Parsing uses encoding/csv and finds columns by header name. Fields mean
// what the data means: memory_mib 0 is a real zero request, an empty
// scheduled_time is a task never scheduled ([Pod.HasScheduled] false), an
// empty gpu_spec allows any GPU model ([Pod.GPUSpec] nil), an empty model is
// a CPU-only node. A malformed row is an [*Error] naming file:line and the
// column; in [Strict] mode it fails the read, in [Lenient] mode the row is
// skipped and its error returned in a list.
//
// [Node.Object] and [Pod.Object] follow the authors' mapping
// (node_yaml/openb_node_list_gpu_node.yaml and pod_csv_to_yaml.py): GPU
// capacity as the extended resources [ResourceGPUCount] and
// [ResourceGPUMilli] on nodes, GPU demand as annotations on pods, CPU and
// memory as ordinary requests and capacities.
//
// # Usage
//
//	nodes, _, err := openb.ReadNodesFile(dir+"/openb_node_list_gpu_node.csv", openb.Strict)
//	if err != nil {
//		return err // e.g. openb_node_list_gpu_node.csv:12: column cpu_milli: openb: bad value: "x" is not an integer
//	}
//	pods, skipped, err := openb.ReadPodsFile(dir+"/openb_pod_list_default.csv", openb.Lenient)
//	if err != nil {
//		return err
//	}
//	for _, e := range skipped {
//		log.Print(e) // rows left out
//	}
//	for _, n := range openb.NodeObjects(nodes) {
//		cache.AddNode(n)
//	}
//	for _, p := range pods { // replay arrivals in trace order
//		schedule(p.Object())
//	}
//
// # Concurrency
//
// Functions keep no state between calls and are safe for concurrent use;
// the returned slices and objects belong to the caller.
//
// # Cost
//
// Reading is O(rows) time with about one allocation per row (the name; the
// gpu_spec parts when set) plus the growth of the result slice: the
// 8152-row default pod list (0.57 MB) takes about 12 ms of CPU (1.4 µs a
// row) and 7 MB of allocations (BenchmarkReadPods, on a shared 2-core
// machine). [Pod.Object] and [Node.Object] allocate
// one object each, with its maps.
package openb
