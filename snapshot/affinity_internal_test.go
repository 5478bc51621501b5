package snapshot

import (
	"fmt"
	"maps"
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

// FuzzTermGroupPatch: a termGroup changed through its patch and its trie
// (add, under writer tokens that change as a Fork layer's or a frozen
// Snapshot's would) equals a plain map of totals after every step — in
// Count, Len, Each and AddTo — and so do the copies taken before each
// token change (persistence: a later writer changes none of them), and
// AddDiff from each copy, added to the copy's totals, gives the group's.
// Each input is pairs of bytes: (x, y) adds int64(x/3%7)-3 to value
// y%150 when x%3 < 2, else freezes (copies the group, takes a new token).
func FuzzTermGroupPatch(f *testing.F) {
	f.Add([]byte{0, 1, 3, 2, 6, 3, 2, 0, 9, 1})
	f.Add([]byte{4, 7, 4, 8, 4, 9, 2, 0, 1, 7, 1, 8, 4, 10, 2, 0, 15, 7})
	// Patch entries cancelled: +1 and −1 on one value, in an empty and
	// in a full patch.
	f.Add([]byte{2, 0, 12, 5, 6, 5, 12, 6, 12, 7, 6, 6, 12, 8})
	long := make([]byte, 0, 600)
	for i := range 300 {
		x := byte(i*7) % 30
		if i%50 == 49 {
			x = 2
		}
		long = append(long, x, byte(i*13))
	}
	f.Add(long)
	values := make([]unique.Handle[string], 150)
	for i := range values {
		values[i] = unique.Make(fmt.Sprint("v", i))
	}
	type version struct {
		g   termGroup
		ref map[int]int64
	}
	check := func(t *testing.T, g *termGroup, ref map[int]int64, msg string) {
		t.Helper()
		n := 0
		var tab interpod.ValueTable
		g.AddTo(&tab, 2)
		for i, v := range values {
			if c := g.Count(v); c != ref[i] {
				t.Fatalf("%s: Count v%d = %d, want %d", msg, i, c, ref[i])
			}
			if c := tab.Get(v); c != 2*ref[i] {
				t.Fatalf("%s: AddTo v%d = %d, want %d", msg, i, c, 2*ref[i])
			}
			if ref[i] != 0 {
				n++
			}
		}
		if l := g.Len(); l != n {
			t.Fatalf("%s: Len %d, want %d", msg, l, n)
		}
		seen := map[unique.Handle[string]]int64{}
		g.Each(func(v unique.Handle[string], c int64) bool {
			if _, dup := seen[v]; dup {
				t.Fatalf("%s: Each yields %s twice", msg, v.Value())
			}
			seen[v] = c
			return true
		})
		if len(seen) != n {
			t.Fatalf("%s: Each yields %d values, want %d", msg, len(seen), n)
		}
		for i, v := range values {
			if ref[i] != 0 && seen[v] != ref[i] {
				t.Fatalf("%s: Each v%d = %d, want %d", msg, i, seen[v], ref[i])
			}
		}
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		var g termGroup
		ref := map[int]int64{}
		tok := newToken()
		var frozen []version
		for i := 0; i+1 < len(ops); i += 2 {
			x, y := ops[i], ops[i+1]
			if x%3 < 2 {
				c := int64(x/3%7) - 3
				g.add(pwriter[unique.Handle[string], int64]{tok: tok}, values[int(y)%len(values)], c)
				if ref[int(y)%len(values)] += c; ref[int(y)%len(values)] == 0 {
					delete(ref, int(y)%len(values))
				}
				if g.np > patchMax {
					t.Fatalf("a patch of %d entries", g.np)
				}
				for _, p := range g.patch[:g.np] {
					if p.d == 0 {
						t.Fatalf("a patch entry without a change: %s", p.v.Value())
					}
				}
			} else {
				frozen = append(frozen, version{g, maps.Clone(ref)})
				tok = newToken()
			}
			check(t, &g, ref, "step")
		}
		for j := range frozen {
			check(t, &frozen[j].g, frozen[j].ref, "frozen")
			var tab interpod.ValueTable
			frozen[j].g.AddTo(&tab, 3)
			if !g.AddDiff(&frozen[j].g, &tab, 3, 1<<20) {
				t.Fatalf("AddDiff from frozen %d failed", j)
			}
			for i, v := range values {
				if c := tab.Get(v); c != 3*ref[i] {
					t.Fatalf("AddDiff from frozen %d: v%d = %d, want %d", j, i, c, 3*ref[i])
				}
			}
		}
	})
}

// TestReadsLabels: mutable fetches a copied node's labels early only for
// a change whose affinity index update may read them (readsLabels): a
// term of the pod, or of a view its class matches per the Fork's memo,
// whose topology key the node's head does not hold.
func TestReadsLabels(t *testing.T) {
	term := func(app, key string) []v1.PodAffinityTerm {
		return []v1.PodAffinityTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: key}}
	}
	pod := func(name, app string, anti []v1.PodAffinityTerm) *PodInfo {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": app}}}
		if anti != nil {
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: anti}}
		}
		return MustPodInfo(p)
	}
	c := NewCache()
	require.NoError(t, c.AddNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n0",
		Labels: map[string]string{v1.LabelHostname: "n0", v1.LabelTopologyZone: "z", "rack": "r"}}}))
	plain := pod("plain", "db", nil)
	hostAnti := pod("host", "web", term("web", v1.LabelHostname))
	zoneAnti := pod("zone", "web", term("web", v1.LabelTopologyZone))
	rackAnti := pod("rack", "web", term("web", "rack"))

	empty := c.Snapshot().Fork()
	require.False(t, empty.st.readsLabels(plain), "no terms, no views")
	require.False(t, empty.st.readsLabels(nil), "no pod with terms, no views")
	require.False(t, empty.st.readsLabels(hostAnti), "hostname: in the head")
	require.False(t, empty.st.readsLabels(zoneAnti), "zone: in the head")
	require.True(t, empty.st.readsLabels(rackAnti), "rack: only in the labels")

	// A view keyed on rack (app=web per rack) exists once a pod holds
	// the term; before a Fork has a memo for a class, any view may
	// match it.
	require.NoError(t, c.AddPodInfo(podOn(rackAnti, "n0")))
	f := c.Snapshot().Fork()
	require.True(t, f.st.readsLabels(nil))
	require.True(t, f.st.readsLabels(plain), "no memo: the rack view may match")
	f.Fork()
	require.NoError(t, f.AddPodInfo(plain, "n0")) // memo: app=db matches no view
	require.NoError(t, f.Revert())
	require.False(t, f.st.readsLabels(plain), "memo: no view matches app=db")
	require.True(t, f.st.readsLabels(hostAnti), "no memo for app=web")
	f.Fork()
	require.NoError(t, f.AddPodInfo(pod("web2", "web", nil), "n0")) // memo: app=web matches the rack view
	require.NoError(t, f.Revert())
	require.True(t, f.st.readsLabels(hostAnti), "memo: app=web matches the rack view")
	require.True(t, f.st.readsLabels(pod("web3", "web", nil)))
	require.True(t, c.st.readsLabels(nil), "a Cache holding terms: a removal may read labels")
}

// podOn returns a copy of pi's pod bound to node.
func podOn(pi *PodInfo, node string) *PodInfo {
	p := pi.Pod().DeepCopy()
	p.Spec.NodeName = node
	return MustPodInfo(p)
}
