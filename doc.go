// Package schedkit is a library of Kubernetes scheduling primitives that
// need no cluster: node snapshots, pluggable scorers and a reservation
// ledger, with the same integer answers as kube-scheduler v1.37 and a small
// API.
//
// The pieces fit together like this:
//
//		cache := snapshot.NewCache()            // fed node/pod events
//		ledger := reserve.New(cache)            // holds between decide and bind
//		profile := score.DefaultProfile()       // weighted scorers
//		sched := framework.New(...)             // filter → score → select → reserve
//		decision, err := sched.Schedule(ctx, pod)
//
//	  - package snapshot: resource vectors, upstream-exact pod requests,
//	    NodeInfo, immutable Snapshots, an event-fed Cache, copy-on-write Forks.
//	  - package score: the Scorer interface, weighted Profiles with Explain,
//	    upstream's scorers (LeastAllocated, MostAllocated,
//	    RequestedToCapacityRatio, BalancedAllocation, ImageLocality,
//	    TaintToleration, NodeAffinity) and others.
//	  - package reserve: the reservation ledger (assumed pods, gangs, named
//	    reservations, journal).
//	  - package framework: upstream-exact filters, the scheduling cycle and a
//	    loop for custom schedulers and simulators.
//	  - module framework/kubescheduler: adapters that plug these into the
//	    upstream kube-scheduler framework.
//
// See the README for the two commands a newcomer runs.
package schedkit
