package snapshot

import (
	"fmt"
	"testing"
	"unique"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/interpod"
)

// TestTermGroupAddToDeepTrie: AddTo walks every entry of a trie several
// levels deep (thousands of values: leaves split), as Each and Count see
// them, multiplied.
func TestTermGroupAddToDeepTrie(t *testing.T) {
	var g termGroup
	w := pwriter[unique.Handle[string], int64]{tok: 1}
	for i := range 3000 {
		v := unique.Make(fmt.Sprint("node-", i))
		g.add(w, v, int64(i%7+1))
	}
	require.Equal(t, 3000, g.Len())
	var tab interpod.ValueTable
	g.AddTo(&tab, -3)
	require.Equal(t, 3000, tab.Len())
	seen := 0
	g.Each(func(v unique.Handle[string], n int64) bool {
		seen++
		require.Equal(t, g.Count(v), n)
		require.Equal(t, -3*n, tab.Get(v), v.Value())
		return true
	})
	require.Equal(t, 3000, seen)
}

// TestViewPodRemembersMatches: in a Fork, the last pod class viewPod
// walked the views for is remembered with the views it matched, across
// Revert, keyed by the view set; a remembered class is not walked again
// (a planted record naming no view makes viewPod count a matching pod in
// no view, which only the memo can do); a new view renews the view set;
// a terminating pod (zero class) is not recorded.
func TestViewPodRemembersMatches(t *testing.T) {
	node := func(name string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}}}
	}
	pod := func(name, app string, anti bool) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": app}}}
		if anti {
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: v1.LabelHostname}}}}
		}
		return p
	}
	c := NewCache()
	require.NoError(t, c.AddNode(node("n0")))
	require.NoError(t, c.AddNode(node("n1")))
	w0 := pod("web-0", "web", true)
	w0.Spec.NodeName = "n0"
	require.NoError(t, c.AddPod(w0))
	f := c.Snapshot().Fork()
	require.Equal(t, 1, f.st.aff.views.n)
	set := f.st.aff.viewSet
	require.NotZero(t, set)
	view := func() *termGroup {
		e := &f.st.aff.views.root.ents[0]
		return f.st.aff.views.ref(e.hash, e.key)
	}
	webTerm := view().term

	db := MustPodInfo(pod("db-0", "db", false))
	f.Fork()
	require.NoError(t, f.AddPodInfo(db, "n1"))
	require.NoError(t, f.Revert())
	require.Equal(t, viewMatch{viewSet: set, class: db.shape.spreadClass}, f.rec.aff.match, "db's class matches no view")

	web := MustPodInfo(pod("web-1", "web", false))
	for range 2 { // walked, then remembered
		f.Fork()
		require.NoError(t, f.AddPodInfo(web, "n1"))
		require.Equal(t, viewMatch{viewSet: set, class: web.shape.spreadClass, n: 1, terms: [viewMatchMax]*interpod.Term{webTerm}}, f.rec.aff.match)
		require.EqualValues(t, 1, view().Count(unique.Make("n1")), "web-1 counted on n1")
		require.NoError(t, f.Revert())
	}

	// A planted record naming no view for web's class: the walk is skipped.
	f.rec.aff.match = viewMatch{viewSet: set, class: web.shape.spreadClass}
	f.Fork()
	require.NoError(t, f.AddPodInfo(web, "n1"))
	require.EqualValues(t, 0, view().Count(unique.Make("n1")), "the record is used")
	require.NoError(t, f.Revert())

	// A new view (a term no pod held) names a new view set: the old
	// record no longer applies.
	f.rec.aff.match = viewMatch{viewSet: set, class: db.shape.spreadClass}
	other := pod("web-2", "web", false)
	other.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: v1.LabelHostname}}}}
	f.Fork()
	require.NoError(t, f.AddPod(other, "n0"))
	require.NotEqual(t, set, f.st.aff.viewSet)
	require.NoError(t, f.AddPodInfo(db, "n1"))
	require.Equal(t, 1, f.rec.aff.match.n, "db matches the new view")
	require.NoError(t, f.Revert())
	require.Equal(t, set, f.st.aff.viewSet, "Revert brings the old view set back")

	// A terminating pod has the zero class: never recorded.
	f.rec.aff.match = viewMatch{}
	gone := pod("db-1", "db", false)
	gone.DeletionTimestamp = &metav1.Time{}
	f.Fork()
	require.NoError(t, f.AddPod(gone, "n1"))
	require.Zero(t, f.rec.aff.match)
	require.NoError(t, f.Revert())
}

// TestLabelValueMatchesLabels: the index's look-up of a node's topology
// value (labelValue: the head for the hostname and zone keys) gives what
// a scan of the node's labels gives, for nodes with and without those
// labels, an empty value and a key the head does not hold.
func TestLabelValueMatchesLabels(t *testing.T) {
	keys := []string{v1.LabelHostname, v1.LabelTopologyZone, "zone", "rack", v1.LabelTopologyRegion}
	for i, labels := range []map[string]string{
		nil,
		{"rack": "r1"},
		{v1.LabelHostname: "h1"},
		{v1.LabelHostname: "", v1.LabelTopologyZone: ""},
		{v1.LabelTopologyZone: "z1", "zone": "other", "rack": "r2"},
		{v1.LabelHostname: "h2", v1.LabelTopologyZone: "z2", v1.LabelTopologyRegion: "r"},
	} {
		ni, err := newNodeInfo(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("n", i), Labels: labels}}, NvidiaDevices)
		require.NoError(t, err)
		for _, k := range keys {
			kh := unique.Make(k)
			want, wantOK := labels[k]
			v, ok := ni.labelValue(kh)
			require.Equal(t, wantOK, ok, "node %d key %s", i, k)
			if ok {
				require.Equal(t, want, v.Value(), "node %d key %s", i, k)
			}
		}
	}
}
