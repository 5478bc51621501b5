package framework

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// fuzzSpreadCluster turns bytes into up to 12 nodes (zone a–d or none,
// some tainted) with up to 7 pods each (app web or db, some in another
// namespace).
func fuzzSpreadCluster(data []byte) ([]*v1.Node, []*v1.Pod) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	n := 1 + int(next()%12)
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		w := mkNode(name).Label(v1.LabelHostname, name)
		b := next()
		if z := b % 5; z < 4 {
			w = w.Label(zoneKey, string(rune('a'+z)))
		}
		if b&0x80 != 0 {
			w = w.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
		}
		nodes = append(nodes, w.Obj())
		k := int(next() % 8)
		for j := range k {
			b := next()
			p := mkPod(fmt.Sprintf("%s-p%d", name, j)).Label("app", []string{"web", "db"}[b&1]).Node(name)
			if b&2 != 0 {
				p = p.Namespace("other")
			}
			pods = append(pods, p.Obj())
		}
	}
	return nodes, pods
}

// FuzzSpreadInvariants: for one zone constraint (any maxSkew ≥ 1,
// minDomains ≤ the zones present, either taints policy), a node in a
// least-loaded eligible zone always passes the filter (its skew is 0 + 1
// ≤ maxSkew); nodes without the zone always fail as unresolvable; the
// scorer's final scores lie in [0, 100], 0 for nodes without the zone,
// and 100 for the least-loaded.
func FuzzSpreadInvariants(f *testing.F) {
	f.Add([]byte{3, 0, 2, 1, 1, 2, 5, 3, 0x81, 4, 0, 0, 0}, uint8(1), false)
	f.Add([]byte{11, 4, 7, 1, 2, 3, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(3), true)
	f.Add([]byte{0}, uint8(2), false)
	f.Fuzz(func(t *testing.T, data []byte, skew uint8, honor bool) {
		nodes, pods := fuzzSpreadCluster(data)
		snap := snapshottest.Snapshot(t, nodes, pods...)
		maxSkew := 1 + int32(skew%4)
		pod := spreadPod(zoneKey, maxSkew, func(c *v1.TopologySpreadConstraint) {
			if honor {
				c.NodeTaintsPolicy = ptrTo(v1.NodeInclusionPolicyHonor)
			}
		})
		filter, err := NewPodTopologySpread(score.PodTopologySpreadArgs{})
		require.NoError(t, err)
		res, err := filter.(ClusterFilter).PreFilterCluster(snapshot.MustPodInfo(pod), snap)
		require.NoError(t, err)

		// Brute-force domain counts of eligible nodes.
		counts := map[string]int{}
		for _, ni := range snap.Nodes() {
			z, ok := ni.Node().Labels[zoneKey]
			if !ok || (honor && len(ni.Taints()) > 0) {
				continue
			}
			counts[z] += 0
			for _, p := range ni.Pods() {
				if p.Pod().Namespace == "default" && p.Pod().Labels["app"] == "web" {
					counts[z]++
				}
			}
		}
		least := -1
		for _, c := range counts {
			if least < 0 || c < least {
				least = c
			}
		}
		for _, ni := range snap.Nodes() {
			rs := res.Filter.Filter(ni, nil)
			z, ok := ni.Node().Labels[zoneKey]
			switch {
			case !ok:
				require.Equal(t, []Reason{{Code: CodeTopologySpreadLabel, Unresolvable: true}}, rs, ni.Name())
			case honor && len(ni.Taints()) > 0:
			case counts[z] == least:
				require.Empty(t, rs, "%s in least-loaded zone %s (%v)", ni.Name(), z, counts)
			}
		}

		pod.Spec.TopologySpreadConstraints[0].WhenUnsatisfiable = v1.ScheduleAnyway
		s, err := score.NewPodTopologySpread(score.PodTopologySpreadArgs{})
		require.NoError(t, err)
		ps, err := s.Prepare(snapshot.MustPodInfo(pod), snap)
		require.NoError(t, err)
		var all []*snapshot.NodeInfo
		for _, ni := range snap.Nodes() {
			all = append(all, ni)
		}
		out := make([]int64, len(all))
		ps.Score(all, out)
		require.NoError(t, ps.(score.Normalizer).Normalize(all, out))
		for i, ni := range all {
			require.True(t, out[i] >= 0 && out[i] <= 100, "%s: %d", ni.Name(), out[i])
			z, ok := ni.Node().Labels[zoneKey]
			switch {
			case !ok:
				require.Zero(t, out[i], ni.Name())
			case !honor && counts[z] == least:
				require.Equal(t, int64(100), out[i], "%s in least-loaded zone %s (%v)", ni.Name(), z, counts)
			}
		}
	})
}
