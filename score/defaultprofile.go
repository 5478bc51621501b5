package score

// DefaultProfile returns upstream's default score plugins, as far as this
// package implements them, with upstream's weights and order
// (kube-scheduler v1.37 pkg/scheduler/apis/config/v1/default_plugins.go):
//
//	TaintToleration                  3
//	NodeAffinity                     2
//	NodeResourcesFit (LeastAllocated, cpu:1 memory:1)   1
//	NodeResourcesBalancedAllocation (cpu, memory)       1
//	ImageLocality                    1
//
// Upstream's default profile also scores PodTopologySpread (weight 2) and
// InterPodAffinity (weight 2); they are not here, so totals equal
// upstream's only for pods and clusters where those two give every node
// the same score (no topology spread constraints, no inter-pod
// (anti-)affinity, no pod selected by a Service or owned by a
// ReplicationController, ReplicaSet or StatefulSet, which upstream's
// system default spreading covers). [NewPodTopologySpread] exists and is
// opt-in until the scheduler's equivalence cache can serve it: add it
// with weight 2 (and framework.PodTopologySpread to the filters) for
// upstream's spreading; a Scheduler with it then runs every cycle
// uncached. Each call returns a new Profile.
func DefaultProfile() *Profile {
	la, err := NewLeastAllocated()
	if err != nil {
		panic(err) // defaults are valid
	}
	ba, err := NewBalancedAllocation()
	if err != nil {
		panic(err)
	}
	na, err := NewNodeAffinity(nil)
	if err != nil {
		panic(err)
	}
	return MustProfile(
		Weighted{Scorer: NewTaintToleration(), Weight: 3},
		Weighted{Scorer: na, Weight: 2},
		Weighted{Scorer: la, Weight: 1},
		Weighted{Scorer: ba, Weight: 1},
		Weighted{Scorer: NewImageLocality(), Weight: 1},
	)
}
