package main

import "os"

// A tiny GPU cluster (testdata/gpu-cluster.yaml: two 2-GPU nodes and a CPU
// node; two pods sharing half a GPU each, a 2-GPU training pod and a CPU
// job, queued in that order). Spreading the shares (least) leaves no node
// with two idle GPUs for the training pod; FGD packs them on one GPU.
func Example() {
	run([]string{"-objects", "testdata/gpu-cluster.yaml", "-policy", "least,fgd", "-timing=false", "-explain", "train"}, os.Stdout, os.Stdout)
	// Output:
	// schedkit simulate: objects from testdata/gpu-cluster.yaml
	// 3 nodes, 4 pods to schedule (queued at once, priority order), 0 bound before; demand axis GPU, capacity 4 GPUs
	// CPU%, MEM%, GPU%, GPU-FRAG% and NODES: the cluster after the last arrival
	// GPU-FRAG%: share of the free GPU capacity that pods shaped like the arrivals cannot use (FGD paper, section 4)
	//
	//   POLICY  RUNS  ARRIVED  PLACED  UNSCHED  CPU%  MEM%  GPU%  GPU-FRAG%  NODES
	//    least     1        4       3        1  25.0  25.0  25.0       50.0      3
	//      fgd     1        4       4        0  37.5  37.5  75.0       50.0      3
	//
	// unschedulable pods by the reason most nodes gave:
	//   least         1 Insufficient alibabacloud.com/gpu-milli
	//
	// explain default/train under least (seed 1, arrival 3): unschedulable
	//   0/3 nodes are available: 3 Insufficient alibabacloud.com/gpu-milli.
	//
	// explain default/train under fgd (seed 1, arrival 3): node gpu-a, GPUs [0 1]; 1 feasible of the 3 nodes the cycle filtered
	//   2 of 3 nodes filtered out: 2 Insufficient alibabacloud.com/gpu-milli
	//   node gpu-a: total 6262
	//   SCORER           RAW  NORMALIZED  WEIGHT  CONTRIBUTION  DETAIL
	//   FGD               62          62     101          6262  devices [0 1], fragmentation 500.0 -> 0.0 milli-GPU
	//   TieBreakRank0      0           0       1             0  rank 2 of 3
}
