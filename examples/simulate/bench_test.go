package main

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user + system CPU time (all threads, GC
// included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchReplay times replays of spec over c and reports, besides the wall
// time, pods/s and the CPU seconds per replay (on a shared machine the
// wall time includes waiting for a core; the CPU time does not).
func benchReplay(b *testing.B, c *cluster, spec runSpec) {
	b.ReportAllocs()
	var pods int
	cpu0 := cpuTime()
	for b.Loop() {
		res, err := c.replay(context.Background(), &spec, &progress{})
		if err != nil {
			b.Fatal(err)
		}
		pods += res.Arrived
	}
	b.ReportMetric(float64(pods)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// specFor is the run the program makes for policy p with no flags.
func specFor(p *policyDef) runSpec {
	s := runSpec{policy: p, seed: 1, tieBreak: p.tie}
	if p.gpu {
		s.percentage = 100
	}
	return s
}

// BenchmarkOpenbReplay replays the openb default trace (1,523 nodes,
// 8,152 pods in creation_time order) with every policy, as
// `simulate -trace DIR -policy all` does: one op is one policy's whole
// replay.
func BenchmarkOpenbReplay(b *testing.B) {
	dir := dataDir(b, "alibaba-clusterdata-gpu-v2023")
	c, err := loadTrace(filepath.Join(dir, "csv", "openb_node_list_all_node.csv"), filepath.Join(dir, "csv", "openb_pod_list_default.csv"), true, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range policies {
		p := &policies[i]
		b.Run("policy="+p.name, func(b *testing.B) { benchReplay(b, c, specFor(p)) })
	}
}

// BenchmarkSyntheticReplay sweeps the cluster size with 2,000 pods of the
// built-in workload, for the default and FGD policies.
func BenchmarkSyntheticReplay(b *testing.B) {
	for _, nodes := range []int{1000, 5000, 15000} {
		c, err := loadSyntheticSized(1, float64(nodes)/1500, 2000)
		if err != nil {
			b.Fatal(err)
		}
		for _, name := range []string{"default", "fgd"} {
			pols, err := lookupPolicies(name)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("policy=%s/nodes=%d", name, nodes), func(b *testing.B) { benchReplay(b, c, specFor(pols[0])) })
		}
	}
}
