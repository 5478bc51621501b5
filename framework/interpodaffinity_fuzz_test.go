package framework

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// FuzzIPAInvariants: on clusters drawn as FuzzSpreadInvariants draws them
// (zones a–d or none; app web or db pods, some in another namespace), a
// web pod with required zone anti-affinity to app=web and required zone
// affinity to app=db passes a node exactly when, counted by brute force,
// the node has a zone, no web pod of its namespace is in that zone, and
// some db pod of its namespace is (or no db pod exists anywhere, and the
// pod — not a db pod — then fails every node); the scorer with a
// preferred term of each kind gives every node a score in [0, 100].
func FuzzIPAInvariants(f *testing.F) {
	f.Add([]byte{3, 0, 2, 1, 1, 2, 5, 3, 0x81, 4, 0, 0, 0})
	f.Add([]byte{11, 4, 7, 1, 2, 3, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, pods := fuzzSpreadCluster(data)
		snap := snapshottest.Snapshot(t, nodes, pods...)
		pod := withAffinity(mkPod("incoming").Label("app", "web").Obj(),
			[]v1.PodAffinityTerm{ipaTerm(zoneKey, "db")}, []v1.PodAffinityTerm{ipaTerm(zoneKey, "web")})
		filter, err := NewInterPodAffinity(score.InterPodAffinityArgs{})
		require.NoError(t, err)
		res, err := RunPreFilter(filter, snapshot.MustPodInfo(pod), snap)
		require.NoError(t, err)
		require.NotNil(t, res.Filter)

		web, db := map[string]bool{}, map[string]bool{}
		for _, ni := range snap.Nodes() {
			z, ok := ni.Node().Labels[zoneKey]
			if !ok {
				continue
			}
			for _, p := range ni.Pods() {
				if p.Pod().Namespace != "default" {
					continue
				}
				switch p.Pod().Labels["app"] {
				case "web":
					web[z] = true
				case "db":
					db[z] = true
				}
			}
		}
		for _, ni := range snap.Nodes() {
			rs := flatten(res.Filter.Filter(ni, nil))
			z, ok := ni.Node().Labels[zoneKey]
			switch {
			case !ok, !db[z]:
				require.Equal(t, affinityFail, rs, "%s zone %q, db zones %v", ni.Name(), z, db)
			case web[z]:
				require.Equal(t, antiFail, rs, "%s zone %q, web zones %v", ni.Name(), z, web)
			default:
				require.Equal(t, pass, rs, ni.Name())
			}
		}

		pref := mkPod("pref").Label("app", "web").Obj()
		pref.Spec.Affinity = &v1.Affinity{
			PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
				{Weight: 7, PodAffinityTerm: ipaTerm(zoneKey, "db")}}},
			PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
				{Weight: 3, PodAffinityTerm: ipaTerm(v1.LabelHostname, "web")}}},
		}
		s, err := score.NewInterPodAffinity(score.InterPodAffinityArgs{})
		require.NoError(t, err)
		ps, err := s.Prepare(snapshot.MustPodInfo(pref), snap)
		require.NoError(t, err)
		if ps == nil {
			return
		}
		var all []*snapshot.NodeInfo
		for _, ni := range snap.Nodes() {
			all = append(all, ni)
		}
		out := make([]int64, len(all))
		ps.Score(all, out)
		require.NoError(t, ps.(score.Normalizer).Normalize(all, out))
		for i, ni := range all {
			require.True(t, out[i] >= 0 && out[i] <= 100, "%s: %d", ni.Name(), out[i])
		}
	})
}
