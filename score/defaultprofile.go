package score

// DefaultProfile returns upstream's default score plugins, as far as this
// package implements them, with upstream's weights and order
// (kube-scheduler v1.37 pkg/scheduler/apis/config/v1/default_plugins.go):
//
//	TaintToleration                  3
//	NodeAffinity                     2
//	NodeResourcesFit (LeastAllocated, cpu:1 memory:1)   1
//	PodTopologySpread (system default spreading)        2
//	InterPodAffinity                 2
//	NodeResourcesBalancedAllocation (cpu, memory)       1
//	ImageLocality                    1
//
// This equals upstream's default profile except the volume and DRA
// plugins (which score nothing without volumes and resource claims).
// InterPodAffinity has upstream's default args (hardPodAffinityWeight 1).
// PodTopologySpread has
// upstream's default args: system default spreading (hostname maxSkew 3,
// zone maxSkew 5, ScheduleAnyway) for pods without constraints of their
// own that a Service, ReplicationController, ReplicaSet or StatefulSet
// selects, found on the cluster being scored (a snapshot of a Cache or
// reserve.Ledger fed those objects). framework's equivalence cache serves
// every pod PodTopologySpread and InterPodAffinity skip. Each call returns a new Profile.
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
	pts, err := NewPodTopologySpread(PodTopologySpreadArgs{})
	if err != nil {
		panic(err)
	}
	ipa, err := NewInterPodAffinity(InterPodAffinityArgs{})
	if err != nil {
		panic(err)
	}
	return MustProfile(
		Weighted{Scorer: NewTaintToleration(), Weight: 3},
		Weighted{Scorer: na, Weight: 2},
		Weighted{Scorer: la, Weight: 1},
		Weighted{Scorer: pts, Weight: 2},
		Weighted{Scorer: ipa, Weight: 2},
		Weighted{Scorer: ba, Weight: 1},
		Weighted{Scorer: NewImageLocality(), Weight: 1},
	)
}
